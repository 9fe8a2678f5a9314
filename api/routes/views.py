"""Views: list, create, load (also as of an instant), exists, replace, drop,
rename, register."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response

from api.catalog.service import Who, rename
from api.deps import Services, ref, services, who
from api.models import CommitViewRequest, CreateViewRequest, RegisterViewRequest, RenameTableRequest
from api.paths import namespace_key, target
from api.routes.tables import identifier
from core.content import ContentType

router = APIRouter(prefix="/iceberg/v1")
Svc = Annotated[Services, Depends(services)]
Ref = Annotated[str, Depends(ref)]
WhoDep = Annotated[Who, Depends(who)]
PageToken = Annotated[str | None, Query(alias="pageToken")]
PageSize = Annotated[int | None, Query(alias="pageSize", ge=1)]
JSON = "application/json"


@router.get("/namespaces/{namespace}/views")
def list_views(svc: Svc, r: Ref, namespace: str, page_token: PageToken = None,
               page_size: PageSize = None) -> dict[str, Any]:
    keys, token = svc.views.list(r, namespace_key(namespace), page_token, page_size)
    return {"identifiers": [{"namespace": list(k.namespace.elements), "name": k.name}  # type: ignore[union-attr]
                            for k in keys], "next-page-token": token}


@router.post("/namespaces/{namespace}/views")
def create_view(svc: Svc, r: Ref, w: WhoDep, namespace: str, body: CreateViewRequest,
                ) -> Response:
    return Response(svc.views.create(r, namespace_key(namespace), body, w), media_type=JSON)


@router.get("/namespaces/{namespace}/views/{view}")
def load_view(svc: Svc, r: Ref, namespace: str, view: str) -> Response:
    return Response(svc.views.load(target(r, namespace_key(namespace), view)), media_type=JSON)


@router.head("/namespaces/{namespace}/views/{view}", status_code=204)
def view_exists(svc: Svc, r: Ref, namespace: str, view: str) -> Response:
    svc.views.current(target(r, namespace_key(namespace), view))
    return Response(status_code=204)


@router.post("/namespaces/{namespace}/views/{view}")
def replace_view(svc: Svc, r: Ref, w: WhoDep, namespace: str, view: str,
                 body: CommitViewRequest) -> Response:
    t = target(r, namespace_key(namespace), view)
    return Response(svc.views.replace(t, body, w), media_type=JSON)


@router.delete("/namespaces/{namespace}/views/{view}", status_code=204)
def drop_view(svc: Svc, r: Ref, w: WhoDep, namespace: str, view: str) -> Response:
    svc.views.drop(target(r, namespace_key(namespace), view), w)
    return Response(status_code=204)


@router.post("/namespaces/{namespace}/register-view")
def register_view(svc: Svc, r: Ref, w: WhoDep, namespace: str, body: RegisterViewRequest,
                  ) -> Response:
    return Response(svc.views.register(r, namespace_key(namespace), body, w), media_type=JSON)


@router.post("/views/rename", status_code=204)
def rename_view(svc: Svc, r: Ref, w: WhoDep, body: RenameTableRequest) -> Response:
    src = identifier(body.source.namespace, body.source.name)
    dst = identifier(body.destination.namespace, body.destination.name)
    rename(svc.catalog, r, src, dst, ContentType.ICEBERG_VIEW, w)
    return Response(status_code=204)
