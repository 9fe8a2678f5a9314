"""The one fast path: the requests clients send most — loadTable, loadView,
GET namespace, the config, and the signing requests of remote signing —
answered without FastAPI's per-request machinery, by the routes' own
functions.

Spark loads a table or view for every statement, so these reads are most
of a catalog's traffic, and a cached one is almost all framework: the route
table, parameter validation, the Request and the exception layers cost more
than the answer (docs/performance.md). This ASGI layer matches the routes
the policy table marks ``hot`` (api.auth.policy; their paths are the
routes' own templates), checks the route's rule with the guard as the route
class would, and calls the route's endpoint function itself with the path's
parameters: the answer is made by the same code, so it is byte for byte the
route's (tests/api/test_hot_reads.py). A failure is answered by the
application's one exception handler (api.errors.answer_for), as the route's
would be. What this layer does not parse as the route does — a query
string, a materialized-view reading header, a signing body the route's
model refuses — goes to the FastAPI application.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Coroutine
from typing import Any, get_type_hints

from fastapi import FastAPI, Request, Response
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError

from api.asgi import App, Message, Receive, Scope, Send
from api.auth.policy import RULES, Rule
from api.errors import answer_for
from catalog.mviews.mviews import STALENESS_HEADER
from catalog.mviews.refresh import REFRESH_HEADER

# Headers that change what a read answers: those requests take the full path.
_SPECIAL = frozenset({REFRESH_HEADER.lower().encode(), STALENESS_HEADER.lower().encode()})
Endpoint = Callable[..., Coroutine[Any, Any, Response]]


class _Hot:
    """One hot route: its path as a pattern, its rule, its endpoint, and the
    body model and parameter name its endpoint takes (None: no body)."""

    __slots__ = ("body", "endpoint", "params", "pattern", "route", "rule")

    def __init__(self, route: APIRoute, rule: Rule) -> None:
        # Awaited here as FastAPI awaits it (a plain function would go to its
        # thread pool).
        assert inspect.iscoroutinefunction(route.endpoint), route.name
        self.route = route
        self.rule = rule
        self.endpoint: Endpoint = route.endpoint
        # A path parameter matches one segment, as Starlette's ``{name}`` does.
        self.params = tuple(re.findall(r"{(\w+)}", route.path))
        self.pattern = re.compile("^" + re.sub(r"{\w+}", "([^/]+)", route.path) + "$")
        models = [(name, hint) for name, hint in get_type_hints(route.endpoint).items()
                  if isinstance(hint, type) and issubclass(hint, BaseModel)]
        assert len(models) <= 1, route.name
        self.body: tuple[str, type[BaseModel]] | None = models[0] if models else None


class HotReads:
    def __init__(self, app: App, api: FastAPI) -> None:
        self.app = app
        self.api = api
        hot = sorted((RULES[r.name].hot, r.name, r) for r in api.routes
                     if isinstance(r, APIRoute) and RULES[r.name].hot)
        self.by_method: dict[str, list[_Hot]] = {}
        for _, name, route in hot:
            for method in route.methods or ():
                self.by_method.setdefault(method, []).append(_Hot(route, RULES[name]))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        routes = self.by_method.get(scope.get("method", "")) \
            if scope["type"] == "http" and not scope["query_string"] else None
        found = _match(routes, scope["path"]) if routes else None
        if found is None or any(k in _SPECIAL for k, _ in scope["headers"]):
            await self.app(scope, receive, send)
            return
        hot, values = found
        if hot.body is None:
            await self._answer(hot, values, scope, receive, send, {})
            return
        # The body, read once: parsed with the route's model, or handed on
        # whole to the route when that model refuses it (FastAPI's answer).
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

        name, model = hot.body
        try:
            body = model.model_validate_json(raw)
        except ValidationError:
            await self.app(scope, replay, send)
            return
        await self._answer(hot, values, scope, replay, send, {name: body})

    async def _answer(self, hot: _Hot, values: tuple[str, ...], scope: Scope,
                      receive: Receive, send: Send, extra: dict[str, Any]) -> None:
        """The route's answer, made by its endpoint; a failure answered as
        the application answers it."""
        params = dict(zip(hot.params, values, strict=True))
        scope["path_params"] = params
        scope["route"] = hot.route  # the template, for metrics and the log
        scope["app"] = self.api
        request = Request(scope, receive)
        try:
            guard = self.api.state.guard
            if guard is not None and hot.rule.privilege is not None:
                await guard.check_async(request, hot.rule)
            response = await hot.endpoint(request, **params, **extra)
        except Exception as e:
            response = await answer_for(request, e)
        await response(scope, receive, send)


def _match(routes: list[_Hot], path: str) -> tuple[_Hot, tuple[str, ...]] | None:
    """The hot route a path is for, and its parameters' values."""
    for hot in routes:
        m = hot.pattern.match(path)
        if m is not None:
            return hot, m.groups()
    return None
