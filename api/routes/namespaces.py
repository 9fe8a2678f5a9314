"""Namespaces: list, create, load, exists, drop, properties."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from api.deps import Call, call, json_response
from api.models import CreateNamespaceRequest, UpdateNamespacePropertiesRequest
from api.paths import namespace_from_levels, namespace_key

router = APIRouter(prefix="/iceberg/v1/namespaces")
Ctx = Annotated[Call, Depends(call)]
PageToken = Annotated[str | None, Query(alias="pageToken")]
PageSize = Annotated[int | None, Query(alias="pageSize", ge=1)]


@router.get("")
def list_namespaces(c: Ctx, page_token: PageToken = None, page_size: PageSize = None,
                    parent: str | None = None) -> Response:
    parent_key = namespace_key(parent) if parent else None
    found, token = c.svc.namespaces.list(c.ref, parent_key, page_token, page_size)
    return json_response({"namespaces": [list(ns) for ns in found],
                          "next-page-token": token})


@router.post("")
def create_namespace(c: Ctx, body: CreateNamespaceRequest,
                     ) -> Response:
    ns = namespace_from_levels(body.namespace)
    props = c.svc.namespaces.create(c.ref, ns, dict(body.properties), c.who)
    return json_response({"namespace": list(ns.elements), "properties": props})


@router.get("/{namespace}")
def load_namespace(c: Ctx, namespace: str) -> Response:
    ns = namespace_key(namespace)
    return json_response({"namespace": list(ns.elements),
                          "properties": c.svc.namespaces.load(c.ref, ns)})


@router.head("/{namespace}", status_code=204)
def namespace_exists(c: Ctx, namespace: str) -> Response:
    c.svc.namespaces.load(c.ref, namespace_key(namespace))
    return Response(status_code=204)


@router.delete("/{namespace}", status_code=204)
def drop_namespace(c: Ctx, namespace: str) -> Response:
    c.svc.namespaces.drop(c.ref, namespace_key(namespace), c.who)
    return Response(status_code=204)


@router.post("/{namespace}/properties")
def update_properties(c: Ctx, namespace: str,
                      body: UpdateNamespacePropertiesRequest) -> Response:
    return json_response(c.svc.namespaces.update_properties(
        c.ref, namespace_key(namespace), dict(body.updates), list(body.removals), c.who))
