"""What the store has done since the process started, for /metrics
(api.observe): plain counters, read at scrape time."""

from __future__ import annotations

import threading
from collections import Counter


class StoreStats:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        # Merges and transplants by how they ended: applied, conflict, dry_run.
        self.merges: Counter[str] = Counter()

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.counts[name] += n

    def merged(self, outcome: str) -> None:
        with self._lock:
            self.merges[outcome] += 1
