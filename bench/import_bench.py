"""Nessie import benchmark (issue 47, acceptance 3): how fast ``sapwood import
--from-nessie`` brings a long history, and in how much memory.

    python bench/import_bench.py            # 10^4 commits (about two minutes)
    python bench/import_bench.py --commits 2000
    python bench/import_bench.py --smoke    # 300 commits, one merge (the suite runs it)

A real Nessie 0.99 (tests/nessie/server.py, in memory) is given a history
directly through its v2 API: on ``main``, commits that each point one of 50
tables at a new metadata file (table metadata as Iceberg writes it, no
snapshots, written by this script into the warehouse), one in 100 a new
version of one of 5 views (analysed on import, as any view commit is), and
every 1,000 commits a branch of 50 such commits merged back (merges kept as
merges), a tag on the way. Then one ``sapwood import --from-nessie`` process
on a new SQLite catalog, its memory sampled as it runs (tests/peak_memory.py).

Figures:
``import_commits_per_s``: the repository's commits ÷ the import's own
  duration (its report's start to finish: reading Nessie's log with
  ``fetch=ALL``, every file checked, every commit written, every reference
  moved; the process's start, about a second of Python imports, not
  counted — ``import_wall_s`` says the whole). Goal: ≥ 500 on 2 cores.
``import_peak_rss_mb``: the import process's peak resident memory. Goal: ≤ 500.
The Nessie server runs on the same 2 cores while the import reads it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.table.metadata import new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from catalog.imports.nessie_values import micros
from core.views import AddViewVersion, SetCurrentViewVersion, apply_view_updates, new_view_metadata
from tests.nessie.history import SCHEMA
from tests.nessie.server import NessieServer, environment_ready
from tests.peak_memory import run_measured
from tests.server import sapwood_command

TABLES = 50
VIEWS = 5
BRANCH_EVERY = 1000
BRANCH_COMMITS = 50


class Generator:
    """Commits straight into Nessie, each naming a metadata file written here."""

    def __init__(self, api: str, warehouse: Path) -> None:
        self.http = httpx.Client(base_url=api, timeout=60)
        self.warehouse = warehouse
        self.heads: dict[str, str] = {}
        self.ids: dict[str, str] = {}
        self.views: dict[str, Any] = {}
        self.count = 0
        meta = new_table_metadata(SCHEMA, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER,
                                  "LOCATION", {"owner": "bench"})
        self.template = meta.model_dump_json().replace('"LOCATION"', '"{location}"')

    def head(self, branch: str) -> str:
        if branch not in self.heads:
            self.heads[branch] = self.http.get(f"/trees/{branch}").json()["reference"]["hash"]
        return self.heads[branch]

    def commit(self, branch: str, key: list[str], content: dict[str, Any], message: str,
               author: str) -> None:
        name = ".".join(key)
        if name in self.ids:
            content["id"] = self.ids[name]
        r = self.http.post(f"/trees/{branch}@{self.head(branch)}/history/commit", json={
            "commitMeta": {"message": message, "authors": [author],
                           "properties": {"bench.n": str(self.count)}},
            "operations": [{"type": "PUT", "key": {"elements": key}, "content": content}]})
        assert r.status_code == 200, r.text
        body = r.json()
        for added in body.get("addedContents") or []:
            self.ids[".".join(added["key"]["elements"])] = added["contentId"]
        self.heads[branch] = body["targetBranch"]["hash"]
        self.count += 1

    def table(self, branch: str, i: int) -> None:
        folder = self.warehouse / "bench" / f"t{i}"
        path = folder / "metadata" / f"{self.count:05d}-{uuid.uuid4()}.metadata.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.template.replace("{location}", f"file://{folder}"))
        self.commit(branch, ["bench", f"t{i}"], {
            "type": "ICEBERG_TABLE", "metadataLocation": f"file://{path}", "snapshotId": -1,
            "schemaId": 0, "specId": 0, "sortOrderId": 0}, f"append to t{i}", f"writer{i % 7}")

    def view(self, branch: str, i: int) -> None:
        name = f"v{i}"
        now_ms = int(time.time() * 1000)
        sql = f"SELECT id, name FROM bench.t{i} WHERE id > {self.count}"
        rep = SQLViewRepresentation(type="sql", sql=sql, dialect="spark")
        base = self.views.get(name)
        vid = 1 if base is None else max(v.version_id for v in base.versions) + 1
        version = ViewVersion(version_id=vid, schema_id=0, timestamp_ms=now_ms, summary={},
                              representations=[rep], default_namespace=["bench"])
        folder = self.warehouse / "bench" / name
        meta = (new_view_metadata(f"file://{folder}", SCHEMA, version, {}, now_ms)
                if base is None else apply_view_updates(base, [
                    AddViewVersion(view_version=version),
                    SetCurrentViewVersion(view_version_id=-1)], now_ms))
        self.views[name] = meta
        path = folder / "metadata" / f"{self.count:05d}-{uuid.uuid4()}.metadata.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(meta.model_dump_json())
        self.commit(branch, ["bench", name], {
            "type": "ICEBERG_VIEW", "metadataLocation": f"file://{path}",
            "versionId": meta.current_version_id, "schemaId": 0, "sqlText": "-",
            "dialect": "-"}, f"replace view {name}", "analyst")

    def branch(self, name: str, ref_type: str = "BRANCH", source: str = "main") -> None:
        r = self.http.post("/trees", params={"name": name, "type": ref_type},
                           json={"type": ref_type, "name": source, "hash": self.head(source)})
        assert r.status_code == 200, r.text
        if ref_type == "BRANCH":
            self.heads[name] = self.head(source)

    def merge(self, source: str, into: str = "main") -> None:
        r = self.http.post(f"/trees/{into}@{self.head(into)}/history/merge",
                           json={"fromRefName": source, "fromHash": self.head(source)})
        assert r.status_code == 200 and r.json()["wasApplied"], r.text
        self.heads[into] = r.json()["resultantTargetHash"]
        self.count += 1

    def build(self, commits: int, branch_every: int = BRANCH_EVERY) -> None:
        self.commit("main", ["bench"], {"type": "NAMESPACE", "elements": ["bench"],
                                        "properties": {}}, "namespace", "admin")
        n = 0
        while self.count < commits:
            n += 1
            if n % branch_every == 0 and self.count + BRANCH_COMMITS + 1 < commits:
                b = f"etl/run{n // branch_every}"
                self.branch(b)
                for j in range(BRANCH_COMMITS):
                    self.table(b, j % (TABLES - 10))  # t40.. stay main's
                self.table("main", TABLES - 1)
                self.merge(b)
                self.branch(f"v{n // branch_every}", "TAG")
            elif n % 100 == 0:
                self.view("main", n // 100 % VIEWS)
            else:
                self.table("main", n % TABLES)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--commits", type=int, default=10_000)
    p.add_argument("--smoke", action="store_true",
                   help="300 commits, a branch merged back among them")
    args = p.parse_args(argv)
    commits = 300 if args.smoke else args.commits
    ready = environment_ready()
    if isinstance(ready, str):
        sys.exit(f"error: Nessie's server cannot run here: {ready}")
    cmd = sapwood_command()
    if not cmd:
        sys.exit("error: the sapwood console script is not installed (pip install -e .)")
    with tempfile.TemporaryDirectory(prefix="import-bench-") as tmp:
        base = Path(tmp)
        srv = NessieServer(*ready, base / "nessie").start()
        try:
            gen = Generator(srv.api, base / "warehouse")
            began = time.perf_counter()
            # The smoke run's 300 commits take the branch-and-merge path too.
            gen.build(commits, 150 if args.smoke else BRANCH_EVERY)
            print(f"# Nessie history: {gen.count} commits in "
                  f"{time.perf_counter() - began:.1f} s", flush=True)
            report = base / "report.json"
            run = run_measured([*cmd, "import", "--from-nessie", srv.api, "--database",
                                f"sqlite:///{base / 'sapwood.db'}", "--warehouse",
                                f"file://{base / 'warehouse'}", "--report", str(report)],
                               timeout=3600)
            if run.returncode != 0:
                sys.exit(f"error: the import failed:\n{run.output[-3000:]}")
            body = json.loads(report.read_text())
            took = (micros(body["finishedAt"]) - micros(body["startedAt"])) / 1e6
            imported = body["importedCommits"]
            assert imported == gen.count, (imported, gen.count)
            print(f"# {imported} commits, {len(body['references'])} references")
            print(f"import_s: {took:.2f}")
            print(f"import_wall_s: {run.seconds:.2f}")
            print(f"import_commits_per_s: {imported / took:.0f}")
            print(f"import_peak_rss_mb: {run.own_mb:.0f}")
        finally:
            srv.stop()


if __name__ == "__main__":
    main()
