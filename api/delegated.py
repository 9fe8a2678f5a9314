"""Storage access in the Iceberg API's answers (the catalog's decisions are
catalog.delegation's): what a principal may do with a table on the ref it
addressed, the loadTable / createTable / commit answers with the signer
settings or vended credentials a client asked for
(``X-Iceberg-Access-Delegation``), and each decision counted in /metrics and
named in the access line."""

from __future__ import annotations

import json
from collections.abc import Callable

from fastapi import Request, Response
from pydantic import BaseModel, Field

from api.answers import ANSWERS, matches, tag
from api.auth.guard import VIA_VIEWS, guard_of
from api.deps import Call, principal
from api.headers import DELEGATION_HEADER
from api.observe.access import STORAGE
from api.paths import quote_ref
from catalog.commands import Loaded
from catalog.delegation.s3_requests import Access
from catalog.delegation.service import NOTE_KEY, Decision, History, SignRequest
from catalog.delegation.settings import SIGNING, VENDING
from catalog.targets import Target
from core.auth import Privilege
from core.errors import ForbiddenError, bad_request
from core.keys import ContentKey
from core.refs import RefSpec

HEADER = DELEGATION_HEADER
_CONFIG_TAIL = b'"config":{}}'

READ_ONLY = frozenset({Access.READ})
READ_WRITE = frozenset({Access.READ, Access.WRITE})


def may(c: Call, request: Request, t: Target, writable: bool | None = None,
        ) -> frozenset[Access]:
    """Read (the route's rule checked it), and write when the principal may
    commit to the table there: a branch by name, not protected, with the
    write privilege on the key. Read only when let in through a view.
    ``writable``: whether ``t.ref`` is a branch, when the caller knows
    (StorageAccess.located); None: resolved here."""
    if request.scope.get(VIA_VIEWS) or not t.ref.is_plain:
        return READ_ONLY
    guard = guard_of(request)
    if guard is None:
        if writable is None:
            writable = c.svc.catalog.resolve(t.ref).writable
        return READ_WRITE if writable else READ_ONLY
    if guard.protected(request, t.ref.name or "") or not guard.allows(
            request, Privilege.WRITE, t.ref, t.key.elements):
        return READ_ONLY
    if writable is None:
        writable = c.svc.catalog.resolve(t.ref).writable
    return READ_WRITE if writable else READ_ONLY


def readable(request: Request) -> Callable[[str, ContentKey], bool] | None:
    """Whether the caller may read a key on a reference (None: it may read all)."""
    guard = guard_of(request)
    if guard is None:
        return None
    return lambda name, key: guard.allows(request, Privilege.READ, RefSpec(name), key.elements)


class RemoteSignRequest(BaseModel):
    """The spec's RemoteSignRequest."""

    region: str = Field(min_length=1, max_length=64)
    uri: str = Field(min_length=1, max_length=8192)
    method: str = Field(pattern="^(PUT|GET|HEAD|POST|DELETE|PATCH|OPTIONS)$")
    headers: dict[str, list[str]] = {}
    properties: dict[str, str] = {}
    body: str | None = Field(None, max_length=1_000_000)
    provider: str | None = None


async def sign_answer(c: Call, request: Request, t: Target, body: RemoteSignRequest,
                      ) -> Response:
    """The answer to a signing request: the headers that sign it, or 403
    naming what was refused (counted)."""
    if body.provider not in (None, "s3"):
        raise ForbiddenError(f"Signing refused: provider {body.provider!r} (only s3)")
    if body.properties:
        # The spec's pass-through of a remote-signing-config's properties:
        # this catalog gives none, so whatever is here is nothing it can use.
        raise bad_request("Invalid signing request: properties "
                          f"{sorted(body.properties)[:10]!r}: this catalog gives no "
                          "remote-signing-config, so a signing request carries no properties")
    storage = c.svc.storage
    at = await c.read(storage.located, t.ref, t.key, lambda: c.svc.tables.load(t, None, None))
    try:
        headers, decision = await c.read(
            storage.sign, principal(request), at.location, lambda: may(c, request, t, at.writable),
            SignRequest(body.method, body.uri, body.region, body.headers, body.body),
            History(t.ref, t.key, readable(request), at.token))
    except ForbiddenError as e:
        refused(request, "sign", "refused", e)
        raise
    record(request, decision)
    # The spec: whether a client may reuse the signature (it may not: it is
    # for one request and dated).
    return Response(json.dumps({"uri": body.uri, "headers": headers},
                               separators=(",", ":")).encode(),
                    media_type="application/json", headers={"Cache-Control": "no-cache"})


