"""Which reference a request reads or writes, from its path.

The Iceberg routes are served in four shapes, all meaning the same thing:
``/iceberg/v1/...`` (the default branch), ``/iceberg/{ref}/v1/...`` (a client
whose URI names a ref), and either of those with a REST ``prefix`` after
``/v1/`` (the prefix is a ref spec too; config hands it out). The edge layer
(api.edge) folds them into ``/iceberg/v1/...`` before routing, so the routes
exist once and routing stays one table lookup per request.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import quote, unquote

from api.asgi import Scope
from catalog.targets import namespace_from_levels
from core.commits import DEFAULT_BRANCH
from core.errors import bad_request
from core.keys import ContentKey
from core.refs import RefSpec, parse_ref
from core.sql.catalog_names import CATALOG_NAME

BASE = "/iceberg/"
# The first segment after /v1/ of every spec route that takes no {prefix}, or
# whose {prefix} was left out: anything else there is a prefix.
_RESOURCES = frozenset({"config", "oauth", "namespaces", "tables", "views", "transactions",
                        "events"})
# The segments that may follow ``namespaces/{ns}`` (the spec's routes and ours).
_IN_NAMESPACE = frozenset({"properties", "register", "register-view", "tables", "views"})
_ACTIONS = {"oauth": "tokens", "tables": "rename", "views": "rename",
            "transactions": "commit"}
SCOPE_KEY = "sapwood.ref"


def _is_route(rest: list[str]) -> bool:
    """Whether ``rest`` (the segments after ``/v1/`` and any prefix) is the
    shape of one of the routes: what tells a ref named ``v1`` or ``config``
    in the base path or prefix from the API's own segments."""
    if not rest or rest[0] not in _RESOURCES:
        return False
    head = rest[0]
    if head in ("config", "events"):
        return len(rest) == 1
    if head in _ACTIONS:
        return rest[1:] == [_ACTIONS[head]]
    # namespaces, namespaces/{ns}, namespaces/{ns}/<what>[/...]
    return len(rest) <= 2 or rest[2] in _IN_NAMESPACE


@lru_cache(maxsize=8192)
def split_path(path: str) -> tuple[str, bytes, str | None, str | None] | None:
    """(path for routing, its encoded form, ref from the base path, ref from the
    prefix), or None when the path is not an Iceberg route. ``path`` is still
    percent-encoded. Cached: clients ask for the same few paths over and over.

    A ref may be named like a segment of the API (``v1``, ``config``): the
    ``v1`` that starts the API is the first after which the rest, less an
    optional prefix, is one of the routes' shapes, so ``/iceberg/v1/v1/v1/
    namespaces`` is ref ``v1`` in both the base path and the prefix. When the
    rest reads both with and without a prefix, a prefix that spells the base
    path's ref (as config hands it out) wins, then the route without one
    (the unprefixed reading is the older one and stays so)."""
    segments = path[len(BASE):].split("/")
    fallback = None
    for v1, segment in enumerate(segments):
        if segment != "v1":
            continue
        base = unquote("/".join(segments[:v1])) if v1 else None
        rest = segments[v1 + 1:]
        plain = _is_route(rest)
        prefixed = len(rest) > 1 and _is_route(rest[1:])
        if prefixed and (not plain or (base is not None
                                      and unquote(rest[0]).split(CATALOG_SEPARATOR)[0] == base)):
            return _split(rest[1:], base, unquote(rest[0]))
        if plain:
            return _split(rest, base, None)
        if fallback is None:
            fallback = (rest, base)
    if fallback is None:
        return None
    # No route's shape: routed as before (the first v1, a prefix unless the
    # next segment is a resource), so that an unknown path is the router's 404.
    rest, base = fallback
    if len(rest) > 1 and rest[0] not in _RESOURCES:
        return _split(rest[1:], base, unquote(rest[0]))
    return _split(rest, base, None)


def _split(rest: list[str], base: str | None,
           prefix: str | None) -> tuple[str, bytes, str | None, str | None]:
    raw = "/iceberg/v1/" + "/".join(rest)
    return unquote(raw), raw.encode("latin-1"), base or None, prefix


TREES = "/api/v2/trees/"


