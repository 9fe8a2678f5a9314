"""A running process's figures, read from Linux' /proc: its CPU time and
its resident memory. Benchmarks and tests print them beside their timings
(a server's cost, not only its latency)."""

from __future__ import annotations

import os
from pathlib import Path


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU time so far (None: not running, or no /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_kb(pid: int, field: str) -> int | None:
    """A kB figure of /proc/<pid>/status (``VmRSS``, ``VmHWM``; None: not
    running, or no /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return None


def rss_mb(pid: int) -> float | None:
    """Resident memory now, in MB (None: not running, or no /proc)."""
    kb = status_kb(pid, "VmRSS")
    return None if kb is None else kb / 1024
