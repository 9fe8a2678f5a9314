"""A view's security mode (``sapwood.security``): ``invoker`` (the default:
its readers need their own grants on what it reads) or ``definer`` (its
readers may read what it reads through it; catalog.delegation.via_views)."""

from __future__ import annotations

from collections.abc import Mapping

from core.errors import InvalidInputError

SECURITY = "sapwood.security"
DEFINER, INVOKER = "definer", "invoker"


def check_security(properties: Mapping[str, str]) -> None:
    """A view's properties as a client sets them: the security mode, if
    given, must be one Sapwood knows (a typo must not open anything)."""
    value = properties.get(SECURITY)
    if value is not None and value not in (DEFINER, INVOKER):
        raise InvalidInputError(f"View property {SECURITY} must be '{DEFINER}' or "
                                f"'{INVOKER}', not {value[:60]!r}")
