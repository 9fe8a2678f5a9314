"""What the import checks of each table and view value before anything is
written: the checks a commit through Sapwood's own API passes.

A value's metadata file stays where it is — in the warehouse Nessie's
clients wrote — so it must be a file this catalog may read: inside its
warehouse (unless external locations are allowed), there, within the size
limit, valid Iceberg metadata of the kind the value names (a table's, a
view's), and the value's ids those of the file: ``snapshotId``,
``schemaId``, ``specId``, ``sortOrderId`` a table's current ones,
``versionId`` and ``schemaId`` a view's. A table's location and
``write.metadata.path`` are places this catalog may write (its next
metadata file goes there). Each snapshot a table's history brings names a
manifest list under the table's folders that is one, whose new manifests
are manifests (catalog.metadata.snapshot_files: the check a commit that adds
the snapshot passes), checked once per table. Each file is read and parsed
once (catalog.metadata.files caches them by location).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import AddSnapshotUpdate, TableUpdate

from catalog.kernel import Catalog
from catalog.metadata.claims import WRITE_PATH, claims
from catalog.metadata.locations import METADATA_PATH
from core.content import Content, IcebergTable, IcebergView
from core.errors import SapwoodError, bad_request
from core.keys import ContentKey
from core.views import current_version
from store.locations import Claim


class FileChecks:
    def __init__(self, catalog: Catalog, snapshots: bool = True) -> None:
        """``snapshots``: check each snapshot's files too (an import brings a
        table's whole history; a versioning-API commit, which the versioning
        API checks with these same checks, names a file whose snapshots its
        writer made: api.routes.history)."""
        self.catalog = catalog
        self.with_snapshots = snapshots
        # Per value (its type, file and ids): the problem found, or None.
        self.done: dict[tuple[object, ...], str | None] = {}
        # Per value checked: the places its object takes (its location and
        # write paths), normalised.
        self.takes: dict[tuple[object, ...], tuple[str, frozenset[tuple[str, str]]]] = {}
        # Places checked as writable (a table's location, its metadata path).
        self.placed: dict[tuple[str, str | None], str | None] = {}
        # Per table (content id): the snapshots whose files were checked.
        self.snapshots: dict[str, set[int]] = {}
        # Per object (content id): the places it last claimed in this run.
        self.places: dict[str, tuple[str, frozenset[tuple[str, str]]]] = {}

    @staticmethod
    def _ident(value: IcebergTable | IcebergView) -> tuple[object, ...]:
        ids = ((value.snapshot_id, value.schema_id, value.spec_id, value.sort_order_id)
               if isinstance(value, IcebergTable) else (value.version_id, value.schema_id))
        return (value.type, value.id, value.metadata_location, *ids)

    def problem(self, key: ContentKey, value: Content) -> str | None:
        """What is wrong with ``value`` at ``key`` (None: nothing)."""
        if not isinstance(value, IcebergTable | IcebergView):
            return None
        ident = self._ident(value)
        if ident not in self.done:
            try:
                self.done[ident] = (self._table(key, value, ident)
                                    if isinstance(value, IcebergTable)
                                    else self._view(value, ident))
            except SapwoodError as e:
                self.done[ident] = e.message
        return self.done[ident]

    def _table(self, key: ContentKey, value: IcebergTable,
               ident: tuple[object, ...]) -> str | None:
        # The read checks the file's location first (inside the warehouse).
        loc = value.metadata_location
        meta = self.catalog.files.table(loc)[0]
        self._placed(meta.location, meta.properties.get(METADATA_PATH))
        self.takes[ident] = _places(meta.location, meta.properties)
        found = {"snapshotId": meta.current_snapshot_id if meta.current_snapshot_id is not None
                 else -1, "schemaId": meta.current_schema_id, "specId": meta.default_spec_id,
                 "sortOrderId": meta.default_sort_order_id}
        given = {"snapshotId": value.snapshot_id, "schemaId": value.schema_id,
                 "specId": value.spec_id, "sortOrderId": value.sort_order_id}
        wrong = _differs(given, found, loc)
        if wrong:
            return wrong
        if self.with_snapshots:
            self._snapshots(key, value.id or "", meta)
        return None

    def _placed(self, location: str, metadata_path: str | None) -> None:
        """``Locations.check_placed``, once per place."""
        at = (location, metadata_path)
        if at not in self.placed:
            try:
                self.catalog.locations.check_placed(
                    location, {METADATA_PATH: metadata_path} if metadata_path else {})
                self.placed[at] = None
            except SapwoodError as e:
                self.placed[at] = e.message
        wrong = self.placed[at]
        if wrong is not None:
            raise bad_request(wrong)

    def _snapshots(self, key: ContentKey, content_id: str, meta: TableMetadata) -> None:
        checked = self.snapshots.setdefault(content_id, set())
        new = [s for s in meta.snapshots if s.snapshot_id not in checked]
        if new:
            # Parents first: a manifest the parent named was checked with it.
            new.sort(key=lambda s: (s.sequence_number or 0, s.timestamp_ms))
            updates: list[TableUpdate] = [AddSnapshotUpdate(snapshot=s) for s in new]
            self.catalog.files.snapshot_files.added(
                "Cannot import", ".".join(key.elements), updates, None, meta)
            checked.update(s.snapshot_id for s in new)

    def _view(self, value: IcebergView, ident: tuple[object, ...]) -> str | None:
        loc = value.metadata_location
        meta = self.catalog.files.view(loc)[0]
        self._placed(meta.location, None)
        self.takes[ident] = _places(meta.location, meta.properties)
        found = {"versionId": meta.current_version_id,
                 "schemaId": current_version(meta).schema_id}
        given = {"versionId": value.version_id, "schemaId": value.schema_id}
        return _differs(given, found, loc)

    def claims(self, key: ContentKey, value: Content) -> list[Claim]:
        """The locations a checked table or view value takes, when they are
        not the ones its object last took in this run (catalog.metadata.claims)."""
        if not isinstance(value, IcebergTable | IcebergView) or value.id is None:
            return []
        location, props = self.takes[self._ident(value)]
        places = (key.internal, props | {("", location)})
        if self.places.get(value.id) == places:
            return []
        self.places[value.id] = places
        return claims(key, location, dict(props))


def _places(location: str, properties: Mapping[str, str]) -> tuple[str, frozenset[tuple[str, str]]]:
    """An object's location and its write paths (what its claims are made of)."""
    return location, frozenset((k, v) for k, v in properties.items() if WRITE_PATH.match(k))


def _differs(given: dict[str, int], found: dict[str, int], location: str) -> str | None:
    for name, v in given.items():
        if v != found[name]:
            return (f"its {name} is {v}, but the metadata file {location} says "
                    f"{found[name]}")
    return None
