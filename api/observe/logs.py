"""Logging: plain text by default (a terminal), JSON lines with
``SAPWOOD_LOG_FORMAT=json`` (a log shipper), one access line per request.

The access line is written after the answer has been sent (api.edge), in
the request's own thread. A writer thread of its own was tried and cost
more: under the GIL its formatting still waits for, and delays, the event
loop, and each hand-over woke a thread; on one worker it took a seventh off
the requests per second (docs/performance.md). The record is made without
``findCaller``'s walk up the stack (the access line's caller is always the
same)."""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any

ACCESS = logging.getLogger("sapwood.access")


class _Formatter(logging.Formatter):
    """The time of a record is formatted once per second (``strftime`` on
    every line was a fifth of the access line's cost)."""

    _second: tuple[int, str | None, str] = (-1, None, "")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        second = int(record.created)
        cached = self._second
        if cached[0] != second or cached[1] != datefmt:
            cached = self._second = (second, datefmt, super().formatTime(record, datefmt))
        if datefmt is not None:
            return cached[2]
        return f"{cached[2][:-4]},{int(record.msecs):03d}"


class JsonFormatter(_Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
                               "level": record.levelname.lower(), "logger": record.name,
                               "message": record.getMessage()}
        out.update(getattr(record, "fields", {}))
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def configure(fmt: str | None = None) -> str:
    """Set up the ``sapwood`` loggers; returns the format in use."""
    fmt = (fmt or os.environ.get("SAPWOOD_LOG_FORMAT") or "text").lower()
    if fmt not in ("text", "json"):
        raise ValueError(f"SAPWOOD_LOG_FORMAT must be text or json, not {fmt!r}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else
                         _Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    # No record in this process needs its thread's or process's name, and
    # looking them up was a third of making every record.
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    root = logging.getLogger("sapwood")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    root.propagate = False
    # SAPWOOD_ACCESS_LOG=0: no line per request (errors are still logged).
    off = os.environ.get("SAPWOOD_ACCESS_LOG", "1").lower() in ("0", "false", "off")
    ACCESS.setLevel(logging.WARNING if off else logging.INFO)
    return fmt


def access_enabled() -> bool:
    return ACCESS.isEnabledFor(logging.INFO)


def log_access(msg: str, args: tuple[Any, ...], fields: dict[str, Any]) -> None:
    """One access line at INFO, through the logger's handlers as usual."""
    ACCESS.handle(ACCESS.makeRecord(ACCESS.name, logging.INFO, __file__, 0, msg, args, None,
                                    extra={"fields": fields}))
