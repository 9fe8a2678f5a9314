"""Signing does not trust a table it cannot read (issue 43, defect 7's
rule for gc, held by remote signing): when a metadata file, manifest list or
manifest that a retained version references is there but cannot be read,
which files that table needs is unknown, so an object in its folders is
neither deleted nor written through a signature — 403 naming the damaged
file to a caller that may read the version needing it, and only "a retained
commit of another reference" to one that may not; never a 5xx. Another
table's objects are signed as before. And a write's answer follows history
as it is: a file a commit just named is refused at once.

The damage is planted in the bucket behind the catalog's back (the commit
check, catalog.metadata.snapshot_files, refuses it when it comes through a commit).
On an S3 that checks every signature (tests.moto_secured), the catalog on
SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog

from tests.api.test_signing_rules import deleting
from tests.api.test_storage_access import SCHEMA, World, secured_world
from tests.api.warehouse_files import GARBAGE
from tests.fixtures import BACKENDS, database_url
from tests.s3 import BUCKET

GRANTS: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "admin": [(p, "*", ()) for p in ("read", "write", "create-reference", "delete-reference",
                                     "manage-grants")],
    "etl": [("read", "*", ("sales",)), ("write", "*", ("sales",))],
    # Writes sales on main, and reads no other reference.
    "mainonly": [("read", "main", ("sales",)), ("write", "main", ("sales",))],
}


@dataclass
class Scene:
    w: World

    def key(self, location: str) -> str:
        """A location in the bucket as its key."""
        return location.removeprefix(f"s3://{BUCKET}/")

    def uri(self, key: str) -> str:
        return f"{self.w.s3.endpoint}/{BUCKET}/{key}"

    def sign(self, who: str, table: str, method: str, key: str | None = None,
             body: bytes | None = None) -> httpx.Response:
        uri = self.uri(key) if key is not None else f"{self.w.s3.endpoint}/{BUCKET}?delete"
        return self.w.http(who).post(f"/iceberg/v1/namespaces/sales/tables/{table}/sign", json={
            "method": method, "region": "us-east-1", "uri": uri, "headers": {},
            "body": body.decode() if body is not None else None})

    def stray(self, table: str, location: str) -> str:
        """A file nothing references, in the table's data folder, written
        through a signature by etl (so etl may delete it)."""
        key = f"{self.key(location)}/data/stray-{uuid.uuid4().hex}.parquet"
        r = self.sign("etl", table, "PUT", key)
        assert r.status_code == 200, r.text
        headers = {k: v[0] for k, v in r.json()["headers"].items()}
        assert httpx.put(self.uri(key), content=b"stray", headers=headers).status_code == 200
        return key

    def plant(self, location: str) -> None:
        """Garbage where a file the catalog's history names is."""
        self.w.s3.client().put_object(Bucket=BUCKET, Key=self.key(location), Body=GARBAGE)

    def catalog(self, who: str, ref: str | None = None) -> RestCatalog:
        return RestCatalog(f"{who}-{ref}", uri=self.w.server.uri(ref), **{
            "credential": self.w.keys[who], "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO",
            "header.X-Iceberg-Access-Delegation": "remote-signing"})


@pytest.fixture(scope="module", params=BACKENDS)
def scene(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          ) -> Iterator[Scene]:
    tmp = tmp_path_factory.mktemp("signing-damage")
    with secured_world(tmp, GRANTS, database_url(request, request.param, tmp)) as w:
        yield Scene(w)


def _refused_for_damage(r: httpx.Response, written: bool) -> str:
    assert r.status_code == 403, r.text
    message = str(r.json()["error"]["message"])
    assert "lies in the folders of a table whose retained history cannot all be read" \
        in message, message
    assert f"none is {'written' if written else 'deleted'} through a signature" in message
    return message


