"""Pages of a listing: how many items one holds at most, and the cursor a
page ends with (the key or hash the next page starts from, as opaque text).
Pure values: the store pages its listings with them, the versioning API's
CEL filters page the store's pages with the same cursors (api.v2.filtered)."""

from __future__ import annotations

import base64

from core.errors import InvalidInputError

# At most this many items a page, whatever the caller asks.
MAX_PAGE = 1000


def encode_token(value: str) -> str:
    return base64.urlsafe_b64encode(value.encode()).decode().rstrip("=")


def decode_token(token: str) -> str:
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), altchars=b"-_", validate=True)
        value = raw.decode()
    except (ValueError, UnicodeDecodeError):
        raise InvalidInputError(f"invalid page token {token!r}") from None
    if not value:
        raise InvalidInputError(f"invalid page token {token!r}")
    return value


def clamp_page_size(size: int | None) -> int:
    if size is None:
        return MAX_PAGE
    if size < 1:
        raise InvalidInputError(f"page size must be at least 1, got {size}")
    return min(size, MAX_PAGE)
