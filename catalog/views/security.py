"""A view's security mode (``sapwood.security``): ``invoker`` (the default:
its readers need their own grants on what it reads) or ``definer`` (its
readers may read what it reads through it; catalog.views.via_views).

A definer view lends the reads of its *definer*, whom the server records in
``sapwood.definer``: the principal that made the view definer or wrote its
current version. Clients never set it: what they send is replaced by the
server's record (catalog.views.definers checks that the definer may
read what the view reads, when it is written and whenever it lends)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from core.errors import InvalidInputError
from core.views import SetProperties

SECURITY = "sapwood.security"
DEFINED_BY = "sapwood.definer"
DEFINER, INVOKER = "definer", "invoker"


def check_security(properties: Mapping[str, str]) -> None:
    """A view's properties as a client sets them: the security mode, if
    given, must be one Sapwood knows (a typo must not open anything)."""
    value = properties.get(SECURITY)
    if value is not None and value not in (DEFINER, INVOKER):
        raise InvalidInputError(f"View property {SECURITY} must be '{DEFINER}' or "
                                f"'{INVOKER}', not {value[:60]!r}")


def definer_of(properties: Mapping[str, str]) -> str | None:
    """Whose reads a view lends: its recorded definer when it is a definer
    view (None: an invoker view, or a definer view with no definer recorded,
    which lends nothing)."""
    if properties.get(SECURITY) != DEFINER:
        return None
    return properties.get(DEFINED_BY) or None


def asks_definer(updates: Iterable[object]) -> bool:
    """Whether a change sets the view definer itself (again, perhaps): the
    writer then takes it over, as when it makes a view definer."""
    return any(isinstance(u, SetProperties) and u.updates.get(SECURITY) == DEFINER
               for u in updates)


def recorded(properties: Mapping[str, str], base: Mapping[str, str] | None, renewed: bool,
             writer: str | None) -> tuple[dict[str, str], bool]:
    """The properties a view is written with, the definer being the
    server's record whatever the client sent, and whether ``writer``
    becomes the definer now (it must then hold read on what the view reads).

    The writer becomes the definer when the view is definer and either was
    not before (``base``: the properties it had; None for a new view) or
    is renewed: it gets a new current version, or the change sets it
    definer again (``asks_definer``); any other change keeps the definer it
    had. ``writer`` None (authentication off) records nobody."""
    out = {k: v for k, v in properties.items() if k != DEFINED_BY}
    if out.get(SECURITY) != DEFINER:
        return out, False
    if not renewed and base is not None and base.get(SECURITY) == DEFINER:
        was = base.get(DEFINED_BY)
        if was:
            out[DEFINED_BY] = was
        return out, False
    if writer is None:
        return out, False
    out[DEFINED_BY] = writer
    return out, True


def kept_with_version(merged: Mapping[str, str], side: Mapping[str, str]) -> dict[str, str]:
    """A merge's properties for the version of ``side`` (whose properties
    are ``side``): a recorded definer holds only for the version it was
    recorded with, so it stays only when that side ran as definer with the
    same definer."""
    out = dict(merged)
    claim = definer_of(out)
    if DEFINED_BY in out and (claim is None or definer_of(side) != claim):
        out.pop(DEFINED_BY)
    return out
