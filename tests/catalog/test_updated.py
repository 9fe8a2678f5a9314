"""catalog.iceberg_v3.updated field by field: a table's metadata with
updates applied equals what PyIceberg's ``update_table_metadata`` gives,
for every kind of update, without the deep copy; the base it started from
is left as it was, and an update PyIceberg refuses is refused the same."""

from __future__ import annotations

from typing import Any

import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadata, TableMetadataUtil
from pyiceberg.table.snapshots import Operation, Snapshot, Summary
from pyiceberg.table.sorting import SortField, SortOrder
from pyiceberg.table.statistics import PartitionStatisticsFile, StatisticsFile
from pyiceberg.table.update import (
    AddPartitionSpecUpdate,
    AddSchemaUpdate,
    AddSnapshotUpdate,
    AddSortOrderUpdate,
    AssignUUIDUpdate,
    RemovePartitionStatisticsUpdate,
    RemovePropertiesUpdate,
    RemoveSnapshotRefUpdate,
    RemoveSnapshotsUpdate,
    RemoveStatisticsUpdate,
    SetCurrentSchemaUpdate,
    SetDefaultSortOrderUpdate,
    SetDefaultSpecUpdate,
    SetLocationUpdate,
    SetPartitionStatisticsUpdate,
    SetPropertiesUpdate,
    SetSnapshotRefUpdate,
    SetStatisticsUpdate,
    TableUpdate,
    UpgradeFormatVersionUpdate,
    update_table_metadata,
)
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from catalog.iceberg_v3.updated import updated

PREVIOUS = "s3://b/t/metadata/00002.metadata.json"


def base(version: int = 2) -> TableMetadata:
    """Snapshots 1, 2 (main), 3 (tag ``t``), statistics for 1, partition
    statistics for 2, a property ``gone``, one metadata log entry."""
    snap = [{"snapshot-id": i, "sequence-number": i, "timestamp-ms": 1000 * i,
             "manifest-list": f"s3://b/t/metadata/snap-{i}.avro",
             "summary": {"operation": "append"}, "schema-id": 0,
             **({"parent-snapshot-id": i - 1} if i > 1 else {})} for i in (1, 2, 3)]
    fields = [{"id": 1, "name": "id", "type": "long", "required": False},
              {"id": 2, "name": "name", "type": "string", "required": False}]
    v1 = {"schema": {"type": "struct", "fields": fields}, "partition-spec": []} \
        if version == 1 else {}
    return TableMetadataUtil.parse_obj({**v1,
        "format-version": version, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "s3://b/t", "last-sequence-number": 3, "last-updated-ms": 4000,
        "last-column-id": 2, "current-schema-id": 0,
        "schemas": [{"type": "struct", "schema-id": 0, "fields": fields}],
        "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999, "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}], "properties": {"gone": "x"},
        "current-snapshot-id": 2, "snapshots": snap,
        "refs": {"main": {"snapshot-id": 2, "type": "branch"},
                 "t": {"snapshot-id": 3, "type": "tag"}},
        "snapshot-log": [{"snapshot-id": i, "timestamp-ms": 1000 * i} for i in (1, 2)],
        "metadata-log": [{"metadata-file": "s3://b/t/metadata/00001.metadata.json",
                          "timestamp-ms": 500}],
        "statistics": [{"snapshot-id": 1, "statistics-path": "s3://b/t/stats-1.puffin",
                        "file-size-in-bytes": 10, "file-footer-size-in-bytes": 5,
                        "blob-metadata": []}],
        "partition-statistics": [{"snapshot-id": 2, "statistics-path": "s3://b/t/p-2.parquet",
                                  "file-size-in-bytes": 10}],
    })


SNAPSHOT_4 = Snapshot(snapshot_id=4, parent_snapshot_id=2, sequence_number=4,
                      timestamp_ms=5000, manifest_list="s3://b/t/metadata/snap-4.avro",
                      summary=Summary(operation=Operation.APPEND), schema_id=0)
SCHEMA_1 = Schema(NestedField(1, "id", LongType(), required=False),
                  NestedField(2, "name", StringType(), required=False),
                  NestedField(3, "more", StringType(), required=False), schema_id=1)
SPEC_1 = PartitionSpec(PartitionField(source_id=1, field_id=1000,
                                      transform=IdentityTransform(), name="id"), spec_id=1)
ORDER_1 = SortOrder(SortField(source_id=1, transform=IdentityTransform()), order_id=1)

