"""Who is calling, and may they: the one place both APIs ask.

``AuthRoute`` wraps every route when authentication is on: before the
handler runs (before its body is even read) it authenticates the caller
and checks the route's rule from api.auth.policy. Handlers whose body names
the keys (renames, transactions, versioning commits, merges) call
``require`` for those. With authentication off only direct writes are
wrapped (``protecting``: protected branches refuse them all the same), so
an open catalog's reads pay nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from api.auth.authn import Authenticator
from api.auth.config import AuthSettings
from api.auth.errors import Forbidden
from api.auth.policy import RULES, Rule
from api.paths import namespace_key, ref_param, request_ref
from catalog.access import AuthData
from catalog.services import CatalogServices
from catalog.targets import target
from catalog.views.via_views import NotLent, parse_chain
from core.auth import Principal, Privilege
from core.errors import SapwoodError
from core.keys import ContentKey
from core.missing import ambiguous_prefix, missing_reference, no_such_commit
from core.refs import RefSpec, parse_ref

PRINCIPAL = "sapwood.principal"
_DATA = "sapwood.auth"
# Set once the rule held: which commits the caller sees (a hash prefix it
# names resolves among those alone: api.deps.services_of binds the
# request's services to it).
SEES = "sapwood.sees"
# Set when a read was let in through views (``referenced-by``): their names.
VIA_VIEWS = "sapwood.via_views"
ANONYMOUS = Principal("anonymous")


class Guard:
    def __init__(self, services: CatalogServices, settings: AuthSettings) -> None:
        # The references and commits the grants are weighed against.
        self.versioning = services.versioning
        self.settings = settings
        self.authn = Authenticator(services.access, settings)
        self.inline = services.local_reads
        # Checks a referenced-by chain (ref, views, key, what the caller may
        # read, what a principal may read); set by the app.
        self.views_check: Callable[[RefSpec, list[ContentKey], ContentKey,
                                    Callable[[tuple[str, ...]], bool],
                                    Callable[[str, tuple[str, ...]], bool]], None] | None = None

    # -- authorization -------------------------------------------------------------------
    def check(self, request: Request, rule: Rule) -> None:
        """Authenticate, then check ``rule`` for the request's ref and key."""
        who, data = self.authn.authenticate(request.headers.get("authorization"))
        scope = request.scope
        scope[PRINCIPAL] = who
        scope[_DATA] = data
        assert rule.privilege is not None
        if rule.ref == "*":
            return
        if rule.ref == "any":  # the privilege on some reference (what it shows is filtered)
            if not any(data.policy.reaches(who, rule.privilege, r.name)
                       for r in self.versioning.all_references()):
                raise Forbidden(f"Principal '{who.name}' lacks the '{rule.privilege.value}' "
                                "privilege on every reference")
            return
        if rule.ref == "all":
            if not data.policy.allows_everywhere(who, rule.privilege):
                raise Forbidden(f"Principal '{who.name}' lacks the '{rule.privilege.value}' "
                                "privilege on every reference ('*')")
            return
        spec, key = addressed(request, rule)
        # Protection first: it is the answer whatever the caller's grants.
        refuse_protected(rule, spec, data)
        # A reference the request creates is not read: refusing it says
        # nothing of what exists.
        hide = not rule.ref.startswith("query:")
        if rule.key == "handler" or (rule.listing and key is None):
            if not self._reaches(who, data, rule.privilege, spec):
                raise self._refusal(who, data, rule.privilege, spec, None, hide)
            return
        try:
            self._allow(who, data, rule.privilege, spec, key, hide)
        except Forbidden as refused:
            chain = request.query_params.get("referenced-by") if rule.via_views else None
            if not chain or key is None:
                raise
            try:
                self._through_views(request, who, data, spec, key, chain)
            except NotLent:
                raise refused from None

    def _through_views(self, request: Request, who: Principal, data: AuthData, spec: RefSpec,
                       key: tuple[str, ...], chain_text: str) -> None:
        """A read let in by the spec's ``referenced-by``: the caller reads the
        outermost view, and each view of the chain is a definer view that
        reads the next and whose definer may read what it reads, by the
        grants of this request's moment (catalog.views.via_views).
        Read only."""
        chain = parse_chain(chain_text)
        self._allow(who, data, Privilege.READ, spec, chain[0].elements)
        if self.views_check is None:
            raise _forbidden(who, Privilege.READ, spec, key)

        def caller_reads(k: tuple[str, ...]) -> bool:
            return self._reads(who, data, spec, k)

        self.views_check(spec, chain, ContentKey(key), caller_reads, self._grants(data, spec))
        request.scope[VIA_VIEWS] = tuple(str(k) for k in chain)

    def _reads(self, who: Principal, data: AuthData, spec: RefSpec, key: tuple[str, ...],
               ) -> bool:
        return any(data.policy.allows(who, Privilege.READ, name, key)
                   for name in self._names(who, data, Privilege.READ, spec))

    def _grants(self, data: AuthData, spec: RefSpec) -> Callable[[str, tuple[str, ...]], bool]:
        """Whether a principal, by name, may read a key at ``spec`` with the
        grants of ``data``: a definer's. Its roles are those the catalog
        records; a revoked principal, or one the catalog does not know (an
        identity provider's alone), may read nothing."""
        known: dict[str, tuple[Principal, list[str]] | None] = {}

        def may_read(name: str, key: tuple[str, ...]) -> bool:
            if name not in known:
                rec = data.principals.get(name)
                p = Principal(name, frozenset(rec.roles)) if rec is not None and rec.active \
                    else None
                known[name] = None if p is None else (
                    p, self._names(p, data, Privilege.READ, spec))
            hit = known[name]
            return hit is not None and any(
                data.policy.allows(hit[0], Privilege.READ, n, key) for n in hit[1])

        return may_read

    async def check_async(self, request: Request, rule: Rule) -> None:
        """``check`` from the event loop: inline when the auth data is cached
        in process, else in the thread pool (it reads the database). Then
        the request carries which commits the caller sees (``SEES``): a hash
        prefix it names resolves among those alone. A rule that asks about
        every reference, or a request naming a commit by hash (which
        references hold it?), reads the store at length: the pool."""
        if self.inline and not self._long(request, rule):
            self.check(request, rule)
        else:
            await run_in_threadpool(self.check, request, rule)
        privilege = rule.privilege
        if privilege is not None:
            who, data = request.scope[PRINCIPAL], request.scope[_DATA]
            request.scope[SEES] = lambda h: bool(self._holders(who, data, privilege, h))

    def _long(self, request: Request, rule: Rule) -> bool:
        """Whether checking ``rule`` may walk the references (see check_async)."""
        if rule.ref == "any":
            return True
        if rule.ref in ("*", "all") or rule.privilege is None:
            return False
        try:
            spec, _ = addressed(request, rule)
        except Exception:
            return True  # check answers it, wherever it runs
        return spec.hash is not None

    def _allow(self, who: Principal, data: AuthData, privilege: Privilege, spec: RefSpec,
               key: tuple[str, ...] | None, hide: bool = True) -> None:
        if not any(data.policy.allows(who, privilege, name, key)
                   for name in self._names(who, data, privilege, spec)):
            raise self._refusal(who, data, privilege, spec, key, hide)

    def _refusal(self, who: Principal, data: AuthData, privilege: Privilege, spec: RefSpec,
                 key: tuple[str, ...] | None, hide: bool = True) -> SapwoodError:
        """Why ``spec`` is refused: a reference or commit the caller does not
        see answers exactly as one that does not exist (it learns nothing of
        what exists from the answer); one it sees, 403 naming the privilege."""
        # (A hash got this far only if it names a commit the caller sees: _names.)
        if hide and spec.name is not None and not self._sees(who, data, privilege, spec.name):
            return missing_reference(spec)
        return _forbidden(who, privilege, spec, key)

    @staticmethod
    def _sees(who: Principal, data: AuthData, privilege: Privilege, name: str) -> bool:
        """Whether the caller may know of reference ``name``: it may read it
        (a listing of references shows it), or holds the privilege asked on it."""
        return data.policy.reaches(who, Privilege.READ, name) or \
            data.policy.reaches(who, privilege, name)

    def _reaches(self, who: Principal, data: AuthData, privilege: Privilege,
                 spec: RefSpec) -> bool:
        return any(data.policy.reaches(who, privilege, name)
                   for name in self._names(who, data, privilege, spec))

    def _names(self, who: Principal, data: AuthData, privilege: Privilege,
               spec: RefSpec) -> list[str]:
        """The reference names whose grants decide about ``spec``. A spec that
        starts from a name (``main``, ``main*T``, ``main~2``) is that name's
        history. A hash is readable through any reference that contains it
        (``name@hash`` only through ``name`` when that holds it). The name is
        looked at before the hash, as the store resolves them; a hash names
        only commits the caller sees, any other answers as missing."""
        if spec.hash is None:
            return [spec.name] if spec.name else []
        refs = self.versioning
        if spec.name is not None:
            if not self._sees(who, data, privilege, spec.name):
                raise missing_reference(spec)
            head = refs.reference(spec.name).hash
            found = refs.hashes_with_prefix(spec.hash)
            if len(found) == 1 and refs.is_ancestor(found[0], head):
                return [spec.name]  # the usual case, answered without the other refs
        holders = self._holding(who, data, privilege, spec.hash)
        if spec.name is None:
            return [name for name in holders if data.policy.reaches(who, privilege, name)]
        return [spec.name] if spec.name in holders else []

    def _holding(self, who: Principal, data: AuthData, privilege: Privilege,
                 text: str) -> list[str]:
        """The references the caller sees that hold the one commit ``text``
        (a hash or a prefix of one) names among the commits they hold; else
        the store's answer for a hash that names no commit, or several."""
        visible = [names for h in self.versioning.hashes_with_prefix(text)
                   if (names := self._holders(who, data, privilege, h))]
        if not visible:
            raise no_such_commit(text)
        if len(visible) > 1:
            raise ambiguous_prefix(text)
        return visible[0]

    def _holders(self, who: Principal, data: AuthData, privilege: Privilege,
                 h: str) -> list[str]:
        """The references the caller sees whose history holds commit ``h``."""
        refs = self.versioning
        return [r.name for r in refs.all_references()
                if self._sees(who, data, privilege, r.name) and refs.is_ancestor(h, r.hash)]

    # -- for handlers ------------------------------------------------------------------
    def allows_everywhere(self, request: Request, privilege: Privilege) -> bool:
        """The privilege on every reference (``*``), as ``ref="all"`` rules ask."""
        who: Principal = request.scope[PRINCIPAL]
        data: AuthData = request.scope[_DATA]
        return data.policy.allows_everywhere(who, privilege)

    def allows(self, request: Request, privilege: Privilege, spec: RefSpec,
               key: tuple[str, ...] | None) -> bool:
        who: Principal = request.scope[PRINCIPAL]
        data: AuthData = request.scope[_DATA]
        return any(data.policy.allows(who, privilege, name, key)
                   for name in self._names(who, data, privilege, spec))

    def require(self, request: Request, privilege: Privilege, spec: RefSpec | str,
                key: tuple[str, ...] | None) -> None:
        who: Principal = request.scope[PRINCIPAL]
        data: AuthData = request.scope[_DATA]
        self._allow(who, data, privilege, parse_ref(spec) if isinstance(spec, str) else spec,
                    key)

    def require_some(self, request: Request, privilege: Privilege, spec: RefSpec | str) -> None:
        """The privilege on some part of ``spec`` (as ``key="handler"`` rules
        ask): a reference or commit the caller does not see answers as a
        missing one."""
        who: Principal = request.scope[PRINCIPAL]
        data: AuthData = request.scope[_DATA]
        spec = parse_ref(spec) if isinstance(spec, str) else spec
        if not self._reaches(who, data, privilege, spec):
            raise self._refusal(who, data, privilege, spec, None)

    def key_filter(self, request: Request, spec: RefSpec,
                   ) -> Callable[[tuple[str, ...]], bool] | None:
        who: Principal = request.scope[PRINCIPAL]
        data: AuthData = request.scope[_DATA]
        names = self._names(who, data, Privilege.READ, spec)
        if any(data.policy.allows(who, Privilege.READ, n, None) for n in names):
            return None  # reads the whole ref: nothing to hide
        return lambda key: any(data.policy.readable_key(who, n, key) for n in names)

    def ref_filter(self, request: Request) -> Callable[[str], bool]:
        who: Principal = request.scope[PRINCIPAL]
        data: AuthData = request.scope[_DATA]
        return lambda name: data.policy.reaches(who, Privilege.READ, name)

    def protected(self, request: Request, name: str) -> bool:
        data: AuthData = request.scope[_DATA]
        return data.policy.is_protected(name)

    def principal_of(self, request: Request) -> Principal:
        return request.scope[PRINCIPAL]  # type: ignore[no-any-return]


