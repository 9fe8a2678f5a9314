"""Namespaces: list, create, load, exists, drop, properties."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from api.deps import Call, PageSize, PageToken, json_response, no_content
from api.models import CreateNamespaceRequest, UpdateNamespacePropertiesRequest
from api.paging import iceberg_listing
from api.paths import namespace_key
from catalog.targets import namespace_from_levels
from core.auth import Privilege

router = APIRouter(prefix="/iceberg/v1/namespaces")


@router.get("")
async def list_namespaces(request: Request, page_token: PageToken = None,
                          page_size: PageSize = None, parent: str | None = None) -> Response:
    c = Call(request)
    parent_key = namespace_key(parent) if parent else None
    found, token = await iceberg_listing(request, c, "namespaces", {"parent": parent},
                                         page_token, page_size, c.svc.namespaces.listed,
                                         c.ref, parent_key)
    return json_response({"namespaces": [list(ns) for ns in found],
                          "next-page-token": token})


@router.post("")
def create_namespace(request: Request, body: CreateNamespaceRequest,
                     ) -> Response:
    c = Call(request)
    ns = namespace_from_levels(body.namespace)
    c.require(Privilege.WRITE, ns)
    answer = c.answering(lambda props: json_response({"namespace": list(ns.elements),
                                                      "properties": props}))
    return answer(c.svc.namespaces.create(c.ref, ns, dict(body.properties), c.who))


@router.get("/{namespace}")
async def load_namespace(request: Request, namespace: str) -> Response:
    c = Call(request)
    ns = namespace_key(namespace)
    return json_response({"namespace": list(ns.elements),
                          "properties": await c.read(c.svc.namespaces.load, c.ref, ns)})


@router.head("/{namespace}", status_code=204)
async def namespace_exists(request: Request, namespace: str) -> Response:
    c = Call(request)
    await c.read(c.svc.namespaces.load, c.ref, namespace_key(namespace))
    return Response(status_code=204)


@router.delete("/{namespace}", status_code=204)
def drop_namespace(request: Request, namespace: str) -> Response:
    c = Call(request)
    c.svc.namespaces.drop(c.ref, namespace_key(namespace), c.answered_by(no_content))
    return no_content()


@router.post("/{namespace}/properties")
def update_properties(request: Request, namespace: str,
                      body: UpdateNamespacePropertiesRequest) -> Response:
    c = Call(request)
    return c.answering(json_response)(c.svc.namespaces.update_properties(
        c.ref, namespace_key(namespace), dict(body.updates), list(body.removals), c.who))
