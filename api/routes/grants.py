"""Grants and protected branches over HTTP (``/api/v2/auth``), for principals
with ``manage-grants`` on every reference; the same data the ``sapwood
grant|protect`` commands write."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from api.deps import json_response
from api.routes.trees import store_of
from catalog.access import grants_json
from core.numbers import INT64_MAX
from store.auth import AuthData

router = APIRouter(prefix="/api/v2/auth")


class GrantBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    grantee: str = Field(max_length=140)
    privilege: str = Field(max_length=32)
    refs: str = Field("*", max_length=255)
    namespace: list[str] = Field(default_factory=list, max_length=20)


class ProtectBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str = Field(max_length=255)


def _answer(data: AuthData) -> Response:
    return json_response(grants_json(data))


@router.get("/grants")
async def list_grants(request: Request) -> Response:
    return _answer(await run_in_threadpool(store_of(request).auth.current))


@router.post("/grants")
def add_grant(request: Request, body: GrantBody) -> Response:
    auth = store_of(request).auth
    auth.add_grant(body.grantee, body.privilege, body.refs, tuple(body.namespace))
    return _answer(auth.current())


@router.delete("/grants/{grant_id}")
def revoke_grant(request: Request,
                 grant_id: Annotated[int, Path(ge=1, le=INT64_MAX)]) -> Response:
    auth = store_of(request).auth
    auth.revoke_grant(grant_id)
    return _answer(auth.current())


@router.post("/protected")
def protect_refs(request: Request, body: ProtectBody) -> Response:
    auth = store_of(request).auth
    auth.protect(body.pattern)
    return _answer(auth.current())


@router.delete("/protected/{pattern}")
def unprotect_refs(request: Request, pattern: str) -> Response:
    auth = store_of(request).auth
    auth.unprotect(pattern)
    return _answer(auth.current())
