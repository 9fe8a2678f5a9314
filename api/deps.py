"""FastAPI dependencies: the services, the principal and the addressed ref.

Every route takes one dependency, the request's ``Call``: FastAPI resolves
each dependency per request at a measurable cost (bench/rest_bench.py), so
the pieces are fields of one value, and the commit identity is only built
when a write asks for it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fastapi import Request, Response

from api.catalog.namespaces import Namespaces
from api.catalog.service import Catalog, Who
from api.catalog.tables import Tables
from api.catalog.views import Views
from api.paths import request_ref
from core.keys import ContentKey

MESSAGE_HEADER = "Sapwood-Commit-Message"
AUTHOR_HEADER = "Sapwood-Commit-Author"


@dataclass(frozen=True, slots=True)
class Services:
    catalog: Catalog
    namespaces: Namespaces
    tables: Tables
    views: Views


def principal(request: Request) -> str:
    # No authentication yet: every caller is anonymous. PyIceberg sends
    # "Authorization: Bearer None" when it has no token, which is tolerated.
    return "anonymous"


class Call:
    """What one request works with: the services, its ref spec, and (for
    writes) who commits and with what message."""

    __slots__ = ("_request", "ref", "svc")

    def __init__(self, request: Request) -> None:
        self._request = request
        self.svc: Services = request.app.state.services
        self.ref = request_ref(request.scope)

    @property
    def who(self) -> Who:
        h = self._request.headers
        return Who(principal(self._request), h.get(MESSAGE_HEADER) or None,
                   h.get(AUTHOR_HEADER) or None)


async def call(request: Request) -> Call:
    return Call(request)


def json_response(payload: Any) -> Response:
    """A JSON answer encoded once by the standard library (FastAPI's generic
    encoder walks the value twice and shows up in every read's profile)."""
    return Response(json.dumps(payload, separators=(",", ":")).encode(),
                    media_type="application/json")


def raw_json(body: bytes) -> Response:
    """A JSON answer already encoded (metadata bodies are cached as bytes)."""
    return Response(body, media_type="application/json")


def identifier_json(key: ContentKey) -> dict[str, Any]:
    """A TableIdentifier: the namespace levels and the name."""
    return {"namespace": list(key.elements[:-1]), "name": key.name}
