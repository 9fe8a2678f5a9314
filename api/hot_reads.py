"""The reads clients send most — loadTable, loadView, GET namespace, and the
signing requests of remote signing — answered without FastAPI's
per-request machinery.

Spark loads a table or view for every statement, so these three reads are
most of a catalog's traffic, and a cached one is almost all framework: the
route table, parameter validation, the Request and the exception layers
cost more than the answer (docs/performance.md). This ASGI layer answers
them directly with the same calls the routes make (the guard's rule for
the route, the catalog's read, the shared answer cache and ETag). Anything
else, or anything unusual about one of them (a query string, a
materialized-view reading header, a failure of any kind), goes to the
FastAPI application, which answers it as before; errors are therefore
answered by the one exception handler, and an answer here is byte for byte
what the route gives (tests/api/test_hot_reads.py). A read past retention
(410) is the exception: it fails while the reference is resolved, as the
route's would, and the same handler answers it here without a second
resolution (tests/api/test_expired_reads.py).
"""

from __future__ import annotations

import re

from fastapi import FastAPI, Request, Response
from fastapi.routing import APIRoute

from api.answers import loaded_or_not_modified
from api.asgi import App, Message, Receive, Scope, Send
from api.auth.policy import RULES
from api.delegated import HEADER, RemoteSignRequest, delegating, sign_answer, table_answer
from api.deps import Call, json_response
from api.errors import answer_for
from api.paths import namespace_key
from catalog.mviews.mviews import STALENESS_HEADER
from catalog.mviews.refresh import REFRESH_HEADER
from catalog.targets import target
from core.errors import HistoryExpiredError

_SEGMENT = "([^/]+)"
_ROUTES = (
    ("load_table", re.compile(f"^/iceberg/v1/namespaces/{_SEGMENT}/tables/{_SEGMENT}$"),
     ("namespace", "table")),
    ("load_view", re.compile(f"^/iceberg/v1/namespaces/{_SEGMENT}/views/{_SEGMENT}$"),
     ("namespace", "view")),
    ("load_namespace", re.compile(f"^/iceberg/v1/namespaces/{_SEGMENT}$"), ("namespace",)),
)
_SIGN = re.compile(f"^/iceberg/v1/namespaces/{_SEGMENT}/tables/{_SEGMENT}/sign$")
# Headers that change what a read answers: those requests take the full path.
_SPECIAL = frozenset({REFRESH_HEADER.lower().encode(), STALENESS_HEADER.lower().encode()})


class HotReads:
    def __init__(self, app: App, api: FastAPI) -> None:
        self.app = app
        self.api = api
        self.routes = {r.name: r for r in api.routes if isinstance(r, APIRoute)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["query_string"]:
            await self.app(scope, receive, send)
            return
        if scope["method"] == "POST":
            m = _SIGN.match(scope["path"])
            if m is not None:
                await self._sign(scope, receive, send, m.groups())
            else:
                await self.app(scope, receive, send)
            return
        if scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        found = _match(scope["path"])
        if found is None:
            await self.app(scope, receive, send)
            return
        name, params, values = found
        if any(k in _SPECIAL for k, _ in scope["headers"]):
            await self.app(scope, receive, send)
            return
        scope["path_params"] = dict(zip(params, values, strict=True))
        scope["route"] = self.routes[name]  # the template, for metrics and the log
        scope["app"] = self.api
        request = Request(scope, receive)
        try:
            response = await self._answer(name, request)
        except HistoryExpiredError as e:
            # Past retention: decided while resolving the reference, before
            # anything the route does differently; answered by the one
            # exception handler without resolving it all again.
            response = await answer_for(request, e)
        except Exception:
            # Whatever it was (not found, forbidden, a bad ref ...), the
            # application answers it as it answers every error.
            await self.app(scope, receive, send)
            return
        await response(scope, receive, send)

    async def _sign(self, scope: Scope, receive: Receive, send: Send,
                    values: tuple[str, ...]) -> None:
        """A signing request (Spark and PyIceberg send one per file they
        touch): as its route answers it; anything else (a refusal, a bad
        body) goes to the route, which answers it again with the body."""
        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        raw = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}

        scope["path_params"] = {"namespace": values[0], "table": values[1]}
        scope["route"] = self.routes["sign_request"]
        scope["app"] = self.api
        try:
            request = Request(scope, replay)
            guard = self.api.state.guard
            if guard is not None:
                await guard.check_async(request, RULES["sign_request"])
            c = Call(request)
            t = target(c.ref, namespace_key(values[0]), values[1])
            response = await sign_answer(c, request, t, RemoteSignRequest.model_validate_json(raw),
                                         count_refusals=False)
        except Exception:
            sent = False
            await self.app(scope, replay, send)
            return
        await response(scope, replay, send)

    async def _answer(self, name: str, request: Request) -> Response:
        """What the route ``name`` answers, made by the same calls."""
        guard = self.api.state.guard
        if guard is not None and RULES[name].privilege is not None:
            await guard.check_async(request, RULES[name])
        c = Call(request)
        params = request.scope["path_params"]
        ns = namespace_key(params["namespace"])
        if name == "load_namespace":
            return json_response({"namespace": list(ns.elements),
                                  "properties": await c.read(c.svc.namespaces.load, c.ref, ns)})
        t = target(c.ref, ns, params["table" if name == "load_table" else "view"])
        if name == "load_view":
            return loaded_or_not_modified(await c.read(c.svc.views.load, t), request)
        if delegating(c, request.headers.get(HEADER)):
            raise _Unusual  # credentials to vend, privileges to weigh: the route does it
        return table_answer(c, request, t, await c.read(c.svc.tables.load, t, None, None),
                            conditional=True)


class _Unusual(Exception):
    """A request the route answers (the application is called instead)."""


def _match(path: str) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """The route a path is for, its parameter names and their values."""
    for name, pattern, params in _ROUTES:
        m = pattern.match(path)
        if m is not None:
            return name, params, m.groups()
    return None