CASES: dict[str, list[TableUpdate]] = {
    "append": [AddSnapshotUpdate(snapshot=SNAPSHOT_4),
               SetSnapshotRefUpdate(ref_name="main", type="branch", snapshot_id=4)],
    "branch": [SetSnapshotRefUpdate(ref_name="b", type="branch", snapshot_id=1)],
    "properties": [SetPropertiesUpdate(updates={"a": "1"}),
                   RemovePropertiesUpdate(removals=["gone"])],
    "schema": [AddSchemaUpdate(schema_=SCHEMA_1), SetCurrentSchemaUpdate(schema_id=1)],
    "spec": [AddPartitionSpecUpdate(spec=SPEC_1), SetDefaultSpecUpdate(spec_id=1)],
    "order": [AddSortOrderUpdate(sort_order=ORDER_1), SetDefaultSortOrderUpdate(sort_order_id=1)],
    "expire": [RemoveSnapshotRefUpdate(ref_name="t"), RemoveSnapshotsUpdate(snapshot_ids=[1, 3])],
    "statistics": [
        RemoveStatisticsUpdate(snapshot_id=1),
        SetStatisticsUpdate(statistics=StatisticsFile(
            snapshot_id=2, statistics_path="s3://b/t/stats-2.puffin", file_size_in_bytes=9,
            file_footer_size_in_bytes=4, blob_metadata=[])),
        RemovePartitionStatisticsUpdate(snapshot_id=2),
        SetPartitionStatisticsUpdate(partition_statistics=PartitionStatisticsFile(
            snapshot_id=1, statistics_path="s3://b/t/p-1.parquet", file_size_in_bytes=8))],
    "location": [SetLocationUpdate(location="s3://b/elsewhere")],
    "uuid": [AssignUUIDUpdate(uuid="9c12d441-03fe-4693-9a96-a0705ddf69c1")],
    "nothing": [],
}


def dump(meta: TableMetadata) -> dict[str, Any]:
    return meta.model_dump(mode="json", by_alias=True)


def same_but_now(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Equal, but for ``last-updated-ms`` when both took it from the clock
    (a commit that sets no snapshot), a moment apart."""
    a, b = ours.pop("last-updated-ms"), theirs.pop("last-updated-ms")
    assert ours == theirs
    assert abs(a - b) < 60_000


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("location", [PREVIOUS, None])
def test_updates_apply_as_pyiceberg_applies_them(case: str, location: str | None) -> None:
    start = base()
    before = dump(start)
    ours = updated(start, CASES[case], location)
    theirs = update_table_metadata(start, tuple(CASES[case]), metadata_location=location)
    assert dump(start) == before  # the base as it was
    same_but_now(dump(ours), dump(theirs))
    if case == "append":  # the snapshot's own time, not the clock's
        assert ours.last_updated_ms == 5000 == theirs.last_updated_ms
        if location:  # the file it replaced, logged
            assert ours.metadata_log[-1].metadata_file == PREVIOUS
        assert [s.snapshot_id for s in ours.snapshots] == [1, 2, 3, 4]
        assert ours.snapshots[0] is start.snapshots[0]  # shared, not copied


def test_a_format_upgrade_applies_as_pyiceberg_applies_it() -> None:
    start = base(version=1)
    ups: list[TableUpdate] = [UpgradeFormatVersionUpdate(format_version=2)]
    ours, theirs = updated(start, ups), update_table_metadata(start, tuple(ups))
    assert ours.format_version == 2
    same_but_now(dump(ours), dump(theirs))


@pytest.mark.parametrize("ups", [
    [SetCurrentSchemaUpdate(schema_id=7)],                       # no such schema
    [SetSnapshotRefUpdate(ref_name="main", type="branch", snapshot_id=9)],  # no such snapshot
    [RemovePropertiesUpdate(removals=["never"])],               # no such property
    [AddSnapshotUpdate(snapshot=SNAPSHOT_4.model_copy(update={"sequence_number": 2}))],
    # A default spec whose source column the schema does not have.
    [AddPartitionSpecUpdate(spec=PartitionSpec(PartitionField(
        source_id=99, field_id=1000, transform=IdentityTransform(), name="x"), spec_id=1)),
     SetDefaultSpecUpdate(spec_id=1)],
])
def test_what_pyiceberg_refuses_is_refused_the_same(ups: list[TableUpdate]) -> None:
    start = base()
    with pytest.raises(Exception) as theirs:
        update_table_metadata(start, tuple(ups))
    with pytest.raises(type(theirs.value)) as ours:
        updated(start, ups)
    assert str(ours.value) == str(theirs.value)
