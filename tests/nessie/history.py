"""History built in a real Nessie for the import's tests and benchmark
(issue 47): commits through Nessie's own v2 API with plain HTTP, and the
Iceberg metadata files they name written by PyIceberg — tables by a
``SqlCatalog`` on the warehouse (a create, appends and overwrites write real
snapshots, manifest lists and manifests), views by Iceberg's view metadata
model (``core.views``, as a REST server writes them; some gzip-compressed,
as Iceberg's NessieCatalog writes views).

This is what Iceberg's NessieCatalog does — write the metadata file, then
commit its location to Nessie with the content's ids — without a Spark:
a Nessie commit here is a ``POST /trees/{branch}@{hash}/history/commit``
with the authors, message and properties given, a merge a ``…/merge``.
"""

from __future__ import annotations

import gzip
import json
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import LongType, NestedField, StringType
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from core.views import AddViewVersion, SetCurrentViewVersion, apply_view_updates, new_view_metadata

ROWS = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
SCHEMA = Schema(NestedField(1, "id", LongType(), required=True),
                NestedField(2, "name", StringType(), required=False))


class NessieHistory:
    """One Nessie repository being written, its files in ``warehouse``."""

    def __init__(self, api: str, warehouse: Path) -> None:
        self.http = httpx.Client(base_url=api, timeout=60)
        self.warehouse = warehouse
        warehouse.mkdir(parents=True, exist_ok=True)
        self.files = SqlCatalog("writer", uri=f"sqlite:///{warehouse / 'pyiceberg.db'}",
                                warehouse=f"file://{warehouse}")
        self.heads: dict[str, str] = {}
        # (branch, key) -> the content id, and the writer's table for it there.
        self.ids: dict[tuple[str, str], str] = {}
        self.tables: dict[tuple[str, str], Table] = {}
        self.views: dict[tuple[str, str], Any] = {}
        self.commits: list[str] = []
        # Per branch, the keys it changed since it was made (what a merge brings).
        self.touched: dict[str, set[str]] = {}

    def close(self) -> None:
        self.http.close()

    # -- Nessie's API -------------------------------------------------------------------
    def _ok(self, r: httpx.Response) -> dict[str, Any]:
        assert r.status_code == 200, f"{r.request.method} {r.request.url}: {r.status_code} {r.text}"
        return r.json()  # type: ignore[no-any-return]

    def head(self, branch: str) -> str:
        if branch not in self.heads:
            self.heads[branch] = self._ok(self.http.get(f"/trees/{branch}"))["reference"]["hash"]
        return self.heads[branch]

    def commit(self, branch: str, ops: Sequence[dict[str, Any]], message: str,
               authors: Sequence[str] = ("alice",), properties: dict[str, str] | None = None,
               signed_off_by: Sequence[str] = ()) -> str:
        meta: dict[str, Any] = {"message": message, "authors": list(authors),
                                "properties": properties or {}}
        if signed_off_by:
            meta["allSignedOffBy"] = list(signed_off_by)
        body = self._ok(self.http.post(f"/trees/{branch}@{self.head(branch)}/history/commit",
                                       json={"commitMeta": meta, "operations": list(ops)}))
        self.touched.setdefault(branch, set()).update(
            ".".join(op["key"]["elements"]) for op in ops)
        for added in body.get("addedContents") or []:
            self.ids[(branch, ".".join(added["key"]["elements"]))] = added["contentId"]
        self.heads[branch] = body["targetBranch"]["hash"]
        self.commits.append(self.heads[branch])
        time.sleep(0.002)  # commits a few ms apart: instants between them to sample
        return self.heads[branch]

    def branch(self, name: str, source: str = "main", ref_type: str = "BRANCH") -> str:
        h = self.head(source)
        self._ok(self.http.post("/trees", params={"name": name, "type": ref_type},
                                json={"type": ref_type, "name": source, "hash": h}))
        if ref_type == "BRANCH":
            self.heads[name] = h
            self.touched[name] = set()
            for (b, key), cid in list(self.ids.items()):
                if b == source:
                    self.ids[(name, key)] = cid
                    if (b, key) in self.tables:
                        self.tables[(name, key)] = self._fork(self.tables[(b, key)], name)
                    if (b, key) in self.views:
                        self.views[(name, key)] = self.views[(b, key)]
        return h

    def merge(self, source: str, into: str = "main", message: str | None = None,
              authors: Sequence[str] = ()) -> str:
        body: dict[str, Any] = {"fromRefName": source, "fromHash": self.head(source)}
        if message or authors:
            body["commitMeta"] = {"message": message or "", "authors": list(authors)}
        out = self._ok(self.http.post(f"/trees/{into}@{self.head(into)}/history/merge",
                                      json=body))
        assert out["wasApplied"], out
        self.heads[into] = out["resultantTargetHash"]
        self.commits.append(self.heads[into])
        # What the source changed is the target's now.
        for (b, key), cid in list(self.ids.items()):
            if b == source and key in self.touched.get(source, set()):
                self.ids[(into, key)] = cid
                if (b, key) in self.tables:
                    self.tables[(into, key)] = self._fork(self.tables[(b, key)], into)
                if (b, key) in self.views:
                    self.views[(into, key)] = self.views[(b, key)]
        time.sleep(0.002)
        return self.heads[into]

    # -- contents -----------------------------------------------------------------------
    def namespace(self, branch: str, name: str, properties: dict[str, str] | None = None,
                  authors: Sequence[str] = ("alice",)) -> str:
        key = {"elements": name.split(".")}
        content: dict[str, Any] = {"type": "NAMESPACE", "elements": name.split("."),
                                   "properties": properties or {}}
        if (branch, name) in self.ids:
            content["id"] = self.ids[(branch, name)]
        return self.commit(branch, [{"type": "PUT", "key": key, "content": content}],
                           f"namespace {name}", authors)

    def create_table(self, branch: str, name: str, authors: Sequence[str] = ("alice",),
                     properties: dict[str, str] | None = None) -> str:
        ident = (f"w_{uuid.uuid4().hex[:8]}", name.split(".")[-1])
        self.files.create_namespace_if_not_exists(ident[0])
        table = self.files.create_table(ident, SCHEMA, location=str(
            self.warehouse / Path(*name.split(".")[:-1]) / f"{ident[1]}_{uuid.uuid4().hex[:8]}"))
        self.tables[(branch, name)] = table
        return self._put_table(branch, name, table, f"create table {name}", authors, properties)

    def append(self, branch: str, name: str, rows: list[tuple[int, str]],
               authors: Sequence[str] = ("alice",), overwrite: bool = False) -> str:
        table = self.tables[(branch, name)]
        data = pa.Table.from_pylist([{"id": i, "name": n} for i, n in rows], schema=ROWS)
        if overwrite:
            table.overwrite(data)
        else:
            table.append(data)
        table = self.files.load_table(table.name())
        self.tables[(branch, name)] = table
        verb = "overwrite" if overwrite else "append"
        return self._put_table(branch, name, table, f"Iceberg {verb} against {name}", authors,
                               {"iceberg.operation": verb})

    def _put_table(self, branch: str, name: str, table: Table, message: str,
                   authors: Sequence[str], properties: dict[str, str] | None) -> str:
        meta = table.metadata
        content: dict[str, Any] = {
            "type": "ICEBERG_TABLE", "metadataLocation": table.metadata_location,
            "snapshotId": meta.current_snapshot_id if meta.current_snapshot_id is not None
            else -1, "schemaId": meta.current_schema_id, "specId": meta.default_spec_id,
            "sortOrderId": meta.default_sort_order_id}
        if (branch, name) in self.ids:
            content["id"] = self.ids[(branch, name)]
        return self.commit(branch, [{"type": "PUT", "key": {"elements": name.split(".")},
                                     "content": content}], message, authors, properties)

    def _fork(self, table: Table, branch: str) -> Table:
        """The table as another branch writes it: a writer's entry of its
        own at the same metadata file (its next files land beside)."""
        ident = (f"w_{uuid.uuid4().hex[:8]}", table.name()[-1])
        self.files.create_namespace_if_not_exists(ident[0])
        return self.files.register_table(ident, table.metadata_location)

    def view(self, branch: str, name: str, sql: str, authors: Sequence[str] = ("carol",),
             gz: bool = False, properties: dict[str, str] | None = None,
             signed_off_by: Sequence[str] = ()) -> str:
        """CREATE OR REPLACE VIEW: a new version of the view's metadata."""
        now_ms = int(time.time() * 1000)
        key = (branch, name)
        ns = name.split(".")[:-1]
        rep = SQLViewRepresentation(type="sql", sql=sql, dialect="spark")
        if key not in self.views:
            version = ViewVersion(version_id=1, schema_id=0, timestamp_ms=now_ms,
                                  summary={"engine-name": "spark"}, representations=[rep],
                                  default_namespace=ns)
            location = str(self.warehouse / Path(*ns) / f"{name.split('.')[-1]}_"
                           f"{uuid.uuid4().hex[:8]}")
            meta = new_view_metadata(f"file://{location}", SCHEMA, version, {}, now_ms)
        else:
            base = self.views[key][0]
            vid = max(v.version_id for v in base.versions) + 1
            version = ViewVersion(version_id=vid, schema_id=0,
                                  timestamp_ms=now_ms, summary={"engine-name": "spark"},
                                  representations=[rep], default_namespace=ns)
            meta = apply_view_updates(base, [AddViewVersion(view_version=version),
                                             SetCurrentViewVersion(view_version_id=-1)], now_ms)
        n = len(meta.version_log)
        suffix = ".gz.metadata.json" if gz else ".metadata.json"
        path = Path(meta.location.removeprefix("file://")) / "metadata" / \
            f"{n:05d}-{uuid.uuid4()}{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = meta.model_dump_json().encode()
        path.write_bytes(gzip.compress(data) if gz else data)
        self.views[key] = (meta, f"file://{path}")
        content: dict[str, Any] = {
            "type": "ICEBERG_VIEW", "metadataLocation": f"file://{path}",
            "versionId": meta.current_version_id,
            "schemaId": next(v.schema_id for v in meta.versions
                             if v.version_id == meta.current_version_id),
            "sqlText": "-", "dialect": "-"}
        if key in self.ids:
            content["id"] = self.ids[key]
        verb = "replace" if key in self.ids else "create"
        return self.commit(branch, [{"type": "PUT", "key": {"elements": name.split(".")},
                                     "content": content}], f"{verb} view {name}", authors,
                           properties, signed_off_by)

    def bulk(self, branch: str, namespace: str, n: int) -> None:
        """``n`` commits in a row, each a new property of ``namespace`` (made
        first): a long history, as fast as Nessie takes it."""
        self.namespace(branch, namespace)
        key = {"elements": namespace.split(".")}
        cid = self.ids[(branch, namespace)]
        props: dict[str, str] = {}
        for i in range(n):
            props[f"p{i % 50}"] = str(i)
            body = self._ok(self.http.post(
                f"/trees/{branch}@{self.head(branch)}/history/commit",
                json={"commitMeta": {"message": f"bulk {i}", "authors": [f"loader{i % 3}"]},
                      "operations": [{"type": "PUT", "key": key, "content": {
                          "type": "NAMESPACE", "id": cid, "elements": key["elements"],
                          "properties": props}}]}))
            self.heads[branch] = body["targetBranch"]["hash"]
            self.commits.append(self.heads[branch])

    def delete(self, branch: str, name: str, authors: Sequence[str] = ("alice",)) -> str:
        h = self.commit(branch, [{"type": "DELETE", "key": {"elements": name.split(".")}}],
                        f"drop {name}", authors)
        self.ids.pop((branch, name), None)
        self.tables.pop((branch, name), None)
        self.views.pop((branch, name), None)
        return h

    # -- reading Nessie back ------------------------------------------------------------
    def references(self) -> list[dict[str, Any]]:
        return self._ok(self.http.get("/trees", params={"max-records": 1000}))["references"]  # type: ignore[no-any-return]

    def log_count(self, ref: str) -> int:
        n, token = 0, None
        while True:
            params: dict[str, Any] = {"max-records": 1000}
            if token:
                params["page-token"] = token
            body = self._ok(self.http.get(f"/trees/{ref}/history", params=params))
            n += len(body["logEntries"])
            token = body.get("token")
            if not body.get("hasMore"):
                return n

    def log(self, ref: str) -> list[dict[str, Any]]:
        out, token = [], None
        while True:
            params: dict[str, Any] = {"max-records": 1000}
            if token:
                params["page-token"] = token
            body = self._ok(self.http.get(f"/trees/{ref}/history", params=params))
            out += body["logEntries"]
            token = body.get("token")
            if not body.get("hasMore"):
                return out

    def entries_at(self, spec: str) -> dict[str, dict[str, Any]] | None:
        """Every key's content at ``spec`` (``ref*instant``) as Nessie answers
        it, by dotted key; None when Nessie has nothing there."""
        out: dict[str, dict[str, Any]] = {}
        token = None
        while True:
            params: dict[str, Any] = {"content": "true", "max-records": 1000}
            if token:
                params["page-token"] = token
            r = self.http.get(f"/trees/{spec}/entries", params=params)
            if r.status_code == 404:
                return None
            body = self._ok(r)
            for e in body["entries"]:
                out[".".join(e["name"]["elements"])] = e["content"]
            token = body.get("token")
            if not body.get("hasMore"):
                return out


def comparable(content: dict[str, Any]) -> dict[str, Any]:
    """A content value as both sides hold it: Nessie's fields Sapwood keeps
    (a view's sqlText/dialect are Nessie's deprecated copies; a namespace's
    elements are its key)."""
    out = {k: v for k, v in content.items() if k not in ("sqlText", "dialect", "elements",
                                                         "extensions", "analysis")}
    if out.get("type") == "NAMESPACE":
        out.setdefault("properties", {})
    return json.loads(json.dumps(out, sort_keys=True))  # type: ignore[no-any-return]
