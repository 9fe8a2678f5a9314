"""The peak memory of a command and of each process it starts.

Not ``ru_maxrss`` (what ``os.wait4`` or ``/usr/bin/time`` report): Linux
counts in a child's the memory of the image it replaced at exec, so a
command started by a large process — a benchmark that built a catalog of a
million keys in itself, a test run — reports that process's peak as its
own (bench/scale_bench.py printed its own 1.5 GB as fsck's). What is read
instead is each process's VmHWM, its peak since its exec, every few
milliseconds until it exits (the last reading: a peak never goes down
within one image); only growth in its last few milliseconds can be missed."""

from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.processes import status_kb

_EVERY_S = 0.005


@dataclass
class Measured:
    returncode: int
    output: str  # stdout and stderr together
    seconds: float
    # pid → peak resident bytes, the command's own first, then the processes
    # it started (and theirs) in the order they were seen.
    peaks: dict[int, int] = field(default_factory=dict)

    @property
    def own_mb(self) -> float:
        """The command's own process."""
        return next(iter(self.peaks.values()), 0) / 2**20

    @property
    def total_mb(self) -> float:
        """Every process of the command together (each at its own peak)."""
        return sum(self.peaks.values()) / 2**20


def run_measured(cmd: list[str], env: dict[str, str] | None = None,
                 timeout: float = 3600) -> Measured:
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peaks: dict[int, int] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            for pid in _tree(proc.pid):
                hwm = _hwm(pid)
                if hwm is not None:
                    # The last reading, not the largest: between its fork and
                    # its exec a child shows its parent's memory as its own.
                    peaks[pid] = hwm
            done.wait(_EVERY_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, _ = proc.communicate(timeout=timeout)
    finally:
        done.set()
        sampler.join()
    return Measured(proc.returncode, out.decode(), time.perf_counter() - started, peaks)


def _tree(root: int) -> list[int]:
    """``root`` and its descendants, parents first."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop(0)
        out.append(pid)
        for task in _listdir(Path(f"/proc/{pid}/task")):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:  # the thread or the process is gone
                continue
    return out


def _listdir(path: Path) -> list[Path]:
    try:
        return list(path.iterdir())
    except OSError:
        return []


def _hwm(pid: int) -> int | None:
    # None for a process that has exited: it keeps no memory to show.
    kb = status_kb(pid, "VmHWM")
    return None if kb is None else kb * 1024
