"""gc and fsck never stop on one table's damage (issue 43, defect 7): with a
manifest list and a manifest in history that are not Avro (planted in the
warehouse behind the catalog's back), ``POST /api/v2/admin/gc`` and
``sapwood gc`` collect everything else, keep every file in the damaged
tables' folders and name those tables and files; ``GET
/api/v2/admin/fsck?files=true`` and ``sapwood fsck --files`` report them
(exit 1) and the rest of the check (a missing file of another table) as
well. On SQLite and PostgreSQL with a local warehouse, and with the
warehouse on a local S3-compatible server."""

from __future__ import annotations

import subprocess
from typing import Any

from tests.api.test_pyiceberg import SCHEMA, rows
from tests.api.warehouse_files import GARBAGE, age, delete, files, put
from tests.fixtures import WITH_S3, server_fixture
from tests.zygote_client import run as sapwood

server = server_fixture(WITH_S3)


def _verb(server: Any, verb: str, *args: str) -> subprocess.CompletedProcess[str]:
    return sapwood([verb, "--database", server.database_url, "--warehouse", server.warehouse,
                    "--grace", "0", *args], timeout=120,
                   env={"SAPWOOD_DATA_DIR": str(server.data_dir),
                        **getattr(getattr(server, "s3", None), "env", {})})


def _path(location: str) -> str:
    """A location as gc, fsck and fsspec name it (no scheme)."""
    return location.split("://", 1)[1]


def _ids(table: Any) -> list[int]:
    return sorted(table.refresh().scan().to_arrow().column("id").to_pylist())


def test_gc_and_fsck_go_on_past_damaged_tables(server, store, http, ns: str) -> None:
    main = server.catalog()
    healthy = main.create_table(f"{ns}.healthy", SCHEMA)
    healthy.append(rows(3))
    broken = main.create_table(f"{ns}.broken", SCHEMA)
    broken.append(rows(2))
    broken.append(rows(2, start=10))  # its data file is named only by this snapshot's list
    hurt = main.create_table(f"{ns}.hurt", SCHEMA)
    hurt.append(rows(2, start=20))
    lost = main.create_table(f"{ns}.lost", SCHEMA)
    lost.append(rows(1, start=30))
    # A deleted branch's table: files only gc may remove.
    tmp = f"tmp_{ns}"
    store.create_reference(tmp, source="main")
    scratch = server.catalog(tmp).create_table(f"{ns}.scratch", SCHEMA)
    scratch.append(rows(2, start=900))
    scratch_dir = _path(scratch.location())
    store.delete_reference(tmp, store.get_reference(tmp).hash)

    # The damage, planted behind the catalog's back.
    snap = broken.refresh().current_snapshot()
    assert snap is not None
    newest_data = {f.file.file_path for f in broken.scan().plan_files()} - \
        {f.file.file_path for f in broken.scan(snapshot_id=snap.parent_snapshot_id).plan_files()}
    bad_list = snap.manifest_list
    put(server, bad_list, GARBAGE)
    hurt_snap = hurt.refresh().current_snapshot()
    assert hurt_snap is not None
    bad_manifest = hurt_snap.manifests(hurt.io)[0].manifest_path
    put(server, bad_manifest, GARBAGE[:100])
    orphan = f"{broken.location()}/data/orphan-{ns}.parquet"
    put(server, orphan, b"an old file nothing references")
    lost_file = next(iter(f.file.file_path for f in lost.scan().plan_files()))
    delete(server, lost_file)
    age(server, 7200)

    # fsck: both damaged files named with their tables, and the missing one too.
    r = http.get("/api/v2/admin/fsck", params={"files": "true", "graceSeconds": 0})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is False
    damaged = {d["path"]: d for d in body["warehouse"]["damaged"]}
    assert set(damaged) == {_path(bad_list), _path(bad_manifest)}, damaged
    assert damaged[_path(bad_list)]["keys"] == [f"{ns}.broken"]
    assert damaged[_path(bad_list)]["kind"] == "manifest-list"
    assert damaged[_path(bad_list)]["problem"] == "not a manifest list: it is not an Avro file"
    assert damaged[_path(bad_manifest)]["problem"] == "not a manifest: it is not an Avro file"
    assert damaged[_path(bad_manifest)]["keys"] == [f"{ns}.hurt"]
    assert damaged[_path(bad_manifest)]["kind"] == "manifest"
    assert all("main" in d["references"] for d in damaged.values())
    assert {m["path"] for m in body["warehouse"]["missing"]} == {_path(lost_file)}
    cli = _verb(server, "fsck", "--files")
    assert cli.returncode == 1, cli.stdout + cli.stderr
    assert f"damaged manifest-list file {_path(bad_list)}" in cli.stdout, cli.stdout
    assert f"damaged manifest file {_path(bad_manifest)}" in cli.stdout, cli.stdout
    assert f"{ns}.broken" in cli.stdout and f"{ns}.hurt" in cli.stdout
    assert f"missing data file {_path(lost_file)}" in cli.stdout, cli.stdout

    # gc: a dry run names the damage and keeps the damaged tables' folders.
    before = files(server)
    dry = http.post("/api/v2/admin/gc", params={"dryRun": "true", "graceSeconds": 0})
    assert dry.status_code == 200, dry.text
    report = dry.json()
    assert {d["path"] for d in report["warehouse"]["damaged"]} == set(damaged)
    assert {tuple(d["keys"]) for d in report["warehouse"]["damaged"]} == \
        {(f"{ns}.broken",), (f"{ns}.hurt",)}
    doomed = set(report["removedFiles"])
    assert doomed and all(p.startswith(scratch_dir) for p in doomed), doomed
    assert report["warehouse"]["kept_damaged"] >= 1  # the orphan at least
    assert files(server) == before
    # The real run (the command line) removes the rest, and only the rest.
    run = _verb(server, "gc", "--write-window", "3600")
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"kept the folders of a table with a damaged manifest-list file {_path(bad_list)} " \
        f"(not a manifest list: it is not an Avro file): needed by {ns}.broken on main" \
        in run.stdout, run.stdout
    left = files(server)
    assert before - left == doomed
    assert _path(orphan) in left and _path(bad_manifest) in left
    assert {_path(p) for p in newest_data} <= left
    assert _ids(healthy) == [0, 1, 2]