def _forbidden(who: Principal, privilege: Privilege, spec: RefSpec,
               key: tuple[str, ...] | None) -> Forbidden:
    where = f" in namespace {'.'.join(key)}" if key else ""
    # Grants are on references: ``main@<hash>`` (a client pinning the head it
    # saw, not the user's words) is refused as ``main``.
    named = spec.name if spec.name is not None and not spec.parts else spec
    return Forbidden(f"Principal '{who.name}' lacks the '{privilege.value}' privilege on "
                     f"reference '{named}'{where}")


def addressed(request: Request, rule: Rule) -> tuple[RefSpec, tuple[str, ...] | None]:
    """The ref spec and the key (or namespace) a request addresses, as its rule says."""
    params = request.path_params
    if rule.ref == "iceberg":
        spec = request_ref(request.scope)
    elif rule.ref.startswith("query:"):
        spec = parse_ref(request.query_params.get(rule.ref[6:]) or "")
    else:
        spec = ref_param(params[rule.ref])
    key: tuple[str, ...] | None = None
    if rule.key in ("ns", "ns+table", "ns+view"):
        ns = namespace_key(params["namespace"])
        name = params.get("table") or params.get("view")
        if rule.key != "ns" and name:
            t = target(spec, ns, name)  # a name may carry its own ref (v@etl)
            spec, key = t.ref, t.key.elements
        else:
            key = ns.elements
    elif rule.key == "key":
        key = ContentKey.parse(params["key"]).elements
    return spec, key


