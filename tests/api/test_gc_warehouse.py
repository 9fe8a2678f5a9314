"""sapwood gc end to end: a branch with tables and a view written by
PyIceberg is deleted; gc (grace 0) removes its commits and the warehouse
files only it referenced, and every table on main — and its older snapshots
— reads exactly as before; a dry run removes nothing. With the warehouse on
local disk (SQLite, PostgreSQL) and on a local S3-compatible server."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from store import Store
from store.fsck import fsck
from tests.api.test_pyiceberg import SCHEMA, rows, version
from tests.fixtures import WITH_S3, server_fixture
from tests.zygote_client import run as sapwood

server = server_fixture(WITH_S3)


def _path(location: str) -> str:
    return location.split("://", 1)[1]


def _files(server) -> set[str]:  # type: ignore[no-untyped-def]
    """Every file in the server's warehouse, as bucket/key or a local path."""
    root = _path(server.warehouse)
    s3 = getattr(server, "s3", None)
    if s3 is not None:
        bucket, prefix = root.split("/", 1)
        return {f"{bucket}/{k}" for k in s3.keys(prefix + "/")}
    return {str(p) for p in Path(root).rglob("*") if p.is_file()}


def age(server, seconds: float) -> None:  # type: ignore[no-untyped-def]
    """Every file in the server's warehouse ``seconds`` older: past gc's
    write window, as time would make them."""
    s3 = getattr(server, "s3", None)
    root = _path(server.warehouse)
    if s3 is not None:
        s3.age(root.split("/", 1)[1] + "/", seconds)
        return
    for p in Path(root).rglob("*"):
        if p.is_file():
            st = p.stat()
            os.utime(p, (st.st_atime - seconds, st.st_mtime - seconds))


def _gc(server, *args: str) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return sapwood(["gc", "--database", server.database_url, "--warehouse", server.warehouse,
                    "--grace", "0", "--write-window", "3600", *args], timeout=120,
                   env={"SAPWOOD_DATA_DIR": str(server.data_dir),
                        **getattr(getattr(server, "s3", None), "env", {})})


