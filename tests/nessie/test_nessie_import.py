"""``sapwood import --from-nessie`` against a real Nessie 0.99 (issue 47,
acceptance 2), on SQLite and PostgreSQL.

The history is built in Nessie through its own v2 API with plain HTTP, the
metadata files written by PyIceberg (tests/nessie/history.py): a namespace,
tables with appends and overwrites, a view replaced until it has 5 versions
(one of them gzip-compressed, as Iceberg's NessieCatalog writes views), a
branch merged back, a table dropped, a tag, a branch left open, and a branch
of 1,100 commits (the interrupted import's; past Nessie's first two log
pages, 50 then 1,000, so the page read ahead is used). Each import runs the real
``sapwood import`` process. Checked: every reference is there with Nessie's
number of commits; at 20 sampled instants every key's content read at
``ref*instant`` is Nessie's at that instant, on every reference; the view's
audit lists its 5 versions with Nessie's authors and commit times; a second
import adds nothing; an import killed half-way (``kill -9``) and run again
ends complete; a catalog with commits of its own is refused unless told; a
file outside the warehouse refuses the whole import and writes nothing.
Skips without Nessie's server, or fails under SAPWOOD_REQUIRE_SPARK=1.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from catalog.imports.nessie_values import micros
from catalog.kernel import Catalog
from catalog.metadata.files import Locations, MetadataFiles
from catalog.metadata.reading import MetadataReader
from catalog.views.audit import view_history
from core.instants import format_instant, from_micros, to_micros
from core.keys import ContentKey
from core.refs import parse_ref
from store import Store
from tests.fixtures import BACKENDS, database_url
from tests.nessie.history import NessieHistory, comparable
from tests.nessie.server import NessieServer, environment_ready
from tests.server import sapwood_command, serving

REQUIRE = os.environ.get("SAPWOOD_REQUIRE_SPARK") == "1"
# More than catalog/imports/nessie_api.py's FIRST_PAGE + PAGE (1,050): the
# bulk branch's log takes three pages; every commit more only costs time.
BULK = 1100
INSTANTS = 20


@dataclass
class Repo:
    api: str
    warehouse: Path
    history: NessieHistory
    refs: dict[str, dict[str, Any]]  # name -> Nessie's reference
    commits: int  # every commit of the repository
    instants: list[str]  # ISO-8601, to the microsecond
    view_log: list[dict[str, Any]]  # the commitMeta of each commit that put db.v, oldest first


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Repo]:
    found = environment_ready()
    if isinstance(found, str):
        if REQUIRE:
            pytest.fail(f"SAPWOOD_REQUIRE_SPARK=1 but Nessie's server cannot run: {found}")
        pytest.skip(f"Nessie's server unavailable: {found}")
    jars, java = found
    base = tmp_path_factory.mktemp("nessie-import")
    srv = NessieServer(jars, java, base / "nessie").start()
    h = NessieHistory(srv.api, base / "warehouse")
    try:
        _build(h)
        refs = {r["name"]: r for r in h.references()}
        times = sorted(micros(e["commitMeta"]["commitTime"])
                       for r in refs for e in h.log(r))
        rnd = random.Random(47)
        start = micros(h._ok(h.http.get("/config"))["repositoryCreationTimestamp"])
        picks = [rnd.randrange(start, times[-1] + 50_000) for _ in range(INSTANTS - 6)]
        # Exactly at a commit, and just before one: the boundary of "at or before".
        for t in rnd.sample(times, 3):
            picks += [t, t - 1]
        view_log = [e["commitMeta"] for e in reversed(h.log("main")) if _puts(h, e, "db.v")]
        yield Repo(srv.api, base / "warehouse", h, refs, len(set(h.commits)),
                   [format_instant(from_micros(t)) for t in picks], view_log)
    finally:
        h.close()
        srv.stop()


def _build(h: NessieHistory) -> None:
    h.namespace("main", "db", {"owner": "alice"})
    h.create_table("main", "db.t", properties={"app-id": "spark-1"})
    h.append("main", "db.t", [(1, "a"), (2, "b")])
    h.view("main", "db.v", "SELECT id FROM db.t", authors=["carol"])
    h.append("main", "db.t", [(3, "c")], authors=["bob"])
    h.create_table("main", "db.u", authors=["bob"])
    h.branch("v1", ref_type="TAG")
    h.branch("dev")
    h.append("dev", "db.t", [(4, "d")], authors=["dave"])
    h.create_table("dev", "db.w", authors=["dave"])
    h.view("main", "db.v", "SELECT id, name FROM db.t", authors=["carol"])
    h.append("main", "db.u", [(1, "x")], authors=["bob"])
    h.append("main", "db.u", [(2, "y")], authors=["bob"], overwrite=True)
    h.view("main", "db.v", "SELECT id FROM db.t WHERE id > 1", authors=["erin"], gz=True)
    h.merge("dev", authors=["frank"], message="merge dev into main")
    h.view("main", "db.v", "SELECT name FROM db.t", authors=["carol", "erin"],
           signed_off_by=["gina"])
    h.append("main", "db.t", [(9, "z")], overwrite=True)
    h.view("main", "db.v", "SELECT id, name FROM db.t WHERE id < 9",
           properties={"ticket": "T-1"})
    h.delete("main", "db.w")
    h.branch("feature")
    h.namespace("feature", "db.sub")
    h.create_table("feature", "db.sub.x", authors=["hal"])
    h.branch("v2", ref_type="TAG")
    h.branch("bulk")
    h.bulk("bulk", "db.load", BULK)


def _puts(h: NessieHistory, entry: dict[str, Any], key: str) -> bool:
    full = h._ok(h.http.get(f"/trees/@{entry['commitMeta']['hash']}/history",
                            params={"fetch": "ALL", "max-records": 1}))["logEntries"][0]
    return any(op["type"] == "PUT" and ".".join(op["key"]["elements"]) == key
               for op in full.get("operations") or [])


def _import(repo: Repo, url: str, *extra: str, warehouse: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = sapwood_command()
    assert cmd, "the sapwood console script is not installed (pip install -e .)"
    return subprocess.run(
        [*cmd, "import", "--from-nessie", repo.api, "--database", url, "--warehouse",
         warehouse or f"file://{repo.warehouse}", *extra],
        capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})})


def _count(url: str, sql: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text(sql)).scalar() or 0)
    except Exception:  # the schema is not there yet
        return 0
    finally:
        engine.dispose()


def _sapwood_entries(store: Store, spec: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    token = None
    while True:
        page = store.entries(spec, with_content=True, page_token=token)
        for e in page.items:
            assert e.content is not None
            out[".".join(e.key.elements)] = comparable(e.content.to_json())
        token = page.next_token
        if not token:
            return out


def _check_complete(repo: Repo, url: str) -> None:
    """Every reference with Nessie's head content and number of commits,
    every commit mapped."""
    store = Store(url)
    try:
        for name, ref in repo.refs.items():
            here = store.get_reference(name)
            assert here.type.value == ref["type"], name
            depth = store.changes.ancestry([here.hash])[here.hash].depth
            assert depth == repo.history.log_count(name), name
            nessie = {k: comparable(v) for k, v in
                      (repo.history.entries_at(f"{name}@{ref['hash']}") or {}).items()}
            assert _sapwood_entries(store, name) == nessie, name
        assert _count(url, "SELECT count(*) FROM imported_commits") == repo.commits
    finally:
        store.close()


@pytest.fixture(params=BACKENDS)
def catalog_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return database_url(request, request.param, tmp_path / "catalog")


def test_an_import_brings_every_reference_commit_and_content(repo: Repo, catalog_url: str,
                                                             tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    out = _import(repo, catalog_url, "--report", str(report))
    assert out.returncode == 0, out.stderr
    body = json.loads(report.read_text())
    assert body["complete"] and body["problems"] == [] and body["clampedTimes"] == []
    assert body["importedCommits"] == repo.commits
    assert len(body["commits"]) == repo.commits
    assert {r["name"]: r["commits"] for r in body["references"]} == {
        name: repo.history.log_count(name) for name in repo.refs}
    _check_complete(repo, catalog_url)

    store = Store(catalog_url)
    try:
        # Each Nessie commit's metadata, on the commit it maps to.
        mapped = body["commits"]
        for entry in repo.history.log("main")[:40]:
            meta = entry["commitMeta"]
            commit = store.log(f"@{mapped[meta['hash']]}", page_size=1).items[0]
            assert commit.message == meta["message"]
            assert commit.author == (", ".join(a for a in meta["authors"] if a) or None)
            assert to_micros(commit.created_at) == micros(meta["commitTime"])
            assert [mapped.get(p, p) for p in meta["parentCommitHashes"]] == list(commit.parents)
            for k, v in (meta.get("allProperties") or {}).items():
                assert commit.properties[k] == v[0]
        # The merge stays a merge.
        merges = [e for e in repo.history.log("main")
                  if len(e["commitMeta"]["parentCommitHashes"]) > 1]
        assert len(merges) == 1
        merged = store.log(f"@{mapped[merges[0]['commitMeta']['hash']]}", page_size=1).items[0]
        assert len(merged.parents) == 2

        # At 20 instants, every reference reads what Nessie read then.
        compared = 0
        for instant in repo.instants:
            for name in repo.refs:
                nessie = repo.history.entries_at(f"{name}*{instant}")
                assert nessie is not None, (name, instant)
                mine = _sapwood_entries(store, f"{name}*{instant}")
                assert mine == {k: comparable(v) for k, v in nessie.items()}, (name, instant)
                compared += len(mine)
        assert compared > 100

        # The view's audit: its 5 versions, with Nessie's authors and times.
        files = MetadataFiles(MetadataReader(Locations(f"file://{repo.warehouse}", False),
                                             10 << 20, 30))
        catalog = Catalog(store, files, files.reader.locations)
        audit = view_history(catalog, parse_ref("main"), ContentKey.of("db", "v"), None, None)
        assert [v.version_id for v in audit.versions] == [1, 2, 3, 4, 5]
        assert len(repo.view_log) == 5
        for version, meta in zip(audit.versions, repo.view_log, strict=True):
            assert version.commit.author == ", ".join(meta["authors"])
            assert to_micros(version.commit.created_at) == micros(meta["commitTime"])
        assert audit.versions[3].commit.author == "carol, erin"
        assert audit.versions[3].commit.properties["nessie.signed-off-by"] == "gina"
        assert all(a.status == "ok" for v in audit.versions for a in v.analysis)
        reflog_rows = _count(catalog_url, "SELECT count(*) FROM reflog")
        commits = _count(catalog_url, "SELECT count(*) FROM commits")
    finally:
        store.close()

    # A second import adds nothing.
    again = _import(repo, catalog_url, "--report", str(report))
    assert again.returncode == 0, again.stderr
    body = json.loads(report.read_text())
    assert body["importedCommits"] == 0 and body["alreadyImportedCommits"] == repo.commits
    assert {r["action"] for r in body["references"]} == {"unchanged"}
    assert _count(catalog_url, "SELECT count(*) FROM reflog") == reflog_rows
    assert _count(catalog_url, "SELECT count(*) FROM commits") == commits


def test_an_import_killed_half_way_ends_complete_when_run_again(repo: Repo, catalog_url: str,
                                                                tmp_path: Path) -> None:
    cmd = sapwood_command()
    assert cmd
    proc = subprocess.Popen(
        [*cmd, "import", "--from-nessie", repo.api, "--database", catalog_url, "--warehouse",
         f"file://{repo.warehouse}", "--batch", "5"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    landed = 0
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            landed = _count(catalog_url, "SELECT count(*) FROM imported_commits")
            if landed >= 100:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the import ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    landed = _count(catalog_url, "SELECT count(*) FROM imported_commits")
    assert 100 <= landed < repo.commits
    assert landed % 5 == 0  # whole batches only
    # The references move only once every commit is in.
    assert _count(catalog_url, "SELECT count(*) FROM refs") == 1

    report = tmp_path / "report.json"
    out = _import(repo, catalog_url, "--report", str(report))
    assert out.returncode == 0, out.stderr
    body = json.loads(report.read_text())
    assert body["alreadyImportedCommits"] == landed
    assert body["importedCommits"] == repo.commits - landed
    _check_complete(repo, catalog_url)
    fsck = subprocess.run([*cmd, "fsck", "--database", catalog_url], capture_output=True,
                          text=True, timeout=300)
    assert fsck.returncode == 0 and fsck.stdout.strip().endswith("ok"), fsck.stdout + fsck.stderr


def test_a_catalog_with_commits_of_its_own_is_refused_unless_told(repo: Repo,
                                                                  tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'own.db'}"
    store = Store(url)
    try:
        store.create_reference("mine")
        from core.commits import CommitMeta, Put
        from core.content import Namespace

        store.commit("mine", [Put(ContentKey.of("own"), Namespace())], CommitMeta("mine"))
    finally:
        store.close()
    out = _import(repo, url)
    assert out.returncode == 1
    assert "holds 1 commits no import made" in out.stderr and "--into-nonempty" in out.stderr
    assert _count(url, "SELECT count(*) FROM imported_commits") == 0
    told = _import(repo, url, "--into-nonempty")
    assert told.returncode == 0, told.stderr
    store = Store(url)
    try:
        assert store.get_reference("mine").hash != store.get_reference("main").hash
        assert _count(url, "SELECT count(*) FROM imported_commits") == repo.commits
    finally:
        store.close()


def test_a_reference_name_taken_here_refuses_the_import(repo: Repo, tmp_path: Path) -> None:
    """A reference Nessie has that this catalog has for something else (a
    head no import made) refuses the import, even with --into-nonempty, and
    nothing is written (docs/migrating-from-nessie.md)."""
    url = f"sqlite:///{tmp_path / 'taken.db'}"
    store = Store(url)
    try:
        store.create_reference("dev")
        from core.commits import CommitMeta, Put
        from core.content import Namespace

        store.commit("dev", [Put(ContentKey.of("own"), Namespace())], CommitMeta("mine"))
    finally:
        store.close()
    out = _import(repo, url, "--into-nonempty")
    assert out.returncode == 1, out.stdout
    assert "dev" in out.stderr and "no import from Nessie made" in out.stderr, out.stderr
    assert _count(url, "SELECT count(*) FROM imported_commits") == 0


def test_files_outside_the_warehouse_refuse_the_whole_import(repo: Repo,
                                                             tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    report = tmp_path / "refused.json"
    other = tmp_path / "other-warehouse"
    other.mkdir()
    out = _import(repo, url, "--report", str(report), warehouse=f"file://{other}")
    assert out.returncode == 1
    assert "nothing written" in out.stderr and "outside the warehouse" in out.stderr
    body = json.loads(report.read_text())
    assert not body["complete"] and body["importedCommits"] == 0
    keys = {p["key"] for p in body["problems"]}
    assert {"db.t", "db.u", "db.v", "db.w", "db.sub.x"} <= keys
    assert all(p["nessieCommit"] for p in body["problems"])
    assert _count(url, "SELECT count(*) FROM commits") == 1  # the empty root alone
    assert _count(url, "SELECT count(*) FROM refs") == 1
    # Allowed outside the warehouse, the same files are read and checked.
    allowed = _import(repo, url, warehouse=f"file://{other}",
                      env={"SAPWOOD_ALLOW_EXTERNAL_LOCATIONS": "1"})
    assert allowed.returncode == 0, allowed.stderr
    assert _count(url, "SELECT count(*) FROM imported_commits") == repo.commits


def test_the_admin_route_imports_as_the_command_does(repo: Repo, catalog_url: str,
                                                      tmp_path: Path) -> None:
    """POST /api/v2/admin/import: the same run over the server's own catalog
    (its 401/403 are tests/api/test_auth_routes.py's, as every route's). A
    body it cannot use is a 400 naming it, and nothing is written."""
    with serving(catalog_url, tmp_path / "server",
                 warehouse=f"file://{repo.warehouse}") as srv, \
            httpx.Client(base_url=srv.base, timeout=600) as http:
        for sent, named in [
            ({"fromNessie": repo.api, "dryRun": True}, "dryRun"),
            ({"fromNessie": "ftp://nessie/api/v2"}, "http:// or https://"),
            ({}, "fromNessie"),
            ({"fromNessie": repo.api, "batchSize": "100"}, "batchSize"),
            ({"fromNessie": repo.api, "batchSize": 0}, "batchSize"),
            ({"fromNessie": repo.api, "intoNonempty": "yes"}, "intoNonempty"),
        ]:
            r = http.post("/api/v2/admin/import", json=sent)
            assert r.status_code == 400, (sent, r.text)
            assert named in r.json()["message"] and "nothing was done" in r.json()["message"]
        r = http.post("/api/v2/admin/import", content=b"fromNessie=x",
                      headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status_code == 400 and "JSON object" in r.json()["message"], r.text
        assert _count(catalog_url, "SELECT count(*) FROM imported_commits") == 0

        r = http.post("/api/v2/admin/import", json={"fromNessie": repo.api, "batchSize": 200})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["importedCommits"] == repo.commits
        assert {ref["name"] for ref in body["references"]} == set(repo.refs)
        _check_complete(repo, catalog_url)
        # Served at once: main's history is Nessie's.
        log = http.get("/api/v2/trees/main/history", params={"max-records": 1}).json()
        assert log["logEntries"][0]["commitMeta"]["message"] == \
            repo.history.log("main")[0]["commitMeta"]["message"]

        again = http.post("/api/v2/admin/import", json={"fromNessie": repo.api})
        assert again.status_code == 200, again.text
        assert again.json()["importedCommits"] == 0
