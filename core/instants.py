"""Instants: ISO-8601 with a zone, or epoch milliseconds. Stored as integer
microseconds since the epoch (UTC) so both databases order them the same way."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.errors import InvalidInstantError

_HINT = "expected ISO-8601 with a zone (e.g. 2026-11-21T09:00:00Z) or epoch milliseconds"


def parse_instant(text: str) -> datetime:
    if not text:
        raise InvalidInstantError(f"instant is empty: {_HINT}")
    if text.isdigit():
        try:
            return from_micros(int(text) * 1000)
        except (OverflowError, ValueError):
            raise InvalidInstantError(f"instant {text!r} is out of range") from None
    try:
        # RFC 3339 allows lower-case 't' and 'z' (DuckDB lower-cases its
        # endpoint URL, and the instant travels in it).
        dt = datetime.fromisoformat(text.upper())
    except ValueError:
        raise InvalidInstantError(f"invalid instant {text!r}: {_HINT}") from None
    if dt.tzinfo is None:
        raise InvalidInstantError(f"instant {text!r} has no time zone: add 'Z' or an offset")
    return dt.astimezone(UTC)


def format_instant(dt: datetime) -> str:
    dt = dt.astimezone(UTC)
    spec = "microseconds" if dt.microsecond else "seconds"
    return dt.isoformat(timespec=spec).replace("+00:00", "Z")


def to_micros(dt: datetime) -> int:
    dt = dt.astimezone(UTC)
    delta = dt - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
