"""The locations a table or view takes, as claims the store checks against
every other object's on any reference (store.locations): its location and
every ``write.*.path`` property (where an engine writes its data or
metadata). Normalised as every location the server handles is."""

from __future__ import annotations

import re
from collections.abc import Mapping

from catalog.metadata.locations import split
from core.keys import ContentKey
from store.locations import Claim

WRITE_PATH = re.compile(r"^write\..+\.path$")


def places(location: str | None, properties: Mapping[str, str]) -> list[str]:
    """Every location an object with this location and these properties uses."""
    found = [location] if location else []
    found += [v for k, v in sorted(properties.items()) if WRITE_PATH.match(k) and v]
    return sorted({split(p).uri.rstrip("/") for p in found})


def claims(key: ContentKey, location: str | None, properties: Mapping[str, str],
           exclusive: bool = False) -> list[Claim]:
    return [Claim(key, p, exclusive) for p in places(location, properties)]


def moved(before: tuple[str | None, Mapping[str, str]] | None,
          after: tuple[str | None, Mapping[str, str]]) -> bool:
    """Whether a change gives the object a location it did not have."""
    return before is None or places(*before) != places(*after)
