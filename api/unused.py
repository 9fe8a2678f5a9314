"""Nothing a client sends to a route that changes something is ignored:
a query parameter the route does not take, a scalar one given twice, or a
body sent to a route that reads none is a 400 naming it, and nothing is
done (issue 43, defect 12).

FastAPI binds the query parameters a handler declares and drops the rest
without a word, and a route that declares no body never reads one: ``POST
/api/v2/admin/gc`` sent ``{"dryRun": true}`` ran a real collection, and
``?dry_run=true`` would have too. This is the one place that refuses them,
for every mutating route of both APIs (``POST``, ``PUT``, ``DELETE``, ``PATCH``
under ``/api/`` and ``/iceberg/``); the route classes wrap each handler with
``refusing_unused`` (api.idempotency). What a route takes is read from its
signature once, when the route is built. A route that reads its body itself
says so with ``takes_body``; the guard's own parameter (``referenced-by`` on
the reads that may go through views) counts as taken. Reads (``GET``,
``HEAD``) of the Iceberg API are left as they are: clients send parameters
of their own there (decision: docs/versioning-api.md); reads of the
versioning API (``/api/v2/``) refuse an unknown parameter too, since Nessie's
clients filter with theirs (docs/nessie-compatibility.md).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Coroutine
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin
from urllib.parse import parse_qsl

from fastapi import Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from api.auth.policy import RULES
from core.errors import bad_request

Handler = Callable[[Request], Coroutine[Any, Any, Response]]
F = TypeVar("F", bound=Callable[..., Any])

_MUTATING = frozenset({"POST", "PUT", "DELETE", "PATCH"})
_CHECKED = ("/api/", "/iceberg/")
# Reads whose unknown parameters are refused too: the versioning API's, where
# Nessie's clients send its filters (``key``, ``min-key``, ``limit-hash``, …),
# which answered unfiltered while they were ignored (issue 47, F11).
_CHECKED_READS = ("/api/v2/",)
_TAKES_BODY = "_sapwood_takes_body"
# The guard reads it on the routes that may be read through views (api.auth.guard).
_VIA_VIEWS_PARAM = "referenced-by"


def takes_body(endpoint: F) -> F:
    """Marks a handler that reads its request body itself (a form, or JSON
    it parses), so a body sent to it is not refused as unused."""
    setattr(endpoint, _TAKES_BODY, True)
    return endpoint


def refusing_unused(handler: Handler, route: APIRoute) -> Handler:
    """``handler``, refusing what ``route`` would not use (see the module doc)."""
    mutating = bool((route.methods or set()) & _MUTATING)
    if not route.path.startswith(_CHECKED_READS if not mutating else _CHECKED):
        return handler
    scalar, repeatable, body = _taken(route.dependant)
    rule = RULES.get(route.name)
    if rule is not None and rule.via_views:
        scalar = scalar | {_VIA_VIEWS_PARAM}
    known = scalar | repeatable
    body = body or bool(getattr(route.endpoint, _TAKES_BODY, False))
    what = f"{sorted(route.methods or ())[0]} {route.path}"

    async def run(request: Request) -> Response:
        raw = request.scope.get("query_string")
        if raw:
            _check_query(raw.decode("latin-1"), known, scalar, what)
        if mutating and not body and _may_have_body(request) and await request.body():
            raise bad_request(f"{what} takes no request body, and one was sent: nothing was "
                              "done (its parameters go in the query string)")
        return await handler(request)

    return run


def _check_query(query: str, known: frozenset[str], scalar: frozenset[str], what: str,
                 ) -> None:
    names = [name for name, _ in parse_qsl(query, keep_blank_values=True)]
    unknown = sorted({n for n in names if n not in known})
    if unknown:
        listed = ", ".join(repr(n[:64]) for n in unknown[:5])
        takes = ", ".join(sorted(known)) or "none"
        raise bad_request(f"Unknown query parameter{'s' if len(unknown) > 1 else ''} {listed} "
                          f"for {what}: nothing was done (it takes: {takes})")
    twice = sorted({n for n in names if n in scalar and names.count(n) > 1})
    if twice:
        raise bad_request(f"Query parameter {twice[0]!r} is given more than once for {what}: "
                          "nothing was done (give it once)")


def _taken(dependant: Dependant) -> tuple[frozenset[str], frozenset[str], bool]:
    """(scalar query parameters, repeatable ones, whether a body is read) of
    a route's handler and everything it depends on."""
    scalar: set[str] = set()
    repeatable: set[str] = set()
    body = False
    todo = [dependant]
    while todo:
        d = todo.pop()
        for p in d.query_params:
            name = p.alias or p.name
            annotation = getattr(p.field_info, "annotation", None)
            (repeatable if _is_sequence(annotation) else scalar).add(name)
        body = body or bool(d.body_params)
        todo.extend(d.dependencies)
    return frozenset(scalar), frozenset(repeatable), body


def _is_sequence(annotation: Any) -> bool:
    """Whether a parameter's type takes it repeated (``list[str] | None``)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_sequence(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return any(_is_sequence(a) for a in get_args(annotation))
    return (origin or annotation) in (list, tuple, set, frozenset)


def _may_have_body(request: Request) -> bool:
    """Whether the request announced a body (most have none: no read then)."""
    headers = request.headers
    length = headers.get("content-length")
    return (length is not None and length.strip() != "0") or "transfer-encoding" in headers
