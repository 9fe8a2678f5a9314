"""GET /v1/config: where clients learn the prefix and the supported endpoints."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from api.paths import quote_ref, request_ref

router = APIRouter()

# Every route this server answers, spelled as the spec's Endpoint strings
# (Spark disables views unless their endpoints are listed).
ENDPOINTS = [
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
    "GET /v1/{prefix}/namespaces/{namespace}/views",
    "POST /v1/{prefix}/namespaces/{namespace}/views",
    "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/register-view",
    "POST /v1/{prefix}/views/rename",
]


@router.get("/iceberg/v1/config")
def get_config(request: Request, warehouse: str | None = None) -> dict[str, Any]:
    """The prefix is the ref spec (from the base path, else ``warehouse``, else
    the default branch); the client puts it into every later path."""
    ref = request_ref(request.scope, fallback=warehouse or None)
    request.app.state.services.catalog.store.resolve(ref)  # a bad ref fails here, early
    return {"defaults": {}, "overrides": {"prefix": quote_ref(ref)}, "endpoints": ENDPOINTS}
