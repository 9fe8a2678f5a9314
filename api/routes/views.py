"""Views: list, create, load (also as of an instant), exists, replace, drop,
rename, register."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from api.catalog.service import rename
from api.deps import Call, identifier_json, json_response, raw_json
from api.models import CommitViewRequest, CreateViewRequest, RegisterViewRequest, RenameTableRequest
from api.paths import namespace_key, target
from api.routes.tables import identifier
from core.content import ContentType

router = APIRouter(prefix="/iceberg/v1")
PageToken = Annotated[str | None, Query(alias="pageToken")]
PageSize = Annotated[int | None, Query(alias="pageSize", ge=1)]


@router.get("/namespaces/{namespace}/views")
async def list_views(request: Request, namespace: str, page_token: PageToken = None,
                     page_size: PageSize = None) -> Response:
    c = Call(request)
    keys, token = await c.read(c.svc.views.list, c.ref, namespace_key(namespace),
                               page_token, page_size)
    return json_response({"identifiers": [identifier_json(k) for k in keys],
                          "next-page-token": token})


@router.post("/namespaces/{namespace}/views")
def create_view(request: Request, namespace: str, body: CreateViewRequest,
                ) -> Response:
    c = Call(request)
    return raw_json(c.svc.views.create(c.ref, namespace_key(namespace), body, c.who))


@router.get("/namespaces/{namespace}/views/{view}")
async def load_view(request: Request, namespace: str, view: str) -> Response:
    c = Call(request)
    t = target(c.ref, namespace_key(namespace), view)
    return raw_json(await c.read(c.svc.views.load, t))


@router.head("/namespaces/{namespace}/views/{view}", status_code=204)
async def view_exists(request: Request, namespace: str, view: str) -> Response:
    c = Call(request)
    await c.read(c.svc.views.current, target(c.ref, namespace_key(namespace), view))
    return Response(status_code=204)


@router.post("/namespaces/{namespace}/views/{view}")
def replace_view(request: Request, namespace: str, view: str,
                 body: CommitViewRequest) -> Response:
    c = Call(request)
    t = target(c.ref, namespace_key(namespace), view)
    return raw_json(c.svc.views.replace(t, body, c.who))


@router.delete("/namespaces/{namespace}/views/{view}", status_code=204)
def drop_view(request: Request, namespace: str, view: str) -> Response:
    c = Call(request)
    c.svc.views.drop(target(c.ref, namespace_key(namespace), view), c.who)
    return Response(status_code=204)


@router.post("/namespaces/{namespace}/register-view")
def register_view(request: Request, namespace: str, body: RegisterViewRequest,
                  ) -> Response:
    c = Call(request)
    return raw_json(c.svc.views.register(c.ref, namespace_key(namespace), body, c.who))


@router.post("/views/rename", status_code=204)
def rename_view(request: Request, body: RenameTableRequest) -> Response:
    c = Call(request)
    src = identifier(body.source.namespace, body.source.name)
    dst = identifier(body.destination.namespace, body.destination.name)
    rename(c.svc.catalog, c.ref, src, dst, ContentType.ICEBERG_VIEW, c.who)
    return Response(status_code=204)
