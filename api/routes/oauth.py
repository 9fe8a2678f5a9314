"""The OAuth2 token endpoint Iceberg clients use (``credential=id:secret``):
``POST /iceberg/v1/oauth/tokens`` (and under every ``/iceberg/{ref}`` base)."""

from __future__ import annotations

from urllib.parse import parse_qsl

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from api.auth.errors import OAuthError
from api.deps import json_response
from api.unused import takes_body

router = APIRouter(prefix="/iceberg/v1")


@router.post("/oauth/tokens")
@takes_body  # a form, parsed below
async def oauth_tokens(request: Request) -> Response:
    guard = request.app.state.guard
    if guard is None:
        raise OAuthError("invalid_request", "This catalog runs without authentication: "
                         "connect without a credential")
    raw = await request.body()
    try:
        form = dict(parse_qsl(raw.decode(), keep_blank_values=True, max_num_fields=32))
    except (UnicodeDecodeError, ValueError):
        raise OAuthError("invalid_request", "The body must be a form "
                         "(application/x-www-form-urlencoded)") from None
    # scrypt takes tens of milliseconds: keep it off the event loop.
    answer = await run_in_threadpool(guard.authn.issue, form, request.headers.get("authorization"))
    resp = json_response(answer)
    resp.headers["Cache-Control"] = "no-store"
    return resp
