"""Every table the catalog serves says ``gc.enabled=false``, so engines'
own maintenance (expire_snapshots, remove_orphan_files, DROP TABLE …
PURGE) refuses to delete files other branches and the catalog's history
share: new tables are written with it, a file without it (an older
catalog's) is served with it and the next file keeps it, a change that
turns it on is refused, and a purge deletes nothing. SQLite and PostgreSQL
(tests/spark/test_spark_maintenance.py has what Spark then does)."""

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
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.types import LongType, NestedField

from api.answers import tag
from core.commits import CommitMeta, Put
from core.content import IcebergTable
from core.keys import ContentKey
from tests.api import spark_bodies as sb
from tests.api.test_mviews_http import base_table, create, load_table, mv_path, refresh
from tests.api.test_rest_http import V1, err, unchanged

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


def on_disk(location: str) -> dict[str, Any]:
    """A metadata file as it is stored, not as it is served."""
    doc: dict[str, Any] = json.loads(Path(urlparse(location).path).read_text())
    return doc


def rows(*ids: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64())})


def older_catalogs_table(server, store, ns: str, name: str) -> str:  # type: ignore[no-untyped-def]
    """A table as a catalog from before gc.enabled=false left it: its
    metadata file without the property, put on main through the store."""
    location = f"{server.warehouse}/{ns}/{name}_{uuid.uuid4().hex}"
    meta = new_table_metadata(SCHEMA, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER,
                              location, {"owner": "old"})
    loc = f"{location}/metadata/00000-{uuid.uuid4()}.metadata.json"
    path = Path(urlparse(loc).path)
    path.parent.mkdir(parents=True)
    path.write_text(meta.model_dump_json())
    store.commit("main", [Put(ContentKey([ns, name]), IcebergTable(metadata_location=loc))],
                 CommitMeta(f"older catalog's {name}"))
    assert "gc.enabled" not in on_disk(loc)["properties"]
    return loc


def commit(http: httpx.Client, ns: str, name: str, *updates: dict[str, Any]) -> httpx.Response:
    return http.post(f"{V1}/namespaces/{ns}/tables/{name}",
                     json={"requirements": [], "updates": list(updates)})


def refused(r: httpx.Response, words: str) -> None:
    err(r, 400, "IllegalArgumentException")
    message = r.json()["error"]["message"]
    assert words in message, message
    assert "retention" in message and "sapwood gc" in message, message


def test_a_new_table_is_written_and_served_with_gc_off(server, http, ns) -> None:
    t = server.catalog().create_table(f"{ns}.t", SCHEMA, properties={"owner": "ana"})
    assert t.properties == {"owner": "ana", "gc.enabled": "false"}
    assert on_disk(t.metadata_location)["properties"]["gc.enabled"] == "false"
    t.append(rows(1, 2))
    t = server.catalog().load_table(f"{ns}.t")
    assert t.properties["gc.enabled"] == "false"
    assert on_disk(t.metadata_location)["properties"]["gc.enabled"] == "false"

    # A staged create's answer (nothing written yet), and a create that says
    # false in capitals, which Iceberg reads as false: kept as sent.
    staged = http.post(f"{V1}/namespaces/{ns}/tables",
                       json={**sb.create_table("staged"), "stage-create": True})
    assert staged.status_code == 200, staged.text
    assert staged.json()["metadata"]["properties"]["gc.enabled"] == "false"
    r = http.post(f"{V1}/namespaces/{ns}/tables",
                  json={**sb.create_table("caps"), "properties": {"gc.enabled": "FALSE"}})
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["properties"]["gc.enabled"] == "FALSE"


def test_a_table_written_without_it_is_served_with_it_and_keeps_it(server, http, store,
                                                                   ns) -> None:
    loc = older_catalogs_table(server, store, ns, "old")
    path = f"{V1}/namespaces/{ns}/tables/old"
    hot = http.get(path)  # answered before FastAPI's routing
    routed = http.get(path, params={"snapshots": "all"})  # the route
    for r in (hot, routed):
        assert r.status_code == 200, r.text
        assert r.json()["metadata-location"] == loc
        assert r.json()["metadata"]["properties"] == {"owner": "old", "gc.enabled": "false"}
    etag = hot.headers["ETag"]
    assert routed.headers["ETag"] == http.head(path).headers["ETag"] == etag
    # The ETag an older catalog gave this file names the answer without the
    # property: a client holding that answer is sent the new one.
    older = tag(loc.encode())
    assert etag != older
    again = http.get(path, headers={"If-None-Match": older})
    assert again.status_code == 200 and again.json()["metadata"]["properties"]["gc.enabled"] \
        == "false"
    assert http.get(path, headers={"If-None-Match": etag}).status_code == 304
    assert "gc.enabled" not in on_disk(loc)["properties"]  # never rewritten

    t = server.catalog().load_table(f"{ns}.old")
    assert t.properties["gc.enabled"] == "false"
    t.append(rows(7))
    after = server.catalog().load_table(f"{ns}.old")
    assert after.metadata_location != loc
    assert on_disk(after.metadata_location)["properties"] == {"owner": "old",
                                                              "gc.enabled": "false"}
    assert [r["id"] for r in after.scan().to_arrow().to_pylist()] == [7]

    # Register adopts a file as it is, and serves it with the property too.
    other = older_catalogs_table(server, store, ns, "source")
    r = http.post(f"{V1}/namespaces/{ns}/register",
                  json={"name": "adopted", "metadata-location": _copy_outside_claims(other)})
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["properties"]["gc.enabled"] == "false"


