"""Versioning API: materialized views on any branch — create, show, replace,
drop, freshness at any ref, hash or instant, and the plan a refresh follows.

The rows themselves are computed by an engine (``spark.mviews.refresh``):
it takes the plan, reads the base tables through a catalog pinned at the
plan's ``branch@hash`` and writes the result with an Iceberg table commit
that carries the ``Sapwood-Refresh`` header (catalog.mviews.refresh)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from api.auth.guard import guard_of
from api.deps import Call, json_response, services_of
from api.paths import ref_param
from api.v2 import redact
from api.v2.mv_requests import CreateMaterializedView, ReplaceMaterializedView
from api.v2.shapes import mv_summary_json, refresh_plan_json
from catalog.kernel import Who
from catalog.mviews.mviews import Definition, Described
from catalog.mviews.refresh import refresh_plan
from catalog.targets import Target, target
from catalog.views.lifecycle import drop
from catalog.views.status import primary, status
from core.auth import Privilege
from core.content import Content, ContentType
from core.errors import bad_request
from core.keys import ContentKey
from core.mv.freshness import Freshness
from core.mv.metadata import MaterializedViewMetadata

router = APIRouter(prefix="/api/v2/trees")


def _target(ref: str, key: str) -> Target:
    ck = ContentKey.parse(key)
    return target(ref_param(ref), ContentKey(ck.elements[:-1]), ck.name)


def _who(request: Request, ref: str) -> Who:
    return Call(request, unquote(ref)).who


def _definition(body: CreateMaterializedView | ReplaceMaterializedView) -> Definition | None:
    if body.sql is None:
        return None
    try:
        schema = body.iceberg_schema()
    except ValueError as e:
        raise bad_request(f"Invalid schema: {str(e).splitlines()[0][:300]}") from None
    return Definition(body.sql, body.dialect.lower(), tuple(body.default_namespace), schema)


def _readable(request: Request, t: Target) -> redact.Readable | None:
    guard = guard_of(request)
    return None if guard is None else guard.key_filter(request, t.ref)


def _described(request: Request, t: Target, d: Described) -> Response:
    """A materialized view's summary; its refreshes name hidden bases only."""
    doc = mv_summary_json(d)
    readable = _readable(request, t)
    if readable is not None:
        doc = {**doc, "refreshes": redact.refreshes(doc["refreshes"], readable,
                                                    _dependencies(d.content))}
    return json_response(doc)


def _dependencies(c: Content | None) -> list[dict[str, Any]]:
    """What the view's SQL reads (its analysis), as core.redact takes it."""
    a = primary(c) if c is not None else None
    return [d.model_dump(by_alias=True, exclude_none=True) for d in a.dependencies] if a else []


@router.post("/{ref}/materialized-views")
def create_materialized_view(request: Request, ref: str, body: CreateMaterializedView,
                             ) -> Response:
    svc = services_of(request)
    key = body.key.key()
    guard = guard_of(request)
    if guard is not None:
        guard.require(request, Privilege.WRITE, ref_param(ref), key.elements)
    t = target(ref_param(ref), ContentKey(key.elements[:-1]), key.name)
    definition = _definition(body)
    assert definition is not None  # a creation's sql is required (its model says)
    svc.mviews.create(t.ref, t.key, definition, body.properties, _who(request, ref))
    return _described(request, t, svc.mviews.describe(t))


@router.get("/{ref}/materialized-views/{key}")
async def get_materialized_view(request: Request, ref: str, key: str) -> Response:
    svc = services_of(request)
    t = _target(ref, key)
    return _described(request, t, await run_in_threadpool(svc.mviews.describe, t))


@router.put("/{ref}/materialized-views/{key}")
def replace_materialized_view(request: Request, ref: str, key: str,
                              body: ReplaceMaterializedView) -> Response:
    if body.sql is None and not body.properties:
        raise bad_request("Nothing to replace: send sql (a new version), properties, or both")
    svc = services_of(request)
    t = _target(ref, key)
    return _described(request, t, svc.mviews.replace(t, _definition(body), body.properties,
                                                     _who(request, ref)))


@router.delete("/{ref}/materialized-views/{key}", status_code=204)
def drop_materialized_view(request: Request, ref: str, key: str,
                           cascade: bool = False) -> Response:
    """The view and its storage in one commit (the storage's files are
    garbage collection's, as for a dropped table: older commits still read them)."""
    svc = services_of(request)
    drop(svc.catalog, _target(ref, key), ContentType.MATERIALIZED_VIEW, _who(request, ref),
         cascade)
    return Response(status_code=204)


@router.get("/{ref}/materialized-views/{key}/freshness")
async def materialized_view_freshness(request: Request, ref: str, key: str) -> Response:
    svc = services_of(request)
    t = _target(ref, key)
    readable = _readable(request, t)
    fresh, now, meta, hides, deps = await run_in_threadpool(_freshness, svc, t, readable)
    current = meta.current_refresh()
    doc = redact.freshness(fresh.to_json(now), fresh.subjects, hides, readable, deps,
                           current.views if current is not None else ())
    return json_response({"key": list(t.key.elements), "atMs": now,
                          "maxStalenessMs": meta.max_staleness_ms(),
                          "servedFromStorage": fresh.servable(meta.max_staleness_ms()),
                          **doc})


def _freshness(svc: Any, t: Target, readable: redact.Readable | None,
               ) -> tuple[Freshness, int, MaterializedViewMetadata, bool, list[dict[str, Any]]]:
    fresh, now, meta = svc.mviews.freshness(t)
    resolved, found = svc.catalog.read(t.ref, [t.key])
    c = found[t.key]
    hides = readable is not None and (any(
        redact.reads_hidden(a.model_dump(by_alias=True), readable)
        for a in (c.analysis or [])) or (fresh.status == "invalid" and status(
            # Reasons that came through the views it reads name what those read.
            svc.catalog, f"@{resolved.hash}", t.key, c).reads_hidden(readable)))
    return fresh, now, meta, hides, _dependencies(c)


@router.get("/{ref}/materialized-views/{key}/refresh-plan")
async def materialized_view_refresh_plan(request: Request, ref: str, key: str,
                                         mode: str = Query("auto"),
                                         dialect: str = Query("spark")) -> Response:
    svc = services_of(request)
    plan = await run_in_threadpool(refresh_plan, svc.mviews, _target(ref, key), mode, dialect)
    return json_response(refresh_plan_json(plan))
