"""The ``Idempotency-Key`` header (Iceberg REST spec): a mutation sent again
with the same key takes effect once, and its repeats get the first answer.

Every mutating route is wrapped (``OnceRoute``; the authenticated routes
check their rule first, so a key belongs to a principal). A request with a
key is looked up by (principal, key): a kept answer is sent again without
running anything (``Idempotent-Replayed: true``) — its status, media type,
body and the headers a client reads off it (``KEPT_HEADERS``: a table's
ETag) — unless the request differs
(``fingerprint``: the reference it resolves to, the route, its parameters,
query, body and the headers that change what it does), which is the spec's
422 and runs nothing. Otherwise it runs;
a write it makes records the key and its answer in the commit's own
transaction (store.idempotency, through catalog.kernel), so the record
exists if and only if the commit landed, and the route answers with that
very answer (``answering``: made once, so a replay is the first answer
byte for byte). Answers of
requests that committed nothing are recorded afterwards on their own when
final: 2xx, and 4xx other than 401, 408, 425 and 429 (the spec's
"deterministic terminal" answers); 5xx and those four are not kept, and a
retry runs again. Within a process, requests with one key
run one at a time (a repeat waits for the first and gets its answer); across
replicas the database's primary key lets one commit win, and the others get
its answer (``KeyTakenError``).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import time
import weakref
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import parse_qsl, unquote

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from api.asgi import Scope
from api.auth.guard import PRINCIPAL, AuthRoute, protecting
from api.auth.policy import RULES
from api.errors import answer_for
from api.headers import MEANINGFUL_HEADERS
from api.paths import BASE, request_ref
from api.unused import refusing_unused
from catalog.kernel import Answer, Catalog, KeyTakenError, Once, Recorded
from core.errors import SapwoodError, UnprocessableError, bad_request
from core.refs import parse_ref

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
ONCE = "sapwood.once"  # the request's Once, in its scope
MUTATING = frozenset({"POST", "PUT", "DELETE"})
# Answers a retry should not be given again: it may well succeed.
_TRANSIENT = frozenset({401, 408, 425, 429})
# The spec's key: a UUID (v7 recommended) in its 36-character form.
_KEY = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


# The headers of an answer a client reads off it, kept with it and sent
# again on a replay: a table's or view's ETag (its next If-None-Match), a
# Location, whether it may be cached. Not the ones the server makes per
# answer (length, date, request id) nor a cookie.
KEPT_HEADERS = ("etag", "location", "cache-control")


def to_answer(response: Response) -> Answer:
    return Answer(response.status_code, response.headers.get("content-type"),
                  bytes(response.body),
                  tuple((name, value) for name, value in response.headers.items()
                        if name in KEPT_HEADERS))


def replay(answer: Answer) -> Response:
    headers = {**dict(answer.headers), REPLAYED: "true"}
    return Response(answer.body, status_code=answer.status, media_type=answer.media_type,
                    headers=headers)


# Fingerprints of this form start with it; a key kept by an older server
# (a digest of the path as routed, which had lost the Iceberg reference) does
# not, and cannot be told apart from another request on another reference.
FINGERPRINT_VERSION = "v2:"
# Path parameters that name a reference: compared as ref specs.
_REF_PARAMS = frozenset({"ref", "from_ref", "to_ref"})


def fingerprint(request: Request, template: str, principal: str, body: bytes) -> str:
    """What a key is bound to: the principal, the method, the route (its
    template), the reference the request resolves to (so the four Iceberg
    path shapes of one request agree, and two branches never do), the path
    parameters, the query parameters (sorted by name), the headers that
    change what a write does, and the body's bytes."""
    scope = request.scope
    params = {name: _canonical_param(name, value)
              for name, value in sorted(request.path_params.items())}
    query = sorted(parse_qsl(scope.get("query_string", b"").decode("latin-1"),
                             keep_blank_values=True), key=lambda kv: kv[0])
    headers = {name: request.headers.get(name) for name in MEANINGFUL_HEADERS}
    head = json.dumps([principal, scope["method"], template, _resolved_ref(scope, template),
                       params, query, headers], separators=(",", ":"))
    h = hashlib.sha256(head.encode("utf-8", "surrogateescape"))
    h.update(len(body).to_bytes(8, "big"))
    h.update(body)
    return FINGERPRINT_VERSION + base64.urlsafe_b64encode(h.digest()).decode().rstrip("=")


def _resolved_ref(scope: Scope, template: str) -> str | None:
    """The Iceberg routes' reference (base path or prefix, as api.paths
    reads it; ``None`` elsewhere: the versioning API names it in the path)."""
    return str(request_ref(scope)) if template.startswith(BASE) else None


def _canonical_param(name: str, value: Any) -> str:
    text = unquote(str(value))
    if name in _REF_PARAMS:
        try:
            return str(parse_ref(text))
        except SapwoodError:  # the route answers 400 for it
            return text
    return text


class KeyLocks:
    """One request per (principal, key) at a time in this process."""

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock] = \
            weakref.WeakValueDictionary()

    def of(self, principal: str, key: str) -> asyncio.Lock:
        lock = self._locks.get((principal, key))
        if lock is None:
            lock = asyncio.Lock()
            self._locks[(principal, key)] = lock
        return lock


