"""Namespaces: list, create, load, exists, drop, properties."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response

from api.catalog.service import Who
from api.deps import Services, ref, services, who
from api.models import CreateNamespaceRequest, UpdateNamespacePropertiesRequest
from api.paths import namespace_from_levels, namespace_key

router = APIRouter(prefix="/iceberg/v1/namespaces")
Svc = Annotated[Services, Depends(services)]
Ref = Annotated[str, Depends(ref)]
WhoDep = Annotated[Who, Depends(who)]
PageToken = Annotated[str | None, Query(alias="pageToken")]
PageSize = Annotated[int | None, Query(alias="pageSize", ge=1)]


@router.get("")
def list_namespaces(svc: Svc, r: Ref, page_token: PageToken = None, page_size: PageSize = None,
                    parent: str | None = None) -> dict[str, Any]:
    parent_key = namespace_key(parent) if parent else None
    found, token = svc.namespaces.list(r, parent_key, page_token, page_size)
    return {"namespaces": [list(ns) for ns in found], "next-page-token": token}


@router.post("")
def create_namespace(svc: Svc, r: Ref, w: WhoDep, body: CreateNamespaceRequest,
                     ) -> dict[str, Any]:
    ns = namespace_from_levels(body.namespace)
    props = svc.namespaces.create(r, ns, dict(body.properties), w)
    return {"namespace": list(ns.elements), "properties": props}


@router.get("/{namespace}")
def load_namespace(svc: Svc, r: Ref, namespace: str) -> dict[str, Any]:
    ns = namespace_key(namespace)
    return {"namespace": list(ns.elements), "properties": svc.namespaces.load(r, ns)}


@router.head("/{namespace}", status_code=204)
def namespace_exists(svc: Svc, r: Ref, namespace: str) -> Response:
    svc.namespaces.load(r, namespace_key(namespace))
    return Response(status_code=204)


@router.delete("/{namespace}", status_code=204)
def drop_namespace(svc: Svc, r: Ref, w: WhoDep, namespace: str) -> Response:
    svc.namespaces.drop(r, namespace_key(namespace), w)
    return Response(status_code=204)


@router.post("/{namespace}/properties")
def update_properties(svc: Svc, r: Ref, w: WhoDep, namespace: str,
                      body: UpdateNamespacePropertiesRequest) -> dict[str, Any]:
    return svc.namespaces.update_properties(r, namespace_key(namespace), dict(body.updates),
                                            list(body.removals), w)
