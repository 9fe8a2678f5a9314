"""Views: list, create, load (also as of an instant), exists, replace, drop,
rename, register."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from api.answers import ANSWERS, loaded_or_not_modified
from api.deps import Call, PageSize, PageToken, identifiers_response, no_content
from api.models import CommitViewRequest, CreateViewRequest, RegisterViewRequest, RenameTableRequest
from api.paging import iceberg_listing
from api.paths import namespace_key, request_catalog
from api.routes.tables import check_identifier, renamed
from api.view_catalogs import (
    kept,
    may_differ,
    served_for,
    served_json,
    stamped_commit,
    stamped_create,
)
from catalog.commands import Loaded
from catalog.targets import target
from catalog.views.lifecycle import drop
from core.auth import Privilege
from core.content import ContentType

router = APIRouter(prefix="/iceberg/v1")
# A materialized view is one entry, listed among the views: it always loads
# as a view, and as a table only while its stored rows may be served.
VIEW_TYPES = (ContentType.ICEBERG_VIEW, ContentType.MATERIALIZED_VIEW)


@router.get("/namespaces/{namespace}/views")
async def list_views(request: Request, namespace: str, page_token: PageToken = None,
                     page_size: PageSize = None) -> Response:
    c = Call(request)
    keys, token = await iceberg_listing(request, c, "views", {"namespace": namespace},
                                        page_token, page_size, c.svc.namespaces.children,
                                        c.ref, namespace_key(namespace), VIEW_TYPES)
    return identifiers_response(keys, token)


@router.post("/namespaces/{namespace}/views")
def create_view(request: Request, namespace: str, body: CreateViewRequest,
                ) -> Response:
    c = Call(request)
    catalog = request_catalog(request.scope)
    command = stamped_create(body.command(), catalog)
    return c.answering(served_json(catalog))(c.svc.views.create(c.ref, namespace_key(namespace),
                                                       command, c.who))


@router.get("/namespaces/{namespace}/views/{view}")
async def load_view(request: Request, namespace: str, view: str) -> Response:
    c = Call(request)
    t = target(c.ref, namespace_key(namespace), view)
    return loaded_or_not_modified(await _served(request, await c.read(c.svc.views.load, t)),
                                  request)


async def _served(request: Request, loaded: Loaded) -> Loaded:
    """The view as the catalog that loads it reads it (api/view_catalogs.py)."""
    catalog = request_catalog(request.scope)
    hit = kept(loaded, catalog)
    if hit is not None:
        return hit
    if may_differ(loaded, catalog):  # sqlglot's work: off the event loop
        return await run_in_threadpool(served_for, loaded, catalog)
    return loaded


@router.head("/namespaces/{namespace}/views/{view}", status_code=204)
async def view_exists(request: Request, namespace: str, view: str) -> Response:
    c = Call(request)
    _, etag = ANSWERS.body(await _served(request, await c.read(
        c.svc.views.load, target(c.ref, namespace_key(namespace), view))))
    return Response(status_code=204, headers={"ETag": etag})


@router.post("/namespaces/{namespace}/views/{view}")
def replace_view(request: Request, namespace: str, view: str,
                 body: CommitViewRequest) -> Response:
    c = Call(request)
    t = target(c.ref, namespace_key(namespace), view)
    check_identifier(body.identifier, t)
    catalog = request_catalog(request.scope)
    command = stamped_commit(body.command(), catalog)
    return c.answering(served_json(catalog))(c.svc.views.replace(t, command, c.who))


@router.delete("/namespaces/{namespace}/views/{view}", status_code=204)
def drop_view(request: Request, namespace: str, view: str, cascade: bool = False,
              ) -> Response:
    # cascade=true (ours, not Iceberg's): the views that read it go in the same commit.
    c = Call(request)
    drop(c.svc.catalog, target(c.ref, namespace_key(namespace), view),
         ContentType.ICEBERG_VIEW, c.answered_by(no_content), cascade,
         lambda k: c.require(Privilege.WRITE, k), also=(ContentType.MATERIALIZED_VIEW,))
    return no_content()


@router.post("/namespaces/{namespace}/register-view")
def register_view(request: Request, namespace: str, body: RegisterViewRequest,
                  ) -> Response:
    c = Call(request)
    answer = c.answering(served_json(request_catalog(request.scope)))
    return answer(c.svc.views.register(c.ref, namespace_key(namespace), body.command(), c.who))


@router.post("/views/rename", status_code=204)
def rename_view(request: Request, body: RenameTableRequest) -> Response:
    return renamed(request, body, ContentType.ICEBERG_VIEW)
