"""The access line written directly (api.observe.logs.log_access) is the
line the configured formatter makes of the same record, in both formats;
any other logging set-up (a user's handler, a filter) gets the record
through the logger as before."""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator

import pytest

from api.observe import logs

MSG, ARGS, FIELDS = "%s %s %d %.1fms", ("GET", "/iceberg/v1/config", 200, 1.234), {"status": 200}


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    saved = logs.ROOT.handlers[:], logs._handler, logs.ACCESS.level
    yield io.StringIO()
    logs.ROOT.handlers[:], logs._handler = saved[0], saved[1]
    logs.ACCESS.setLevel(saved[2])


def _record() -> logging.LogRecord:
    return logs.ACCESS.makeRecord(logs.ACCESS.name, logging.INFO, __file__, 0, MSG, ARGS,
                                  None, extra={"fields": FIELDS})


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_direct_line_is_the_formatters_line(stream: io.StringIO, fmt: str) -> None:
    logs.configure(fmt)
    assert logs._handler is not None
    logs._handler.setStream(stream)
    logs.log_access(MSG, ARGS, FIELDS)
    expected = logs._handler.format(_record())
    written = stream.getvalue()
    assert written.endswith("\n") and written.count("\n") == 1
    # The same line but for the clock: the time to the millisecond (text)
    # or second (JSON) may have moved between the two.
    stamp = (r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}" if fmt == "text"
             else r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
    assert re.sub(stamp, "T", written.rstrip("\n")) == re.sub(stamp, "T", expected)
    assert re.search(stamp, written), written


def test_another_handler_gets_the_record(stream: io.StringIO) -> None:
    logs.configure("text")
    assert logs._handler is not None
    logs._handler.setStream(stream)
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    logs.ROOT.addHandler(Keep())
    logs.log_access(MSG, ARGS, FIELDS)
    assert [r.getMessage() for r in seen] == ["GET /iceberg/v1/config 200 1.2ms"]
    assert seen[0].fields == FIELDS  # type: ignore[attr-defined]
    assert stream.getvalue().endswith("sapwood.access GET /iceberg/v1/config 200 1.2ms\n")


def test_a_filter_still_filters(stream: io.StringIO) -> None:
    logs.configure("text")
    assert logs._handler is not None
    logs._handler.setStream(stream)
    logs.ACCESS.addFilter(lambda r: False)
    try:
        logs.log_access(MSG, ARGS, FIELDS)
    finally:
        logs.ACCESS.filters.clear()
    assert stream.getvalue() == ""
