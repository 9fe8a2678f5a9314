"""Storage access for a table (the REST spec's remote signing and vended
credentials): ``POST …/tables/{table}/sign`` signs one S3 request the caller
is about to make, ``GET …/tables/{table}/credentials`` vends credentials for
the table's files. Both answer only what the caller's privileges on the
table at the addressed ref allow (api.delegated, catalog.delegation)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from api.delegated import RemoteSignRequest, may, record, sign_answer
from api.deps import Call, json_response, principal
from api.paths import namespace_key
from catalog.delegation.service import Decision
from catalog.delegation.settings import VENDING
from catalog.targets import target
from core.errors import InvalidInputError, UnavailableError

router = APIRouter(prefix="/iceberg/v1")


@router.post("/namespaces/{namespace}/tables/{table}/sign")
async def sign_request(request: Request, namespace: str, table: str,
                       body: RemoteSignRequest) -> Response:
    c = Call(request)
    return await sign_answer(c, request, target(c.ref, namespace_key(namespace), table), body)


@router.get("/namespaces/{namespace}/tables/{table}/credentials")
async def load_credentials(request: Request, namespace: str, table: str,
                           planId: str | None = None) -> Response:
    c = Call(request)
    t = target(c.ref, namespace_key(namespace), table)
    loaded = await c.read(c.svc.tables.load, t, None, None)
    storage = c.svc.storage
    location = storage.location_of(loaded.location, loaded.metadata)
    allowed = await c.read(may, c, request, t)
    try:
        vended, decision = await c.read(storage.vend, principal(request), location, allowed)
    except (InvalidInputError, UnavailableError) as e:
        record(request, Decision("vend", False, "unavailable", str(e)[:300]))
        raise
    record(request, decision)
    config = storage.client_config(VENDING, "", "", vended)
    return json_response({"storage-credentials": [{
        "prefix": vended.prefix,
        "config": {k: v for k, v in config.items() if k.startswith(("s3.", "client."))}}]})
