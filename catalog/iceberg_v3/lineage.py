"""Row lineage when a commit changes a table (format/spec.md, "Row
Lineage", "Snapshot Row IDs"): the writer assigns each new snapshot's
``first-row-id`` from the table's ``next-row-id``; the catalog checks it and
advances ``next-row-id`` past the rows the snapshot numbered.

PyIceberg's update functions do every update (``updated``: as its
``update_table_metadata`` applies them, without its closing deep copy; a
table being created is validated whole by ``update_table_metadata``
itself); what they lack for v3 is done around them:

* ``upgrade-format-version`` to 3 (PyIceberg refuses any version above 2):
  the table becomes v3 with ``next-row-id`` 0; a table already v3 is left
  as it is; a downgrade stays PyIceberg's 400;
* a snapshot added to a v3 table needs ``first-row-id`` and ``added-rows``
  (400 without); a ``first-row-id`` behind ``next-row-id`` is 409
  ``CommitFailedException``, which a writer answers by refreshing and
  assigning again (Iceberg's Java catalog answers the same, a retryable
  validation error), because another writer numbered rows meanwhile;
* ``next-row-id`` becomes the added snapshot's ``first-row-id`` plus its
  ``added-rows`` (never less than before), so it stays above every id
  assigned, even for a ``first-row-id`` ahead of it; a sum past 2^63-1 (a
  ``next-row-id`` no 64-bit integer holds) is a 400.

Format v1 and v2 commits take PyIceberg's path unchanged."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from pyiceberg.catalog import MetastoreCatalog
from pyiceberg.manifest import ManifestFile
from pyiceberg.table.metadata import TableMetadata, TableMetadataUtil
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.table.update import (
    AddSnapshotUpdate,
    TableUpdate,
    UpgradeFormatVersionUpdate,
    _update_table_metadata_log,
    update_table_metadata,
)
from pyiceberg.utils.datetime import datetime_to_millis

from catalog.iceberg_v3.manifests import unnumbered_rows
from catalog.iceberg_v3.metadata import V3, upgraded
from catalog.iceberg_v3.updated import updated
from core.errors import bad_request, commit_failed
from core.numbers import INT64_MAX


def apply_updates(base: TableMetadata | None, updates: Sequence[TableUpdate],
                  base_location: str | None) -> TableMetadata:
    """A commit's new metadata: ``base`` (None: a table being created) with
    ``updates`` applied; ``base_location``: ``base``'s file (for the
    metadata log)."""
    start = base or MetastoreCatalog._empty_table_metadata()
    creating = base is None
    at = next((i for i, u in enumerate(updates) if _to_v3(u)), None)
    if start.format_version < V3 and at is None:
        return _applied(start, updates, creating, base_location)
    if at is None or start.format_version == V3:
        rest = [u for u in updates if not _to_v3(u)]
        next_row_id = check(start, rest)
        if not rest:
            return start
        return _advanced(_applied(start, rest, creating, base_location), next_row_id)
    # Upgraded in this commit: the updates before it on the old version,
    # those after on v3 (a table being created is v3 from the start: the
    # empty metadata it starts from is no table yet).
    before = [] if creating else updates[:at]
    after = [u for u in (updates if creating else updates[at + 1:]) if not _to_v3(u)]
    meta = updated(start, before) if before else start
    meta = upgraded(meta)
    next_row_id = check(meta, after)
    if after:
        meta = updated(meta, after)
    if base_location:
        meta = _update_table_metadata_log(meta, base_location, start.last_updated_ms)
    if meta.last_updated_ms == start.last_updated_ms:
        meta = meta.model_copy(update={
            "last_updated_ms": datetime_to_millis(datetime.now().astimezone())})
    return TableMetadataUtil.parse_obj(_advanced(meta, next_row_id).model_dump())


def _applied(start: TableMetadata, updates: Sequence[TableUpdate], creating: bool,
             base_location: str | None) -> TableMetadata:
    """A table being created is validated whole, as PyIceberg validates it;
    a commit to one takes ``updated``'s path."""
    if creating:
        return update_table_metadata(start, tuple(updates), enforce_validation=True,
                                     metadata_location=base_location)
    return updated(start, updates, base_location)


def check(meta: TableMetadata, updates: Sequence[TableUpdate]) -> int | None:
    """The table's ``next-row-id`` after ``updates`` add their snapshots to
    v3 ``meta`` (None when they add none); 400 / 409 as the module says."""
    if meta.format_version < V3:
        return None
    running = getattr(meta, "next_row_id", None) or 0
    added = False
    for u in updates:
        if not isinstance(u, AddSnapshotUpdate):
            continue
        s = u.snapshot
        what = f"Cannot add snapshot {s.snapshot_id} to a format v3 table"
        if s.first_row_id is None or s.added_rows is None:
            missing = "first-row-id" if s.first_row_id is None else "added-rows"
            raise bad_request(f"{what}: it has no {missing} (row lineage: the writer numbers "
                              "its rows from the table's next-row-id)")
        if s.first_row_id < 0 or s.added_rows < 0:
            raise bad_request(f"{what}: first-row-id and added-rows cannot be negative")
        if s.first_row_id + s.added_rows > INT64_MAX:
            # The table's next-row-id would not fit in Iceberg's long: no
            # snapshot could be added after it.
            raise bad_request(
                f"{what}: first-row-id {s.first_row_id} + added-rows {s.added_rows} is past "
                f"the largest row id {INT64_MAX} (next-row-id would not fit in 64 bits)")
        if s.first_row_id < running:
            raise commit_failed(
                f"{what}: its first-row-id {s.first_row_id} is behind the table's next-row-id "
                f"{running} (another commit numbered rows since; refresh the table and "
                "commit again)")
        running = s.first_row_id + s.added_rows
        added = True
    return running if added else None


def merged_row_ids(target: TableMetadata, source: TableMetadata,
                   target_manifests: Iterable[ManifestFile],
                   source_rows: int) -> tuple[int, int] | None:
    """A content merge's combined snapshot (catalog.merge.content.tables): its
    ``first-row-id``, past both sides' ids (they numbered the same ones since
    they forked), and its ``added-rows``, what its manifest list numbers —
    the ``source_rows`` it brings in, and any target manifest from before an
    upgrade to v3. None before v3."""
    if target.format_version < V3:
        return None
    first = max(getattr(m, "next_row_id", None) or 0 for m in (target, source))
    return first, unnumbered_rows(target_manifests) + source_rows


def bring_back(meta: TableMetadata, snapshot: Snapshot) -> TableMetadata:
    """``meta`` with an old snapshot listed again (a restore of a snapshot
    expired since): its rows were numbered when it was made, so neither
    ``next-row-id`` nor the last sequence number moves (PyIceberg's add
    would refuse it, or move them back)."""
    return meta.model_copy(update={"snapshots": [*meta.snapshots, snapshot]})


def _to_v3(u: TableUpdate) -> bool:
    return isinstance(u, UpgradeFormatVersionUpdate) and u.format_version == V3


def _advanced(meta: TableMetadata, next_row_id: int | None) -> TableMetadata:
    if next_row_id is None:
        return meta
    return meta.model_copy(update={"next_row_id": max(next_row_id,
                                                      getattr(meta, "next_row_id", 0) or 0)})