def _copy_outside_claims(loc: str) -> str:
    """The same metadata in a folder no object claims (register adopts only
    from outside the catalog's objects)."""
    doc = on_disk(loc)
    folder = Path(urlparse(loc).path).parent.parent.parent / f"registered_{uuid.uuid4().hex}"
    doc["location"] = folder.as_uri()
    target = folder / "metadata" / "00000-registered.metadata.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(doc))
    return target.as_uri()


@pytest.mark.parametrize("value", ["true", "TRUE", "True", "yes", ""])
def test_turning_it_on_is_refused_and_commits_nothing(server, http, store, ns, value) -> None:
    t = server.catalog().create_table(f"{ns}.t", SCHEMA)
    before = t.metadata_location
    with unchanged(store):
        refused(commit(http, ns, "t", {"action": "set-properties",
                                       "updates": {"gc.enabled": value, "owner": "x"}}),
                f"gc.enabled cannot be turned on for {ns}.t")
        refused(commit(http, ns, "t", {"action": "remove-properties",
                                       "removals": ["gc.enabled"]}),
                f"gc.enabled cannot be removed from {ns}.t")
        refused(http.post(f"{V1}/namespaces/{ns}/tables",
                          json={**sb.create_table("on"), "properties": {"gc.enabled": value}}),
                f"gc.enabled cannot be turned on for {ns}.on")
    assert http.get(f"{V1}/namespaces/{ns}/tables/on").status_code == 404
    loaded = server.catalog().load_table(f"{ns}.t")
    assert loaded.metadata_location == before
    assert loaded.properties == {"gc.enabled": "false"}


def test_false_may_be_set_and_pyiceberg_hears_the_refusal(server, http, ns) -> None:
    t = server.catalog().create_table(f"{ns}.t", SCHEMA)
    r = commit(http, ns, "t", {"action": "set-properties",
                               "updates": {"gc.enabled": "false", "owner": "bo"}})
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["properties"] == {"gc.enabled": "false", "owner": "bo"}
    with pytest.raises(BadRequestError, match=r"gc\.enabled cannot be turned on"):
        t.transaction().set_properties({"gc.enabled": "true"}).commit_transaction()
    with pytest.raises(BadRequestError, match=r"gc\.enabled cannot be removed"):
        t.refresh().transaction().remove_properties("gc.enabled").commit_transaction()
    assert server.catalog().load_table(f"{ns}.t").properties["gc.enabled"] == "false"


def test_a_purge_deletes_no_file(server, http, store, ns) -> None:
    main = server.catalog()
    t = main.create_table(f"{ns}.t", SCHEMA)
    t.append(rows(1))
    t.append(rows(2))
    store.create_reference(f"keep_{ns}", source="main")
    table_dir = Path(urlparse(t.location()).path)
    files = sorted(p for p in table_dir.rglob("*") if p.is_file())
    assert len(files) >= 6  # two data files, manifests, lists, metadata
    main.purge_table(f"{ns}.t")  # DELETE …?purgeRequested=true
    assert http.get(f"{V1}/namespaces/{ns}/tables/t").status_code == 404
    assert all(p.exists() for p in files)
    kept = server.catalog(f"keep_{ns}").load_table(f"{ns}.t")
    assert sorted(r["id"] for r in kept.scan().to_arrow().to_pylist()) == [1, 2]


def test_a_materialized_views_storage_is_served_with_it(server, http, ns) -> None:
    base_table(server, ns)
    create(http, ns)
    refresh(server, http, f"{ns}.mv")
    r = load_table(http, ns, "mv")
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["properties"]["gc.enabled"] == "false"
    assert load_table(http, ns, "mv", **{"If-None-Match": tag(
        f"table:{r.json()['metadata-location']}".encode())}).status_code == 200
    # A refresh's write that turns it on is refused like any table's.
    plan = http.get(mv_path("main", f"{ns}.mv", "/refresh-plan")).json()
    pinned = server.catalog(plan["pinnedReference"],
                            **{"header.Sapwood-Refresh": str(plan["versionId"])})
    storage = pinned.load_table(f"{ns}.mv")
    with pytest.raises(BadRequestError, match=r"gc\.enabled cannot be turned on"):
        storage.transaction().set_properties({"gc.enabled": "true"}).commit_transaction()
