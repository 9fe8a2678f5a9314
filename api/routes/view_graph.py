"""Versioning API: what a view reads, at any ref, hash or instant.

``GET /api/v2/trees/{ref}/views/{key}/dependencies`` walks the recorded
dependencies upstream (each dependency as it is at that same commit), and
``…/lineage`` gives each output column's base-table origins."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request, Response

from api.answers import loaded_json
from api.auth.guard import guard_of
from api.deps import json_response, principal, services_of
from api.paths import ref_param
from api.v2 import redact
from api.v2.shapes import effective_json, status_json
from catalog.kernel import Catalog, Who
from catalog.limits import MAX_VIEW_NESTING
from catalog.targets import target
from catalog.views.status import Verdicts, primary, status
from catalog.views.versions import add_representation, recompile
from core.commits import ResolvedRef
from core.content import Content, IcebergView, MaterializedView
from core.errors import NoSuchViewError
from core.keys import ContentKey
from core.sql.validity import ViewStatus

router = APIRouter(prefix="/api/v2/trees")
MAX_DEPTH = MAX_VIEW_NESTING


def _view(catalog: Catalog, ref: str, key: str) -> tuple[ResolvedRef, IcebergView]:
    ck, spec = ContentKey.parse(key), ref_param(ref)
    resolved, found = catalog.read(spec, [ck])
    c = found.get(ck)
    if not isinstance(c, IcebergView | MaterializedView):
        raise NoSuchViewError(f"View does not exist: {ck} at '{spec}'")
    return resolved, c  # type: ignore[return-value]


def analysis_json(s: ViewStatus, readable: redact.Readable | None = None) -> dict[str, Any]:
    """A view's status at the ref (catalog.views.status), as the caller may see it."""
    return status_json(redact.status(s, readable))


def _readable(request: Request, ref: str) -> redact.Readable | None:
    """Which keys the caller may read at ``ref`` (None: all of them)."""
    guard = guard_of(request)
    return None if guard is None else guard.key_filter(request, ref_param(ref))


def _via(vias: dict[ContentKey, list[list[str]]], k: ContentKey,
         parent: ContentKey) -> list[list[str]]:
    """Records that ``parent`` reads ``k``; the list of every object on the
    way that does (an entry holds the list itself, so later hops show)."""
    found = vias.setdefault(k, [])
    if list(parent.elements) not in found:
        found.append(list(parent.elements))
    return found


@router.get("/{ref}/views/{key}/dependencies")
def view_dependencies(request: Request, ref: str, key: str,
                      depth: int = Query(MAX_DEPTH, ge=1, le=MAX_DEPTH)) -> Response:
    """Upstream, breadth first: every table and view the view reads, and what
    those views read, down to ``depth`` levels; each once, at its least depth."""
    catalog = services_of(request).catalog
    resolved, view = _view(catalog, ref, key)
    readable = _readable(request, ref)
    at = f"@{resolved.hash}"
    # One verdict for the view and every view on the way, each judged once.
    verdicts = Verdicts(catalog, at)
    out: list[dict[str, Any]] = []
    # Each object once, at its least depth; ``vias`` every object on the
    # way that reads it (a diamond's both hops: the UI draws each).
    vias: dict[ContentKey, list[list[str]]] = {}
    seen = {ContentKey.parse(key)}
    frontier: list[tuple[ContentKey, IcebergView | MaterializedView]] = [
        (ContentKey.parse(key), view)]
    level = 0
    while frontier and level < depth:
        level += 1
        wanted = []
        for parent, c in frontier:
            a = primary(c)
            for d in a.dependencies if a else []:
                k = ContentKey(d.key)
                readers = _via(vias, k, parent)
                if k in seen:
                    continue
                seen.add(k)
                if redact.hidden(readable, k.elements):
                    # Its name is in the SQL; nothing else about it, nor
                    # what it reads in turn.
                    out.append({"key": list(k.elements), "depth": level,
                                "via": list(parent.elements), "vias": readers,
                                redact.REDACTED: True})
                else:
                    wanted.append((parent, k, d))
        now = catalog.read(at, [k for _, k, _ in wanted])[1] if wanted else {}
        views = {k: c for k, c in now.items() if isinstance(c, IcebergView | MaterializedView)}
        found = verdicts.of(views) if views else {}
        frontier = []
        for parent, k, d in wanted:
            cur = now.get(k)
            entry = {"key": list(k.elements), "contentId": d.content_id, "type": d.type,
                     "depth": level, "via": list(parent.elements),
                     "vias": vias[k],
                     "exists": cur is not None and cur.id == d.content_id}
            out.append(entry)
            if cur is not None and isinstance(cur, IcebergView | MaterializedView):
                entry |= analysis_json(found[k], readable)
                frontier.append((k, cur))
    a = primary(view)
    unresolved = [n for n in (a.unresolved if a else [])
                  if not redact.dotted_hidden(readable, n)]
    me = list(ContentKey.parse(key).elements)
    # Shaped as a hidden object that exists is (a missing name looks the same).
    out += [{"key": n.split("."), "depth": 1, "via": me, "vias": [me], redact.REDACTED: True}
            for n in (a.unresolved if a else []) if redact.dotted_hidden(readable, n)]
    own = verdicts.of({ContentKey.parse(key): view})[ContentKey.parse(key)]
    return json_response({"key": ContentKey.parse(key).elements, "contentId": view.id,
                          **analysis_json(own, readable),
                          "unresolved": unresolved,
                          "dependencies": out, "effectiveReference": effective_json(resolved)})


