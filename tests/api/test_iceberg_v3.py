"""Format v3 tables over the Iceberg REST API, on SQLite and PostgreSQL:
created by PyIceberg (a ``timestamp_ns`` column) and by raw requests as
Spark sends them, upgraded from v1 and v2, never downgraded; a snapshot's
row ids checked against the table's ``next-row-id`` (a stale one is a 409
the writer retries); v3 fields PyIceberg does not model kept from a
registered file through later commits; the new types' spelling; and what is
refused, with its message (docs/iceberg-rest.md, docs/limits.md)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pyarrow as pa
import pytest
from pyiceberg.exceptions import BadRequestError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType, TimestampNanoType

from tests.api import spark_bodies as sb
from tests.server import Server

V1 = "/iceberg/v1"


def _table(http: httpx.Client, ns: str, name: str) -> dict[str, Any]:
    r = http.get(f"{V1}/namespaces/{ns}/tables/{name}")
    assert r.status_code == 200, r.text
    return r.json()["metadata"]


def _commit(http: httpx.Client, ns: str, name: str, *updates: dict[str, Any],
            requirements: list[dict[str, Any]] | None = None) -> httpx.Response:
    return http.post(f"{V1}/namespaces/{ns}/tables/{name}",
                     json={"requirements": requirements or [], "updates": list(updates)})


def _snapshot(location: str, snapshot_id: int, first: int | None, added: int | None,
              parent: int | None = None, seq: int = 1) -> dict[str, Any]:
    """An add-snapshot update whose manifest list exists in the table's
    folder (the server checks that; it reads nothing else of it here)."""
    sb.write_manifest_list(location, snapshot_id)
    snap: dict[str, Any] = {"snapshot-id": snapshot_id, "sequence-number": seq,
                            "timestamp-ms": 1_700_000_000_000 + seq,
                            "manifest-list": sb.manifest_list(location, snapshot_id),
                            "summary": {"operation": "append"}, "schema-id": 0}
    if parent is not None:
        snap["parent-snapshot-id"] = parent
    if first is not None:
        snap["first-row-id"] = first
    if added is not None:
        snap["added-rows"] = added
    return {"action": "add-snapshot", "snapshot": snap}


def _main(snapshot_id: int) -> dict[str, Any]:
    return {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
            "snapshot-id": snapshot_id}


def test_pyiceberg_creates_a_v3_table_with_a_nanosecond_column(server: Server, http,
                                                               ns: str) -> None:
    cat = server.catalog()
    t = cat.create_table(f"{ns}.events", Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "at", TimestampNanoType(), required=False)),
        properties={"format-version": "3"})
    assert t.format_version == 3 and t.metadata.next_row_id == 0
    meta = _table(http, ns, "events")
    assert meta["format-version"] == 3 and meta["next-row-id"] == 0
    assert meta["properties"]["gc.enabled"] == "false"  # as every table the catalog serves
    assert [f["type"] for f in meta["schemas"][0]["fields"]] == ["long", "timestamp_ns"]
    # Read back by PyIceberg, and changed by it (a schema update with a default).
    t = cat.load_table(f"{ns}.events")
    with t.update_schema() as u:
        u.add_column("n", LongType(), required=True, default_value=22)
    field = cat.load_table(f"{ns}.events").schema().find_field("n")
    assert field.initial_default == 22 and field.write_default == 22
    assert _table(http, ns, "events")["format-version"] == 3
    # A v2 table cannot hold a nanosecond column (PyIceberg's own rule).
    with pytest.raises(BadRequestError, match="timestamp_ns is only supported in 3"):
        cat.create_table(f"{ns}.v2ns", Schema(NestedField(1, "at", TimestampNanoType(),
                                                          required=False)),
                         properties={"format-version": "2"})


def test_spark_style_create_and_ctas_as_v3(http, ns: str) -> None:
    body = {**sb.create_table("plain"), "properties": {"format-version": "3"}}
    r = http.post(f"{V1}/namespaces/{ns}/tables", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["format-version"] == 3
    assert r.json()["metadata"]["next-row-id"] == 0
    # CTAS: a staged create, then one commit that creates it with the upgrade.
    staged = http.post(f"{V1}/namespaces/{ns}/tables", json={
        **sb.create_table("ctas"), "stage-create": True, "properties": {"format-version": "3"}})
    assert staged.status_code == 200, staged.text
    meta = staged.json()["metadata"]
    r = _commit(http, ns, "ctas",
                {"action": "assign-uuid", "uuid": meta["table-uuid"]},
                {"action": "upgrade-format-version", "format-version": 3},
                {"action": "add-schema", "schema": meta["schemas"][0]},
                {"action": "set-current-schema", "schema-id": -1},
                {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
                {"action": "set-default-spec", "spec-id": -1},
                {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
                {"action": "set-default-sort-order", "sort-order-id": -1},
                {"action": "set-location", "location": meta["location"]},
                requirements=[{"type": "assert-create"}])
    assert r.status_code == 200, r.text
    out = _table(http, ns, "ctas")
    assert out["format-version"] == 3 and out["next-row-id"] == 0


@pytest.mark.parametrize("version", [1, 2])
def test_upgrade_to_v3_and_never_back(http, ns: str, version: int) -> None:
    body = {**sb.create_table("t"), "properties": {"format-version": str(version)}}
    r = http.post(f"{V1}/namespaces/{ns}/tables", json=body)
    assert r.status_code == 200, r.text
    assert _commit(http, ns, "t", _snapshot(r.json()["metadata"]["location"], 11, None, None),
                   _main(11)).status_code == 200
    r = _commit(http, ns, "t", {"action": "upgrade-format-version", "format-version": 3})
    assert r.status_code == 200, r.text
    meta = _table(http, ns, "t")
    assert meta["format-version"] == 3 and meta["next-row-id"] == 0
    (old,) = meta["snapshots"]  # kept as it was: no row ids
    assert "first-row-id" not in old and "added-rows" not in old
    assert meta["metadata-log"]  # the file before the upgrade is logged
    for down in (2, 1):
        r = _commit(http, ns, "t", {"action": "upgrade-format-version", "format-version": down})
        assert r.status_code == 400, r.text
        assert r.json()["error"]["message"] == f"Cannot downgrade v3 table to v{down}"
    r = _commit(http, ns, "t", {"action": "upgrade-format-version", "format-version": 4})
    assert r.status_code == 400
    assert "Table format version 4 is not supported" in r.json()["error"]["message"]
    assert _table(http, ns, "t")["format-version"] == 3


def test_row_lineage_on_commit(http, ns: str) -> None:
    body = {**sb.create_table("t"), "properties": {"format-version": "3"}}
    r = http.post(f"{V1}/namespaces/{ns}/tables", json=body)
    assert r.status_code == 200, r.text
    loc = r.json()["metadata"]["location"]
    r = _commit(http, ns, "t", _snapshot(loc, 1, 0, 100), _main(1))
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["next-row-id"] == 100
    # A writer that numbered its rows before that commit: 409, retryable.
    stale = _commit(http, ns, "t", _snapshot(loc, 2, 0, 5, parent=1, seq=2), _main(2))
    assert stale.status_code == 409, stale.text
    err = stale.json()["error"]
    assert err["type"] == "CommitFailedException"
    assert "first-row-id 0 is behind the table's next-row-id 100" in err["message"]
    # What the writer does next: refresh, number from 100, commit again.
    r = _commit(http, ns, "t", _snapshot(loc, 2, 100, 5, parent=1, seq=2), _main(2))
    assert r.status_code == 200, r.text
    meta = _table(http, ns, "t")
    assert meta["next-row-id"] == 105
    assert [(s["first-row-id"], s["added-rows"]) for s in meta["snapshots"]] == [
        (0, 100), (100, 5)]
    for first, added, what in ((None, 1, "no first-row-id"), (105, None, "no added-rows"),
                               (105, -1, "cannot be negative")):
        r = _commit(http, ns, "t", _snapshot(loc, 3, first, added, 2, 3), _main(3))
        assert r.status_code == 400, r.text
        assert what in r.json()["error"]["message"]
    assert _table(http, ns, "t")["next-row-id"] == 105  # nothing changed
    # The commit event and the UI's table page say which rows each numbered.
    events = http.get("/api/v2/events", params={"key": f"{ns}.t", "maxRecords": 100}).json()
    ops = [op for e in events["events"] for c in e["data"]["commits"]
           for op in c["operations"] if "snapshotId" in op]
    assert [op.get("rowIds") for op in ops] == [None, {"first": 0, "added": 100},
                                                {"first": 100, "added": 5}]
    page = http.get(f"/ui/object/main/{ns}.t")
    assert page.status_code == 200, page.text
    assert '<span id="format-version">3</span>' in page.text
    assert '<span id="next-row-id">105</span>' in page.text
    assert '<td class="row-ids">100\u2013104</td>' in page.text
    assert '<td class="row-ids">0\u201399</td>' in page.text


def test_fields_pyiceberg_does_not_model_survive_commits(server: Server, http, ns: str,
                                                        ) -> None:
    """Registered (written by another catalog): encryption keys, a snapshot's
    key-id, a nanosecond default and a geometry's CRS stay through a commit."""
    keys = [{"key-id": "k1", "encrypted-key-metadata": "AAEC", "encrypted-by-id": "kms"}]
    ts = "2017-11-16T22:31:08.123456789"
    location = f"{server.warehouse}/elsewhere/{uuid.uuid4().hex}"
    sb.write_manifest_list(location, 1)
    doc = {"format-version": 3, "table-uuid": str(uuid.uuid4()),
           "location": location, "last-sequence-number": 1,
           "last-updated-ms": 1_700_000_000_000, "last-column-id": 2,
           "current-schema-id": 0, "next-row-id": 7, "encryption-keys": keys,
           "schemas": [{"type": "struct", "schema-id": 0, "fields": [
               {"id": 1, "name": "id", "type": "long", "required": False},
               {"id": 2, "name": "at", "type": "timestamp_ns", "required": True,
                "initial-default": ts, "write-default": ts},
               {"id": 3, "name": "g", "type": "geometry(srid:4326)", "required": False}]}],
           "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}],
           "last-partition-id": 999, "default-sort-order-id": 0,
           "sort-orders": [{"order-id": 0, "fields": []}], "properties": {},
           "current-snapshot-id": 1, "refs": {"main": {"snapshot-id": 1, "type": "branch"}},
           "snapshots": [{"snapshot-id": 1, "sequence-number": 1,
                          "timestamp-ms": 1_700_000_000_000,
                          "manifest-list": sb.manifest_list(location, 1),
                          "summary": {"operation": "append"}, "first-row-id": 0,
                          "added-rows": 7, "key-id": "k1"}]}
    written = Path(urlparse(f"{location}/metadata/00000-x.metadata.json").path)
    written.write_text(json.dumps(doc))
    r = http.post(f"{V1}/namespaces/{ns}/register",
                  json={"name": "reg", "metadata-location": written.as_uri()})
    assert r.status_code == 200, r.text
    # (PyIceberg 0.12 itself cannot load it: it has no reader for a nanosecond default.)
    r = _commit(http, ns, "reg", {"action": "set-properties", "updates": {"owner": "etl"}},
                requirements=[{"type": "assert-table-uuid", "uuid": doc["table-uuid"]}])
    assert r.status_code == 200, r.text
    meta = _table(http, ns, "reg")
    # A registered file is served and written on with gc.enabled=false, as every table.
    assert meta["properties"] == {"owner": "etl", "gc.enabled": "false"}
    assert meta["encryption-keys"] == keys and meta["snapshots"][0]["key-id"] == "k1"
    assert meta["next-row-id"] == 7 and meta["snapshots"][0]["first-row-id"] == 0
    at = meta["schemas"][0]["fields"][1]
    assert (at["initial-default"], at["write-default"]) == (ts, ts)
    assert meta["schemas"][0]["fields"][2]["type"] == "geometry(srid:4326)"


