"""What a client's table update may hold, checked before PyIceberg applies
it (catalog.metadata.table_updates): integers within what Iceberg's Java
reads (ids and counts as 32-bit ``int``; snapshot ids, sequence numbers and
row ids not negative), and no summary field only the server writes. A value
it cannot use is a 400 naming the update and the field."""

from __future__ import annotations

from collections.abc import Sequence

from pyiceberg.table.update import (
    AddPartitionSpecUpdate,
    AddSchemaUpdate,
    AddSnapshotUpdate,
    AddSortOrderUpdate,
    SetCurrentSchemaUpdate,
    SetDefaultSortOrderUpdate,
    SetDefaultSpecUpdate,
    SetSnapshotRefUpdate,
    SetStatisticsUpdate,
    TableUpdate,
)
from pyiceberg.types import IcebergType, ListType, MapType, StructType

from core.commits import SERVER_PROPERTY_PREFIX
from core.errors import bad_request

LAST_ADDED = -1
INT32_MAX = 2**31 - 1


def check_values(u: TableUpdate) -> None:
    """400 naming the first integer of ``u`` Iceberg cannot hold or use."""
    action = u.action
    if isinstance(u, AddSchemaUpdate):
        for f_id, what in _field_ids(u.schema_.as_struct()):
            _in(action, f"schema {what}", f_id, 0, INT32_MAX)
    elif isinstance(u, AddPartitionSpecUpdate):
        for f in u.spec.fields:
            _in(action, "spec field-id", f.field_id, 0, INT32_MAX)
            _in(action, "spec source-id", f.source_id, 0, INT32_MAX)
    elif isinstance(u, AddSortOrderUpdate):
        for sf in u.sort_order.fields:
            _in(action, "sort-order source-id", sf.source_id, 0, INT32_MAX)
    elif isinstance(u, SetCurrentSchemaUpdate | SetDefaultSpecUpdate | SetDefaultSortOrderUpdate):
        name, value = next(iter(u.model_dump(by_alias=True, exclude={"action"}).items()))
        _in(action, name, value, LAST_ADDED, INT32_MAX)
    elif isinstance(u, AddSnapshotUpdate):
        s = u.snapshot
        for name, value in (("snapshot-id", s.snapshot_id),
                            ("parent-snapshot-id", s.parent_snapshot_id),
                            ("sequence-number", s.sequence_number),
                            ("first-row-id", s.first_row_id), ("added-rows", s.added_rows)):
            _in(action, f"snapshot.{name}", value, 0, None)
        _in(action, "snapshot.schema-id", s.schema_id, 0, INT32_MAX)
    elif isinstance(u, SetSnapshotRefUpdate):
        # (PyIceberg's SnapshotRef refuses ages and counts below 1.)
        _in(action, "snapshot-id", u.snapshot_id, 0, None)
        _in(action, "min-snapshots-to-keep", u.min_snapshots_to_keep, 1, INT32_MAX)
    elif isinstance(u, SetStatisticsUpdate):
        st = u.statistics
        _in(action, "statistics.snapshot-id", st.snapshot_id, 0, None)
        _in(action, "statistics.file-size-in-bytes", st.file_size_in_bytes, 0, None)
        _in(action, "statistics.file-footer-size-in-bytes", st.file_footer_size_in_bytes, 0,
            None)


def refuse_server_summaries(updates: Sequence[TableUpdate]) -> None:
    """400 for a client's snapshot whose summary holds a field only the
    server writes (``sapwood.*``: a content merge's
    ``sapwood.merged-snapshot-id``, which later merges trust as a link in the
    table's history). A client could otherwise forge that link and have a
    merge take a rolled-back or replaced history for one that continues."""
    for i, u in enumerate(updates):
        if not isinstance(u, AddSnapshotUpdate) or u.snapshot.summary is None:
            continue
        taken = sorted(k for k in u.snapshot.summary.additional_properties
                       if k.casefold().startswith(SERVER_PROPERTY_PREFIX))
        if taken:
            raise bad_request(f"updates[{i}].snapshot.summary: {', '.join(taken)}: summary "
                              f"fields that start with {SERVER_PROPERTY_PREFIX!r} are written "
                              "by the server only")


def _in(action: str, name: str, value: int | None, low: int, high: int | None) -> None:
    if value is None or (low <= value and (high is None or value <= high)):
        return
    if value < low:
        bound = ("cannot be negative" if low == 0 else "must be greater than 0" if low == 1
                 else f"cannot be below {low}")
    else:  # an id or count Iceberg's Java reads as an int
        bound = f"is past {high}, the largest a 32-bit id or count holds"
    raise bad_request(f"Invalid {action} update: {name} {value} {bound}")


def _field_ids(t: IcebergType, path: str = "") -> list[tuple[int, str]]:
    """Every field id of a type (struct fields, list elements, map keys and
    values) with the name it is shown by."""
    out: list[tuple[int, str]] = []
    if isinstance(t, StructType):
        for f in t.fields:
            name = f"{path}.{f.name}" if path else f.name
            out += [(f.field_id, f"field {name!r} id"), *_field_ids(f.field_type, name)]
    elif isinstance(t, ListType):
        out += [(t.element_id, f"{path}.element id"), *_field_ids(t.element_type, path)]
    elif isinstance(t, MapType):
        out += [(t.key_id, f"{path}.key id"), (t.value_id, f"{path}.value id"),
                *_field_ids(t.key_type, path), *_field_ids(t.value_type, path)]
    return out
