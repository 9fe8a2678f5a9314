"""Sapwood against Nessie, side by side (issue 48, acceptance 1): the same
client code (raw HTTP with httpx, and PyIceberg's RestCatalog) against a
real Nessie 0.99 (its runner jar, tests/nessie/server.py, RocksDB store) and
a real Sapwood (tests/server.py, SQLite), both serving the Iceberg REST API
on the same S3 (moto, tests/s3.py), in interleaved rounds.

    python bench/nessie_bench.py            # 1,000 tables listed, 7 rounds
    python bench/nessie_bench.py --smoke    # 5 tables, 1 round (the suite runs it)

Rows (p50 of each; ``vs_nessie_<row>`` is Sapwood's ÷ Nessie's, below 1
is faster): loadTable raw / PyIceberg, loadView raw / PyIceberg, list the
tables of a namespace raw / PyIceberg, a raw table commit (set a property),
a PyIceberg append of one row (PyIceberg loading the snapshots a ref
names, on both: Nessie's metadata never holds more; the same append with
every snapshot loaded is printed as a comment, not compared), its commit
request alone (``append_commit``: the catalog's part), a view replace
commit, createTable, create
and delete a branch and the commit log filtered to one key (Nessie's v2 API
and its CEL filter, on both), a merge of one changed table (v2 API), the
audit of a view of 200 versions (Sapwood's view audit, every version's SQL
and change; Nessie's log filtered to the view's key, its nearest answer);
and GET namespace throughput (``vs_nessie_getns_rps``: Sapwood's ÷
Nessie's, above 1 is faster). Both servers' resident memory at the end
(``rss_mb_sapwood``, ``rss_mb_nessie``).

Both servers and the clients share the machine's cores (the load average
is printed): a run says which is faster here, not by how much elsewhere.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from tests.nessie.server import NessieServer, environment_ready
from tests.processes import rss_mb
from tests.s3 import BUCKET, LocalS3
from tests.server import Server

NS = "bench"
MANY = "many"
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "type": "long", "required": False},
    {"id": 2, "name": "name", "type": "string", "required": False}]}


# Rows printed for what they show, not compared: the two servers answer
# them with different amounts of metadata (see ``operations``).
UNEQUAL = {"append_pyiceberg_all_snapshots"}
# The appended tables, one per row: a row's history is its own appends.
APPENDED = {"append_pyiceberg": "append", "append_pyiceberg_all_snapshots": "append_all",
            "append_commit": "append_commit"}


class BenchNessie(NessieServer):
    """Nessie on the JVM's defaults (its C2 compiler, its collector, a heap
    sized by the machine): the suite's NessieServer holds it to C1 and a
    512 MB serial heap to start fast, which a comparison must not."""

    def command(self) -> list[str]:
        return [self.java.executable, "--enable-native-access=ALL-UNNAMED",
                *(f"-D{k}={v}" for k, v in self.settings().items()),
                "-jar", str(self.jars.server)]


def nessie_properties(s3: LocalS3) -> dict[str, str]:
    """Nessie 0.99's Iceberg REST service on the moto bucket: one warehouse,
    static keys (a Quarkus secret), path-style requests, no request signing
    (clients write with the same keys, as Sapwood's do)."""
    opts = "nessie.catalog.service.s3.default-options"
    return {
        "nessie.catalog.default-warehouse": "warehouse",
        "nessie.catalog.warehouses.warehouse.location": f"s3://{BUCKET}/nessie",
        f"{opts}.endpoint": s3.endpoint,
        f"{opts}.path-style-access": "true",
        f"{opts}.region": "us-east-1",
        f"{opts}.request-signing-enabled": "false",
        f"{opts}.access-key": "urn:nessie-secret:quarkus:bench.s3",
        "bench.s3.name": "testing",
        "bench.s3.secret": "testing",
    }


class Target:
    """One server as a client sees it: its Iceberg REST base for a branch,
    its v2 API, a PyIceberg catalog; the same calls on both."""

    def __init__(self, name: str, iceberg: Callable[[str], str], api: str,
                 client_props: dict[str, str], pid: Callable[[], int],
                 ref_in_prefix: bool = False) -> None:
        self.name = name
        # Nessie's prefix names the branch (``main|warehouse``, from its
        # config); Sapwood's branch is in the URI (``/iceberg/<ref>``).
        self.ref_in_prefix = ref_in_prefix
        self.iceberg = iceberg
        self.api = api
        self.client_props = client_props
        self.pid = pid
        self.http = httpx.Client(timeout=120)
        self._prefix: dict[str, str] = {}
        self._catalogs: dict[str, Any] = {}
        self.last_commit = 0.0

    def rest(self, ref: str = "main") -> str:
        """``…/v1/<prefix>``: the base of the REST routes on ``ref``."""
        if ref != "main" and self.ref_in_prefix:
            head, _, main_prefix = self.rest().rpartition("/")
            return f"{head}/{main_prefix.replace('main', quote(ref, safe=''), 1)}"
        if ref not in self._prefix:
            uri = self.iceberg(ref)
            r = self.http.get(f"{uri}/v1/config")
            r.raise_for_status()
            body = r.json()
            prefix = {**body.get("defaults", {}), **body.get("overrides", {})}.get("prefix")
            self._prefix[ref] = f"{uri}/v1" + (f"/{quote(prefix, safe='')}" if prefix else "")
        return self._prefix[ref]

    def catalog(self, snapshots: str = "all") -> Any:
        """PyIceberg's RestCatalog; ``snapshots="refs"`` loads tables with
        only the snapshots a branch or tag names (its
        ``snapshot-loading-mode``)."""
        if snapshots not in self._catalogs:
            from pyiceberg.catalog.rest import RestCatalog

            # Nessie 0.99's config lists no endpoints: PyIceberg then
            # assumes no view routes unless told (Sapwood lists its own).
            cat = RestCatalog(self.name, uri=self.iceberg("main"),
                              **{**self.client_props, "view-endpoints-supported": "true",
                                 "snapshot-loading-mode": snapshots})
            # The commit request of each write, timed as the client sees it:
            # the catalog's part of an append.
            commit = cat.commit_table

            def timed_commit(*args: Any, **kwargs: Any) -> Any:
                began = time.perf_counter()
                try:
                    return commit(*args, **kwargs)
                finally:
                    self.last_commit = time.perf_counter() - began

            cat.commit_table = timed_commit
            self._catalogs[snapshots] = cat
        return self._catalogs[snapshots]

    def call(self, method: str, url: str, body: Any = None, **params: Any) -> Any:
        r = self.http.request(method, url, json=body, params=params or None)
        assert r.status_code < 300, f"{self.name}: {method} {url}: {r.status_code} {r.text}"
        return r.json() if r.content else None

    def head(self, ref: str = "main") -> str:
        return str(self.call("GET", f"{self.api}/trees/{ref}")["reference"]["hash"])

    def create_table(self, ns: str, name: str, ref: str = "main") -> dict[str, Any]:
        return dict(self.call("POST", f"{self.rest(ref)}/namespaces/{ns}/tables",
                              {"name": name, "schema": SCHEMA, "stage-create": False}))

    def set_property(self, ns: str, name: str, uid: str, ref: str = "main") -> None:
        self.call("POST", f"{self.rest(ref)}/namespaces/{ns}/tables/{name}", {
            "requirements": [{"type": "assert-table-uuid", "uuid": uid}],
            "updates": [{"action": "set-properties",
                         "updates": {"bench.n": uuid.uuid4().hex}}]})

    def replace_view(self, name: str, version: int) -> None:
        self.call("POST", f"{self.rest()}/namespaces/{NS}/views/{name}", {
            "requirements": [],
            "updates": [{"action": "add-view-version", "view-version": {
                "version-id": version, "schema-id": 0, "timestamp-ms": int(time.time() * 1000),
                "summary": {}, "default-namespace": [NS],
                "representations": [{"type": "sql", "dialect": "spark",
                                     "sql": f"SELECT id FROM {NS}.hot WHERE id > {version}"}]}},
                {"action": "set-current-view-version", "view-version-id": -1}]})

    def list_all(self, ns: str) -> int:
        n, token = 0, None
        while True:
            body = self.call("GET", f"{self.rest()}/namespaces/{ns}/tables",
                             **({"pageToken": token} if token else {}))
            n += len(body["identifiers"])
            token = body.get("next-page-token")
            if not token:
                return n

    def rss_mb(self) -> float:
        return rss_mb(self.pid()) or 0.0


def populate(t: Target, tables: int, versions: int) -> dict[str, Any]:
    """The namespaces, tables and views the rows read and change: ``av``
    has ``versions`` versions for the audit row."""
    for ns in (NS, MANY):
        t.call("POST", f"{t.rest()}/namespaces", {"namespace": [ns], "properties": {}})
    hot = t.create_table(NS, "hot")
    commit = t.create_table(NS, "commit")
    for name in APPENDED.values():
        t.create_table(NS, name)
    for i in range(tables):
        t.create_table(MANY, f"t{i:04d}")
    for view in ("v", "av"):
        t.call("POST", f"{t.rest()}/namespaces/{NS}/views", {
            "name": view, "schema": SCHEMA, "properties": {}, "view-version": {
                "version-id": 1, "schema-id": 0, "timestamp-ms": int(time.time() * 1000),
                "summary": {}, "default-namespace": [NS],
                "representations": [{"type": "sql", "dialect": "spark",
                                     "sql": f"SELECT id FROM {NS}.hot"}]}})
    for version in range(2, versions + 1):
        t.replace_view("av", version)
    return {"hot": hot["metadata"]["table-uuid"], "commit": commit["metadata"]["table-uuid"],
            "view_version": 1, "n": 0, "versions": versions}


def operations(t: Target, state: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """Each row's one timed call on ``t`` (its set-up outside the timing
    where it needs one: ``merge``'s returns its own time)."""
    import pyarrow as pa

    row = pa.table({"id": pa.array([1], pa.int64()), "name": pa.array(["x"], pa.string())})
    rest = t.rest()
    key = f"{NS}.commit"
    log_filter = f"operations.exists(op, op.key == '{key}')"
    audited = f"operations.exists(op, op.key == '{NS}.av')"

    def view_audit() -> Any:
        # What a view said, version by version: Sapwood's audit answers with
        # each version's SQL and the change from the one before; Nessie's
        # nearest answer is its log filtered to the view's key, the commits
        # and their metadata pointers (its SQL is then in files to read).
        # One page each.
        if t.name == "sapwood":
            return t.call("GET", f"{t.api}/trees/main/views/{NS}.av/history",
                          maxRecords=state["versions"])
        return t.call("GET", f"{t.api}/trees/main/history", filter=audited, fetch="ALL",
                      maxRecords=state["versions"])

    def append(cat: Any, table: str, commit_only: bool = False) -> float | None:
        cat.load_table((NS, table)).append(row)
        return t.last_commit if commit_only else None

    def view_replace() -> None:
        state["view_version"] += 1
        t.replace_view("v", state["view_version"])

    def create_table() -> None:
        state["n"] += 1
        t.create_table(NS, f"c{state['n']}")

    def new_branch() -> str:
        state["n"] += 1
        name = f"b{state['n']}"
        t.call("POST", f"{t.api}/trees", {"type": "BRANCH", "name": "main",
                                          "hash": t.head()}, name=name, type="BRANCH")
        return name

    def branch_create() -> float:
        began = time.perf_counter()
        name = new_branch()  # with the read of main's head a client makes first
        took = time.perf_counter() - began
        t.call("DELETE", f"{t.api}/trees/{name}@{t.head(name)}")
        return took

    def branch_delete() -> float:
        name = new_branch()
        began = time.perf_counter()
        t.call("DELETE", f"{t.api}/trees/{name}@{t.head(name)}")
        return time.perf_counter() - began

    def merge() -> float:
        state["n"] += 1
        name = f"m{state['n']}"
        t.call("POST", f"{t.api}/trees", {"type": "BRANCH", "name": "main",
                                          "hash": t.head()}, name=name, type="BRANCH")
        t.set_property(NS, "commit", state["commit"], ref=name)
        target, source = t.head(), t.head(name)
        began = time.perf_counter()
        t.call("POST", f"{t.api}/trees/main@{target}/history/merge",
               {"fromRefName": name, "fromHash": source})
        took = time.perf_counter() - began
        t.call("DELETE", f"{t.api}/trees/{name}@{source}")
        return took

    return {
        "loadtable_raw": lambda: t.call("GET", f"{rest}/namespaces/{NS}/tables/hot"),
        "loadtable_pyiceberg": lambda: t.catalog().load_table((NS, "hot")),
        "loadview_raw": lambda: t.call("GET", f"{rest}/namespaces/{NS}/views/v"),
        "loadview_pyiceberg": lambda: t.catalog().load_view((NS, "v")),
        "list_tables_raw": lambda: t.list_all(MANY),
        "list_tables_pyiceberg": lambda: t.catalog().list_tables(MANY),
        "table_commit_raw": lambda: t.set_property(NS, "commit", state["commit"]),
        # Nessie serves a table's metadata with its current snapshot only
        # and an empty metadata log (the rest of its history is in Nessie's
        # commits), Sapwood as Iceberg keeps it: every snapshot, the last
        # 100 metadata files. PyIceberg copies the whole metadata for each
        # of the ~18 updates it applies in an append, so with every snapshot
        # loaded the row measures the history's length more than either
        # server. The row loads both with the snapshots a ref names (one
        # snapshot each; Sapwood's metadata log stays); the other is printed
        # beside it, and the commit request alone (the catalog's part).
        "append_pyiceberg": lambda: append(t.catalog("refs"), APPENDED["append_pyiceberg"]),
        "append_pyiceberg_all_snapshots":
            lambda: append(t.catalog(), APPENDED["append_pyiceberg_all_snapshots"]),
        "append_commit": lambda: append(t.catalog("refs"), APPENDED["append_commit"],
                                        commit_only=True),
        "view_replace": view_replace,
        "create_table": create_table,
        "branch_create": branch_create,
        "branch_delete": branch_delete,
        "log_by_key": lambda: t.call("GET", f"{t.api}/trees/main/history",
                                     filter=log_filter, fetch="ALL", maxRecords=20),
        "merge": merge,
        "view_audit": view_audit,
    }


async def _getns_client(url: str, stop: float, counts: list[int]) -> None:
    async with httpx.AsyncClient(timeout=60) as c:
        n = 0
        while time.perf_counter() < stop:
            r = await c.get(url)
            assert r.status_code == 200, r.text
            n += 1
        counts.append(n)


def getns_rps(t: Target, seconds: float, clients: int = 8) -> float:
    """GET namespace requests per second from ``clients`` connections."""
    url = f"{t.rest()}/namespaces/{NS}"

    async def run() -> int:
        counts: list[int] = []
        stop = time.perf_counter() + seconds
        await asyncio.gather(*(_getns_client(url, stop, counts) for _ in range(clients)))
        return sum(counts)

    return asyncio.run(run()) / seconds


def timed(op: Callable[[], Any]) -> float:
    began = time.perf_counter()
    out = op()
    took = time.perf_counter() - began
    return out if isinstance(out, float) else took


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=1000, help="tables in the listed namespace")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--per-round", type=int, default=5, help="calls of each row per round")
    p.add_argument("--versions", type=int, default=200, help="versions of the audited view")
    p.add_argument("--smoke", action="store_true",
                   help="5 tables, 5 view versions, one round of 2 calls")
    args = p.parse_args(argv)
    # --smoke: 5 tables take the listing's paths as 20 did (Sapwood's pages
    # hold 100 or more), and a 0.2 s window still counts requests.
    tables, versions, rounds, per_round, seconds = (
        (5, 5, 1, 2, 0.2) if args.smoke else
        (args.tables, args.versions, args.rounds, args.per_round, 2.0))
    ready = environment_ready()
    if isinstance(ready, str):
        sys.exit(f"error: Nessie's server cannot run here: {ready}")
    # moto's request log would drown the figures.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="nessie-bench-") as tmp:
        base = Path(tmp)
        s3 = LocalS3.start()
        nessie = BenchNessie(*ready, base / "nessie", store="ROCKSDB",
                              properties=nessie_properties(s3))
        sapwood = Server(f"sqlite:///{base / 'sapwood.db'}", base / "sapwood",
                         warehouse=s3.warehouse("sapwood"), extra_env=s3.env,
                         client_props=s3.client_props)
        try:
            nessie.start()
            sapwood.start()
            targets = [
                Target("sapwood", sapwood.uri, f"{sapwood.base}/api/v2", s3.client_props,
                       lambda: sapwood.proc.pid),  # type: ignore[union-attr]
                Target("nessie", lambda _: f"{nessie.base}/iceberg", nessie.api,
                       s3.client_props, lambda: nessie.proc.pid,  # type: ignore[union-attr]
                       ref_in_prefix=True),
            ]
            print(f"# Nessie 0.99.0 (RocksDB, Java {ready[1].major}, default JVM options) "
                  f"and Sapwood (SQLite), both on moto S3; {tables} tables listed, "
                  f"a view of {versions} versions audited, "
                  f"{rounds} rounds of {per_round}",
                  flush=True)
            ops = {t.name: operations(t, populate(t, tables, versions)) for t in targets}
            for t in targets:  # both answer the same question
                assert t.list_all(MANY) == tables, t.name
                ops[t.name]["table_commit_raw"]()
                found = ops[t.name]["log_by_key"]()["logEntries"]
                assert found, f"{t.name}: the filtered log is empty"
                audit = ops[t.name]["view_audit"]()
                seen = len(audit.get("logEntries") or audit.get("versions") or [])
                assert seen >= versions, f"{t.name}: the audit shows {seen} of {versions}"
            samples: dict[str, dict[str, list[float]]] = {t.name: {} for t in targets}
            rps: dict[str, list[float]] = {t.name: [] for t in targets}
            for rnd in range(rounds):
                order = targets if rnd % 2 == 0 else targets[::-1]
                for row in ops["sapwood"]:
                    for t in order:
                        ops[t.name][row]()  # warm: a connection, the JIT, caches
                        got = [timed(ops[t.name][row]) for _ in range(per_round)]
                        samples[t.name].setdefault(row, []).extend(got)
                for t in order:
                    rps[t.name].append(getns_rps(t, seconds))
            for row in ops["sapwood"]:
                sw = statistics.median(samples["sapwood"][row])
                ns = statistics.median(samples["nessie"][row])
                print(f"# {row}: sapwood {sw * 1000:.2f} ms, nessie {ns * 1000:.2f} ms")
                if row in UNEQUAL:
                    held = {t.name: t.catalog().load_table((NS, APPENDED[row])).metadata
                            for t in targets}
                    print(f"# vs_nessie_{row}: {sw / ns:.2f} (not compared: the metadata "
                          "loaded holds " + ", ".join(
                              f"{len(m.snapshots)} snapshots and {len(m.metadata_log)} "
                              f"metadata log entries from {name}" for name, m in held.items())
                          + ")")
                    continue
                print(f"vs_nessie_{row}: {sw / ns:.2f}")
            sw_rps, ns_rps = statistics.median(rps["sapwood"]), statistics.median(rps["nessie"])
            print(f"# getns: sapwood {sw_rps:.0f} req/s, nessie {ns_rps:.0f} req/s")
            print(f"vs_nessie_getns_rps: {sw_rps / ns_rps:.2f}")
            for t in targets:
                print(f"rss_mb_{t.name}: {t.rss_mb():.0f}")
            print(f"# load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        except Exception:
            print(f"# Nessie's log:\n{nessie._tail(60)}", file=sys.stderr)
            raise
        finally:
            sapwood.stop()
            nessie.stop()
            s3.stop()


if __name__ == "__main__":
    main()