def test_gc_removes_a_deleted_branch_and_its_files(server, store, http, ns: str) -> None:
    main = server.catalog()
    main.create_table(f"{ns}.keep", SCHEMA).append(rows(3))
    main.create_view(f"{ns}.v", SCHEMA, version("SELECT 1 AS id, 'a' AS name"))
    main.load_table(f"{ns}.keep").append(rows(2, start=10))
    tmp = f"tmp_{ns}"
    store.create_reference(tmp, source="main")
    side = server.catalog(tmp)
    # 50 commits on tmp: tables with data, a view replaced again and again.
    scratch = side.create_table(f"{ns}.scratch", SCHEMA)
    side.create_view(f"{ns}.tmp_view", SCHEMA, version("SELECT 0 AS id, 'x' AS name"))
    for i in range(40):
        side.load_table(f"{ns}.scratch").append(rows(2, start=100 + 10 * i))
    for i in range(7):
        side.load_table(f"{ns}.keep").append(rows(1, start=500 + i))  # files only tmp sees
    uuid = http.get(f"/iceberg/{tmp}/v1/namespaces/{ns}/views/tmp_view").json()[
        "metadata"]["view-uuid"]
    from tests.api import spark_bodies as sb

    assert http.post(f"/iceberg/{tmp}/v1/namespaces/{ns}/views/tmp_view", json=sb.replace_view(
        uuid, "SELECT 2 AS id, 'y' AS name")).status_code == 200
    assert len(store.log(tmp, page_size=60).items) >= 50
    scratch_dir = _path(scratch.location())
    store.delete_reference(tmp, store.get_reference(tmp).hash)
    # What main says now and at every instant of its history (each commit's time).
    instants = [c.created_at for c in store.log("main", page_size=100).items]
    before = _reads(server, ns, instants)

    everything = _files(server)
    assert any(f.startswith(scratch_dir) for f in everything)
    # Written within the hour: inside gc's write window, kept whatever the grace.
    young = _gc(server)
    assert young.returncode == 0 and "removed 0 files" in young.stdout, young.stdout
    assert _files(server) == everything
    age(server, 7200)
    dry = _gc(server, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "would remove" in dry.stdout and _files(server) == everything
    run = _gc(server)
    assert run.returncode == 0, run.stdout + run.stderr
    left = _files(server)
    gone = everything - left
    assert gone and not any(f.startswith(scratch_dir) for f in left), run.stdout
    assert all(f.startswith(_path(server.warehouse)) for f in gone)
    assert _reads(server, ns, instants) == before
    s = Store(server.database_url)
    try:
        assert fsck(s).ok, fsck(s).problems
    finally:
        s.close()


def _reads(server, ns: str, instants: list) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """Every table's rows and every view's SQL on main, now and as of each instant."""
    from core.instants import format_instant

    out: dict[str, object] = {}
    for at in [None, *instants]:
        ref = f"main*{format_instant(at)}" if at is not None else None
        cat = server.catalog(ref)
        for ident in cat.list_tables(ns):
            t = cat.load_table(ident)
            out[f"{ref}:{ident}"] = sorted(t.scan().to_arrow().column("id").to_pylist()) \
                if t.current_snapshot() else []
        for ident in cat.list_views(ns):
            v = cat.load_view(ident)
            out[f"{ref}:{ident}"] = [r.root.sql for r in v.metadata.versions[-1].representations]
    return out

def test_gc_over_http(server, store, http, ns: str) -> None:
    """POST /api/v2/admin/gc: the same collection, reported as JSON."""
    tmp = f"tmp2_{ns}"
    store.create_reference(tmp, source="main")
    server.catalog(tmp).create_table(f"{ns}.scratch2", SCHEMA).append(rows(2))
    store.delete_reference(tmp, store.get_reference(tmp).hash)
    age(server, 7200)
    dry = http.post("/api/v2/admin/gc", params={"dryRun": "true", "graceSeconds": 0})
    assert dry.status_code == 200, dry.text
    assert dry.json()["store"]["dry_run"] is True and dry.json()["store"]["removed_commits"] >= 2
    r = http.post("/api/v2/admin/gc", params={"graceSeconds": 0})
    assert r.status_code == 200, r.text
    assert r.json()["store"]["removed_commits"] == dry.json()["store"]["removed_commits"]
    assert r.json()["warehouse"]["removed_files"] >= 1
    metrics = http.get("/metrics").text
    assert "sapwood_gc_runs_total 1.0" in metrics
    assert f"sapwood_gc_removed_commits_total {float(r.json()['store']['removed_commits'])}" \
        in metrics
    if server.database_url.startswith("sqlite") and getattr(server, "s3", None) is None:
        _refusals(server, http)  # the arguments' checks do not depend on the backend


def _refusals(server, http) -> None:  # type: ignore[no-untyped-def]
    for grace in ("-1", "inf", "-inf", "nan", "1e308", "Infinity"):
        for dry in ("true", "false"):
            bad = http.post("/api/v2/admin/gc", params={"graceSeconds": grace, "dryRun": dry})
            assert bad.status_code == 400, (grace, bad.text)
            assert "graceSeconds" in bad.json()["message"], bad.text
    cli = _gc(server, "--grace", "inf")
    assert cli.returncode == 1 and "grace period inf" in cli.stderr, cli.stdout + cli.stderr
    cli = _gc(server, "--write-window", "9.9")  # the write window has a floor
    assert cli.returncode == 1 and "write window" in cli.stderr, cli.stdout + cli.stderr
    for window in ("0", "9.9", "inf", "nan"):
        bad = http.post("/api/v2/admin/gc", params={"writeWindowSeconds": window})
        assert bad.status_code == 400 and "writeWindowSeconds" in bad.json()["message"], bad.text
