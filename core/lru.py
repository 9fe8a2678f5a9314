"""A least-recently-used cache bounded by entries and, given a way to size
its values, by bytes: a server's memory then follows its cache budget
(SAPWOOD_CACHE_BYTES), not the catalog's size. Sizes are estimates of
what a value holds in memory, made once when it is put."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    def __init__(self, capacity: int, max_bytes: int | None = None,
                 size: Callable[[V], int] | None = None) -> None:
        self.capacity = capacity
        self.max_bytes = max_bytes if size is not None else None
        self._size = size
        self._d: OrderedDict[K, V] = OrderedDict()
        self._sizes: dict[K, int] = {}
        self._lock = threading.Lock()
        # For /metrics' hit ratios; unlocked increments may lose a count
        # under contention, which a ratio does not mind.
        self.hits = self.misses = 0
        self.bytes = 0  # the estimated size of what it holds (0 without a sizer)

    def get(self, key: K) -> V | None:
        # Lock-free: each OrderedDict call is atomic under the GIL, and a key
        # evicted between the two calls is simply not refreshed.
        v = self._d.get(key)
        if v is None:
            self.misses += 1
        else:
            self.hits += 1
            try:  # noqa: SIM105 - suppress() costs more than the lookup
                self._d.move_to_end(key)
            except KeyError:
                pass
        return v

    def __contains__(self, key: object) -> bool:
        return key in self._d  # a plain dict read: atomic, no recency update

    def put(self, key: K, value: V) -> None:
        n = self._size(value) if self._size is not None else 0
        if self.max_bytes is not None and n > self.max_bytes:
            return  # larger than the whole budget: not kept
        with self._lock:
            if key in self._d:
                self.bytes -= self._sizes.pop(key, 0)
            self._d[key] = value
            self._d.move_to_end(key)
            if n:
                self._sizes[key] = n
                self.bytes += n
            while len(self._d) > self.capacity or (
                    self.max_bytes is not None and self.bytes > self.max_bytes):
                old, _ = self._d.popitem(last=False)
                self.bytes -= self._sizes.pop(old, 0)

    def pop(self, key: K) -> None:
        with self._lock:
            if self._d.pop(key, None) is not None:
                self.bytes -= self._sizes.pop(key, 0)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self._sizes.clear()
            self.bytes = 0

    def __len__(self) -> int:
        return len(self._d)
