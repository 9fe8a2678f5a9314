"""The change feed's outbox: one event per landed change.

Every change of a reference — a commit, merge or transplant, a reference
created, assigned or deleted — inserts its event in the change's own
transaction (``append_in``, beside the reflog entry), so an event exists if
and only if its change landed, whichever process or replica made it.

Readers follow the feed by ``seq``, which only ever grows and has no holes a
later event could fill: on SQLite one transaction writes at a time, so an
event is given the next ``seq`` as it is inserted. On PostgreSQL
transactions commit in another order than they insert, so an event is
inserted without one and the *sequencer* (``sequence``, run before every
read of the feed, one at a time under an advisory lock) gives the next
numbers, in (transaction id, id) order, to the events of every transaction
older than the oldest one still running — none of which can insert an
event any more. A reader never sees a later event before an earlier one.

An event keeps the commits it brought with their operations (key,
operation, content type and id, the value's hash), at most ``MAX_OPERATIONS``
of them; the richer parts of an event (a table's snapshot and its summary,
a view's version) are read from those values when the event is shown
(catalog.feed.events).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select

from core.commits import OpKind, RefType
from store.commit_records import CommitRecord
from store.db import Database
from store.schema import EVENTS

# The event kinds, by the reason the reflog gives the change.
KINDS = {"commit": "commit", "merge": "merge", "transplant": "transplant",
         "create": "reference.created", "assign": "reference.assigned",
         "delete": "reference.deleted"}
# Operations kept per event: a bulk load's event says how many it left out.
MAX_OPERATIONS = 1000
_COLUMNS = "kind, ref, ref_type, old_hash, new_hash, at_us, principal, data"


@dataclass(frozen=True, slots=True)
class StoredEvent:
    seq: int
    kind: str
    ref: str
    ref_type: RefType
    old_hash: str | None
    new_hash: str | None
    at_us: int
    principal: str | None
    data: dict[str, Any]


def event_data(commits: Sequence[CommitRecord]) -> str:
    """The commits a change brought, with their operations, as stored."""
    left = MAX_OPERATIONS
    out = []
    omitted = 0
    for c in commits:
        ops = []
        for op in c.operations:
            if left <= 0:
                omitted += 1
                continue
            left -= 1
            entry = op.entry
            ops.append({"key": list(op.key.elements), "op": op.kind.value,
                        **({"type": entry.type.value, "id": entry.content_id,
                            "value": entry.value_hash}
                           if op.kind is OpKind.PUT and entry is not None else {})})
        out.append({"hash": c.hash, "parents": list(c.parents), "author": c.author,
                    "committer": c.committer, "message": c.message,
                    "createdUs": c.created_us, "operations": ops})
    return json.dumps({"commits": out, **({"operationsOmitted": omitted} if omitted else {})},
                      separators=(",", ":"))


class EventLog:
    def __init__(self, db: Database) -> None:
        self.db = db
        p = db.param
        if db.dialect == "postgresql":
            self.sql_insert = (
                f"INSERT INTO events (seq, txid, {_COLUMNS}) VALUES (NULL, "
                f"pg_current_xact_id()::text::bigint, {', '.join([p] * 8)})")
        else:
            self.sql_insert = (
                f"INSERT INTO events (seq, txid, {_COLUMNS}) VALUES ("
                f"(SELECT COALESCE(MAX(seq), 0) + 1 FROM events), 0, {', '.join([p] * 8)})")

    # -- writing (inside the change's transaction) ----------------------------------------
    def append_in(self, cur: Any, reason: str, ref: str, ref_type: RefType, old: str | None,
                  new: str | None, at_us: int, principal: str | None,
                  commits: Sequence[CommitRecord] = ()) -> None:
        cur.execute(self.sql_insert, self.row(reason, ref, ref_type, old, new, at_us, principal,
                                              commits))

    @staticmethod
    def row(reason: str, ref: str, ref_type: RefType, old: str | None, new: str | None,
            at_us: int, principal: str | None,
            commits: Sequence[CommitRecord] = ()) -> tuple[object, ...]:
        return (KINDS[reason], ref, ref_type.value, old, new, at_us, principal,
                event_data(commits))

    def append_conn(self, conn: Any, reason: str, ref: str, ref_type: RefType,
                    old: str | None, new: str | None, at_us: int,
                    principal: str | None) -> None:
        """``append_in`` on a SQLAlchemy connection (reference changes)."""
        conn.exec_driver_sql(self.sql_insert, self.row(reason, ref, ref_type, old, new, at_us,
                                                       principal))

    # -- reading -----------------------------------------------------------------------------
    def sequence(self) -> int:
        """Give the next numbers to the events no running transaction can
        precede (PostgreSQL; SQLite numbers them as they are written).
        Returns how many were numbered."""
        if self.db.dialect != "postgresql":
            return 0
        with self.db.raw_write() as cur:
            # One sequencer at a time; the others find nothing left to do.
            cur.execute("SELECT pg_advisory_xact_lock(7306142)")
            cur.execute(
                "UPDATE events e SET seq = s.base + s.rn FROM ("
                " SELECT id, row_number() OVER (ORDER BY txid, id) AS rn,"
                " (SELECT COALESCE(MAX(seq), 0) FROM events) AS base FROM events"
                " WHERE seq IS NULL"
                " AND txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
                ") s WHERE e.id = s.id")
            return int(cur.rowcount)

    def page(self, after: int, limit: int, kinds: Sequence[str] = (),
             refs: Sequence[str] = (), until: int | None = None,
             ) -> tuple[list[StoredEvent], bool]:
        """Events after ``after`` (a seq), oldest first, at most ``limit``;
        and whether more follow. With ``until`` (the end of a ``window``,
        whose events are numbered already) only events up to it."""
        if until is None:
            self.sequence()
        q = select(EVENTS).where(EVENTS.c.seq > after)
        if until is not None:
            q = q.where(EVENTS.c.seq <= until)
        if kinds:
            q = q.where(EVENTS.c.kind.in_(list(kinds)))
        if refs:
            q = q.where(EVENTS.c.ref.in_(list(refs)))
        q = q.order_by(EVENTS.c.seq).limit(limit + 1)
        with self.db.read() as conn:
            rows = conn.execute(q).all()
        events = [StoredEvent(r.seq, r.kind, r.ref, RefType(r.ref_type), r.old_hash, r.new_hash,
                              r.at_us, r.principal, json.loads(r.data)) for r in rows[:limit]]
        return events, len(rows) > limit

    def window(self, after: int, rows: int) -> tuple[int, bool]:
        """The next ``rows`` events after ``after``, as the seq of the last
        of them (``after`` when there are none), and whether more follow:
        a bounded stretch of the feed for one page to look at, counted on
        the seq index alone whatever the page filters by."""
        self.sequence()
        next_rows = (select(EVENTS.c.seq).where(EVENTS.c.seq > after)
                     .order_by(EVENTS.c.seq).limit(rows + 1).subquery())
        with self.db.read() as conn:
            count, top = conn.execute(select(func.count(), func.max(next_rows.c.seq))).one()
        if not count:
            return after, False
        if count > rows:
            # Nothing lies between the window's last event and the one after it.
            return int(top) - 1, True
        return int(top), False

    def refs_between(self, after: int, until: int, kinds: Sequence[str] = (),
                     refs: Sequence[str] = ()) -> list[str]:
        """The references events after ``after`` and up to ``until`` are on
        (of those kinds and references), each once."""
        q = select(EVENTS.c.ref).distinct().where(EVENTS.c.seq > after, EVENTS.c.seq <= until)
        if kinds:
            q = q.where(EVENTS.c.kind.in_(list(kinds)))
        if refs:
            q = q.where(EVENTS.c.ref.in_(list(refs)))
        with self.db.read() as conn:
            return [str(r) for r in conn.execute(q).scalars()]

    def last(self) -> int:
        """The newest event's seq (0: none)."""
        self.sequence()
        with self.db.read() as conn:
            return int(conn.execute(select(func.coalesce(func.max(EVENTS.c.seq), 0))).scalar_one())

    def before_time(self, at_us: int) -> int:
        """A cursor just before the first event at or after ``at_us`` (a
        reader's starting point by time; events are numbered in commit
        order, so this walks the numbering from the start, fine for a
        starting point asked for once)."""
        self.sequence()
        q = select(EVENTS.c.seq).where(EVENTS.c.seq.is_not(None), EVENTS.c.at_us >= at_us)
        with self.db.read() as conn:
            first = conn.execute(q.order_by(EVENTS.c.seq).limit(1)).scalar()
            if first is None:
                return int(conn.execute(
                    select(func.coalesce(func.max(EVENTS.c.seq), 0))).scalar_one())
        return int(first) - 1

    def purge(self, before_us: int) -> int:
        """Remove events older than ``before_us`` (gc's retention); the newest
        stays whatever its age, so numbering never starts again."""
        newest = select(func.max(EVENTS.c.seq)).scalar_subquery()
        with self.db.write() as conn:
            return int(conn.execute(delete(EVENTS).where(
                EVENTS.c.at_us < before_us, EVENTS.c.seq < newest)).rowcount)
