"""Table and view answers on the wire: the REST spec's LoadTableResult and
LoadViewResult around the metadata the catalog gives back (catalog.commands.
Loaded). An answer that depends only on a file (its ``cache_key``) is built
once and kept, so the common read is a dictionary look-up."""

from __future__ import annotations

import hashlib
import json
import threading

from fastapi import Request, Response

from catalog.commands import Loaded

_KEPT = 2_000


def load_result(location: str | None, metadata: bytes) -> bytes:
    """A LoadTableResult / LoadViewResult, around metadata already encoded."""
    loc = json.dumps(location).encode()
    return b'{"metadata-location":' + loc + b',"metadata":' + metadata + b',"config":{}}'


def tag(source: bytes) -> str:
    """A strong ETag: a digest of what the answer is made from."""
    return '"' + hashlib.sha256(source).hexdigest()[:40] + '"'


class Answers:
    """Built answers, with their ETags, by the key of what they were built
    from; the oldest is forgotten first (the keys name immutable files:
    nothing goes stale)."""

    def __init__(self, size: int = _KEPT) -> None:
        self.size = size
        self.kept: dict[str, tuple[bytes, str]] = {}
        self.lock = threading.Lock()

    def body(self, loaded: Loaded) -> tuple[bytes, str]:
        """The answer and its ETag: of the cache key when there is one (it
        names exactly what the answer is made from), else of the answer."""
        key = loaded.cache_key
        if key is None:
            body = load_result(loaded.location, loaded.metadata)
            return body, tag(body)
        hit = self.kept.get(key)
        if hit is None:
            hit = load_result(loaded.location, loaded.metadata), tag(key.encode())
            with self.lock:
                if len(self.kept) >= self.size:
                    self.kept.pop(next(iter(self.kept)), None)
                self.kept[key] = hit
        return hit


ANSWERS = Answers()


def loaded_json(loaded: Loaded) -> Response:
    return loaded_or_not_modified(loaded, None)


def loaded_or_not_modified(loaded: Loaded, request: Request | None) -> Response:
    """The answer with its ETag, or 304 with no body when the request's
    If-None-Match names that ETag (the spec's loadTable; views and HEAD alike)."""
    body, etag = ANSWERS.body(loaded)
    if request is not None and matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers={"ETag": etag})
    return Response(body, media_type="application/json", headers={"ETag": etag})


def matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110 13.1.2: a list of tags (weak ones compare by their opaque
    part), or "*"."""
    if not if_none_match:
        return False
    for candidate in if_none_match.split(","):
        c = candidate.strip()
        if c == "*" or c.removeprefix("W/") == etag:
            return True
    return False