def refuse_protected(rule: Rule, spec: RefSpec, data: AuthData) -> None:
    """Forbidden when ``rule`` commits directly to a protected branch, whoever
    asks. (Versioning-API writes name ``branch@expectedHash``; an Iceberg write
    to anything but a bare name is refused later as read-only.)"""
    writes_branch = spec.is_plain or (rule.ref != "iceberg" and not spec.parts)
    if rule.direct_write and writes_branch and data.policy.is_protected(spec.name or ""):
        raise Forbidden(
            f"Branch '{spec.name}' is protected: direct commits are refused; commit on "
            f"another branch and merge it into '{spec.name}' (needs merge-into)")


def protecting(handler: Callable[[Request], Coroutine[Any, Any, Response]], rule: Rule,
               ) -> Callable[[Request], Coroutine[Any, Any, Response]]:
    """``handler`` refusing direct commits to protected branches, for a catalog
    served with authentication off (no guard): protection holds all the same.
    Only direct writes are wrapped; each reads the protections (one small row
    while they are unchanged) off the event loop."""
    if not rule.direct_write:
        return handler

    def check(request: Request) -> None:
        data: AuthData = request.app.state.services.access.current()
        if not data.policy.protected:
            return
        try:
            spec, _ = addressed(request, rule)
        except Exception:
            return  # a malformed name: the handler answers it, as it did
        refuse_protected(rule, spec, data)

    async def protected_handler(request: Request) -> Response:
        await run_in_threadpool(check, request)
        return await handler(request)

    return protected_handler


def guard_of(request: Request) -> Guard | None:
    """The guard, when authentication is on (and this request was checked)."""
    if PRINCIPAL not in request.scope:
        return None
    return request.app.state.guard  # type: ignore[no-any-return]


class AuthRoute(APIRoute):
    """A route that checks its rule before its handler runs."""

    def inner_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """What runs once the rule holds."""
        return super().get_route_handler()

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        original = self.inner_handler()
        rule = RULES[self.name]
        if rule.privilege is None:
            return original

        async def handler(request: Request) -> Response:
            guard: Guard = request.app.state.guard
            await guard.check_async(request, rule)
            return await original(request)

        return handler
