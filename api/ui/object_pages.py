"""The pages of one table or view (a materialized view is both): a table's
schema, partitioning, snapshots and readers; a view's SQL, status, versions
(with a side-by-side diff), what it reads and what reads it, and its column
lineage; a materialized view's freshness and refreshes. Over the API, with
the visitor's own credential."""

from __future__ import annotations

import difflib
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from api.ui.chart import points, rows_chart
from api.ui.client import Api, ApiError, seg
from api.ui.graph import Node, neighbourhood
from api.ui.hints import MISSING_REF
from api.ui.pages import failed, page, without_slash
from api.ui.sql import highlight
from api.ui.sqldiff import compare
from api.ui.switcher import listing
from core.keys import ContentKey
from core.numbers import INT64_MAX

router = APIRouter(include_in_schema=False)


@router.get("/ui/object/{ref}/{key:path}", response_class=HTMLResponse)
@listing
async def ui_object(request: Request, ref: str, key: str,
                    a: int | None = Query(None, ge=1, le=INT64_MAX),
                    b: int | None = Query(None, ge=1, le=INT64_MAX)) -> Response:
    if not key.rstrip("/"):  # /ui/object/main/: what the reference holds
        return without_slash(request, f"/ui/tree/{seg(ref)}")
    if key.endswith("/"):
        return without_slash(request, f"/ui/object/{seg(ref)}/{seg(key.rstrip('/'))}")
    async with Api(request) as api:
        try:
            content = (await api.get(f"/api/v2/trees/{seg(ref)}/contents/{seg(key)}"))["content"]
            *ns, name = key.split(".")
            path = f"/iceberg/{seg(ref)}/v1/namespaces/{seg(chr(0x1f).join(ns))}"
            if content["type"] in ("ICEBERG_VIEW", "MATERIALIZED_VIEW"):
                return await _view(request, api, ref, key, f"{path}/views/{seg(name)}", a, b,
                                   content["type"] == "MATERIALIZED_VIEW")
            if content["type"] == "ICEBERG_TABLE":
                return await _table(request, api, ref, key, f"{path}/tables/{seg(name)}")
        except ApiError as e:
            if e.status != 404 or e.code in MISSING_REF:
                return failed(request, e, ref=ref, key=key)
            close, readers = await _near(api, ref, key)
            return failed(request, e, ref=ref, key=key, close_keys=close, readers=readers)
    return page(request, "error.html", status=404, heading="Not a table or view",
                message=f"{key} is a {content['type'].lower()}", ref=ref, next="")


async def _near(api: Api, ref: str, key: str) -> tuple[list[str], list[str]]:
    """For a key not there, what the CLI says too: the keys beside it whose
    names are close (read with the visitor's token: nothing hidden), and the
    views that still read it (a dropped table or view)."""
    *ns, name = key.split(".")
    close: list[str] = []
    readers: list[str] = []
    try:
        # As the CLI asks (cli.missing): the namespace's children.
        listed = await api.get(f"/api/v2/trees/{seg(ref)}/entries", maxRecords=1000,
                               **({"prefixKey": ContentKey(ns).to_path_string(), "depth": 1}
                                  if ns else {"depth": 1}))
        siblings = {e["name"]["elements"][-1]: ".".join(e["name"]["elements"])
                    for e in listed["entries"] if e["type"] != "NAMESPACE"
                    and e["name"]["elements"][:-1] == ns}
        close = [siblings[n] for n in difflib.get_close_matches(
            name, [n for n in siblings if n != name], n=3, cutoff=0.6)]
        found = await api.get(f"/api/v2/trees/{seg(ref)}/contents/{seg(key)}/dependents")
        readers = [".".join(d["key"]) for d in found["dependents"]]
    except ApiError:
        pass  # the suggestions are extras: the page says what is missing without them
    return close, readers


async def _table(request: Request, api: Api, ref: str, key: str, path: str) -> Response:
    loaded = await api.get(path)
    meta = loaded["metadata"]
    schema = next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])
    spec = next(s for s in meta["partition-specs"] if s["spec-id"] == meta["default-spec-id"])
    snaps = [{"id": s["snapshot-id"], "time": s["timestamp-ms"],
              "current": s["snapshot-id"] == meta.get("current-snapshot-id"),
              "operation": s.get("summary", {}).get("operation", ""),
              # Format v3: the row ids the snapshot numbered, [first, first + added).
              "rows": (s["first-row-id"], s["first-row-id"] + s.get("added-rows", 0))
              if "first-row-id" in s else None,
              # What a reader looks for first, in columns; the rest below it.
              **{name: s.get("summary", {}).get(prop) for name, prop, _, _ in _COLUMNS},
              "summary": {k: v for k, v in s.get("summary", {}).items() if k != "operation"}}
             for s in reversed(meta.get("snapshots") or [])]
    chart = rows_chart(points(meta.get("snapshots") or []))
    # A column only where some snapshot's summary has the property.
    columns = [{"name": n, "header": h, "title": t, "bytes": n == "bytes"}
               for n, _, h, t in _COLUMNS if any(s[n] is not None for s in snaps)]
    # What reads the table: the views over it, and the views over those.
    readers = (await api.get(f"/api/v2/trees/{seg(ref)}/contents/{seg(key)}/dependents"))
    return page(request, "table.html", ref=ref, key=key, location=loaded["metadata-location"],
                schema=schema["fields"], spec=spec["fields"], snapshots=snaps, chart=chart,
                columns=columns,
                format_version=meta.get("format-version"), next_row_id=meta.get("next-row-id"),
                properties=meta.get("properties") or {},
                readers=[{"key": ".".join(d["key"]), "type": d.get("type", ""),
                          "depth": d.get("depth", 1), "via": ".".join(d.get("via") or [])}
                         for d in readers.get("dependents", [])])


