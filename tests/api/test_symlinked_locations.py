"""Paths resolve before they are trusted (issue 43, defect 8), in a file
warehouse on SQLite and PostgreSQL: a symbolic link planted inside the
warehouse that points outside cannot make the server write outside — not a
table's ``location``, its ``write.metadata.path`` (on create or a later
update), ``set-location``, a view's location, a registered file's own
location — and nothing is written there; the write itself follows no link
(catalog.metadata.local_files), so one swapped in after the check cannot either.
With SAPWOOD_ALLOW_EXTERNAL_LOCATIONS=1, locations outside the warehouse
stay allowed (and an external table's new snapshots are checked as any
table's are)."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.errors import SapwoodError
from tests.api import spark_bodies as sb
from tests.api.test_pyiceberg import rows
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server

V1 = "/iceberg/v1"
OUTSIDE = "is outside the warehouse"

server = server_fixture(BACKENDS, prefix="links")
external = server_fixture(BACKENDS, env={"SAPWOOD_ALLOW_EXTERNAL_LOCATIONS": "1"},
                          prefix="links-ext")


def _warehouse(server: Server) -> Path:
    return Path(server.warehouse.removeprefix("file://"))


def _escape(server: Server, name: str) -> tuple[str, Path]:
    """A link inside the warehouse to a folder outside it: its URI, and
    the folder it leads to."""
    outside = Path(server.data_dir).parent / f"outside-{name}-{uuid.uuid4().hex[:8]}"
    outside.mkdir()
    link = _warehouse(server) / f"escape-{name}"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside, target_is_directory=True)
    return f"{server.warehouse}/escape-{name}", outside


def _everything(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*"))


def _refused(r: httpx.Response) -> None:
    assert r.status_code == 400, r.text
    assert OUTSIDE in r.json()["error"]["message"], r.text


def _commit(http: httpx.Client, ns: str, name: str, *updates: dict[str, Any]) -> httpx.Response:
    return http.post(f"{V1}/namespaces/{ns}/tables/{name}",
                     json={"requirements": [], "updates": list(updates)})


def test_a_link_out_of_the_warehouse_takes_no_location(server: Server, http, ns: str) -> None:
    link, outside = _escape(server, ns)
    _refused(http.post(f"{V1}/namespaces/{ns}/tables",
                       json={**sb.create_table("t1"), "location": f"{link}/t1"}))
    _refused(http.post(f"{V1}/namespaces/{ns}/tables", json={
        **sb.create_table("t2"), "properties": {"write.metadata.path": f"{link}/meta"}}))
    _refused(http.post(f"{V1}/namespaces/{ns}/views", json={
        **sb.create_view("v", "SELECT 1 AS id, 'a' AS name"), "location": f"{link}/v"}))
    # A staged create answers a location it would write to: refused as well.
    _refused(http.post(f"{V1}/namespaces/{ns}/tables", json={
        **sb.create_table("t3"), "location": f"{link}/t3", "stage-create": True}))
    # An existing table moved, or its metadata sent, through the link.
    assert http.post(f"{V1}/namespaces/{ns}/tables",
                     json=sb.create_table("ok")).status_code == 200
    _refused(_commit(http, ns, "ok", {"action": "set-location", "location": f"{link}/ok"}))
    _refused(_commit(http, ns, "ok", {"action": "set-properties",
                                      "updates": {"write.metadata.path": f"{link}/m"}}))
    # A namespace's location is only a property: tables in it still go to
    # the warehouse's own folders.
    inner = f"{ns}_located"
    assert http.post(f"{V1}/namespaces", json={
        "namespace": [inner], "properties": {"location": f"{link}/ns"}}).status_code == 200
    made = http.post(f"{V1}/namespaces/{inner}/tables", json=sb.create_table("t"))
    assert made.status_code == 200, made.text
    assert os.path.realpath(made.json()["metadata-location"].removeprefix("file://")) \
        .startswith(os.path.realpath(_warehouse(server)))
    assert _everything(outside) == []


def test_register_refuses_metadata_that_lives_outside(server: Server, http, ns: str) -> None:
    """A metadata file inside the warehouse whose own location is outside
    it, plainly or through a link: the next commit would write there."""
    link, outside = _escape(server, f"reg-{ns}")
    made = http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("src"))
    doc = made.json()["metadata"]
    for i, location in enumerate((f"file://{outside}/t", f"{link}/t")):
        path = _warehouse(server) / f"reg-{ns}-{i}" / "00000-x.metadata.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({**doc, "location": location}))
        r = http.post(f"{V1}/namespaces/{ns}/register",
                      json={"name": f"r{i}", "metadata-location": path.as_uri()})
        _refused(r)
        assert f"Cannot register table {ns}.r{i}" in r.text
    assert {i["name"] for i in http.get(f"{V1}/namespaces/{ns}/tables").json()[
        "identifiers"]} == {"src"}
    assert _everything(outside) == []


def test_the_write_itself_follows_no_link(tmp_path: Path) -> None:
    """The server's one writer of metadata files (catalog.metadata.files) judges the
    real path again at the write and then goes folder by folder without
    following links: a link where a folder should be is refused wherever it
    leads (one swapped in after the location was checked, or one that stays
    inside), and a link where the file should be is never written through."""
    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
    from pyiceberg.table.metadata import new_table_metadata
    from pyiceberg.table.sorting import UNSORTED_SORT_ORDER

    from catalog.metadata.files import MetadataFiles
    from catalog.metadata.locations import Locations
    from catalog.metadata.reading import MetadataReader
    from tests.api.test_pyiceberg import SCHEMA

    root, outside = tmp_path / "wh", tmp_path / "outside"
    (root / "ns").mkdir(parents=True)
    outside.mkdir()
    files = MetadataFiles(MetadataReader(Locations(root.as_uri(), False), 1 << 20, 5))

    def write(*parts: str) -> None:
        location = "/".join([root.as_uri(), *parts])
        meta = new_table_metadata(SCHEMA, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER,
                                  location.rsplit("/metadata/", 1)[0], {})
        files.write_table(meta, location)

    (root / "ns" / "out").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SapwoodError, match=OUTSIDE):
        write("ns", "out", "t", "metadata", "00000-a.metadata.json")
    (root / "ns" / "in").symlink_to(root / "ns", target_is_directory=True)
    with pytest.raises(SapwoodError, match="symbolic link"):
        write("ns", "in", "t", "metadata", "00000-b.metadata.json")
    (root / "ns" / "f").mkdir()
    (root / "ns" / "f" / "00000-c.metadata.json").symlink_to(root / "ns" / "elsewhere")
    with pytest.raises(SapwoodError, match="exists already"):
        write("ns", "f", "00000-c.metadata.json")
    assert not (root / "ns" / "elsewhere").exists() and not (root / "ns" / "t").exists()
    assert _everything(outside) == []
    write("ns", "t", "metadata", "00000-d.metadata.json")
    assert json.loads((root / "ns" / "t" / "metadata" / "00000-d.metadata.json").read_text())[
        "location"] == f"{root.as_uri()}/ns/t"


def test_external_locations_stay_allowed_when_the_server_allows_them(external: Server,
                                                                     ) -> None:
    link, outside = _escape(external, "ext")
    with http_client(base_url=external.base, timeout=30) as http:
        ns = f"ext_{uuid.uuid4().hex[:8]}"
        assert http.post(f"{V1}/namespaces", json={"namespace": [ns]}).status_code == 200
        plain = http.post(f"{V1}/namespaces/{ns}/tables", json={
            **sb.create_table("plain"), "location": f"file://{outside}/plain"})
        assert plain.status_code == 200, plain.text
        linked = http.post(f"{V1}/namespaces/{ns}/tables", json={
            **sb.create_table("linked"), "location": f"{link}/linked"})
        assert linked.status_code == 200, linked.text
        # register adopts a file whose location is outside, too.
        doc = plain.json()["metadata"]
        path = outside / "reg" / "00000-x.metadata.json"
        path.parent.mkdir()
        path.write_text(json.dumps({**doc, "location": f"file://{outside}/r"}))
        r = http.post(f"{V1}/namespaces/{ns}/register",
                      json={"name": "r", "metadata-location": path.as_uri()})
        assert r.status_code == 200, r.text
        # An external table's files are checked as any table's are: PyIceberg
        # appends, a manifest list that is not one is refused.
        t = external.catalog().load_table(f"{ns}.plain")
        t.append(rows(2))
        meta = http.get(f"{V1}/namespaces/{ns}/tables/plain").json()["metadata"]
        bad = outside / "plain" / "metadata" / "snap-9-garbage.avro"
        bad.write_bytes(b"not avro" * 50)
        snap = {"snapshot-id": 9, "parent-snapshot-id": meta["current-snapshot-id"],
                "sequence-number": meta["last-sequence-number"] + 1,
                "timestamp-ms": meta["last-updated-ms"] + 1, "manifest-list": bad.as_uri(),
                "summary": {"operation": "append"}, "schema-id": 0}
        r = http.post(f"{V1}/namespaces/{ns}/tables/plain", json={
            "requirements": [], "updates": [{"action": "add-snapshot", "snapshot": snap}]})
        assert r.status_code == 400 and "is not a manifest list" in r.text, r.text
    assert (outside / "plain" / "metadata").is_dir() and (outside / "linked").is_dir()
    assert sorted(t.refresh().scan().to_arrow().column("id").to_pylist()) == [0, 1]
