"""Maintenance as the server runs it for an administrator (``POST
/api/v2/admin/gc``, ``GET /api/v2/admin/fsck``, ``/api/v2/retention``):
over the catalog it was built on, the same functions ``sapwood gc``,
``sapwood fsck`` and the retention commands run (gc, fsck_files, the
store's fsck, retention); reports.py shapes what they return."""

from __future__ import annotations

from collections.abc import Iterable

from catalog.kernel import Catalog
from catalog.maintenance import retention
from catalog.maintenance.fsck_files import FilesCheck, check_files
from catalog.maintenance.gc import FilesReport, collect_all
from catalog.maintenance.retention import RefRetention
from core.commits import Reference
from core.retention import Policy
from store.fsck import FsckReport, fsck
from store.gc import GcReport


class Maintenance:
    def __init__(self, catalog: Catalog) -> None:
        self.store = catalog.store
        self.files = catalog.files
        self.warehouse = catalog.locations.warehouse

    def gc(self, grace_s: float | None, window_s: float | None, dry_run: bool,
           ) -> tuple[GcReport, FilesReport | None]:
        """The whole garbage collection (catalog.maintenance.gc.collect_all)."""
        return collect_all(self.store, self.files, self.warehouse, grace_s, window_s, dry_run)

    def fsck(self, files: bool, grace_s: float | None) -> tuple[FsckReport, FilesCheck | None]:
        """The store's integrity; with ``files``, the warehouse's too."""
        report = fsck(self.store)
        if not files:
            return report, None
        return report, check_files(self.store, self.files, self.warehouse, grace_s)

    # -- retention ---------------------------------------------------------------------
    def retention_policies(self) -> list[Policy]:
        return retention.get(self.store)

    def replace_retention(self, items: Iterable[Policy]) -> list[Policy]:
        return retention.replace(self.store, items)

    def retention_cutoffs(self, refs: Iterable[Reference]) -> list[RefRetention]:
        return retention.cutoffs(self.store, refs)
