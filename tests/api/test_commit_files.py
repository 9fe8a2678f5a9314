"""A commit that names files is checked before it lands (issue 43, defect 7):
a snapshot added by a table commit, or brought by a registered metadata
file, must name a manifest list that is one (Avro records ``manifest_file``,
written for that snapshot), lies under the table's location, and whose new
manifests are manifests; otherwise 400 naming the file and what is wrong,
and nothing is stored. Register also refuses a metadata file whose own
location is outside the warehouse (defect 8). On SQLite and PostgreSQL with
a local warehouse, and with the warehouse on a local S3-compatible server."""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

import httpx

from tests.api.test_pyiceberg import SCHEMA, rows
from tests.api.warehouse_files import GARBAGE, files, get, manifest_list, moved, put
from tests.fixtures import WITH_S3, server_fixture

server = server_fixture(WITH_S3)
V1 = "/iceberg/v1"


def _appended(server: Any, http: httpx.Client, ns: str) -> tuple[dict[str, Any], Any, list[Any]]:
    """A table ``t`` appended to once: its metadata as served, its current
    snapshot (PyIceberg's) and that snapshot's manifests."""
    cat = server.catalog()
    t = cat.create_table(f"{ns}.t", SCHEMA)
    t.append(rows(3))
    t = cat.load_table(f"{ns}.t")
    meta = http.get(f"{V1}/namespaces/{ns}/tables/t").json()["metadata"]
    current = t.current_snapshot()
    assert current is not None
    return meta, current, current.manifests(t.io)


def _add(http: httpx.Client, ns: str, name: str, meta: dict[str, Any], mlist: str,
         snapshot_id: int) -> httpx.Response:
    """Append one snapshot naming ``mlist`` on top of the current one."""
    parent = meta["current-snapshot-id"]
    snap = {"snapshot-id": snapshot_id, "parent-snapshot-id": parent,
            "sequence-number": meta["last-sequence-number"] + 1,
            "timestamp-ms": meta["last-updated-ms"] + 1, "manifest-list": mlist,
            "summary": {"operation": "append"}, "schema-id": 0}
    return http.post(f"{V1}/namespaces/{ns}/tables/{name}", json={
        "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main",
                          "snapshot-id": parent}],
        "updates": [{"action": "add-snapshot", "snapshot": snap},
                    {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
                     "snapshot-id": snapshot_id}]})


def _refused(r: httpx.Response, *words: str) -> str:
    assert r.status_code == 400, r.text
    message = str(r.json()["error"]["message"])
    for w in words:
        assert w in message, message
    return message


def _metadata_files(server: Any) -> set[str]:
    return {f for f in files(server) if f.endswith(".metadata.json")}