def once_of(request: Request) -> Once | None:
    """The request's key, for the writes it makes (None: it sent none)."""
    found: Once | None = request.scope.get(ONCE)
    return found


def answering(request: Request, shape: Callable[[Any], Response]) -> Callable[[Any], Response]:
    """``shape`` (how the route answers with what its write returns) is also
    how the answer recorded with the key in the write's transaction is made.
    The route answers with what this returns: once a write recorded its
    answer, the response made for that record, not a second one — the
    answer is made once, so a replay is exactly the first answer (a shape
    that vends credentials, or a route that answers with more than its
    write returns, could not otherwise tell the two apart)."""
    once = once_of(request)
    if once is None:
        return shape
    # Each answer made inside a write's transaction, with its response: a
    # transaction that rolled back (a retry, a key taken) made one too.
    made: list[tuple[Answer, Response]] = []

    def record(value: Any) -> Answer:
        response = shape(value)
        answer = to_answer(response)
        made.append((answer, response))
        return answer

    def respond(value: Any) -> Response:
        kept = once.recorded
        if kept is not None:
            for answer, response in made:
                if answer is kept:
                    return response
        return shape(value)

    once.answer = record
    return respond


def idempotent(handler: Handler, route_name: str, template: str) -> Handler:
    # A route that changes nothing in the catalog (api.auth.policy: the
    # queries sent by POST answer what is there now): a key is ignored
    # there, and an answer kept for another request is never its answer.
    if RULES[route_name].changes_nothing:
        return handler

    async def run(request: Request) -> Response:
        key = request.headers.get(HEADER)
        if key is None or request.method not in MUTATING:
            return await handler(request)
        if not _KEY.match(key):
            raise bad_request(f"Invalid {HEADER} header {key[:64]!r}: expected a UUID "
                              "(36 characters, e.g. a UUIDv7)")
        state = request.app.state
        # The app's catalog, not one bound to the caller: a key names no commit.
        catalog: Catalog = state.services.catalog
        lifetime_s: int = state.idempotency_lifetime_s
        found = request.scope.get(PRINCIPAL)
        who = found.name if found is not None else "anonymous"
        digest = fingerprint(request, template, who, await request.body())

        async def find() -> Recorded | None:
            # A read like any other: on the event loop for SQLite (api.deps.Call.read).
            if state.services.local_reads:
                return catalog.kept(who, key, _now_us())
            return await run_in_threadpool(catalog.kept, who, key, _now_us())

        async with state.key_locks.of(who, key):
            now = _now_us()
            kept = await find()
            if kept is not None:
                return _kept(kept, digest, key)
            once = Once(who, key, digest, now + lifetime_s * 1_000_000)
            request.scope[ONCE] = once
            try:
                response = await handler(request)
            except KeyTakenError:
                kept = await find()
                if kept is None:  # the winner's key expired meanwhile: as good as new
                    raise
                return _kept(kept, digest, key)
            except Exception as e:
                response = await answer_for(request, e)
            if once.recorded is not None or not _final(response.status_code):
                return response
            other = await run_in_threadpool(catalog.keep, once, to_answer(response), _now_us())
            return response if other is None else _kept(other, digest, key)

    return run


def _kept(kept: Recorded, digest: str, key: str) -> Response:
    if not kept.fingerprint.startswith(FINGERPRINT_VERSION):
        # Kept before the key was bound to the reference: replaying it could
        # answer for a write made on another branch, so nothing is replayed.
        raise UnprocessableError(
            f"{HEADER} {key} was recorded by an earlier version of the server, which cannot "
            "tell whether it was this request (on this reference); nothing was done: if the "
            "first request's answer was lost, check its outcome, and use a new key")
    if kept.fingerprint != digest:
        raise UnprocessableError(
            f"{HEADER} {key} was already used for a different request (another reference, "
            "method, path, query, body or commit header); nothing was done: a new operation "
            "needs a new key")
    return replay(kept.answer)


def _final(status: int) -> bool:
    return status < 500 and status not in _TRANSIENT


def _now_us() -> int:
    return time.time_ns() // 1000


class OnceRoute(APIRoute):
    """A route whose mutations honour ``Idempotency-Key`` and refuse what
    they would not use (api.unused)."""

    def get_route_handler(self) -> Handler:
        handler = refusing_unused(super().get_route_handler(), self)
        handler = idempotent(handler, self.name, self.path) \
            if (self.methods or set()) & MUTATING else handler
        # No guard (authentication off): protected branches still refuse direct commits.
        return protecting(handler, RULES[self.name])


class CheckedOnceRoute(AuthRoute):
    """An authenticated route whose mutations honour ``Idempotency-Key``: the
    rule is checked first, so a key belongs to a principal."""

    def inner_handler(self) -> Handler:
        handler = refusing_unused(super().inner_handler(), self)
        return idempotent(handler, self.name, self.path) \
            if (self.methods or set()) & MUTATING else handler
