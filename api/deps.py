"""FastAPI dependencies: the services, the principal and the addressed ref."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from api.catalog.namespaces import Namespaces
from api.catalog.service import Catalog, Who
from api.catalog.tables import Tables
from api.catalog.views import Views
from api.paths import request_ref

MESSAGE_HEADER = "Sapwood-Commit-Message"
AUTHOR_HEADER = "Sapwood-Commit-Author"


@dataclass(frozen=True, slots=True)
class Services:
    catalog: Catalog
    namespaces: Namespaces
    tables: Tables
    views: Views


def services(request: Request) -> Services:
    return request.app.state.services  # type: ignore[no-any-return]


def ref(request: Request) -> str:
    return request_ref(request.scope)


def principal(request: Request) -> str:
    # No authentication yet: every caller is anonymous. PyIceberg sends
    # "Authorization: Bearer None" when it has no token, which is tolerated.
    return "anonymous"


def who(request: Request) -> Who:
    h = request.headers
    return Who(principal(request), h.get(MESSAGE_HEADER) or None, h.get(AUTHOR_HEADER) or None)
