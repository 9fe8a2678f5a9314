"""Nessie's key parameters on entries and diffs (``key``, repeatable;
``min-key``, ``max-key``; ``prefix-key``), each a key in its path form:
which keys a listing keeps. Nessie's Java client sends them
(``getEntries().key(…)/minKey/maxKey/prefixKey``); they were ignored and
the whole listing answered (issue 47, F11)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Query

from core.keys import ContentKey

Visible = Callable[[tuple[str, ...]], bool]


@dataclass(frozen=True)
class KeyRange:
    keys: frozenset[ContentKey] | None = None
    min_key: ContentKey | None = None
    max_key: ContentKey | None = None
    prefix: ContentKey | None = None

    def sealed(self) -> dict[str, object]:
        """What a page token is sealed with: a token of one range is not
        taken by a request for another (api.paging)."""
        return {"key": sorted(k.internal for k in self.keys) if self.keys is not None else None,
                "min-key": self.min_key.internal if self.min_key else None,
                "max-key": self.max_key.internal if self.max_key else None,
                "prefix-key": self.prefix.internal if self.prefix else None}

    def within(self, visible: Visible | None) -> Visible | None:
        """``visible`` (the keys the caller may see; None: all) narrowed to
        this range; None when neither says anything. Keys compare as the
        listings order them (by their internal form)."""
        if self.keys is None and self.min_key is None and self.max_key is None \
                and self.prefix is None:
            return visible
        wanted = {k.elements for k in self.keys} if self.keys is not None else None
        low = self.min_key.internal if self.min_key else None
        high = self.max_key.internal if self.max_key else None
        prefix = self.prefix.elements if self.prefix else None

        def keep(elements: tuple[str, ...]) -> bool:
            if visible is not None and not visible(elements):
                return False
            if wanted is not None and elements not in wanted:
                return False
            if prefix is not None and elements[:len(prefix)] != prefix:
                return False
            if low is None and high is None:
                return True
            internal = ContentKey(elements).internal
            return (low is None or internal >= low) and (high is None or internal <= high)

        return keep


def key_range(key: Annotated[list[str] | None, Query(alias="key")] = None,
              min_key: Annotated[str | None, Query(alias="min-key")] = None,
              max_key: Annotated[str | None, Query(alias="max-key")] = None,
              prefix_key: Annotated[str | None, Query(alias="prefix-key")] = None,
              ) -> KeyRange:
    return KeyRange(frozenset(ContentKey.parse(k) for k in key) if key else None,
                    ContentKey.parse(min_key) if min_key else None,
                    ContentKey.parse(max_key) if max_key else None,
                    ContentKey.parse(prefix_key) if prefix_key else None)


KeyRanges = Annotated[KeyRange, Depends(key_range)]
