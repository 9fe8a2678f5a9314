"""A table's metadata with updates applied: PyIceberg's
``update_table_metadata`` without the deep copy it ends with.

PyIceberg copies its result deeply so that a caller may change it in place.
The catalog never does (the models are frozen, and every update function
of PyIceberg's builds new lists and maps rather than changing its base's),
and keeps each parsed metadata file in a cache that requests share; so the
result may share its unchanged parts (snapshots, schemas, logs) with its
base. The copy grew with the history: on a table of 1,000 snapshots it took
16 ms per commit, nearly all of applying the updates (bench/history_bench.py
times a commit by the table's history). ``tests/catalog/test_updated.py``
checks that the result equals PyIceberg's, field by field, for every kind of
update, and that the base is left as it was."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import (
    TableUpdate,
    _apply_table_update,
    _TableMetadataUpdateContext,
    _update_table_metadata_log,
)
from pyiceberg.utils.datetime import datetime_to_millis


def updated(base: TableMetadata, updates: Sequence[TableUpdate],
            metadata_location: str | None = None) -> TableMetadata:
    """``base`` with ``updates`` applied, as ``update_table_metadata(base,
    updates, metadata_location=metadata_location)`` answers (``base``'s
    file, when given, joins the metadata log)."""
    context = _TableMetadataUpdateContext()
    new = base
    for u in updates:
        new = _apply_table_update(u, new, context)
    if context.has_changes():
        if metadata_location:
            new = _update_table_metadata_log(new, metadata_location, base.last_updated_ms)
        if base.last_updated_ms == new.last_updated_ms:
            new = new.model_copy(update={
                "last_updated_ms": datetime_to_millis(datetime.now().astimezone())})
    new.spec().check_compatible(new.schema())
    new.sort_order().check_compatible(new.schema())
    return new
