"""Branches, tags and the reflog. A ref's head is the only mutable row in the
store, and it only moves by compare-and-swap; every move is journaled."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, bindparam, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from core.commits import DEFAULT_BRANCH, Page, Reference, ReflogEntry, RefType
from core.errors import (
    InvalidInputError,
    ProtectedReferenceError,
    ReferenceAlreadyExistsError,
    ReferenceConflictError,
)
from core.instants import from_micros
from core.missing import no_such_commit, no_such_ref_at, no_such_reference
from core.pages import MAX_PAGE, clamp_page_size, decode_token, encode_token
from core.refs import validate_ref_name
from store import cutoff_index
from store.db import Database
from store.events import EventLog
from store.idempotency import Answer, IdempotencyKeys, Once
from store.schema import COMMITS, REFLOG, REFS

_HEADS_KEPT = 4096
_TYPES = {t.value: t for t in RefType}
# A reference change's statements, built once (building them per call cost
# more than running them on SQLite: issue 48's branch rows).
_COMMIT_EXISTS = select(COMMITS.c.hash).where(COMMITS.c.hash == bindparam("h"))
_LOCKED_HEAD = (select(REFS.c.type, REFS.c.head).where(REFS.c.name == bindparam("n"))
                .with_for_update())
_DELETE_AT = delete(REFS).where(REFS.c.name == bindparam("n"), REFS.c.head == bindparam("h"))


class Refs:
    def __init__(self, db: Database, clock: Callable[[], int],
                 keys: IdempotencyKeys | None = None, events: EventLog | None = None) -> None:
        self.db = db
        self.events = events
        self.clock = clock
        self.keys = keys
        self._select_ref = f"SELECT type, head FROM refs WHERE name = {db.param}"
        # name → (the database's change token when read, the ref): a head
        # read again while nothing was committed anywhere is not asked of
        # the database (SQLite; store.data_version).
        self._heads: dict[str, tuple[int, Reference]] = {}

    def get(self, name: str) -> Reference:
        # The token is taken before the read: a commit in between makes the
        # next token differ, and that read asks again.
        token = self.db.change_token()
        if token is not None:
            hit = self._heads.get(name)
            if hit is not None and hit[0] == token:
                return hit[1]
        rows = self.db.raw_read(self._select_ref, (name,))
        if not rows:
            raise no_such_reference(name)
        ref = Reference(name, _TYPES[rows[0][0]], rows[0][1])
        if token is not None:
            if len(self._heads) >= _HEADS_KEPT:
                self._heads.clear()
            self._heads[name] = (token, ref)
        return ref

    def locked_head(self, conn: Connection, name: str) -> Reference:
        """Read a head inside a write transaction, locking it until the end."""
        row = conn.execute(_LOCKED_HEAD, {"n": name}).first()
        if row is None:
            raise no_such_reference(name)
        return Reference(name, RefType(row.type), row.head)

    def page(self, page_token: str | None = None, page_size: int | None = None,
             prefix: str | None = None, visible: Callable[[str], bool] | None = None,
             ) -> Page[Reference]:
        """References in name order, a page at a time (by the primary key:
        the cost is the page's, however many references there are), those
        whose name starts with ``prefix`` only if given. ``visible``: the
        names the caller may see; the others are skipped before paging, so
        a page is full unless it is the last, and the token names a
        reference the caller sees."""
        size = clamp_page_size(page_size)
        q = select(REFS.c.name, REFS.c.type, REFS.c.head).order_by(REFS.c.name)
        if prefix:
            # A range on the key, not LIKE (whose wildcards a name may hold).
            q = q.where(REFS.c.name >= prefix,
                        REFS.c.name < prefix[:-1] + chr(ord(prefix[-1]) + 1))
        after = decode_token(page_token) if page_token else None
        batch = size + 1 if visible is None else max(size + 1, MAX_PAGE)
        found: list[Reference] = []
        while len(found) <= size:
            with self.db.read() as conn:
                rows = conn.execute((q.where(REFS.c.name > after) if after is not None else q)
                                    .limit(batch)).all()
            found += [Reference(r.name, RefType(r.type), r.head) for r in rows
                      if visible is None or visible(r.name)]
            if len(rows) < batch:
                break
            after = rows[-1].name
        token = encode_token(found[size - 1].name) if len(found) > size else None
        return Page(found[:size], token)

    # ``once``: the request's Idempotency-Key, recorded in the same
    # transaction with the answer it makes of the Reference (store.idempotency).
    def create(self, name: str, ref_type: RefType, hash_: str, principal: str | None,
               reason: str = "create", once: Once | None = None) -> Reference:
        validate_ref_name(name)
        now = self.clock()
        made = Reference(name, ref_type, hash_)
        with self.db.write() as conn:
            exists = conn.execute(_COMMIT_EXISTS, {"h": hash_}).first()
            if exists is None:
                raise no_such_commit(hash_)
            try:
                conn.execute(insert(REFS), {
                    "name": name, "type": ref_type.value, "head": hash_, "created_us": now,
                    **cutoff_index.created(conn, name, ref_type, hash_)})
            except IntegrityError:  # the name is taken (the transaction rolls back)
                raise ReferenceAlreadyExistsError(
                    f"reference '{name}' already exists") from None
            self.journal(conn, name, ref_type, None, hash_, now, principal, reason)
            answer = self._record(conn, once, made, now)
        _landed(once, answer)
        return made

    def assign(self, name: str, expected: str, new: str, principal: str | None,
               ref_type: RefType | None = None, once: Once | None = None) -> Reference:
        now = self.clock()
        with self.db.write() as conn:
            if conn.execute(select(COMMITS.c.hash).where(COMMITS.c.hash == new)).first() is None:
                raise no_such_commit(new)
            current = self._check(conn, name, expected, ref_type)
            conn.execute(update(REFS).where(REFS.c.name == name, REFS.c.head == expected)
                         .values(head=new))
            cutoff_index.moved(conn, name, new)
            self.journal(conn, name, current.type, expected, new, now, principal, "assign")
            moved = Reference(name, current.type, new)
            answer = self._record(conn, once, moved, now)
        _landed(once, answer)
        return moved

    def delete(self, name: str, expected: str, principal: str | None,
               ref_type: RefType | None = None, once: Once | None = None) -> Reference:
        """Returns the reference as it was."""
        if name == DEFAULT_BRANCH:
            raise ProtectedReferenceError(f"the default branch '{name}' cannot be deleted")
        now = self.clock()
        with self.db.write() as conn:
            current = self._check(conn, name, expected, ref_type)
            cutoff_index.deleting(conn, name, now)  # it retains its history for gc's grace
            conn.execute(_DELETE_AT, {"n": name, "h": expected})
            self.journal(conn, name, current.type, expected, None, now, principal, "delete")
            answer = self._record(conn, once, current, now)
        _landed(once, answer)
        return current

    def _record(self, conn: Connection, once: Once | None, ref: Reference,
                now: int) -> Answer | None:
        if once is None:
            return None
        assert self.keys is not None
        # The DB-API cursor of the transaction's own connection.
        return self.keys.record_in(conn.connection.cursor(), once, ref, None, now)

    def _check(self, conn: Connection, name: str, expected: str,
               ref_type: RefType | None) -> Reference:
        current = self.locked_head(conn, name)
        if ref_type is not None and current.type is not ref_type:
            raise InvalidInputError(
                f"reference '{name}' is a {current.type.lower()}, not a {ref_type.lower()}")
        if current.hash != expected:
            raise ReferenceConflictError(
                f"reference '{name}' is at {current.hash}, not at the expected {expected}",
                expected=expected, actual=current.hash)
        return current

    def journal(self, conn: Connection, ref: str, ref_type: RefType, old: str | None,
                new: str | None, at_us: int, principal: str | None, reason: str) -> None:
        conn.execute(insert(REFLOG), {"ref": ref, "ref_type": ref_type.value, "old_hash": old,
                                      "new_hash": new, "at_us": at_us,
                                      "principal": principal, "reason": reason})
        if self.events is not None:  # the change feed's event, in the same transaction
            self.events.append_conn(conn, reason, ref, ref_type, old, new, at_us, principal)

    def head_at(self, name: str, at_us: int) -> tuple[str, RefType]:
        """The head ``name`` had at an instant: one indexed reflog look-up."""
        q = (select(REFLOG.c.new_hash, REFLOG.c.ref_type)
             .where(REFLOG.c.ref == name, REFLOG.c.at_us <= at_us)
             .order_by(REFLOG.c.at_us.desc(), REFLOG.c.id.desc()).limit(1))
        with self.db.read() as conn:
            row = conn.execute(q).first()
        if row is None or row.new_hash is None:
            raise no_such_ref_at(name, at_us, deleted=row is not None)
        return row.new_hash, RefType(row.ref_type)

    def reflog(self, name: str, limit: int = 100) -> list[ReflogEntry]:
        q = (select(REFLOG).where(REFLOG.c.ref == name)
             .order_by(REFLOG.c.at_us.desc(), REFLOG.c.id.desc()).limit(limit))
        with self.db.read() as conn:
            rows = conn.execute(q).all()
        return [ReflogEntry(r.ref, RefType(r.ref_type), r.old_hash, r.new_hash,
                            from_micros(r.at_us), r.principal, r.reason) for r in rows]


def _landed(once: Once | None, answer: Answer | None) -> None:
    """Told once the transaction is committed."""
    if once is not None and answer is not None:
        once.landed(answer)
