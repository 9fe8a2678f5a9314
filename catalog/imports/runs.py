"""Imports as the server runs them for an administrator (``POST
/api/v2/admin/import``): the same run as ``sapwood import --from-nessie``
(catalog.imports.nessie), over the server's own catalog, one at a time per
server process. A second request while one runs is refused (409) rather than
queued: two runs reading the same Nessie would each try to land the same
commits, and an HTTP client waiting behind the first cannot tell a queue
from a hang."""

from __future__ import annotations

import threading

from catalog.imports.nessie import DEFAULT_BATCH, import_from_nessie
from catalog.imports.report import ImportReport
from catalog.kernel import Catalog
from core.errors import ConflictError


class Imports:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._running = threading.Lock()

    def from_nessie(self, url: str, *, into_nonempty: bool = False,
                    batch_size: int = DEFAULT_BATCH) -> ImportReport:
        """The report of the run; ImportRefused (nothing written) or another
        SapwoodError as the CLI gets them."""
        if not self._running.acquire(blocking=False):
            raise ConflictError("an import is already running on this server: wait for its "
                                "answer, then send this one again (it adds only what the "
                                "first did not)")
        try:
            return import_from_nessie(self.catalog, url, into_nonempty=into_nonempty,
                                      batch_size=batch_size)
        finally:
            self._running.release()
