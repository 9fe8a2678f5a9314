"""The spec's unregisterTable (``POST …/tables/{table}/unregister``, REST
spec after Iceberg 1.11; Iceberg 1.12's Java client does not call it yet)
on SQLite and PostgreSQL: the table leaves the branch in one commit
(``unregister table ns.t``, a DELETE in the change feed), its files stay
where they are and the answer names its last metadata file, so another
catalog can register it; later commits to it fail. Only a table outside
the warehouse is handed over (``sapwood gc`` deletes the warehouse's files
once no retained commit references them): one inside is refused, naming
why, and nothing is written."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from core.commits import RefType
from store import Store
from tests.api import spark_bodies as sb
from tests.api.test_pyiceberg import rows
from tests.api.test_view_invalidation_http import STRICT, invalid, make, namespace
from tests.fixtures import BACKENDS, server_fixture
from tests.server import Server

V1 = "/iceberg/v1"
SCHEMA = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "name", StringType(), required=False))

server = server_fixture(BACKENDS, env={"SAPWOOD_ALLOW_EXTERNAL_LOCATIONS": "1"},
                        prefix="unreg")


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _head(store: Store) -> str:
    return str(store.get_reference("main").hash)


def test_config_lists_the_unregister_endpoint(http: httpx.Client) -> None:
    endpoints = http.get(f"{V1}/config").json()["endpoints"]
    assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/unregister" in endpoints


def test_a_table_outside_the_warehouse_is_handed_over_with_its_files(
        server: Server, http: httpx.Client, ns: str) -> None:
    outside = Path(server.data_dir).parent / f"elsewhere-{uuid.uuid4().hex[:8]}"
    cat = server.catalog()
    t = cat.create_table(f"{ns}.t", SCHEMA, location=outside.as_uri())
    t.append(rows(3))
    t.append(rows(2, start=3))
    loaded = http.get(f"{V1}/namespaces/{ns}/tables/t").json()
    before = _files(outside)
    assert any(p.endswith(".parquet") for p in before), before
    events_before = http.get("/api/v2/events", params={"key": f"{ns}.t"}).json()["after"]

    key = str(uuid.uuid4())
    r = http.post(f"{V1}/namespaces/{ns}/tables/t/unregister", headers={"Idempotency-Key": key})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"metadata-location", "metadata"}
    assert body["metadata-location"] == loaded["metadata-location"]
    assert body["metadata"]["table-uuid"] == loaded["metadata"]["table-uuid"]
    assert body["metadata"]["current-snapshot-id"] == loaded["metadata"]["current-snapshot-id"]
    # Not a file touched, not one written.
    assert _files(outside) == before
    # A retry with the same key gets the same answer; nothing runs again.
    again = http.post(f"{V1}/namespaces/{ns}/tables/t/unregister",
                      headers={"Idempotency-Key": key})
    assert again.status_code == 200 and again.content == r.content, again.text
    assert again.headers.get("Idempotent-Replayed") == "true"

    # Gone from the branch: loads, commits and listings say so.
    missing = http.get(f"{V1}/namespaces/{ns}/tables/t")
    assert missing.status_code == 404, missing.text
    assert missing.json()["error"]["type"] == "NoSuchTableException"
    commit = http.post(f"{V1}/namespaces/{ns}/tables/t", json={"requirements": [], "updates": [
        {"action": "set-properties", "updates": {"a": "b"}}]})
    assert commit.status_code == 404, commit.text
    assert http.get(f"{V1}/namespaces/{ns}/tables").json()["identifiers"] == []
    r = http.post(f"{V1}/namespaces/{ns}/tables/t/unregister")
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchTableException", r.text

    # One commit, in the log and the change feed, a DELETE of the key.
    log = http.get("/api/v2/trees/main/history", params={"maxRecords": 1}).json()
    assert log["logEntries"][0]["commitMeta"]["message"] == f"unregister table {ns}.t", log
    events = http.get("/api/v2/events", params={"key": f"{ns}.t", "after": events_before}).json()
    assert len(events["events"]) == 1, events
    assert "DELETE" in str(events["events"][0]["data"]), events

    # Another catalog (here this one again) registers it from its files.
    r = http.post(f"{V1}/namespaces/{ns}/register",
                  json={"name": "back", "metadata-location": body["metadata-location"]})
    assert r.status_code == 200, r.text
    assert cat.load_table(f"{ns}.back").scan().to_arrow().num_rows == 5


def test_a_table_in_the_warehouse_is_refused_and_stays(http: httpx.Client, store: Store,
                                                       ns: str) -> None:
    made = http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t"))
    assert made.status_code == 200, made.text
    head = _head(store)
    r = http.post(f"{V1}/namespaces/{ns}/tables/t/unregister")
    assert r.status_code == 400, r.text
    message = r.json()["error"]["message"]
    assert f"Cannot unregister table {ns}.t: it lives in the warehouse" in message, message
    assert "sapwood gc" in message, message
    assert _head(store) == head
    assert http.get(f"{V1}/namespaces/{ns}/tables/t").status_code == 200


@pytest.mark.parametrize("how", ["body", "tag"])
def test_what_unregister_cannot_use_is_refused(http: httpx.Client, store: Store, ns: str,
                                               how: str) -> None:
    made = http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t"))
    assert made.status_code == 200, made.text
    head = _head(store)
    if how == "body":
        r = http.post(f"{V1}/namespaces/{ns}/tables/t/unregister", json={"purge": True})
    else:
        tag = f"tag_{ns}"
        store.create_reference(tag, ref_type=RefType.TAG, source="main")
        r = http.post(f"/iceberg/{tag}/v1/namespaces/{ns}/tables/t/unregister")
    assert r.status_code == 400, r.text
    assert ("takes no request body" if how == "body" else "tag") in r.text, r.text
    assert _head(store) == head


def test_views_that_read_it_are_checked_as_for_a_drop(server: Server, http: httpx.Client,
                                                     store: Store, ns: str) -> None:
    """A view in a strict namespace that reads the table refuses its
    unregistering (409, nothing written); in a lenient one the view is left
    invalid, as a drop leaves it."""
    cat = server.catalog()
    for name in ("t", "u"):
        where = Path(server.data_dir).parent / f"elsewhere-{uuid.uuid4().hex[:8]}"
        cat.create_table(f"{ns}.{name}", SCHEMA, location=where.as_uri())
    strict = namespace(http, f"{ns}_s", properties=STRICT)
    make(http, strict, "daily", f"SELECT id FROM {ns}.t")
    make(http, ns, "loose", "SELECT id FROM u")
    head = _head(store)
    r = http.post(f"{V1}/namespaces/{ns}/tables/t/unregister")
    assert r.status_code == 409, r.text
    assert f"views that read it would become invalid: {strict}.daily" in r.text, r.text
    assert _head(store) == head
    assert http.get(f"{V1}/namespaces/{ns}/tables/t").status_code == 200
    r = http.post(f"{V1}/namespaces/{ns}/tables/u/unregister")
    assert r.status_code == 200, r.text
    assert invalid(http)[f"{ns}.loose"] == [f"table {ns}.u dropped"]