def test_a_damaged_manifest_list_stops_signing_in_its_tables_folders_only(scene: Scene,
                                                                           ) -> None:
    s = scene
    etl = s.catalog("etl")
    t = etl.create_table("sales.lists", SCHEMA)
    t.append(pa.table({"id": [1]}, schema=SCHEMA))
    first_data = {f.file.file_path for f in t.scan().plan_files()}
    orphan = s.stray("lists", t.location())
    # Damaged before the catalog reads it (a file read once is known by what
    # it held: files never change).
    t.append(pa.table({"id": [2]}, schema=SCHEMA))
    newest = {f.file.file_path for f in t.scan().plan_files()} - first_data
    snap = t.current_snapshot()
    assert snap is not None and len(newest) == 1
    healthy = etl.create_table("sales.healthy", SCHEMA)
    healthy.append(pa.table({"id": [3]}, schema=SCHEMA))
    healthy_orphan = s.stray("healthy", healthy.location())

    # The newest snapshot's manifest list, overwritten with garbage.
    s.plant(snap.manifest_list)
    bad = f"{BUCKET}/{s.key(snap.manifest_list)}"
    answers = {
        "delete an orphan": s.sign("etl", "lists", "DELETE", orphan),
        "delete objects": s.sign("etl", "lists", "POST", body=deleting(orphan)),
        "delete the data file only the damaged list names":
            s.sign("etl", "lists", "DELETE", s.key(next(iter(newest)))),
    }
    for what, r in answers.items():
        message = _refused_for_damage(r, written=False)
        assert f"manifest-list file {bad} cannot be read: not a manifest list: it is not an " \
               "Avro file" in message, (what, message)
        assert "retained by branch 'main'" in message and "sales.lists" in message, message
    new_key = f"{s.key(t.location())}/data/new-{uuid.uuid4().hex}.parquet"
    message = _refused_for_damage(s.sign("etl", "lists", "PUT", new_key), written=True)
    assert bad in message
    # The same answer again (what was read is not taken as naming nothing).
    _refused_for_damage(s.sign("etl", "lists", "DELETE", orphan), written=False)

    # Another table's objects are signed as before.
    assert s.sign("etl", "healthy", "DELETE", healthy_orphan).status_code == 200
    fresh = f"{s.key(healthy.location())}/data/new-{uuid.uuid4().hex}.parquet"
    assert s.sign("etl", "healthy", "PUT", fresh).status_code == 200
    r = s.sign("etl", "healthy", "DELETE", s.key(next(iter(
        f.file.file_path for f in healthy.scan().plan_files()))))
    assert r.status_code == 403 and "is referenced by history that is retained" in r.text

    # A write's answer follows history: a file a commit just named (its
    # PUT was signed, and so answered "free", before the commit) is refused
    # at once, and one a branch names after it as well.
    before = {f.file.file_path for f in healthy.scan().plan_files()}
    healthy.append(pa.table({"id": [4]}, schema=SCHEMA))
    (added,) = {f.file.file_path for f in healthy.refresh().scan().plan_files()} - before
    r = s.sign("etl", "healthy", "PUT", s.key(added))
    assert r.status_code == 403, r.text
    assert "is referenced by history that is retained" in r.text
    assert "retained by branch 'main'" in r.text
    admin = s.w.http("admin")
    head = admin.get("/api/v2/trees/main").json()["reference"]["hash"]
    r = admin.post("/api/v2/trees", params={"name": "w/later", "type": "BRANCH"},
                   json={"type": "BRANCH", "name": "main", "hash": head})
    assert r.status_code == 200, r.text
    on_branch = s.catalog("etl", "w/later").load_table("sales.healthy")
    on_branch.append(pa.table({"id": [5]}, schema=SCHEMA))
    (branch_file,) = {f.file.file_path for f in on_branch.refresh().scan().plan_files()} - \
        {f.file.file_path for f in healthy.refresh().scan().plan_files()}
    r = s.sign("etl", "healthy", "PUT", s.key(branch_file))
    assert r.status_code == 403 and "retained by branch 'w/later'" in r.text, r.text


def test_unreadable_metadata_is_damage_and_names_nothing_hidden(scene: Scene) -> None:
    s = scene
    etl = s.catalog("etl")
    t = etl.create_table("sales.meta", SCHEMA)
    t.append(pa.table({"id": [1]}, schema=SCHEMA))
    admin = s.w.http("admin")
    head = admin.get("/api/v2/trees/main").json()["reference"]["hash"]
    r = admin.post("/api/v2/trees", params={"name": "hid", "type": "BRANCH"},
                   json={"type": "BRANCH", "name": "main", "hash": head})
    assert r.status_code == 200, r.text
    orphan = s.stray("meta", t.location())
    on_hid = s.catalog("etl", "hid").load_table("sales.meta")
    on_hid.append(pa.table({"id": [2]}, schema=SCHEMA))
    hidden_metadata = on_hid.refresh().metadata_location
    # Only branch hid's version is damaged: main's reads as before.
    s.plant(hidden_metadata)
    bad = f"{BUCKET}/{s.key(hidden_metadata)}"

    # etl reads hid: told which file, which table, which branch.
    message = _refused_for_damage(s.sign("etl", "meta", "DELETE", orphan), written=False)
    assert f"metadata file {bad} cannot be read: not UTF-8 JSON text" in message, message
    assert "retained by branch 'hid'" in message and "sales.meta" in message, message
    new_key = f"{s.key(t.location())}/data/new-{uuid.uuid4().hex}.parquet"
    _refused_for_damage(s.sign("etl", "meta", "PUT", new_key), written=True)

    # mainonly reads main only: refused all the same, told nothing of hid.
    for method, key in [("DELETE", orphan), ("PUT", new_key)]:
        message = _refused_for_damage(s.sign("mainonly", "meta", method, key),
                                      written=method == "PUT")
        assert "(a retained commit of another reference)" in message, message
        assert "hid" not in message.replace(f"/{new_key}", "").replace(f"/{orphan}", "")
        assert s.key(hidden_metadata) not in message and "metadata file" not in message
    # The orphan is still there: nothing was deleted.
    assert orphan in s.w.s3.keys(s.key(t.location()))
