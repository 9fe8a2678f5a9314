"""Content-merge benchmark: merging a branch that appended 100 files into a
table that the target also appended to, with 100,000 files in the table vs
1,000; and that merge against a plain merge of one key.

    python bench/merge_bench.py            # full run (a few minutes)
    python bench/merge_bench.py --quick    # smaller sizes
    python bench/merge_bench.py --smoke    # 2,000 files, one round (the suite runs it)

Tables hold metadata only: manifests of made-up data files written with
PyIceberg's writers (100 manifests of 1,000 files, and 1 of 1,000), committed
through the Iceberg REST API; nothing reads the data files. Each round
branches the target and the source from main, appends a file on the target
and 100 files (10 commits of 10) on the source (setup, not measured), then
times POST …/history/merge; the large and small tables alternate. The plain
merge brings a one-key change (a new table) from a branch.
Ends with ``content_merge_large_vs_small`` and ``content_merge_vs_plain``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pyiceberg.io import load_file_io  # noqa: E402
from pyiceberg.manifest import (  # noqa: E402
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    write_manifest,
    write_manifest_list,
)
from pyiceberg.table.metadata import TableMetadataUtil  # noqa: E402
from pyiceberg.typedef import Record  # noqa: E402

from tests.api import spark_bodies as sb  # noqa: E402
from tests.server import Server  # noqa: E402

NS = "bench"


def call(c: http.client.HTTPConnection, method: str, path: str,
         body: object | None = None) -> tuple[int, Any, float]:
    t = time.perf_counter()
    try:
        c.request(method, path, body=json.dumps(body) if body is not None else None,
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
    except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
        # The server closed a connection idle past its keep-alive (writing a
        # large table's manifests takes longer on a loaded machine): again,
        # on a new one.
        c.close()
        t = time.perf_counter()
        c.request(method, path, body=json.dumps(body) if body is not None else None,
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
    data = r.read()
    took = time.perf_counter() - t
    return r.status, json.loads(data) if data else None, took


class Tables:
    def __init__(self, port: int) -> None:
        self.c = http.client.HTTPConnection("127.0.0.1", port)

    def head(self, branch: str) -> str:
        return call(self.c, "GET", f"/api/v2/trees/{branch}")[1]["reference"]["hash"]

    def branch(self, name: str) -> None:
        status, data, _ = call(self.c, "POST", f"/api/v2/trees?name={name}&type=BRANCH",
                               {"type": "BRANCH", "name": "main", "hash": self.head("main")})
        assert status == 200, data

    def append(self, branch: str, table: str, manifests: int, files_each: int) -> None:
        """One commit adding ``manifests`` times ``files_each`` made-up files."""
        path = f"/iceberg/{branch}/v1/namespaces/{NS}/tables/{table}"
        status, loaded, _ = call(self.c, "GET", path)
        assert status == 200, loaded
        meta = TableMetadataUtil.parse_obj(loaded["metadata"])
        io = load_file_io({}, meta.location)
        current = meta.current_snapshot()
        old: list[ManifestFile] = current.manifests(io) if current else []
        sid = uuid.uuid4().int & ((1 << 63) - 1)
        folder = f"{meta.location}/metadata"
        new = []
        for m in range(manifests):
            with write_manifest(format_version=2, spec=meta.spec(), schema=meta.schema(),
                                output_file=io.new_output(f"{folder}/{sid}-m{m}.avro"),
                                snapshot_id=sid, avro_compression="deflate") as w:
                for i in range(files_each):
                    w.add_entry(ManifestEntry.from_args(
                        status=ManifestEntryStatus.ADDED, snapshot_id=sid,
                        data_file=DataFile.from_args(
                            content=DataFileContent.DATA,
                            file_path=f"{meta.location}/data/{sid}-{m}-{i}.parquet",
                            file_format=FileFormat.PARQUET, partition=Record(),
                            record_count=1, file_size_in_bytes=100)))
            new.append(w.to_manifest_file())
        seq = meta.last_sequence_number + 1
        mlist = f"{folder}/snap-{sid}-1-{uuid.uuid4()}.avro"
        with write_manifest_list(format_version=2, output_file=io.new_output(mlist),
                                 snapshot_id=sid, parent_snapshot_id=meta.current_snapshot_id,
                                 sequence_number=seq, avro_compression="deflate") as lw:
            lw.add_manifests([*old, *new])
        added = manifests * files_each
        total = int(current.summary.additional_properties.get("total-data-files", 0)) \
            if current and current.summary else 0
        body = sb.append(meta.table_uuid.hex if hasattr(meta.table_uuid, "hex") else
                         str(meta.table_uuid), sid, meta.current_snapshot_id, meta.location,
                         sequence=seq)
        snap = body["updates"][0]["snapshot"]
        snap["manifest-list"] = mlist
        snap["summary"] = {"operation": "append", "added-data-files": str(added),
                           "added-records": str(added), "total-data-files": str(total + added),
                           "total-records": str(total + added)}
        body["requirements"][0]["uuid"] = str(meta.table_uuid)
        status, data, _ = call(self.c, "POST", path, body)
        assert status == 200, data

    def merge(self, source: str, into: str) -> tuple[float, dict[str, Any]]:
        status, data, took = call(self.c, "POST",
                                  f"/api/v2/trees/{into}@{self.head(into)}/history/merge",
                                  {"fromRefName": source})
        assert status == 200 and data["wasApplied"], data
        return took, data


def setup(t: Tables, large: int, small: int) -> None:
    assert call(t.c, "POST", "/iceberg/v1/namespaces", {"namespace": [NS]})[0] == 200
    for name, manifests, each in (("large", large // 1000, 1000), ("small", small // 1000, 1000)):
        assert call(t.c, "POST", f"/iceberg/v1/namespaces/{NS}/tables",
                    sb.create_table(name))[0] == 200
        t.append("main", name, manifests, each)


def one_round(t: Tables, table: str, r: int) -> float:
    tgt, src = f"t_{table}_{r}", f"s_{table}_{r}"
    t.branch(tgt)
    t.branch(src)
    t.append(tgt, table, 1, 1)
    for _ in range(10):
        t.append(src, table, 1, 10)
    took, data = t.merge(src, tgt)
    d = next(x for x in data["details"] if x["key"]["elements"] == [NS, table])
    assert d["outcome"] == "MERGED" and d["combined"]["manifestsReused"] == 10, d
    return took


def plain_round(t: Tables, r: int) -> float:
    tgt, src = f"pt_{r}", f"ps_{r}"
    t.branch(tgt)
    t.branch(src)
    assert call(t.c, "POST", f"/iceberg/{src}/v1/namespaces/{NS}/tables",
                sb.create_table(f"new{r}"))[0] == 200
    return t.merge(src, tgt)[0]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="2,000 files, one round")
    args = ap.parse_args(argv)
    large, rounds = (2_000, 1) if args.smoke else (10_000, 5) if args.quick else (100_000, 15)
    tmp = Path(tempfile.mkdtemp(prefix="sapwood-merge-bench-"))
    server = Server(f"sqlite:///{tmp / 'merge.db'}", tmp).start()
    try:
        t = Tables(server.port)
        setup(t, large, 1_000)
        times: dict[str, list[float]] = {"large": [], "small": [], "plain": []}
        for r in range(rounds + 1):
            for name in (("large", "small") if r % 2 else ("small", "large")):
                took = one_round(t, name, r)
                if r:  # the first round warms up
                    times[name].append(took)
            took = plain_round(t, r)
            if r:
                times["plain"].append(took)
    finally:
        server.stop()
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"content merge of 100 appended files: {med['large'] * 1e3:.1f} ms into {large:,} "
          f"files, {med['small'] * 1e3:.1f} ms into 1,000; a plain merge of one key "
          f"{med['plain'] * 1e3:.1f} ms (median of {rounds} each)")
    print()
    print(f"content_merge_large_vs_small: {med['large'] / med['small']:.2f}")
    print(f"content_merge_vs_plain: {med['small'] / med['plain']:.2f}")


if __name__ == "__main__":
    main()
