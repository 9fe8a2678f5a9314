"""catalog.iceberg_v3 field by field against the table spec (format/spec.md
of apache/iceberg): the v3 metadata JSON (Table Metadata Fields, Appendix C
types, Appendix D single values), row lineage on commit (Snapshot Row IDs,
Row Lineage for Upgraded Tables) and the manifest list's first_row_id
assignment (the spec's row lineage example, number for number). What Spark
(Iceberg 1.10) reads back is tests/spark/test_spark_v3.py's."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.avro.file import AvroFile
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import (
    MANIFEST_LIST_FILE_SCHEMAS,
    ManifestContent,
    ManifestFile,
    PartitionFieldSummary,
)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadata, new_table_metadata
from pyiceberg.table.snapshots import Operation, Snapshot, Summary
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.table.update import (
    AddSnapshotUpdate,
    AssertCreate,
    AssignUUIDUpdate,
    SetPropertiesUpdate,
    UpgradeFormatVersionUpdate,
)
from pyiceberg.types import LongType, NestedField, TimestampNanoType

from catalog.iceberg_v3 import manifests as v3m
from catalog.iceberg_v3.lineage import apply_updates, bring_back, check
from catalog.iceberg_v3.metadata import created, dump, parse
from core.errors import BadRequestError, RequirementFailedError

UUID = "9c12d441-03fe-4693-9a96-a0705ddf69c1"


def doc(version: int = 3, fields: list[dict[str, Any]] | None = None,
        **extra: Any) -> dict[str, Any]:
    """A table metadata document as a file holds it."""
    return {"format-version": version, "table-uuid": UUID, "location": "s3://b/t",
            "last-sequence-number": 0, "last-updated-ms": 1_700_000_000_000,
            "last-column-id": 100, "current-schema-id": 0,
            "schemas": [{"type": "struct", "schema-id": 0, "fields": fields or [
                {"id": 1, "name": "id", "type": "long", "required": False}]}],
            "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}],
            "last-partition-id": 999, "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}], "properties": {}, **extra}


def raw(d: dict[str, Any]) -> bytes:
    return json.dumps(d).encode()


def roundtrip(d: dict[str, Any]) -> dict[str, Any]:
    """What the catalog serves for a file holding ``d`` (catalog.metadata.files)."""
    data = raw(d)
    return json.loads(dump(parse(data), data))


def snapshot(snapshot_id: int, first: int | None, added: int | None,
             parent: int | None = None, seq: int = 1) -> Snapshot:
    return Snapshot(snapshot_id=snapshot_id, parent_snapshot_id=parent, sequence_number=seq,
                    timestamp_ms=1_700_000_000_000 + seq, manifest_list=f"s3://b/t/{seq}.avro",
                    summary=Summary(Operation.APPEND), schema_id=0, first_row_id=first,
                    added_rows=added)


# -- the metadata JSON -----------------------------------------------------------------------
def test_a_new_v3_table_has_every_required_field_and_next_row_id_0() -> None:
    meta = created(new_table_metadata(
        Schema(NestedField(1, "ts", TimestampNanoType(), required=False)),
        UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, "s3://b/t",
        {"format-version": "3"}))
    out = json.loads(dump(meta))
    assert out["format-version"] == 3 and out["next-row-id"] == 0
    # Table Metadata Fields: required in v3.
    for field in ("table-uuid", "location", "last-sequence-number", "last-updated-ms",
                  "last-column-id", "schemas", "current-schema-id", "partition-specs",
                  "default-spec-id", "last-partition-id", "sort-orders",
                  "default-sort-order-id"):
        assert field in out, field
    assert out["schemas"][0]["fields"][0]["type"] == "timestamp_ns"
    assert "format-version" not in out["properties"]
    assert parse(dump(meta)) == meta


def test_next_row_id_defaults_to_0_when_a_file_lacks_it() -> None:
    d = doc()
    assert "next-row-id" not in d
    assert roundtrip(d)["next-row-id"] == 0
    assert roundtrip({**d, "next-row-id": 1375})["next-row-id"] == 1375


def test_v1_and_v2_are_written_as_pyiceberg_writes_them() -> None:
    for version in (1, 2):
        d = doc(version)
        if version == 1:
            d["schema"] = d["schemas"][0]
        meta = parse(raw(d))
        assert meta.format_version == version
        assert dump(meta, raw(d)) == meta.model_dump_json().encode()
        assert "next-row-id" not in json.loads(dump(meta))


@pytest.mark.parametrize(("sent", "canonical"), [
    ("timestamp_ns", "timestamp_ns"), ("timestamptz_ns", "timestamptz_ns"),
    ("unknown", "unknown"), ("geometry(srid:4326)", "geometry(srid:4326)"),
    ("geography(srid:4326, spherical)", "geography(srid:4326, spherical)"),
    ("geography(OGC:CRS84, karney)", "geography(OGC:CRS84, karney)"),
    # Defaults spelled out, as Iceberg's Java Types writes them.
    ("geometry", "geometry(OGC:CRS84)"), ("geography", "geography(OGC:CRS84, spherical)"),
    ("geography( EPSG:4326 )", "geography(EPSG:4326, spherical)")])
def test_the_new_types_are_written_as_the_spec_spells_them(sent: str, canonical: str) -> None:
    d = doc(fields=[{"id": 1, "name": "c", "type": sent, "required": False},
                    {"id": 2, "name": "l", "type": {"type": "list", "element-id": 3,
                                                    "element": sent,
                                                    "element-required": False},
                     "required": False}])
    out = roundtrip(d)["schemas"][0]["fields"]
    assert out[0]["type"] == canonical
    assert out[1]["type"]["element"] == canonical
    assert roundtrip(json.loads(json.dumps(d).replace(sent, canonical))) == roundtrip(d)


def test_variant_is_refused_naming_it() -> None:
    d = doc(fields=[{"id": 1, "name": "v", "type": "variant", "required": False}])
    with pytest.raises(BadRequestError, match="variant"):
        parse(raw(d))


# Appendix D, "JSON single-value serialization": the spec's own examples.
SINGLE_VALUES = [
    ("boolean", True), ("int", 34), ("long", 34), ("float", 1.0), ("double", 1.0),
    ("decimal(4,2)", "14.20"), ("date", "2017-11-16"), ("time", "22:31:08.123456"),
    ("timestamp", "2017-11-16T22:31:08.123456"),
    ("timestamptz", "2017-11-16T22:31:08.123456+00:00"),
    ("timestamp_ns", "2017-11-16T22:31:08.123456789"),
    ("timestamptz_ns", "2017-11-16T22:31:08.123456789+00:00"), ("string", "iceberg"),
    ("uuid", "f79c3e09-677c-4bbd-a479-3f349cb785e7"), ("fixed[4]", "000102ff"),
    ("binary", "000102ff"),
    ({"type": "struct", "fields": [{"id": 99, "name": "x", "type": "int",
                                    "required": False, "initial-default": 0}]}, {}),
]


@pytest.mark.parametrize(("type_", "value"), SINGLE_VALUES,
                         ids=[str(t) if isinstance(t, str) else "struct" for t, _ in SINGLE_VALUES])
def test_defaults_are_kept_in_the_single_value_form(type_: Any, value: Any) -> None:
    d = doc(fields=[{"id": 1, "name": "c", "type": type_, "required": True,
                     "initial-default": value, "write-default": value}])
    (out,) = roundtrip(d)["schemas"][0]["fields"]
    assert out["initial-default"] == value and out["write-default"] == value
    # Appendix C allows "decimal(9,2)" and "decimal(9, 2)"; PyIceberg writes the second.
    assert out["type"] == (type_.replace(",", ", ") if type_ == "decimal(4,2)" else type_)


def test_defaults_pyiceberg_cannot_read_follow_their_field_into_new_schemas() -> None:
    """A timestamp_ns default (PyIceberg has no reader for it) survives a
    commit that adds a schema: carried by field id from the file before."""
    ts = {"id": 1, "name": "ts", "type": "timestamp_ns", "required": True,
          "initial-default": "2017-11-16T22:31:08.123456789",
          "write-default": "2017-11-16T22:31:08.123456789"}
    before = raw(doc(fields=[ts], **{"next-row-id": 0}))
    meta = parse(before)
    assert meta.schema().find_field(1).initial_default is None  # set aside
    from pyiceberg.table.update import AddSchemaUpdate, SetCurrentSchemaUpdate

    wider = Schema(*meta.schema().fields, NestedField(2, "n", LongType(), required=False),
                   schema_id=1)
    new = apply_updates(meta, [AddSchemaUpdate(schema_=wider),
                               SetCurrentSchemaUpdate(schema_id=1)], "s3://b/t/m/0.json")
    out = json.loads(dump(new, before))
    for schema in out["schemas"]:
        (field,) = [f for f in schema["fields"] if f["id"] == 1]
        assert field["initial-default"] == ts["initial-default"]
        assert field["write-default"] == ts["write-default"]


def test_snapshot_row_ids_and_encryption_keys_are_written_as_found() -> None:
    keys = [{"key-id": "k1", "encrypted-key-metadata": "AAEC", "encrypted-by-id": "kms",
             "properties": {"a": "b"}}]
    snaps = [{"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": 1_700_000_000_001,
              "manifest-list": "s3://b/t/1.avro", "summary": {"operation": "append"},
              "schema-id": 0},  # from before an upgrade to v3: no row ids
             {"snapshot-id": 2, "parent-snapshot-id": 1, "sequence-number": 2,
              "timestamp-ms": 1_700_000_000_002, "manifest-list": "s3://b/t/2.avro",
              "summary": {"operation": "append"}, "schema-id": 0, "first-row-id": 1000,
              "added-rows": 375, "key-id": "k1"}]
    d = doc(**{"next-row-id": 1375, "encryption-keys": keys, "snapshots": snaps,
               "current-snapshot-id": 2, "last-sequence-number": 2,
               "refs": {"main": {"snapshot-id": 2, "type": "branch"}}})
    out = roundtrip(d)
    assert out["encryption-keys"] == keys
    old, new = out["snapshots"]
    assert "first-row-id" not in old and "added-rows" not in old and "key-id" not in old
    assert (new["first-row-id"], new["added-rows"], new["key-id"]) == (1000, 375, "k1")
    # A commit keeps them (the model drops them; the file they came from has them).
    meta = apply_updates(parse(raw(d)), [SetPropertiesUpdate(updates={"x": "y"})],
                         "s3://b/t/metadata/00001.json")
    again = json.loads(dump(meta, raw(d)))
    assert again["encryption-keys"] == keys and again["snapshots"][1]["key-id"] == "k1"
    assert again["next-row-id"] == 1375


# -- row lineage on commit ----------------------------------------------------------------------
def v3_meta(next_row_id: int = 1000) -> TableMetadata:
    return parse(raw(doc(**{"next-row-id": next_row_id})))


def test_an_added_snapshot_advances_next_row_id_by_its_added_rows() -> None:
    new = apply_updates(v3_meta(1000), [AddSnapshotUpdate(snapshot=snapshot(7, 1000, 375))],
                        "s3://b/t/m.json")
    assert new.next_row_id == 1375  # type: ignore[union-attr]
    two = apply_updates(v3_meta(0), [AddSnapshotUpdate(snapshot=snapshot(7, 0, 10, seq=1)),
                                     AddSnapshotUpdate(snapshot=snapshot(8, 10, 5, 7, seq=2))],
                        None)
    assert two.next_row_id == 15  # type: ignore[union-attr]


def test_a_first_row_id_ahead_still_leaves_next_row_id_above_every_id() -> None:
    new = apply_updates(v3_meta(1000), [AddSnapshotUpdate(snapshot=snapshot(7, 1200, 50))],
                        None)
    assert new.next_row_id == 1250  # type: ignore[union-attr]  # not 1000 + 50


def test_a_stale_first_row_id_is_a_retryable_conflict() -> None:
    with pytest.raises(RequirementFailedError, match="behind the table's next-row-id 1000"):
        check(v3_meta(1000), [AddSnapshotUpdate(snapshot=snapshot(7, 999, 1))])


@pytest.mark.parametrize(("first", "added", "what"), [
    (None, 5, "no first-row-id"), (1000, None, "no added-rows"), (1000, -1, "negative")])
def test_a_snapshot_without_its_row_ids_is_refused(first: int | None, added: int | None,
                                                   what: str) -> None:
    with pytest.raises(BadRequestError, match=what):
        apply_updates(v3_meta(), [AddSnapshotUpdate(snapshot=snapshot(7, first, added))], None)


def test_upgrading_v2_to_v3_starts_next_row_id_at_0_and_keeps_the_snapshots() -> None:
    d = doc(2, **{"snapshots": [{"snapshot-id": 1, "sequence-number": 1,
                                 "timestamp-ms": 1_700_000_000_001,
                                 "manifest-list": "s3://b/t/1.avro",
                                 "summary": {"operation": "append"}}],
                  "current-snapshot-id": 1, "last-sequence-number": 1})
    base = parse(raw(d))
    new = apply_updates(base, [UpgradeFormatVersionUpdate(format_version=3),
                               SetPropertiesUpdate(updates={"k": "v"})], "s3://b/t/m/1.json")
    assert new.format_version == 3 and new.next_row_id == 0  # type: ignore[union-attr]
    assert new.snapshots == base.snapshots and new.snapshots[0].first_row_id is None
    assert new.properties == {"k": "v"}
    assert [e.metadata_file for e in new.metadata_log] == ["s3://b/t/m/1.json"]
    assert new.last_updated_ms > base.last_updated_ms
    out = json.loads(dump(new, raw(d)))
    assert out["format-version"] == 3 and out["next-row-id"] == 0
    # Already v3: the same update again changes nothing.
    assert apply_updates(new, [UpgradeFormatVersionUpdate(format_version=3)], None) == new


def test_upgrading_v1_to_v3() -> None:
    d = doc(1)
    d["schema"] = d["schemas"][0]
    new = apply_updates(parse(raw(d)), [UpgradeFormatVersionUpdate(format_version=3)], None)
    assert new.format_version == 3 and new.next_row_id == 0  # type: ignore[union-attr]
    assert new.last_sequence_number == 0  # type: ignore[union-attr]
    assert json.loads(dump(new))["next-row-id"] == 0


def test_a_downgrade_is_refused() -> None:
    with pytest.raises(ValueError, match="Cannot downgrade v3 table to v2"):
        apply_updates(v3_meta(), [UpgradeFormatVersionUpdate(format_version=2)], None)


def test_a_table_created_by_a_commit_as_v3() -> None:
    """Spark's CTAS: assert-create, then the table's updates with the upgrade
    among them (PyIceberg's empty metadata is v1)."""
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.table.sorting import SortOrder
    from pyiceberg.table.update import (
        AddPartitionSpecUpdate,
        AddSchemaUpdate,
        AddSortOrderUpdate,
        SetCurrentSchemaUpdate,
        SetDefaultSortOrderUpdate,
        SetDefaultSpecUpdate,
        SetLocationUpdate,
    )

    schema = Schema(NestedField(1, "id", LongType(), required=False), schema_id=0)
    AssertCreate().validate(None)
    new = apply_updates(None, [
        AssignUUIDUpdate(uuid=uuid.UUID(UUID)), UpgradeFormatVersionUpdate(format_version=3),
        AddSchemaUpdate(schema_=schema), SetCurrentSchemaUpdate(schema_id=-1),
        AddPartitionSpecUpdate(spec=PartitionSpec(spec_id=0)), SetDefaultSpecUpdate(spec_id=-1),
        AddSortOrderUpdate(sort_order=SortOrder(order_id=0)),
        SetDefaultSortOrderUpdate(sort_order_id=-1), SetLocationUpdate(location="s3://b/t"),
        AddSnapshotUpdate(snapshot=snapshot(5, 0, 3, seq=1))], None)
    assert new.format_version == 3 and new.next_row_id == 3  # type: ignore[union-attr]
    assert str(new.table_uuid) == UUID and new.location == "s3://b/t"


def test_a_restored_snapshot_comes_back_without_renumbering() -> None:
    meta = v3_meta(2000)
    old = snapshot(3, 100, 50)
    back = bring_back(meta, old)
    assert back.snapshot_by_id(3) == old
    assert back.next_row_id == 2000  # type: ignore[union-attr]
    assert back.last_sequence_number == meta.last_sequence_number  # type: ignore[union-attr]


# -- manifest lists: first_row_id ------------------------------------------------------------
def manifest(path: str, added_rows: int, existing_rows: int, snapshot_id: int,
             content: ManifestContent = ManifestContent.DATA,
             first_row_id: int | None = None) -> ManifestFile:
    m = ManifestFile.from_args(
        _table_format_version=3, manifest_path=path, manifest_length=100,
        partition_spec_id=0, content=content, sequence_number=-1, min_sequence_number=-1,
        added_snapshot_id=snapshot_id, added_files_count=1 if added_rows else 0,
        existing_files_count=1 if existing_rows else 0, deleted_files_count=0,
        added_rows_count=added_rows, existing_rows_count=existing_rows, deleted_rows_count=0,
        partitions=[], key_metadata=None, first_row_id=first_row_id)
    return m


def test_the_manifest_list_assigns_first_row_ids_as_the_spec_example_does(
        tmp_path: Path) -> None:
    """"Row lineage example": a table at next-row-id 1000; an existing
    manifest keeps 925; added1 (100 added, 25 existing) gets 1000, added2
    (0, 100) 1125, added3 (125, 25) 1225; the snapshot numbers 375 rows; a
    delete manifest gets none."""
    existing = manifest("existing.avro", 75, 0, 1, first_row_id=925)
    existing.sequence_number = existing.min_sequence_number = 1
    new = [manifest("added1.avro", 100, 25, 9), manifest("added2.avro", 0, 100, 9),
           manifest("added3.avro", 125, 25, 9),
           manifest("deletes.avro", 3, 0, 9, ManifestContent.DELETES)]
    assert v3m.unnumbered_rows([existing, *new]) == 375
    io = PyArrowFileIO()
    location = str(tmp_path / "snap-9.avro")
    with v3m.ManifestListWriterV3(io.new_output(location), 9, 8, 2, 1000, "deflate") as w:
        w.add_manifests([existing, *new])
    assert w.next_row_id == 1375
    got = {m.manifest_path: v3m.first_row_id(m) for m in v3m.read_manifest_list(io, location)}
    assert got == {"existing.avro": 925, "added1.avro": 1000, "added2.avro": 1125,
                   "added3.avro": 1225, "deletes.avro": None}
    # Sequence numbers as PyIceberg's v2 writer assigns them; the file's
    # metadata as Iceberg's Java V3 writer writes it.
    assert {m.manifest_path: m.sequence_number for m in v3m.read_manifest_list(io, location)
            } == {"existing.avro": 1, "added1.avro": 2, "added2.avro": 2, "added3.avro": 2,
                  "deletes.avro": 2}
    with AvroFile[ManifestFile](io.new_input(location), MANIFEST_LIST_FILE_SCHEMAS[3],
                                read_types={-1: ManifestFile, 508: PartitionFieldSummary},
                                read_enums={517: ManifestContent}) as f:
        meta = {k: v for k, v in f.header.meta.items() if not k.startswith("avro.")}
        schema = f.header.get_schema()
    assert meta == {"snapshot-id": "9", "parent-snapshot-id": "8", "sequence-number": "2",
                    "first-row-id": "1000", "format-version": "3"}
    assert schema.find_field(520).name == "first_row_id"


def test_a_manifest_numbered_again_loses_its_first_row_id() -> None:
    m = manifest("a.avro", 10, 0, 1, first_row_id=5)
    assert v3m.first_row_id(m) == 5
    assert v3m.first_row_id(v3m.without_row_ids(m)) is None
    assert v3m.without_row_ids(m).manifest_path == "a.avro"
