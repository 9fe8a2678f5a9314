"""Which table or view owns each storage location, across every reference.

Two different objects must never share a location, nor have one inside the
other: maintenance of one (an engine's ``remove_orphan_files``, a purge)
would delete the other's files. A commit that gives an object a location
(create, register, set-location, a ``write.*.path`` property) *claims* it:
in the commit's own transaction the claim is checked against every claim
of every other object still present at some reference's head, and recorded
(insert-only rows, branch-less like the view-edge index). Claims of objects
gone from every head (dropped everywhere) do not block: a table dropped and
created again at its old location is fine. The check takes a lock first
(PostgreSQL: an advisory lock; SQLite serialises writers anyway), so two
commits racing on different branches cannot both take overlapping places.

Locations are opaque here: normalised URIs (``s3://bucket/a/b``, no
trailing ``/``) compared at ``/`` boundaries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, insert, select

from core.errors import InvalidInputError
from core.keys import ContentKey
from store.db import Database
from store.schema import LOCATIONS

_LOCK_ID = 0x5A9_0002


@dataclass(frozen=True, slots=True)
class Claim:
    """``key``'s object takes ``path``; ``exclusive``: no object at all may
    hold an overlapping location, this one included (register adopts only
    tables from outside the catalog)."""

    key: ContentKey
    path: str
    exclusive: bool = False


class LocationTakenError(InvalidInputError):
    """A location overlaps one another object holds. The message is the same
    whatever that object is and whoever may read it."""


def taken(key: ContentKey) -> LocationTakenError:
    # Neither the location (register reads it from a file the caller may not
    # read) nor the other object is named: the answer is the same whatever
    # holds it and whoever asks.
    return LocationTakenError(
        f"The location of {key} overlaps the location of another table or view in this "
        "catalog (equal to it, inside it, or holding it, on some reference): every table "
        "and view needs a location of its own")


def ancestors(path: str) -> list[str]:
    """``path`` and every location that holds it, at ``/`` boundaries after
    the authority (``s3://b/x/y`` → ``s3://b``, ``s3://b/x``, ``s3://b/x/y``)."""
    scheme, sep, rest = path.partition("://")
    head = f"{scheme}{sep}" if sep else ""
    parts = rest.split("/") if sep else path.split("/")
    out = []
    for i in range(1, len(parts) + 1):
        p = "/".join(parts[:i])
        if p:
            out.append(head + p)
    return out


class LocationIndex:
    def __init__(self, db: Database, live: Callable[[str], bool]) -> None:
        self.db = db
        # Whether an object (content id) is at some reference's head.
        self.live = live
        p = db.param
        self._sql_insert = (f"INSERT INTO locations (path, content_id) VALUES ({p}, {p}) "
                            "ON CONFLICT DO NOTHING")

    def claim(self, cur: Any, claims: Sequence[tuple[ContentKey, str, str, bool]]) -> None:
        """Check and record (key, path, content id, exclusive) claims inside
        the commit's write transaction (``cur``); LocationTakenError refuses
        the commit, and its transaction writes nothing."""
        if not claims:
            return
        if self.db.dialect == "postgresql":
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_ID,))
        for i, (key, path, cid, exclusive) in enumerate(claims):
            for _, other_path, other_cid, _ in claims[:i]:
                if other_cid != cid and _overlap(path, other_path):
                    raise taken(key)
            for owner in self._overlapping(cur, path):
                if (owner != cid or exclusive) and self.live(owner):
                    raise taken(key)
        cur.executemany(self._sql_insert, [(path, cid) for _, path, cid, _ in claims])

    def _overlapping(self, cur: Any, path: str) -> set[str]:
        """The objects that claimed ``path``, a location holding it, or one inside it."""
        p = self.db.param
        up = ancestors(path)
        marks = ", ".join([p] * len(up))
        cur.execute(f"SELECT content_id FROM locations WHERE path IN ({marks}) "
                    f"OR (path > {p} AND path < {p})", (*up, path + "/", path + "0"))
        return {cid for (cid,) in cur.fetchall()}

    def holding(self, paths: Iterable[str]) -> set[str]:
        """The objects whose claimed locations hold one of ``paths`` (or are
        one): whose files those may be, on any reference (signing a DELETE)."""
        wanted = sorted({a for p in paths for a in ancestors(p)})
        found: set[str] = set()
        with self.db.read() as conn:
            for i in range(0, len(wanted), 500):
                found.update(conn.execute(select(LOCATIONS.c.content_id).where(
                    LOCATIONS.c.path.in_(wanted[i:i + 500]))).scalars())
        return found

    def around(self, path: str) -> list[tuple[str, str]]:
        """Every claim (path, content id) that holds ``path``, is it, or lies
        inside it: from which the claims holding any object in that folder
        are known without asking again (signing, catalog.maintenance.liveness)."""
        up = ancestors(path)
        with self.db.read() as conn:
            rows = conn.execute(select(LOCATIONS.c.path, LOCATIONS.c.content_id).where(
                LOCATIONS.c.path.in_(up) | ((LOCATIONS.c.path > path + "/")
                                            & (LOCATIONS.c.path < path + "0")))).all()
        return [(p, c) for p, c in rows]

    def places(self, content_ids: Iterable[str]) -> dict[str, set[str]]:
        """The claims of some objects: content id -> paths."""
        ids = sorted(set(content_ids))
        out: dict[str, set[str]] = {}
        with self.db.read() as conn:
            for i in range(0, len(ids), 500):
                for path, cid in conn.execute(select(LOCATIONS.c.path, LOCATIONS.c.content_id)
                                              .where(LOCATIONS.c.content_id.in_(ids[i:i + 500]))):
                    out.setdefault(cid, set()).add(path)
        return out

    # -- for gc ---------------------------------------------------------------------------
    def owners(self) -> dict[str, set[str]]:
        """Every claim: content id -> paths."""
        out: dict[str, set[str]] = {}
        with self.db.read() as conn:
            for path, cid in conn.execute(select(LOCATIONS.c.path, LOCATIONS.c.content_id)):
                out.setdefault(cid, set()).add(path)
        return out

    def record(self, rows: Iterable[tuple[str, str]]) -> None:
        """Claims of objects that predate the index (gc fills them in), as
        they are: what exists is not refused after the fact."""
        rows = list(rows)
        if rows:
            with self.db.write() as conn:
                existing = {tuple(r) for r in conn.execute(
                    select(LOCATIONS.c.path, LOCATIONS.c.content_id))}
                fresh = [{"path": p, "content_id": c} for p, c in rows if (p, c) not in existing]
                if fresh:
                    conn.execute(insert(LOCATIONS), fresh)

    def forget(self, content_ids: Iterable[str]) -> int:
        """Drop the claims of objects no commit in history holds any more."""
        ids = sorted(set(content_ids))
        if not ids:
            return 0
        with self.db.write() as conn:
            n = 0
            for i in range(0, len(ids), 500):
                n += conn.execute(delete(LOCATIONS).where(
                    LOCATIONS.c.content_id.in_(ids[i:i + 500]))).rowcount or 0
        return n


def _overlap(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")
