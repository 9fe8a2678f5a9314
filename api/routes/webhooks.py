"""Webhooks: ``POST /api/v2/webhooks`` registers one, ``GET`` lists them
(with their delivery state), ``DELETE /{id}`` removes one, ``POST
/{id}/resume`` resumes a paused one (catalog.feed.webhooks delivers).

Registering needs read on some reference: a webhook delivers only what its
owner may read, like the feed. A caller sees and manages its own webhooks;
``manage-grants`` sees and manages every one."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from api.auth.guard import guard_of
from api.deps import Call, json_response, principal
from catalog.feed.webhooks import Webhook
from core.auth import Privilege
from core.errors import ForbiddenError

router = APIRouter(prefix="/api/v2/webhooks")


class WebhookBody(BaseModel):
    # A misspelt field ("type") would register a webhook for everything.
    model_config = ConfigDict(extra="forbid")
    url: str = Field(min_length=1, max_length=2048)
    types: list[str] = Field([], max_length=16)
    refs: list[str] = Field([], max_length=100)
    keys: list[str] = Field([], max_length=100)
    secret: str | None = Field(None, max_length=200)


def _shape(h: Webhook, with_secret: bool = False) -> dict[str, object]:
    out: dict[str, object] = {
        "id": h.id, "url": h.url, "types": list(h.types), "refs": list(h.refs),
        "keys": list(h.keys), "owner": h.owner, "state": h.state, "lastDelivered": h.cursor,
        "delivered": h.delivered, "failures": h.failures, "lastError": h.last_error,
        "lastAttemptUs": h.last_attempt_us, "nextAttemptUs": h.next_attempt_us}
    if with_secret:  # once, when it is made: it is never shown again
        out["secret"] = h.secret
    return out


def _manages_all(request: Request) -> bool:
    guard = guard_of(request)
    return guard is None or guard.allows_everywhere(request, Privilege.MANAGE_GRANTS)


def _mine(request: Request, h: Webhook) -> Webhook:
    if not _manages_all(request) and h.owner != principal(request):
        raise ForbiddenError(f"Webhook {h.id} belongs to another principal (managing every "
                             "webhook needs manage-grants)")
    return h


@router.post("")
async def add_webhook(request: Request, body: WebhookBody) -> Response:
    c = Call(request)
    made = await run_in_threadpool(c.svc.webhooks.add, body.url, body.types, body.refs,
                                   body.keys, body.secret, principal(request))
    return json_response(_shape(made, with_secret=True))


@router.get("")
async def list_webhooks(request: Request) -> Response:
    c = Call(request)
    owner = None if _manages_all(request) else principal(request)
    return json_response({"webhooks": [_shape(h) for h in
                                       await c.read(c.svc.webhooks.all, owner)]})


@router.get("/{id}")
async def get_webhook(request: Request, id: str) -> Response:
    c = Call(request)
    return json_response(_shape(_mine(request, await c.read(c.svc.webhooks.get, id))))


@router.delete("/{id}")
async def remove_webhook(request: Request, id: str) -> Response:
    c = Call(request)
    _mine(request, await c.read(c.svc.webhooks.get, id))
    await run_in_threadpool(c.svc.webhooks.remove, id)
    return Response(status_code=204)


@router.post("/{id}/resume")
async def resume_webhook(request: Request, id: str) -> Response:
    c = Call(request)
    _mine(request, await c.read(c.svc.webhooks.get, id))
    return json_response(_shape(await run_in_threadpool(c.svc.webhooks.resume, id)))
