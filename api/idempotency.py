"""The ``Idempotency-Key`` header (Iceberg REST spec): a mutation sent again
with the same key takes effect once, and its repeats get the first answer.

Every mutating route is wrapped (``OnceRoute``; the authenticated routes
check their rule first, so a key belongs to a principal). A request with a
key is looked up by (principal, key): a kept answer is sent again without
running anything (``Idempotent-Replayed: true``), unless the request differs
(method, path, query or body), which is the spec's 422. Otherwise it runs;
a write it makes records the key and its answer in the commit's own
transaction (store.idempotency), so the record exists if and only if the
commit landed. Answers of requests that committed nothing are recorded
afterwards on their own when final: 2xx, and 4xx other than 401, 408, 425 and
429 (the spec's "deterministic terminal" answers); 5xx and those four are
not kept, and a retry runs again. Within a process, requests with one key
run one at a time (a repeat waits for the first and gets its answer); across
replicas the database's primary key lets one commit win, and the others get
its answer (``KeyTakenError``).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
import weakref
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from api.auth.guard import PRINCIPAL, AuthRoute
from api.errors import answer_for
from core.errors import UnprocessableError, bad_request
from store.idempotency import Answer, IdempotencyKeys, KeyTakenError, Once, Recorded

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
ONCE = "sapwood.once"  # the request's Once, in its scope
MUTATING = frozenset({"POST", "PUT", "DELETE"})
# Routes that change nothing in the catalog: a key is ignored there.
EXEMPT = frozenset({"oauth_tokens", "report_metrics", "sign_request"})
# Answers a retry should not be given again: it may well succeed.
_TRANSIENT = frozenset({401, 408, 425, 429})
# The spec's key: a UUID (v7 recommended) in its 36-character form.
_KEY = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


def to_answer(response: Response) -> Answer:
    return Answer(response.status_code, response.headers.get("content-type"),
                  bytes(response.body))


def replay(answer: Answer) -> Response:
    headers = {REPLAYED: "true"}
    return Response(answer.body, status_code=answer.status, media_type=answer.media_type,
                    headers=headers)


def fingerprint(request: Request, body: bytes) -> str:
    scope = request.scope
    h = hashlib.sha256()
    for part in (scope["method"].encode(), scope.get("raw_path") or scope["path"].encode(),
                 scope.get("query_string", b""), body):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


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
    how the answer recorded with the key in the write's transaction is made."""
    once = once_of(request)
    if once is not None:
        once.answer = lambda value: to_answer(shape(value))
    return shape


def idempotent(handler: Handler, route_name: str) -> Handler:
    if route_name in EXEMPT:
        return handler

    async def run(request: Request) -> Response:
        key = request.headers.get(HEADER)
        if key is None or request.method not in MUTATING:
            return await handler(request)
        if not _KEY.match(key):
            raise bad_request(f"Invalid {HEADER} header {key[:64]!r}: expected a UUID "
                              "(36 characters, e.g. a UUIDv7)")
        state = request.app.state
        keys: IdempotencyKeys = state.idempotency
        lifetime_s: int = state.idempotency_lifetime_s
        found = request.scope.get(PRINCIPAL)
        who = found.name if found is not None else "anonymous"
        digest = fingerprint(request, await request.body())
        async def find() -> Recorded | None:
            # A read like any other: on the event loop for SQLite (api.deps.Call.read).
            if state.services.inline_reads:
                return keys.find(who, key, _now_us())
            return await run_in_threadpool(keys.find, who, key, _now_us())

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
            other = await run_in_threadpool(keys.record, once, to_answer(response), _now_us())
            return response if other is None else _kept(other, digest, key)

    return run


def _kept(kept: Recorded, digest: str, key: str) -> Response:
    if kept.fingerprint != digest:
        raise UnprocessableError(
            f"{HEADER} {key} was already used for a different request (another method, "
            "path or body); a new operation needs a new key")
    return replay(kept.answer)


def _final(status: int) -> bool:
    return status < 500 and status not in _TRANSIENT


def _now_us() -> int:
    return time.time_ns() // 1000


class OnceRoute(APIRoute):
    """A route whose mutations honour ``Idempotency-Key``."""

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()
        return idempotent(handler, self.name) if (self.methods or set()) & MUTATING else handler


class CheckedOnceRoute(AuthRoute):
    """An authenticated route whose mutations honour ``Idempotency-Key``: the
    rule is checked first, so a key belongs to a principal."""

    def inner_handler(self) -> Handler:
        handler = super().inner_handler()
        return idempotent(handler, self.name) if (self.methods or set()) & MUTATING else handler
