"""Nessie's repository configuration (``/api/v2/config/repository``), as far
as Sapwood has one: Nessie keeps settings for its own garbage collector
there; Sapwood's retention and gc are its own (docs/operations.md), so it
keeps none. Nessie's Java client asks for them (getRepositoryConfig), and
gets Nessie's empty answer; an update is refused, naming why."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request, Response

from api.deps import json_response
from core.errors import bad_request

router = APIRouter(prefix="/api/v2/config/repository")

# The types Nessie 0.99 defines (RepositoryConfig.Type).
TYPES = frozenset({"GARBAGE_COLLECTOR"})


@router.get("")
def repository_config(request: Request,
                      type: Annotated[list[str] | None, Query()] = None) -> Response:
    """Every type asked for is one Nessie knows (else a 400 naming it); none
    is configured here: ``{"configs": []}``, as Nessie answers an unset one."""
    unknown = sorted(set(type or ()) - TYPES)
    if unknown:
        raise bad_request(f"Unknown repository config type {unknown[0]!r}: Nessie's types "
                          f"are {', '.join(sorted(TYPES))}")
    return json_response({"configs": []})


@router.post("")
def update_repository_config(request: Request,
                             body: Annotated[dict[str, Any] | None, Body()] = None,
                             ) -> Response:
    raise bad_request("Sapwood keeps no Nessie repository configuration: its garbage "
                      "collection and retention are configured on the server "
                      "(docs/operations.md), not through /api/v2/config/repository")
