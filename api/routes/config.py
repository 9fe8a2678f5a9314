"""GET /v1/config: where clients learn the prefix and the supported endpoints."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from api.deps import Call, json_response
from api.paths import SCOPE_KEY, config_prefix
from catalog.delegation.service import NOTE_KEY
from core.errors import bad_request
from core.refs import RefSpec
from core.sql.catalog_names import CATALOG_NAME

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
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/unregister",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign",
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


# Catalog properties every client starts from (its own settings override them).
# Metrics reports are accepted and dropped (REST_NOTES), so clients are told not
# to spend a round trip per scan sending them.
DEFAULTS = {"rest-metrics-reporting-enabled": "false"}
# On a local warehouse, Iceberg Java's default ResolvingFileIO only ever picks
# HadoopFileIO, but Spark rebuilds that choice in every task: naming it saves
# ~10% of a small query (bench/spark_bench.py).
LOCAL_DEFAULTS = {**DEFAULTS, "io-impl": "org.apache.iceberg.hadoop.HadoopFileIO"}


def config_defaults(warehouse: str) -> dict[str, str]:
    return LOCAL_DEFAULTS if warehouse.startswith("file:") else DEFAULTS


@router.get("/iceberg/v1/config")
async def get_config(request: Request, warehouse: str | None = None) -> Response:
    """The prefix is the ref spec (from the base path, else ``warehouse``, else
    the default branch); the client puts it into every later path."""
    c = Call(request, fallback=warehouse or None)
    await c.read(c.svc.catalog.resolve, c.ref)  # a bad ref fails here, early
    catalog = engine_catalog(request, c.ref, warehouse)
    defaults = {**config_defaults(c.svc.catalog.locations.warehouse),
                # What storage access this catalog delegates (docs/security.md).
                NOTE_KEY: c.svc.storage.note()}
    return json_response({"defaults": defaults,
                          "overrides": {"prefix": config_prefix(c.ref, catalog)},
                          "endpoints": ENDPOINTS, "idempotency-key-lifetime": iso_duration(
                              request.app.state.idempotency_lifetime_s)})


def engine_catalog(request: Request, ref: RefSpec, warehouse: str | None) -> str | None:
    """The engine's name for this catalog: ``warehouse`` when the base path
    names the ref (docs/trino/iceberg.properties sets it to the Trino
    catalog's name), so that every later call, loadView among them, knows it
    through the prefix (core/sql/catalog_names.py). Without a ref in the base
    path, ``warehouse`` is the ref, as before; the ref itself named again is
    no catalog name."""
    base = request.scope.get(SCOPE_KEY, (None, None))[0]
    if not warehouse or base is None or warehouse == base or warehouse == str(ref):
        return None
    if not CATALOG_NAME.fullmatch(warehouse):
        raise bad_request(f"warehouse {warehouse!r} is neither the reference the base path "
                          f"names ({base!r}) nor a catalog name (letters, digits and '_', "
                          f"not starting with a digit): name the engine's catalog, as "
                          f"docs/trino.md shows")
    return warehouse


def iso_duration(seconds: int) -> str:
    """ISO-8601, as the spec writes it: PT30M, PT24H, PT90S."""
    if seconds % 3600 == 0:
        return f"PT{seconds // 3600}H"
    if seconds % 60 == 0:
        return f"PT{seconds // 60}M"
    return f"PT{seconds}S"
