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

BASE = "/iceberg/"
# The first segment after /v1/ of every spec route that takes no {prefix}, or
# whose {prefix} was left out: anything else there is a prefix.
_RESOURCES = frozenset({"config", "oauth", "namespaces", "tables", "views", "transactions"})
SCOPE_KEY = "sapwood.ref"


@lru_cache(maxsize=8192)
def split_path(path: str) -> tuple[str, bytes, str | None, str | None] | None:
    """(path for routing, its encoded form, ref from the base path, ref from the
    prefix), or None when the path is not an Iceberg route. ``path`` is still
    percent-encoded. Cached: clients ask for the same few paths over and over."""
    segments = path[len(BASE):].split("/")
    try:
        v1 = segments.index("v1")
    except ValueError:
        return None
    base = unquote("/".join(segments[:v1])) if v1 else None
    rest = segments[v1 + 1:]
    prefix = None
    if len(rest) > 1 and rest[0] not in _RESOURCES:
        prefix = unquote(rest[0])
        rest = rest[1:]
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


def request_ref(scope: Scope, fallback: str | None = None) -> RefSpec:
    """The ref spec a request addresses, parsed once here at the edge (bad
    grammar is a 400 before anything is looked up): base path and prefix
    must agree."""
    base, prefix = scope.get(SCOPE_KEY, (None, None))
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