@router.get("/{ref}/views/{key}/lineage")
def view_lineage(request: Request, ref: str, key: str) -> Response:
    """Per output column: the base-table columns its value comes from (through
    nested views), and whether any step computes it."""
    catalog = services_of(request).catalog
    resolved, view = _view(catalog, ref, key)
    readable = _readable(request, ref)
    a = primary(view)
    columns = redact.lineage(a.model_dump(by_alias=True, exclude_none=True) if a else None,
                             readable)
    return json_response({"key": ContentKey.parse(key).elements, "contentId": view.id,
                          **analysis_json(status(catalog, f"@{resolved.hash}",
                                                 ContentKey.parse(key), view),
                                          readable), "columns": columns,
                          "effectiveReference": effective_json(resolved)})


@router.get("/{ref}/contents/{key}/dependents")
def content_dependents(request: Request, ref: str, key: str,
                       depth: int = Query(MAX_DEPTH, ge=1, le=MAX_DEPTH)) -> Response:
    """Downstream, breadth first: the views that read this table or view, and
    the views that read those, down to ``depth`` levels; each once. Answered
    for a name that no longer exists too (``exists`` false, ``contentId``
    null): the views a drop left reading it are what one asks after it."""
    svc = services_of(request)
    catalog = svc.catalog
    start = ContentKey.parse(key)
    resolved, found = catalog.read(ref_param(ref), [start])
    at = f"@{resolved.hash}"
    readable = _readable(request, ref)
    verdicts = Verdicts(catalog, at)
    out: list[dict[str, Any]] = []
    vias: dict[ContentKey, list[list[str]]] = {}  # as in view_dependencies
    seen = {start}
    frontier = [start]
    level = 0
    while frontier and level < depth:
        level += 1
        nxt = []
        reached: dict[ContentKey, tuple[ContentKey, Content]] = {}
        for parent in frontier:
            for k, c in sorted(svc.versioning.dependents(at, parent)[1].items()):
                if redact.hidden(readable, k.elements):
                    continue  # nothing of a view the caller may not read
                _via(vias, k, parent)
                if k in seen:
                    continue
                seen.add(k)
                nxt.append(k)
                reached[k] = (parent, c)
        now = verdicts.of({k: c for k, (_, c) in reached.items()}) if reached else {}
        for k, (parent, c) in reached.items():
            out.append({"key": list(k.elements), "contentId": c.id, "type": c.type,
                        "depth": level, "via": list(parent.elements), "vias": vias[k],
                        **analysis_json(now[k], readable)})
        frontier = nxt
    gone = found.get(start)
    return json_response({"key": list(start.elements),
                          "contentId": gone.id if gone is not None else None,
                          "exists": gone is not None, "dependents": out,
                          "effectiveReference": effective_json(resolved)})


@router.post("/{ref}/views/{key}/representations")
def add_view_representation(request: Request, ref: str, key: str,
                            source: str = Query(alias="from"),
                            to: str = Query(alias="to")) -> Response:
    """A new view version with the SQL transpiled from ``from`` into ``to`` by
    sqlglot (marked in the version summary); answers the LoadViewResult."""
    svc = services_of(request)
    ck = ContentKey.parse(key)
    t = target(ref_param(ref), ContentKey(ck.elements[:-1]), ck.name)
    who = Who(principal(request))
    return loaded_json(add_representation(svc.views, t, source, to, who))


@router.post("/{ref}/views/{key}/recompile")
def recompile_view(request: Request, ref: str, key: str) -> Response:
    """Hive's ALTER VIEW … RECOMPILE: a new version when the view's expansion
    against the objects it reads now differs from the frozen one."""
    svc = services_of(request)
    ck = ContentKey.parse(key)
    t = target(ref_param(ref), ContentKey(ck.elements[:-1]), ck.name)
    r = recompile(svc.views, t, Who(principal(request)))
    out: dict[str, Any] = {"recompiled": r.recompiled, "versionId": r.version_id,
                           "expandedText": r.expanded_text}
    if r.columns is not None:
        out["columns"] = r.columns
    return json_response(out)
