"""What the server reports of the catalog under it: whether the database
answers with this version's schema (``/readyz``), and what the store and
the metadata files did since the process started — counters, caches,
database connections (``/metrics``, read at scrape time)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.kernel import Catalog
from core.errors import DatabaseFailure
from core.lru import LRU


class Health:
    def __init__(self, catalog: Catalog) -> None:
        self.store = catalog.store
        self.files = catalog.files

    def not_ready(self) -> str | None:
        """Why the catalog cannot serve (None: it can): the database does not
        answer, or its schema is not this version's."""
        try:
            return self.store.schema_problem()
        except DatabaseFailure as e:
            return f"the database does not answer: {e.cause}"

    def counts(self) -> Mapping[str, int]:
        """Commits, conflicts, retries and gc's work, by name (store.stats)."""
        return self.store.stats.counts

    def merges(self) -> Mapping[str, int]:
        """Merges and transplants by how they ended: applied, conflict, dry_run."""
        return self.store.stats.merges

    def caches(self) -> dict[str, LRU[str, Any]]:
        """The in-process caches by name: the store's, and the metadata
        files' (``files_`` before their names)."""
        return {**self.store.reader.caches(),
                **{f"files_{k}": v for k, v in self.files.caches().items()}}

    def pools(self) -> dict[str, tuple[int, int]]:
        """Database connections by pool: (in use, idle)."""
        return self.store.db.pools()
