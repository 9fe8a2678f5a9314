"""Grants and protected branches over HTTP (``/api/v2/auth``), for principals
with ``manage-grants`` on every reference; the same data the ``sapwood
grant|protect`` commands write."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from api.deps import json_response, services_of
from catalog.access import AuthData, grants_json
from core.numbers import INT64_MAX

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
    return _answer(await run_in_threadpool(services_of(request).access.current))


@router.post("/grants")
def add_grant(request: Request, body: GrantBody) -> Response:
    return _answer(services_of(request).access.add_grant(body.grantee, body.privilege,
                                                         body.refs, tuple(body.namespace)))


@router.delete("/grants/{grant_id}")
def revoke_grant(request: Request,
                 grant_id: Annotated[int, Path(ge=1, le=INT64_MAX)]) -> Response:
    return _answer(services_of(request).access.revoke_grant(grant_id))


@router.post("/protected")
def protect_refs(request: Request, body: ProtectBody) -> Response:
    return _answer(services_of(request).access.protect(body.pattern))


@router.delete("/protected/{pattern}")
def unprotect_refs(request: Request, pattern: str) -> Response:
    return _answer(services_of(request).access.unprotect(pattern))