@lru_cache(maxsize=8192)
def split_trees_path(path: str) -> tuple[str, bytes]:
    """A versioning API path with its ref segments still percent-encoded (a
    branch may be named ``team/etl``, sent as ``team%2Fetl``); handlers decode
    them. Everything else is decoded as usual."""
    segments = path.split("/")
    keep = {4} | ({6} if len(segments) > 6 and segments[5] == "diff" else set())
    for i in keep:
        segments[i] = _default_branch(segments[i])
    routed = "/".join(seg if i in keep else unquote(seg) for i, seg in enumerate(segments))
    return routed, "/".join(segments).encode("latin-1")


def _default_branch(segment: str) -> str:
    """Nessie's ``-`` for the default branch (alone, or before ``@hash``,
    ``*instant``, ``~n``, ``^n``): its Java client's getDefaultBranch()
    reads ``/trees/-``. No reference name starts with ``-`` (core.refs)."""
    if segment == "-" or (segment.startswith("-") and unquote(segment)[1:2] in ("@", "*", "~",
                                                                                "^")):
        return quote(DEFAULT_BRANCH, safe="") + segment[1:]
    return segment


def fold_path(scope: Scope, path: str) -> None:
    """Fold the four Iceberg path shapes into one (see the module doc), and
    keep the versioning API's ref segments whole; ``path`` is the request's
    path still percent-encoded. Called by the edge layer (api.edge)."""
    if path.startswith(BASE):
        found = split_path(path)
        if found is not None:
            scope["path"], scope["raw_path"], base, prefix = found
            scope[SCOPE_KEY] = (base, prefix)
    elif path.startswith(TREES):
        scope["path"], scope["raw_path"] = split_trees_path(path)


# Between the ref and the engine's catalog name in a prefix config hands out
# (``dev|iceberg_dev``): no ref spec holds it (core.refs).
CATALOG_SEPARATOR = "|"


def _prefix_parts(prefix: str | None) -> tuple[str | None, str | None]:
    if prefix is None or CATALOG_SEPARATOR not in prefix:
        return prefix, None
    ref, catalog = prefix.split(CATALOG_SEPARATOR, 1)
    if not CATALOG_NAME.fullmatch(catalog):
        raise bad_request(f"The prefix {prefix!r} names catalog {catalog!r}, which is not a "
                          f"catalog name (letters, digits and '_', not starting with a digit)")
    return ref or None, catalog


def request_catalog(scope: Scope) -> str | None:
    """The engine's name for the catalog a request comes through, when its
    configuration said it (``warehouse``, handed back in the prefix by
    config: api/routes/config.py), else None."""
    return _prefix_parts(scope.get(SCOPE_KEY, (None, None))[1])[1]


def config_prefix(ref: RefSpec, catalog: str | None) -> str:
    """The prefix config hands out: the ref, and the engine's catalog name."""
    return quote_ref(f"{ref}{CATALOG_SEPARATOR}{catalog}" if catalog else ref)


def request_ref(scope: Scope, fallback: str | None = None) -> RefSpec:
    """The ref spec a request addresses, parsed once here at the edge (bad
    grammar is a 400 before anything is looked up): base path and prefix
    must agree."""
    base, prefix = scope.get(SCOPE_KEY, (None, None))
    prefix = _prefix_parts(prefix)[0]
    # Compared as specs: config hands out the canonical spelling as the prefix
    # (an epoch-ms instant in the URI comes back in ISO form).
    if base and prefix and base != prefix and parse_ref(base) != parse_ref(prefix):
        raise bad_request(f"The reference in the base path ({base!r}) and in the prefix "
                          f"({prefix!r}) differ: name one reference")
    return parse_ref(base or prefix or fallback or DEFAULT_BRANCH)


def ref_param(text: str) -> RefSpec:
    """A versioning API path segment that names a ref spec (still encoded)."""
    return parse_ref(unquote(text))


def quote_ref(ref: str | RefSpec) -> str:
    return quote(str(ref), safe="")


# -- namespaces and identifiers ----------------------------------------------------
@lru_cache(maxsize=4096)
def namespace_key(path_value: str) -> ContentKey:
    """A namespace path parameter: levels separated by the unit separator 0x1F.
    (Cached: keys are immutable, and every request parses one.)"""
    return namespace_from_levels(path_value.split("\x1f"))
