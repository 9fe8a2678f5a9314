"""Garbage collection never deletes a file a commit in flight needs, and
fsck --files finds any file that is gone (docs/operations.md).

A client writes its files (data, manifests, manifest list) before it
commits. gc keeps every file written within its write window before the
mark began, reads the references again before it deletes, and a commit
whose manifest list is gone is refused. With the warehouse on local disk
(SQLite, PostgreSQL) and on a local S3-compatible server.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
from pyiceberg.exceptions import BadRequestError

from core.retention import Policy
from store import Store
from tests.api.test_gc_warehouse import _files, _gc, _path, age
from tests.api.test_pyiceberg import SCHEMA, rows
from tests.fixtures import WITH_S3, server_fixture
from tests.http import http_client
from tests.server import Server, serving
from tests.zygote_client import run as sapwood
from tests.zygote_client import spawn

server = server_fixture(WITH_S3)


def _fsck(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    return sapwood(["fsck", "--database", server.database_url, "--warehouse", server.warehouse,
                    "--files", "--grace", "0", *args], timeout=120,
                   env={"SAPWOOD_DATA_DIR": str(server.data_dir),
                        **getattr(getattr(server, "s3", None), "env", {})})


def whole(http: httpx.Client) -> None:
    """fsck --files over HTTP: the store and every file of every version."""
    r = http.get("/api/v2/admin/fsck", params={"files": "true", "graceSeconds": 0})
    assert r.status_code == 200 and r.json()["ok"] is True, r.text


def ids(table) -> list[int]:  # type: ignore[no-untyped-def]
    return sorted(table.refresh().scan().to_arrow().column("id").to_pylist())


def garbage(server: Server, store, ns: str) -> str:  # type: ignore[no-untyped-def]
    """A branch with a table of its own, deleted: files only gc may remove."""
    name = f"tmp_{ns}"
    store.create_reference(name, source="main")
    t = server.catalog(name).create_table(f"{ns}.scratch", SCHEMA)
    t.append(rows(2, start=900))
    store.delete_reference(name, store.get_reference(name).hash)
    return _path(t.location())


def test_a_commit_in_flight_keeps_its_files(server, store, http, ns: str) -> None:
    main = server.catalog()
    table = main.create_table(f"{ns}.t", SCHEMA)
    table.append(rows(3))
    scratch = garbage(server, store, ns)
    age(server, 7200)  # everything so far is old: past the window
    # The writer has written its files and not yet committed.
    tx = main.load_table(f"{ns}.t").transaction()
    tx.append(rows(2, start=100))
    before = _files(server)
    run = _gc(server)
    assert run.returncode == 0, run.stdout + run.stderr
    left = _files(server)
    assert not any(f.startswith(scratch) for f in left), run.stdout  # gc did collect
    staged = before - {f for f in before if f.startswith(scratch)}
    assert staged <= left, sorted(staged - left)
    tx.commit_transaction()
    assert ids(main.load_table(f"{ns}.t")) == [0, 1, 2, 100, 101]
    whole(http)


def test_a_commit_of_files_gc_removed_is_refused(server, store, http, ns: str) -> None:
    """A writer slower than the window: its files go, and its commit is
    refused instead of landing a table nobody can read."""
    main = server.catalog()
    table = main.create_table(f"{ns}.slow", SCHEMA)
    table.append(rows(1))
    tx = main.load_table(f"{ns}.slow").transaction()
    tx.append(rows(2, start=100))
    age(server, 7200)  # the writer took two hours
    run = http.post("/api/v2/admin/gc", params={"graceSeconds": 0, "writeWindowSeconds": 10})
    assert run.status_code == 200 and run.json()["warehouse"]["removed_files"] > 0, run.text
    with pytest.raises(BadRequestError, match="manifest list of snapshot"):
        tx.commit_transaction()
    assert ids(main.load_table(f"{ns}.slow")) == [0]
    whole(http)


def test_fsck_files_reports_a_missing_file(server, store, http, ns: str) -> None:
    main = server.catalog()
    table = main.create_table(f"{ns}.damaged", SCHEMA)
    table.append(rows(2))
    snap = table.current_snapshot().snapshot_id
    data = next(iter(table.inspect.files().column("file_path").to_pylist()))
    whole(http)
    s3 = getattr(server, "s3", None)
    if s3 is not None:
        bucket, key = _path(data).split("/", 1)
        saved = s3.client().get_object(Bucket=bucket, Key=key)["Body"].read()
        s3.client().delete_object(Bucket=bucket, Key=key)
    else:
        saved = Path(_path(data)).read_bytes()
        Path(_path(data)).unlink()
    check = _fsck(server)
    assert check.returncode == 1, check.stdout + check.stderr
    line = next(x for x in check.stdout.splitlines() if x.startswith("missing data file"))
    assert _path(data) in line and f"{ns}.damaged" in line and "on main" in line, line
    assert f"snapshots {snap}" in line, line
    r = http.get("/api/v2/admin/fsck", params={"files": "true", "graceSeconds": 0})
    assert r.status_code == 200 and r.json()["ok"] is False, r.text
    (missing,) = r.json()["warehouse"]["missing"]
    assert missing["kind"] == "data" and missing["path"] == _path(data)
    assert missing["keys"] == [f"{ns}.damaged"] and missing["references"] == ["main"]
    assert missing["snapshots"] == [snap]
    assert http.get("/api/v2/admin/fsck").json()["ok"] is True  # the store itself is whole
    main.drop_table(f"{ns}.damaged")  # its history still needs the file: still reported
    r = http.get("/api/v2/admin/fsck", params={"files": "true", "graceSeconds": 0})
    assert [m["path"] for m in r.json()["warehouse"]["missing"]] == [_path(data)]
    # Put back (the module's other tests share this warehouse): whole again.
    if s3 is not None:
        s3.client().put_object(Bucket=bucket, Key=key, Body=saved)
    else:
        Path(_path(data)).write_bytes(saved)
    whole(http)


# -- the probe: writers, branch churn and gc killed at random, five runs ----------------
RUNS = 5
RUN_S = 4.0


def test_gc_looping_beside_writers_loses_nothing(tmp_path: Path) -> None:
    """Three PyIceberg writers append to ns.t0..t2 on main, a fourth makes a
    branch, appends to ns.t0 on it and deletes it, over and over; `sapwood
    gc` loops with grace 0 and the smallest write window it accepts (10 s),
    killed with SIGKILL at random 60 % of the time, with a retention policy
    on main (keep PT5S: gc expires its snapshots and its history's files as
    the writers commit). After each run every acknowledged append reads on
    main; after the five, and a last gc, too, and fsck --files is clean (a
    file gone in any run would still be missing); gc did remove the deleted
    branches' files; and storage stops growing across rounds: what history
    holds (metadata files) stays bounded while the appended data grows."""
    with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path) as server:
        http = http_client(base_url=server.base, timeout=30)
        cat = server.catalog()
        cat.create_namespace("ns")
        for i in range(3):
            cat.create_table(f"ns.t{i}", SCHEMA).append(rows(1, start=0))
        store = Store(server.database_url)
        store.retention.replace([Policy("main", "PT5S")])
        store.close()
        acked: dict[int, set[int]] = {i: {0} for i in range(3)}
        removed = 0
        rounds: list[dict[str, int]] = []
        rng = random.Random(22)
        for run in range(RUNS):
            stop = threading.Event()
            errors: list[BaseException] = []
            threads = [threading.Thread(target=_appender, args=(server, i, run, acked[i], stop,
                                                                 errors)) for i in range(3)]
            threads.append(threading.Thread(target=_churn, args=(server, http, run, stop,
                                                                 errors)))
            for t in threads:
                t.start()
            end = time.monotonic() + RUN_S
            while time.monotonic() < end:
                log = tmp_path / f"gc-{run}-{time.monotonic_ns()}.log"
                proc = spawn(_gc_args(server), {**os.environ, "PYTHONFAULTHANDLER": "1"}, log)
                if rng.random() < 0.6:
                    time.sleep(rng.uniform(0.3, 2.0))
                    proc.send_signal(signal.SIGKILL)
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGABRT)  # faulthandler: where it hangs
                    proc.wait(30)
                    raise AssertionError(log.read_text()) from None
                out = log.read_text()
                assert proc.returncode in (0, 2, -signal.SIGKILL), out
                removed += _removed(out)
            stop.set()
            for t in threads:
                t.join(timeout=120)
            assert not errors, errors
            _all_read(server, acked, run)
            settled = sapwood(_gc_args(server), timeout=120)
            assert settled.returncode in (0, 2), settled.stdout + settled.stderr
            removed += _removed(settled.stdout)
            rounds.append(_storage(server))
        final = sapwood(_gc_args(server), timeout=120)
        assert final.returncode in (0, 2), final.stdout + final.stderr
        removed += _removed(final.stdout)
        _all_read(server, acked, RUNS)
        print("warehouse per round:", rounds)
        # Without retention every commit's metadata file stays: round five
        # would hold about five times round one's. With it, what the last
        # five seconds wrote.
        assert rounds[-1]["metadata_files"] < 2 * rounds[0]["metadata_files"], rounds
        assert rounds[-1]["data_bytes"] > rounds[0]["data_bytes"], rounds
        check = sapwood(["fsck", "--database", server.database_url, "--warehouse",
                         server.warehouse, "--files", "--grace", "0"], timeout=120)
        assert check.returncode == 0, check.stdout + check.stderr
        assert removed > 0, "gc never removed a deleted branch's files"
        assert sum(len(a) for a in acked.values()) > 3 * RUNS


def _storage(server: Server) -> dict[str, int]:
    """The warehouse's bytes: in all, in data files, and how many metadata
    files (one per table version history still holds)."""
    root = Path(_path(server.warehouse))
    found = [p for p in root.rglob("*") if p.is_file()]
    return {"bytes": sum(p.stat().st_size for p in found),
            "data_bytes": sum(p.stat().st_size for p in found if p.suffix == ".parquet"),
            "metadata_files": sum(1 for p in found if p.name.endswith(".metadata.json"))}


def _all_read(server: Server, acked: dict[int, set[int]], run: int) -> None:
    """Every acknowledged append is in its table on main (every manifest and
    data file of the current snapshots read)."""
    reader = server.catalog()
    for i, rows_acked in acked.items():
        got = set(reader.load_table(f"ns.t{i}").scan().to_arrow().column("id").to_pylist())
        assert rows_acked <= got, (run, i, sorted(rows_acked - got))


def _gc_args(server: Server) -> list[str]:
    return ["gc", "--database", server.database_url, "--warehouse", server.warehouse,
            "--grace", "0", "--write-window", "10"]


def _removed(out: str) -> int:
    for line in out.splitlines():
        if line.startswith("warehouse:") and "removed " in line:
            return int(line.split("removed ", 1)[1].split(" ", 1)[0])
    return 0


def _appender(server: Server, i: int, run: int, acked: set[int], stop: threading.Event,
              errors: list[BaseException]) -> None:
    try:
        cat = server.catalog()
        n = 0
        while not stop.is_set():
            n += 1
            row = 1_000_000 * (run + 1) + n
            cat.load_table(f"ns.t{i}").append(rows(1, start=row))
            acked.add(row)  # acknowledged: the commit answered 200
            stop.wait(0.15)  # a steady writer, not a flood: gc reads every version
    except BaseException as e:
        errors.append(e)


def _churn(server: Server, http: httpx.Client, run: int, stop: threading.Event,
           errors: list[BaseException]) -> None:
    try:
        n = 0
        while not stop.is_set():
            n += 1
            name = f"churn{run}_{n}"
            head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
            r = http.post("/api/v2/trees", params={"name": name, "type": "BRANCH"},
                          json={"type": "BRANCH", "name": "main", "hash": head})
            assert r.status_code == 200, r.text
            server.catalog(name).load_table("ns.t0").append(rows(3, start=500_000 + n))
            h = http.get(f"/api/v2/trees/{name}").json()["reference"]["hash"]
            assert http.delete(f"/api/v2/trees/{name}@{h}").status_code == 200
    except BaseException as e:
        errors.append(e)
