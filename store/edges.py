"""Which views read an object, at any commit, without scanning every view.

Every view value a commit puts carries its analysis (core.sql.stored): the
keys it reads. In the commit's own transaction, each (key read, view key,
the version's metadata file) is inserted here, once, whatever the branch.
To answer "what reads X at commit C": the rows for X name candidate views
and the versions of them that read X; a candidate is a dependent when, at
C, its key holds one of those versions. The cost follows the views that
ever read X, not the number of views.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from sqlalchemy import select

from core.commits import Operation, Put
from core.content import Content
from core.keys import ContentKey
from store.db import Database
from store.schema import VIEW_EDGES


def edges_of(ops: Sequence[Operation]) -> list[tuple[str, str, str]]:
    out: set[tuple[str, str, str]] = set()
    for op in ops:
        if not isinstance(op, Put):
            continue
        analyses = getattr(op.content, "analysis", None) or []
        location = getattr(op.content, "metadata_location", None)
        if location is None:
            continue  # only views (which have a metadata file) read anything
        for a in analyses:
            for d in a.dependencies:
                out.add((_text(ContentKey(d.key)), _text(op.key), location))
    return sorted(out)


class ViewEdges:
    """Reads the index; its rows are written with the commits that put the
    views (store.writes), so only views that landed are indexed."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def candidates(self, key: ContentKey) -> dict[ContentKey, set[str]]:
        with self.db.read() as conn:
            rows = conn.execute(select(VIEW_EDGES.c.view_key, VIEW_EDGES.c.location).where(
                VIEW_EDGES.c.base_key == _text(key))).all()
        out: dict[ContentKey, set[str]] = {}
        for view_key, location in rows:
            out.setdefault(ContentKey(json.loads(view_key)), set()).add(location)
        return out

    def readers(self, keys: Sequence[ContentKey],
                lookup: Callable[[list[ContentKey]], dict[ContentKey, Content]],
                ) -> dict[ContentKey, Content]:
        """The views that read any of ``keys`` at the commit ``lookup``
        reads: one query per ``_CHUNK`` keys and one lookup, so a merge or
        restore of many keys pays per chunk, not per key."""
        texts = sorted({_text(k) for k in keys})
        cands: dict[ContentKey, set[str]] = {}
        with self.db.read() as conn:
            for i in range(0, len(texts), _CHUNK):
                rows = conn.execute(select(VIEW_EDGES.c.view_key, VIEW_EDGES.c.location).where(
                    VIEW_EDGES.c.base_key.in_(texts[i:i + _CHUNK]))).all()
                for view_key, location in rows:
                    cands.setdefault(ContentKey(json.loads(view_key)), set()).add(location)
        if not cands:
            return {}
        now = lookup(sorted(cands))
        return {k: c for k, c in now.items()
                if getattr(c, "metadata_location", None) in cands[k]}

    def dependents(self, key: ContentKey,
                   lookup: Callable[[list[ContentKey]], dict[ContentKey, Content]],
                   ) -> dict[ContentKey, Content]:
        """The views that read ``key`` at the commit ``lookup`` reads."""
        cands = self.candidates(key)
        if not cands:
            return {}
        now = lookup(sorted(cands))
        return {k: c for k, c in now.items()
                if getattr(c, "metadata_location", None) in cands[k]}


# Keys per query of ``readers`` (well under SQLite's bound on parameters).
_CHUNK = 500


def _text(key: ContentKey) -> str:
    # JSON, not the internal form: PostgreSQL text cannot hold its NUL separators.
    return json.dumps(list(key.elements), ensure_ascii=False, separators=(",", ":"))
