"""What a route works with: the services, the principal and the addressed ref.

Routes build a ``Call`` from the request instead of declaring FastAPI
dependencies: resolving even one dependency cost about 50 µs per request
(a fifth of a cached read's time in the server) in bench/rest_bench.py, and
the reads' goal is within 1.3x of a bare endpoint. The commit identity is
only built when a write asks for it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import Query, Request, Response
from starlette.concurrency import run_in_threadpool

from api.auth.errors import Forbidden
from api.auth.guard import PRINCIPAL, SEES, guard_of
from api.headers import AUTHOR_HEADER, MESSAGE_HEADER
from api.idempotency import answering, once_of
from api.paths import request_ref
from catalog.kernel import Who
from catalog.services import CatalogServices
from catalog.targets import Target
from core.auth import Privilege
from core.keys import ContentKey
from core.numbers import INT64_MAX
from core.refs import RefSpec

T = TypeVar("T")


# The request's services, bound to its caller once asked for (services_of).
_BOUND = "sapwood.services"


def services_of(request: Request) -> CatalogServices:
    """The catalog services a request works with: the app's, or — when the
    guard checked the request — the same bound to what its caller may see
    (CatalogServices.seeing: a hash prefix names only those commits), made
    once per request. The app's services are a route's only way to the
    store."""
    scope = request.scope
    bound: CatalogServices | None = scope.get(_BOUND)
    if bound is None:
        services: CatalogServices = request.app.state.services
        sees = scope.get(SEES)
        bound = scope[_BOUND] = services if sees is None else services.seeing(sees)
    return bound


def principal(request: Request) -> str:
    """The authenticated caller's name; "anonymous" on an open catalog (where
    PyIceberg's "Authorization: Bearer None" is tolerated)."""
    who = request.scope.get(PRINCIPAL)
    return who.name if who is not None else "anonymous"


def commit_author(request: Request, author: str | None, ref: RefSpec | str) -> str | None:
    """An author other than the caller needs the ``impersonate`` privilege
    when authentication is on (commits are then signed by who made them)."""
    guard = guard_of(request)
    if guard is None or author is None or author == principal(request):
        return author
    who = guard.principal_of(request)
    try:
        guard.require(request, Privilege.IMPERSONATE, ref, None)
    except Forbidden:
        raise Forbidden(f"Principal '{who.name}' may not commit as '{author}': naming another "
                        "author needs the 'impersonate' privilege") from None
    return author


def reads_of(request: Request) -> Callable[[RefSpec, tuple[str, ...]], bool] | None:
    """Whether the caller may read a key on a ref (None: authentication
    off): what a write needs that makes the caller a view's definer."""
    guard = guard_of(request)
    if guard is None:
        return None
    return lambda spec, key: guard.allows(request, Privilege.READ, spec, key)


class Call:
    """What one request works with: the services, its ref spec, and (for
    writes) who commits and with what message."""

    __slots__ = ("_request", "ref", "svc")

    def __init__(self, request: Request, fallback: str | None = None) -> None:
        self._request = request
        self.svc = services_of(request)
        self.ref = request_ref(request.scope, fallback)

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a read. On SQLite a warm read at a reference's head is a few
        microseconds of local file access, far less than the hop to FastAPI's
        thread pool (which was most of a read's latency in
        bench/rest_bench.py), so it runs on the event loop; on PostgreSQL it
        is a network round trip and goes to the pool. A read anywhere but at
        a head (``main~3``, ``@hash``, ``main*T``: a hash to look up, history
        to walk, retention to check) goes to the pool too, so it never holds
        up the loop (tests/api/test_expired_reads.py). Writes always run in
        the pool (they wait for fsync or the server)."""
        if self.svc.local_reads and at_heads(args):
            return fn(*args)
        return await run_in_threadpool(fn, *args)

    def require(self, privilege: Privilege, key: ContentKey) -> None:
        """A privilege on a key the body names (the route's rule checked the
        ones in the path)."""
        guard = guard_of(self._request)
        if guard is not None:
            guard.require(self._request, privilege, self.ref, key.elements)

    def visible(self) -> Callable[[tuple[str, ...]], bool] | None:
        """For listings: which keys the caller may see (None: all of them)."""
        guard = guard_of(self._request)
        return None if guard is None else guard.key_filter(self._request, self.ref)

    @property
    def who(self) -> Who:
        h = self._request.headers
        return Who(principal(self._request), h.get(MESSAGE_HEADER) or None,
                   commit_author(self._request, h.get(AUTHOR_HEADER) or None, self.ref),
                   once_of(self._request), reads_of(self._request))

    def answering(self, shape: Callable[[T], Response]) -> Callable[[T], Response]:
        """How the route answers with what its write returns; with an
        Idempotency-Key, the answer kept in the write's transaction is made
        the same way (api.idempotency)."""
        return answering(self._request, shape)

    def answered_by(self, shape: Callable[[Any], Response]) -> Who:
        """``who`` for a write the route answers with ``shape``."""
        self.answering(shape)
        return self.who


def at_heads(args: tuple[Any, ...]) -> bool:
    """Whether every reference a read's arguments name is a bare name (a
    table or view's own ``name@ref`` included)."""
    for a in args:
        spec = a.ref if isinstance(a, Target) else a
        if isinstance(spec, RefSpec) and not spec.is_plain:
            return False
    return True


def no_content(_: object = None) -> Response:
    return Response(status_code=204)


def json_response(payload: Any) -> Response:
    """A JSON answer encoded once by the standard library (FastAPI's generic
    encoder walks the value twice and shows up in every read's profile)."""
    return Response(json.dumps(payload, separators=(",", ":")).encode(),
                    media_type="application/json")


def identifiers_response(keys: list[ContentKey], token: str | None) -> Response:
    """A ListTablesResponse / ListViewsResponse."""
    return json_response({"identifiers": [{"namespace": list(k.elements[:-1]), "name": k.name}
                                          for k in keys], "next-page-token": token})


# Paging query parameters, as the spec spells them.
PageToken = Annotated[str | None, Query(alias="pageToken")]
PageSize = Annotated[int | None, Query(alias="pageSize", ge=1, le=INT64_MAX)]
# The versioning API's page size and token, and Nessie's own spellings of
# them (org.projectnessie.api.v2.params), taken beside (api.paging).
MaxRecords = Annotated[int | None, Query(alias="maxRecords", ge=1, le=INT64_MAX)]
NessieMaxRecords = Annotated[int | None, Query(alias="max-records", ge=1, le=INT64_MAX)]
VersioningPageToken = Annotated[str | None, Query(alias="pageToken")]
NessiePageToken = Annotated[str | None, Query(alias="page-token")]
