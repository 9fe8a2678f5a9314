"""Table and view answers on the wire: the REST spec's LoadTableResult and
LoadViewResult around the metadata the catalog gives back (catalog.commands.
Loaded). An answer that depends only on a file (its ``cache_key``) is built
once and kept, so the common read is a dictionary look-up."""

from __future__ import annotations

import json
import threading

from fastapi import Response

from catalog.commands import Loaded

_KEPT = 2_000


def load_result(location: str | None, metadata: bytes) -> bytes:
    """A LoadTableResult / LoadViewResult, around metadata already encoded."""
    loc = json.dumps(location).encode()
    return b'{"metadata-location":' + loc + b',"metadata":' + metadata + b',"config":{}}'


class Answers:
    """Built answers by the key of what they were built from; the oldest is
    forgotten first (the keys name immutable files: nothing goes stale)."""

    def __init__(self, size: int = _KEPT) -> None:
        self.size = size
        self.kept: dict[str, bytes] = {}
        self.lock = threading.Lock()

    def body(self, loaded: Loaded) -> bytes:
        key = loaded.cache_key
        if key is None:
            return load_result(loaded.location, loaded.metadata)
        hit = self.kept.get(key)
        if hit is None:
            hit = load_result(loaded.location, loaded.metadata)
            with self.lock:
                if len(self.kept) >= self.size:
                    self.kept.pop(next(iter(self.kept)), None)
                self.kept[key] = hit
        return hit


ANSWERS = Answers()


def loaded_json(loaded: Loaded) -> Response:
    return Response(ANSWERS.body(loaded), media_type="application/json")
