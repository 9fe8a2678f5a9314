"""Reading a table through a view (the spec's ``referenced-by``): a principal
that may read a view may load what that view reads — and have its files
signed or credentials vended for reading — when the view is a *definer*
view (``sapwood.security=definer``), the way a SQL view with definer's
rights lets its readers see its result without the grants on its bases.

A view is *invoker* unless it says otherwise (the rule before this
existed: a reader needs its own grants on everything a view reads). The
chain the client names is checked link by link against each view's
recorded dependencies (core.sql analysis), so a view can only open the
objects its own SQL reads; setting the property needs write on the view's
namespace, as any change of the view does.
"""

from __future__ import annotations

from urllib.parse import unquote

from catalog.delegation.view_security import DEFINER, INVOKER, SECURITY
from catalog.views import Views
from core.content import IcebergView, MaterializedView
from core.errors import ForbiddenError, InvalidInputError
from core.keys import ContentKey
from core.refs import RefSpec

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


def check_chain(views: Views, ref: RefSpec, chain: list[ContentKey], key: ContentKey) -> None:
    """ForbiddenError naming the link that fails, unless each view of
    ``chain`` (at ``ref``) is a definer view that reads the next, the last
    one ``key``."""
    found = views.catalog.store.lookup(ref, chain)[1]
    for i, view in enumerate(chain):
        content = found.get(view)
        if not isinstance(content, IcebergView | MaterializedView):
            raise ForbiddenError(f"referenced-by: {view} is not a view on '{ref}'")
        meta, _ = views.files.view(content.metadata_location)
        if (meta.properties or {}).get(SECURITY, INVOKER) != DEFINER:
            raise ForbiddenError(
                f"referenced-by: view {view} runs with its reader's rights ({SECURITY} is not "
                f"'{DEFINER}'): reading what it reads needs the reader's own grants")
        nxt = chain[i + 1] if i + 1 < len(chain) else key
        reads = {tuple(d.key) for a in content.analysis or [] for d in a.dependencies}
        if nxt.elements not in reads:
            raise ForbiddenError(f"referenced-by: view {view} does not read {nxt}")