def test_what_is_refused(http, ns: str) -> None:
    variant = {"name": "v", "schema": {"type": "struct", "fields": [
        {"id": 1, "name": "v", "type": "variant", "required": False}]},
        "properties": {"format-version": "3"}}
    r = http.post(f"{V1}/namespaces/{ns}/tables", json=variant)
    assert r.status_code == 400
    assert "The type variant is not supported by this catalog" in r.json()["error"]["message"]
    r = http.post(f"{V1}/namespaces/{ns}/tables",
                  json={**sb.create_table("four"), "properties": {"format-version": "4"}})
    assert r.status_code == 400
    assert r.json()["error"]["message"].endswith(
        "Table format version 4 is not supported: this catalog writes format versions 1, 2 "
        "and 3 (format-version)")
    spec_types = {"name": "geo", "schema": {"type": "struct", "fields": [
        {"id": 1, "name": "g", "type": "geography(srid:4326, karney)", "required": False}]},
        "properties": {"format-version": "3"}}
    r = http.post(f"{V1}/namespaces/{ns}/tables", json=spec_types)
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["schemas"][0]["fields"][0]["type"] == \
        "geography(srid:4326, karney)"
    assert http.get(f"{V1}/namespaces/{ns}/tables/v").status_code == 404
    # A default PyIceberg 0.12 cannot read, in a request (one in a file is kept).
    ts = "2017-11-16T22:31:08.123456789"
    r = http.post(f"{V1}/namespaces/{ns}/tables", json={
        "name": "d", "properties": {"format-version": "3"}, "schema": {
            "type": "struct", "fields": [{"id": 1, "name": "at", "type": "timestamp_ns",
                                          "required": False, "initial-default": ts}]}})
    assert r.status_code == 400
    assert "Cannot deserialize bytes, type timestamp_ns not supported" in \
        r.json()["error"]["message"]
    # Multi-argument transforms (PyIceberg has none).
    r = http.post(f"{V1}/namespaces/{ns}/tables", json={
        **sb.create_table("p"), "properties": {"format-version": "3"},
        "partition-spec": {"spec-id": 0, "fields": [
            {"source-ids": [1, 2], "field-id": 1000, "name": "b", "transform": "bucket[4]"}]}})
    assert r.status_code == 400
    assert "Multi argument transforms are not yet supported" in r.json()["error"]["message"]
    # Encryption keys are carried, never changed (not in PyIceberg's update model).
    r = http.post(f"{V1}/namespaces/{ns}/tables",
                  json={**sb.create_table("e"), "properties": {"format-version": "3"}})
    assert r.status_code == 200, r.text
    for update in ({"action": "add-encryption-key",
                    "encryption-key": {"key-id": "k", "encrypted-key-metadata": "AA"}},
                   {"action": "remove-encryption-key", "key-id": "k"}):
        r = _commit(http, ns, "e", update)
        assert r.status_code == 400
        assert f"Input tag '{update['action']}' found using 'action' does not match" in \
            r.json()["error"]["message"]
    assert "encryption-keys" not in _table(http, ns, "e")
    for name in ("d", "p"):
        assert http.get(f"{V1}/namespaces/{ns}/tables/{name}").status_code == 404


def test_pyiceberg_reads_a_v3_table_as_v3(server: Server, ns: str) -> None:
    cat = server.catalog()
    cat.create_table(f"{ns}.s", Schema(NestedField(1, "s", StringType(), required=False)),
                     properties={"format-version": "3"})
    t = cat.load_table(f"{ns}.s")
    assert t.format_version == 3 and t.scan().to_arrow().num_rows == 0
    # Its writer stops at v2 manifests, in the client: nothing reaches the catalog.
    with pytest.raises(ValueError, match="Cannot write manifest for table version: 3"):
        t.append(pa.table({"s": pa.array(["a"], pa.string())}))
    assert cat.load_table(f"{ns}.s").metadata.snapshots == []