def test_a_snapshot_must_name_a_manifest_list_that_is_one(server, http, store, ns: str,
                                                        tmp_path: Path) -> None:
    meta, current, manifests = _appended(server, http, ns)
    loc = meta["location"]
    cat = server.catalog()
    seq = meta["last-sequence-number"] + 1
    head, written = store.get_reference("main").hash, _metadata_files(server)

    def attempt(data: bytes, where: str | None = None) -> tuple[httpx.Response, str, int]:
        sid = random.randint(1, 2**62)
        path = where or f"{loc}/metadata/snap-{sid}-planted.avro"
        put(server, path, data)
        return _add(http, ns, "t", meta, path, sid), path, sid

    # Not Avro at all (what made gc and fsck stop for the whole catalog).
    r, path, _ = attempt(GARBAGE)
    _refused(r, path, "is not a manifest list: it is not an Avro file", f"{ns}.t")
    # Avro, but a manifest, not a manifest list.
    r, path, _ = attempt(get(server, manifests[0].manifest_path))
    _refused(r, path, "its records are 'manifest_entry', not 'manifest_file'")
    # Another snapshot's manifest list.
    r, path, _ = attempt(get(server, current.manifest_list))
    _refused(r, path, "was written for another snapshot")
    # A list under another folder of the warehouse, not the table's.
    sid = random.randint(1, 2**62)
    elsewhere = f"{server.warehouse}/elsewhere_{ns}/snap-{sid}.avro"
    put(server, elsewhere, manifest_list(tmp_path, sid, current.snapshot_id, seq, manifests))
    _refused(_add(http, ns, "t", meta, elsewhere, sid), elsewhere,
             f"is not under the table's location {loc}")
    # A real list naming a new manifest that is garbage, or that is a list.
    for bad, said in ((GARBAGE, "it is not an Avro file"),
                      (get(server, current.manifest_list), "its records are 'manifest_file'")):
        m = f"{loc}/metadata/{uuid.uuid4().hex}-m0.avro"
        put(server, m, bad)
        sid = random.randint(1, 2**62)
        good = manifest_list(tmp_path, sid, current.snapshot_id, seq,
                             [*manifests, moved(manifests[0], m)])
        path = f"{loc}/metadata/snap-{sid}-x.avro"
        put(server, path, good)
        r = _add(http, ns, "t", meta, path, sid)
        _refused(r, f"the manifest {m}, listed by the manifest list of snapshot {sid}",
                 f"is not a manifest: {said}")
    # Nothing was stored by any of them.
    assert store.get_reference("main").hash == head
    assert _metadata_files(server) == written
    assert cat.load_table(f"{ns}.t").current_snapshot().snapshot_id == current.snapshot_id
    # The same commit with a list that is one lands, and reads.
    sid = random.randint(1, 2**62)
    path = f"{loc}/metadata/snap-{sid}-good.avro"
    put(server, path, manifest_list(tmp_path, sid, current.snapshot_id, seq, manifests))
    assert _add(http, ns, "t", meta, path, sid).status_code == 200
    again = cat.load_table(f"{ns}.t")
    assert again.current_snapshot().snapshot_id == sid
    assert sorted(again.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2]
    # PyIceberg's own writes (an append, a create with its first snapshot in
    # one transaction) land as before.
    again.append(rows(2, start=10))
    tx = cat.create_table_transaction(f"{ns}.created", SCHEMA)
    tx.append(rows(1, start=7))
    tx.commit_transaction()
    assert cat.load_table(f"{ns}.created").scan().to_arrow().num_rows == 1


def _register_body(name: str, metadata_location: str) -> dict[str, Any]:
    return {"name": name, "metadata-location": metadata_location}


def test_register_checks_the_files_its_metadata_names(server, http, ns: str) -> None:
    cat = server.catalog()
    src = cat.create_table(f"{ns}.src", SCHEMA)
    src.append(rows(4))
    src = cat.load_table(f"{ns}.src")
    doc = json.loads(get(server, src.metadata_location))
    snap = doc["snapshots"][0]
    real_list = snap["manifest-list"]

    def register(name: str, mlist_data: bytes | None, mlist: str | None = None,
                 location: str | None = None) -> httpx.Response:
        """A copy of src's metadata in a folder of its own, its snapshot's
        manifest list at ``mlist`` (by default in that folder, holding
        ``mlist_data``)."""
        folder = location or f"{server.warehouse}/reg_{uuid.uuid4().hex}"
        copy = json.loads(json.dumps(doc))
        copy["location"] = folder
        copy["snapshots"][0]["manifest-list"] = mlist or f"{folder}/metadata/snap-1.avro"
        if mlist_data is not None:
            put(server, copy["snapshots"][0]["manifest-list"], mlist_data)
        path = f"{server.warehouse}/reg_meta_{uuid.uuid4().hex}/00000-x.metadata.json"
        put(server, path, json.dumps(copy).encode())
        return http.post(f"{V1}/namespaces/{ns}/register", json=_register_body(name, path))

    _refused(register("r1", GARBAGE), f"Cannot register table {ns}.r1: the manifest list "
             f"of snapshot {snap['snapshot-id']}", "is not a manifest list")
    _refused(register("r2", None, real_list), "is not under the table's location")
    # Its own location outside the warehouse: the next commit would write there.
    outside = ("s3://another-bucket/t" if getattr(server, "s3", None) is not None
               else f"file://{Path(server.data_dir).parent}/outside_{uuid.uuid4().hex}")
    _refused(register("r3", None, f"{outside}/metadata/snap-1.avro", location=outside),
             f"Cannot register table {ns}.r3", "is outside the warehouse")
    http_names = {i["name"] for i in http.get(f"{V1}/namespaces/{ns}/tables").json()[
        "identifiers"]}
    assert http_names == {"src"}
    # A copy with its list in its own folder registers, and reads as src does.
    ok = register("r4", get(server, real_list))
    assert ok.status_code == 200, ok.text
    assert sorted(cat.load_table(f"{ns}.r4").scan().to_arrow().column("id").to_pylist()) == \
        [0, 1, 2, 3]
