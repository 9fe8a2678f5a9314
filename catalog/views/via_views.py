"""Reading a table through a view (the spec's ``referenced-by``): a principal
that may read a view may load what that view reads — and have its files
signed or credentials vended for reading — when the view is a *definer*
view (``sapwood.security=definer``), the way a SQL view with definer's
rights lets its readers see its result without the grants on its bases.

A view is *invoker* unless it says otherwise (the rule before this
existed: a reader needs its own grants on everything a view reads). The
chain the client names is checked link by link against each view's
recorded dependencies (core.sql analysis), so a view can only open the
objects its own SQL reads, and only while its recorded definer may read
everything it reads (catalog.views.definers); setting the property
needs write on the view's namespace, as any change of the view does.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote

from catalog.views.definers import Grants, lends
from catalog.views.security import DEFINER, INVOKER, SECURITY
from catalog.views.views import Views
from core.content import IcebergView, MaterializedView
from core.errors import ForbiddenError, InvalidInputError
from core.keys import ContentKey
from core.refs import RefSpec, parse_ref

_MAX_CHAIN = 16


def parse_chain(text: str) -> list[ContentKey]:
    """The ``referenced-by`` parameter: views, outermost first, separated by
    commas; in each, namespace levels and the name are separated by the unit
    separator 0x1F (as the spec says; a name without one is split at its
    last dot)."""
    chain = []
    for part in text.split(","):
        name = unquote(part.strip())
        if not name:
            continue
        levels = name.split("\x1f") if "\x1f" in name else name.split(".")
        if len(levels) < 2 or not all(levels):
            raise InvalidInputError(f"referenced-by: {name[:200]!r} is not a view's full name "
                                    "(namespace and view)")
        chain.append(ContentKey(tuple(levels)))
    if not chain or len(chain) > _MAX_CHAIN:
        raise InvalidInputError(f"referenced-by names 1 to {_MAX_CHAIN} views")
    return chain


class NotLent(ForbiddenError):
    """The chain lends nothing, for a reason the caller is not told: a
    definer who may not read (now) what its view reads, or anything about a
    view of the chain the caller may not read itself. The read is answered
    as it would be without the chain."""


def check_chain(views: Views, ref: RefSpec, chain: list[ContentKey], key: ContentKey,
                caller_reads: Callable[[tuple[str, ...]], bool], may_read: Grants) -> None:
    """ForbiddenError naming the link that fails, unless each view of
    ``chain`` (at ``ref``) is a definer view that reads the next, the last
    one ``key``, and whose definer may read everything it reads with its
    grants now (``may_read``; catalog.views.definers). NotLent when
    what fails is not the caller's to know (``caller_reads``: what the
    caller may read itself; the outermost view it may, the guard checked)."""
    resolved, found = views.catalog.store.lookup(ref, chain)
    at = parse_ref(f"@{resolved.hash}")  # every link and what it reads at one commit
    for i, view in enumerate(chain):
        shown = i == 0 or caller_reads(view.elements)

        def refused(why: str, shown: bool = shown) -> ForbiddenError:
            return ForbiddenError(f"referenced-by: {why}") if shown else NotLent(why)

        content = found.get(view)
        if not isinstance(content, IcebergView | MaterializedView):
            raise refused(f"{view} is not a view on '{ref}'")
        properties = views.files.view_of(content).properties or {}
        if properties.get(SECURITY, INVOKER) != DEFINER:
            raise refused(f"view {view} runs with its reader's rights ({SECURITY} is not "
                          f"'{DEFINER}'): reading what it reads needs the reader's own grants")
        nxt = chain[i + 1] if i + 1 < len(chain) else key
        reads = {tuple(d.key) for a in content.analysis or [] for d in a.dependencies}
        if nxt.elements not in reads:
            raise refused(f"view {view} does not read {nxt}")
        if not lends(views.catalog, at, content, properties, may_read):
            raise NotLent(f"the definer of view {view} may not read what it reads")