def record(request: Request, decision: Decision) -> None:
    request.app.state.metrics.decided(decision.kind, decision.granted, decision.reason)
    request.scope[STORAGE] = (f"{decision.kind} {'granted' if decision.granted else 'refused'}"
                               f" {decision.reason}: {decision.action}")


def refused(request: Request, kind: str, reason: str, e: ForbiddenError) -> None:
    record(request, Decision(kind, False, reason, str(e)[:300]))


def answering_table(c: Call, request: Request, t: Target) -> Callable[[Loaded], Response]:
    """For a write that returns the table: how it is answered (Call.answering)."""
    return c.answering(lambda loaded: table_answer(c, request, t, loaded))


def table_answer(c: Call, request: Request, t: Target, loaded: Loaded,
                 conditional: bool = False) -> Response:
    """A table's answer. A client that asks for delegated storage access
    (``X-Iceberg-Access-Delegation``) gets the signer settings or credentials
    in ``config`` when this catalog offers what it asked for, else a note of
    what it offers (``sapwood.access-delegation``: on a local warehouse,
    that there is nothing to delegate)."""
    body, etag = ANSWERS.body(loaded)
    asked = request.headers.get(HEADER)
    storage = c.svc.storage
    mode = storage.chosen(asked)
    if mode is not None or asked is not None:
        creds: list[dict[str, object]] = []
        if mode is None:
            config = {NOTE_KEY: storage.note()}
        else:
            location = storage.location_of(loaded.location, loaded.metadata)
            config, creds = _delegation(c, request, t, mode, location)
        extra = b'"config":' + json.dumps(config, sort_keys=True).encode()
        if creds:
            extra += b',"storage-credentials":' + json.dumps(creds, sort_keys=True).encode()
        assert body.endswith(_CONFIG_TAIL)
        body = body[:-len(_CONFIG_TAIL)] + extra + b"}"
        etag = tag(etag.encode() + extra)  # other settings or credentials: another answer
    if conditional and matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers={"ETag": etag})
    return Response(body, media_type="application/json", headers={"ETag": etag})


def delegating(c: Call, asked: str | None) -> bool:
    """Whether a table answer for this header needs the delegation's work
    (credentials, the caller's privileges), beyond a note."""
    return c.svc.storage.chosen(asked) is not None


def _delegation(c: Call, request: Request, t: Target, mode: str,
                location: str) -> tuple[dict[str, str], list[dict[str, object]]]:
    storage = c.svc.storage
    access = may(c, request, t)
    base = str(request.base_url).rstrip("/") + f"/iceberg/{quote_ref(t.ref)}"
    ns = "\x1f".join(t.key.elements[:-1])
    endpoint = f"v1/namespaces/{_quote(ns)}/tables/{_quote(t.key.name)}/sign"
    if mode == VENDING:
        vended, decision = storage.vend(principal(request), location, access)
        record(request, decision)
        config = storage.client_config(VENDING, base, endpoint, vended)
        creds: list[dict[str, object]] = [{"prefix": vended.prefix, "config": {
            k: v for k, v in config.items() if k.startswith(("s3.", "client."))}}]
        return config, creds
    assert mode == SIGNING
    record(request, Decision("sign", True, "settings", f"signer for {location}"))
    return storage.client_config(SIGNING, base, endpoint, None), []


def _quote(part: str) -> str:
    from urllib.parse import quote

    return quote(part, safe="")