# Summary properties shown as the snapshot table's own columns: name,
# property, header, what the header means.
_COLUMNS = (("total", "total-records", "Rows", "rows in the table (total-records)"),
            ("added", "added-records", "Added", "rows the snapshot added (added-records)"),
            ("deleted", "deleted-records", "Deleted",
             "rows the snapshot deleted (deleted-records)"),
            ("files", "total-data-files", "Files", "data files (total-data-files)"),
            ("bytes", "total-files-size", "Size", "size of the files (total-files-size)"))


async def _view(request: Request, api: Api, ref: str, key: str, path: str,
                a: int | None, b: int | None, materialized: bool = False) -> Response:
    meta = (await api.get(path))["metadata"]
    current = next(v for v in meta["versions"] if v["version-id"] == meta["current-version-id"])
    sql = {r["dialect"]: highlight(r["sql"], r["dialect"]) for r in current["representations"]}
    versions: list[dict[str, Any]] = []
    token = None
    while True:
        got = await api.get(f"/api/v2/trees/{seg(ref)}/views/{seg(key)}/history",
                            pageToken=token)
        versions += got["versions"]
        token = got.get("token")
        if not got.get("hasMore"):
            break
    # Older versions past retention are left out of the audit; say so.
    expired = ({"before": got.get("historyExpiredBefore")}
               if got.get("historyExpired") else None)
    # Unless asked otherwise, the two newest versions side by side.
    if len(versions) > 1:
        a = versions[-2]["versionId"] if a is None else a
        b = versions[-1]["versionId"] if b is None else b
    diff = compare(versions, a, b) if a is not None and b is not None else None
    deps = (await api.get(f"/api/v2/trees/{seg(ref)}/views/{seg(key)}/dependencies"))
    dependents = await api.get(f"/api/v2/trees/{seg(ref)}/contents/{seg(key)}/dependents")
    lineage = (await api.get(f"/api/v2/trees/{seg(ref)}/views/{seg(key)}/lineage"))["columns"]
    reads = [_dep(d) for d in deps.get("dependencies", [])]
    holds = {"status": deps["status"], "reasons": deps["reasons"]}
    read_by = [_dep(d) for d in dependents.get("dependents", [])]
    # Each hop drawn, each box in the state the one verdict gives it.
    graph = neighbourhood(ref, key, holds["status"],
                          [Node(d["key"], d["depth"], d["vias"], d["state"]) for d in reads],
                          [Node(d["key"], d["depth"], d["vias"], d["state"]) for d in read_by])
    # A materialized view: how fresh its stored rows are here, and its refreshes.
    mv = None if not materialized else {
        "freshness": await api.get(f"/api/v2/trees/{seg(ref)}/materialized-views/{seg(key)}/"
                                   "freshness"),
        "refreshes": (await api.get(f"/api/v2/trees/{seg(ref)}/materialized-views/"
                                    f"{seg(key)}"))["refreshes"]}
    return page(request, "view.html", ref=ref, key=key, sql=sql, versions=versions, a=a, b=b,
                mv=mv, expired=expired, ref_is_branch=not any(c in ref for c in "@*~^"),
                diff=diff, dependencies=reads, dependents=read_by, graph=graph,
                holds=holds, unresolved=deps.get("unresolved") or [],
                lineage=[{"name": c["name"], "derived": c.get("derived"),
                          "origins": [_origin(o) for o in c.get("origins", [])]}
                         for c in lineage])


def _origin(o: dict[str, Any]) -> str:
    if o.get("redacted"):  # a table the visitor may not read: its name only
        return f"{'.'.join(o['table'])} (not readable)"
    return ".".join([*o["table"], o["column"]])


def _dep(d: dict[str, Any]) -> dict[str, Any]:
    """An object a view reads or is read by, as the dependencies and
    dependents answers give it, with its state for the graph."""
    key = d["key"]["elements"] if isinstance(d["key"], dict) else d["key"]
    exists, redacted = d.get("exists", True), bool(d.get("redacted"))
    state = ("redacted" if redacted else "missing" if not exists
             else d.get("status") or "table")
    return {"key": ".".join(key), "type": d.get("type", ""), "depth": d.get("depth", 1),
            "via": ".".join(d.get("via") or []),
            "vias": tuple(".".join(v) for v in d.get("vias") or [d.get("via") or []]),
            "exists": exists, "redacted": redacted,
            "status": d.get("status"), "state": state}
