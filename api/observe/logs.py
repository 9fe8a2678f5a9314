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
import time
from typing import Any

ACCESS = logging.getLogger("sapwood.access")
ROOT = logging.getLogger("sapwood")
# The handler configure() made; while it is the only one an access line
# reaches, the line is written directly (log_access).
_handler: logging.StreamHandler[Any] | None = None


class _Formatter(logging.Formatter):
    """The time of a record is formatted once per second (``strftime`` on
    every line was a fifth of the access line's cost)."""

    _second: tuple[int, str | None, str] = (-1, None, "")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        if datefmt is not None:
            return self.second_of(record.created, datefmt)
        return f"{self.second_of(record.created, None)},{int(record.msecs):03d}"

    def second_of(self, created: float, datefmt: str | None) -> str:
        """The record's time to the second (``datefmt``, else logging's
        default without its milliseconds)."""
        second = int(created)
        cached = self._second
        if cached[0] != second or cached[1] != datefmt:
            ct = self.converter(created)
            text = (time.strftime(datefmt, ct) if datefmt is not None else
                    time.strftime(self.default_time_format, ct))
            cached = self._second = (second, datefmt, text)
        return cached[2]


class JsonFormatter(_Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
                               "level": record.levelname.lower(), "logger": record.name,
                               "message": record.getMessage()}
        out.update(getattr(record, "fields", {}))
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


def configure(fmt: str | None = None) -> str:
    """Set up the ``sapwood`` loggers; returns the format in use."""
    fmt = (fmt or os.environ.get("SAPWOOD_LOG_FORMAT") or "text").lower()
    if fmt not in ("text", "json"):
        raise ValueError(f"SAPWOOD_LOG_FORMAT must be text or json, not {fmt!r}")
    global _handler
    handler = _handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else
                         _Formatter(TEXT_FORMAT))
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
    """One access line at INFO. With the logging configure() set up, the
    line its formatter would make is written to its stream directly: making
    and handling a LogRecord was most of the line's cost, and the line is
    written on the event loop once per request (docs/performance.md). Any
    other handler, filter or formatter (a user's logging configuration)
    gets the record through the logger as usual."""
    handler = _handler
    fmt = handler.formatter if handler is not None else None
    if (handler is None or ACCESS.handlers or ACCESS.filters or ROOT.filters
            or handler.filters or ROOT.handlers != [handler]
            or not isinstance(fmt, _Formatter)
            or type(fmt) not in (_Formatter, JsonFormatter)
            or (type(fmt) is _Formatter and fmt._fmt != TEXT_FORMAT)):
        ACCESS.handle(ACCESS.makeRecord(ACCESS.name, logging.INFO, __file__, 0, msg, args,
                                        None, extra={"fields": fields}))
        return
    now = time.time()
    if type(fmt) is JsonFormatter:
        line = json.dumps({"time": fmt.second_of(now, "%Y-%m-%dT%H:%M:%S"), "level": "info",
                           "logger": ACCESS.name, "message": msg % args, **fields},
                          ensure_ascii=False)
    else:
        line = f"{fmt.second_of(now, None)},{int((now % 1) * 1000):03d} INFO {ACCESS.name} " \
               f"{msg % args}"
    handler.acquire()
    try:
        handler.stream.write(line + handler.terminator)
        handler.flush()
    except Exception:  # as a handler's emit: a failing stream never fails a request
        handler.handleError(ACCESS.makeRecord(ACCESS.name, logging.INFO, __file__, 0, msg,
                                              args, None))
    finally:
        handler.release()
