"""Logging: plain text by default (a terminal), JSON lines with
``SAPWOOD_LOG_FORMAT=json`` (a log shipper), one access line per request.

Records are formatted and written by a thread of their own: a request only
puts its record on a queue (formatting and writing the access line was a
tenth of a cached read's time, docs/performance.md). Lines still queued
when the process is killed outright are lost; a normal stop writes them."""

from __future__ import annotations

import atexit
import json
import logging
import logging.handlers
import os
import queue
import sys
from typing import Any

ACCESS = logging.getLogger("sapwood.access")


class JsonFormatter(logging.Formatter):
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
                         logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    global _listener
    if _listener is not None:
        _listener.stop()
    records: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
    _listener = logging.handlers.QueueListener(records, handler)
    _listener.start()
    root = logging.getLogger("sapwood")
    root.handlers[:] = [_Enqueue(records)]
    root.setLevel(logging.INFO)
    root.propagate = False
    # SAPWOOD_ACCESS_LOG=0: no line per request (errors are still logged).
    off = os.environ.get("SAPWOOD_ACCESS_LOG", "1").lower() in ("0", "false", "off")
    ACCESS.setLevel(logging.WARNING if off else logging.INFO)
    return fmt


class _Enqueue(logging.handlers.QueueHandler):
    """Puts the record on the queue as it is: formatting is the writer
    thread's (the standard QueueHandler formats here, on the request's time)."""

    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        return record


_listener: logging.handlers.QueueListener | None = None


@atexit.register
def _flush() -> None:
    if _listener is not None:
        _listener.stop()
