"""Request headers, besides the path, query and body, that change what a
write does: who it is committed as and with what message, whether it is a
materialized view's refresh, and how storage access is handed out with its
answer. An Idempotency-Key is bound to them too (api.idempotency)."""

from __future__ import annotations

from catalog.mviews.refresh import REFRESH_HEADER

MESSAGE_HEADER = "Sapwood-Commit-Message"
AUTHOR_HEADER = "Sapwood-Commit-Author"
DELEGATION_HEADER = "x-iceberg-access-delegation"

MEANINGFUL_HEADERS = (MESSAGE_HEADER, AUTHOR_HEADER, REFRESH_HEADER, DELEGATION_HEADER)
