"""catalog.metadata.referenced_snapshots field by field: what
``snapshots=refs`` keeps of a table's metadata (the HTTP answer is
tests/api/test_snapshots_refs.py)."""

from __future__ import annotations

from typing import Any

from pyiceberg.table.metadata import TableMetadataUtil

from catalog.metadata.referenced_snapshots import referenced_only


def metadata(refs: dict[str, int], statistics: list[int]) -> Any:
    """A v2 table with snapshots 1, 2, 3 (current), 4 (on a branch), its
    snapshot log 1, 2, 3, a statistics file and a partition statistics file
    for each id in ``statistics``."""
    snap = [{"snapshot-id": i, "sequence-number": i, "timestamp-ms": 1000 * i,
             "manifest-list": f"s3://b/t/metadata/snap-{i}.avro",
             "summary": {"operation": "append"}, "schema-id": 0,
             **({"parent-snapshot-id": i - 1} if i > 1 else {})} for i in (1, 2, 3, 4)]
    return TableMetadataUtil.parse_obj({
        "format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "s3://b/t", "last-sequence-number": 4, "last-updated-ms": 4000,
        "last-column-id": 1, "current-schema-id": 0,
        "schemas": [{"type": "struct", "schema-id": 0,
                     "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}],
        "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999, "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}], "properties": {},
        "current-snapshot-id": 3, "snapshots": snap,
        "refs": {name: {"snapshot-id": i, "type": "branch" if name != "t" else "tag"}
                 for name, i in refs.items()},
        "snapshot-log": [{"snapshot-id": i, "timestamp-ms": 1000 * i} for i in (1, 2, 3)],
        "metadata-log": [{"metadata-file": "s3://b/t/metadata/00000.metadata.json",
                          "timestamp-ms": 500}],
        "statistics": [{"snapshot-id": i, "statistics-path": f"s3://b/t/stats-{i}.puffin",
                        "file-size-in-bytes": 10, "file-footer-size-in-bytes": 5,
                        "blob-metadata": []} for i in statistics],
        "partition-statistics": [{"snapshot-id": i, "statistics-path": f"s3://b/t/p-{i}.parquet",
                                  "file-size-in-bytes": 10} for i in statistics],
    })


def test_unnamed_snapshots_their_statistics_and_the_log_before_them_are_left_out():
    meta = metadata({"main": 3, "t": 1, "dev": 4}, statistics=[1, 2, 3])
    kept = referenced_only(meta)
    assert [s.snapshot_id for s in kept.snapshots] == [1, 3, 4]
    # 2 is gone: its entry, and the entry before it (1 would seem current
    # until 3), go from the log.
    assert [e.snapshot_id for e in kept.snapshot_log] == [3]
    assert [f.snapshot_id for f in kept.statistics] == [1, 3]
    assert [f.snapshot_id for f in kept.partition_statistics] == [1, 3]
    # Everything else as it was.
    assert kept.metadata_log == meta.metadata_log
    assert kept.refs == meta.refs
    assert kept.current_snapshot_id == 3
    assert kept.model_copy(update={
        "snapshots": meta.snapshots, "snapshot_log": meta.snapshot_log,
        "statistics": meta.statistics,
        "partition_statistics": meta.partition_statistics}) == meta


def test_a_log_whose_gap_is_at_its_start_keeps_the_rest():
    meta = metadata({"main": 3, "t": 2, "dev": 4}, statistics=[])
    assert [e.snapshot_id for e in referenced_only(meta).snapshot_log] == [2, 3]


def test_metadata_whose_snapshots_are_all_named_is_returned_itself():
    meta = metadata({"main": 3, "a": 1, "b": 2, "dev": 4}, statistics=[1])
    assert referenced_only(meta) is meta
