"""History brought from another catalog (catalog.imports: a Nessie
repository's): commits with the parents, times, authors and operations the
source gave them, written in batches, and references moved through them at
the source's times.

Nothing here plans against a branch head. A source's commit is sealed on
parents that are here already (landed by an earlier batch or run, or pending
in this batch), with the source's time — never below its first parent's plus
1 µs, the rule every commit keeps (store.writes' ``seal``; the ancestry
search and the cutoff index rely on it). A batch lands in one transaction
with its commits' ancestry and postings (store.changes), view edges
(store.edges), location claims (store.locations) and the ``imported_commits``
rows that map the source's hashes to these: what an interrupted import had
landed is there whole, and the next run continues after it.

A reference is then moved through its first-parent chain with one reflog row
per commit at that commit's time (``move``), so ``name*T`` — a reflog read
here — answers what the source's ``name*T`` (a walk down the chain there)
answered. The change feed gets one event per reference moved (created or
assigned, now), not one per historical commit: its readers and webhooks
learn that the reference arrived, not a replay of another system's past.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import insert, select, text, update

from core.commits import NO_ANCESTOR, CommitMeta, IndexEntry, Put, Reference, RefType
from core.content import Content, ContentType
from core.errors import InvalidInputError, ReferenceAlreadyExistsError, ReferenceConflictError
from core.keys import ContentKey
from core.refs import validate_ref_name
from store import cutoff_index
from store.changes import put_ids
from store.commit_records import CommitRecord
from store.edges import edges_of
from store.history import only_in
from store.index import KeyIndex
from store.locations import Claim
from store.merging import _Pending
from store.schema import COMMITS, IMPORTED_COMMITS, REFLOG, REFS
from store.state import StateIndex
from store.store import Store
from store.writes import NewCommit, seal

_TYPES = {t.value: t for t in ContentType}
# First parents from :start, :n commits: (hash, time, whether a merge).
_CHAIN = text("""
WITH RECURSIVE chain(hash, parent, created_us, merge, depth) AS (
    SELECT hash, parent, created_us, merge_parents IS NOT NULL, 1 FROM commits
    WHERE hash = :start
    UNION ALL
    SELECT c.hash, c.parent, c.created_us, c.merge_parents IS NOT NULL, chain.depth + 1
    FROM commits c JOIN chain ON c.hash = chain.parent
    WHERE chain.depth < :n
)
SELECT hash, created_us, merge FROM chain ORDER BY depth DESC
""")
_FOREIGN = text("SELECT count(*) FROM commits c WHERE c.hash <> :root AND NOT EXISTS "
                "(SELECT 1 FROM imported_commits i WHERE i.hash = c.hash)")


@dataclass(frozen=True, slots=True)
class GivenCommit:
    """A source's commit as it is to land here: ``parents`` are this
    catalog's hashes (first parent first), ``at_us`` the source's time,
    ``changes`` each key's new value (None: deleted), values with their ids."""

    source_hash: str
    parents: tuple[str, ...]
    meta: CommitMeta
    at_us: int
    changes: tuple[tuple[ContentKey, Content | None], ...]
    # Locations the put objects take (store.locations), by key.
    claims: tuple[Claim, ...] = ()


@dataclass(frozen=True, slots=True)
class Move:
    """One reflog row of a reference moved by an import."""

    old: str | None
    new: str
    at_us: int
    reason: str


class HistoryImport:
    """One import's writes: ``add`` seals commits into the pending batch,
    ``flush`` lands it, ``move`` moves a reference through landed commits."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.pending = _Pending(store.reader)
        self.index = StateIndex(KeyIndex(self.pending))
        self.batch: list[tuple[GivenCommit, NewCommit, set[str]]] = []
        self.records: dict[str, CommitRecord] = {}
        p = store.db.param
        cols = ("hash, parent, merge_parents, generation, created_us, author, committer, "
                "message, properties, operations, root, root_loc, depth, pack")
        self._sql_commit = (f"INSERT INTO commits ({cols}) VALUES ({', '.join([p] * 14)}) "
                            "ON CONFLICT (hash) DO NOTHING")
        self._sql_pack = f"INSERT INTO packs (loc, data) VALUES ({p}, {p})"
        self._sql_edges = (f"INSERT INTO view_edges (base_key, view_key, location) "
                           f"VALUES ({p}, {p}, {p}) ON CONFLICT DO NOTHING")
        self._sql_ancestry = ("INSERT INTO ancestry (hash, parent, depth, created_us, jump, "
                              f"jump_depth, jump_created_us) VALUES ({', '.join([p] * 7)}) "
                              "ON CONFLICT DO NOTHING")
        self._sql_changes = ("INSERT INTO changes (term, generation, hash, depth, created_us, "
                             f"kind) VALUES ({', '.join([p] * 6)}) ON CONFLICT DO NOTHING")
        self._sql_map = (f"INSERT INTO imported_commits (source_hash, hash) VALUES ({p}, {p}) "
                         "ON CONFLICT DO NOTHING")

    # -- what is here already -----------------------------------------------------------
    def mapped(self) -> dict[str, str]:
        """Source hash -> this catalog's, for the imported commits still here
        (gc removes those no reference reaches, like any other)."""
        q = (select(IMPORTED_COMMITS.c.source_hash, IMPORTED_COMMITS.c.hash)
             .join(COMMITS, COMMITS.c.hash == IMPORTED_COMMITS.c.hash))
        with self.store.db.read() as conn:
            return {s: h for s, h in conn.execute(q).all()}

    def foreign_commits(self) -> int:
        """How many commits this catalog holds that no import made (the
        empty root aside): 0 for a new catalog or one only imports filled."""
        with self.store.db.read() as conn:
            return int(conn.execute(_FOREIGN, {"root": NO_ANCESTOR}).scalar_one())

    def chain(self, start: str, n: int) -> list[tuple[str, int, bool]]:
        """The ``n`` commits down ``start``'s first parents, oldest first:
        (hash, time, whether it is a merge) — what a reference's moves are
        made of, without reading the commits whole."""
        if n <= 0:
            return []
        with self.store.db.read() as conn:
            return [(h, int(t), bool(m))
                    for h, t, m in conn.execute(_CHAIN, {"start": start, "n": n}).all()]

    def commit(self, h: str) -> CommitRecord:
        """A commit pending in this batch, or landed."""
        return self.records.get(h) or self.store.reader.commit(h)

    # -- commits -----------------------------------------------------------------------
    def add(self, given: GivenCommit) -> CommitRecord:
        """Seal ``given`` into the pending batch (its parents pending or
        landed). Its time is the given one, or its first parent's plus 1 µs
        when that is later (the caller says which commits that moved)."""
        if not given.parents:
            raise InvalidInputError(f"commit {given.source_hash} has no parent")
        parents = [self.commit(h) for h in given.parents]
        first = parents[0]
        pstate = first.state if first.state is not None else self.store.reader.state(first)
        changes: dict[str, IndexEntry | None] = {}
        contents: dict[str, bytes] = {}
        for key, content in given.changes:
            if content is None:
                changes[key.internal] = None
                continue
            if content.id is None:
                raise InvalidInputError(f"the value of {key} in commit {given.source_hash} "
                                        "has no content id")
            vh, data = content.hashed()
            contents[vh] = data
            changes[key.internal] = IndexEntry(_TYPES[content.type], content.id, vh)
        state, nodes, depth = self.index.apply(pstate, changes, first.depth)
        new = seal(parents, state, depth, nodes, contents, given.meta, changes, given.at_us,
                   None)
        for node in nodes:
            self.pending.nodes[node.hash] = node  # type: ignore[index]
        # What a merge's other parents bring in (the change index's M rows).
        carried: set[str] = set()
        for other in given.parents[1:]:
            carried |= put_ids(only_in(self.commit, other, given.parents[0]))
        self.records[new.record.hash] = new.record
        self.batch.append((given, new, carried))
        return new.record

    def flush(self) -> int:
        """Land the pending batch in one transaction; how many commits."""
        if not self.batch:
            return 0
        store = self.store
        records = [new.record for _, new, _ in self.batch]
        anc, rows = store.changes.plan(records, {new.record.hash: carried
                                                 for _, new, carried in self.batch if carried})
        edges = edges_of([Put(k, c) for given, _, _ in self.batch for k, c in given.changes
                          if c is not None])
        claims = []
        for given, _, _ in self.batch:
            ids = {k: c.id for k, c in given.changes if c is not None and c.id}
            claims += [(c.key, c.path, ids[c.key], c.exclusive) for c in given.claims
                       if c.key in ids]
        with store.db.raw_write() as cur:
            store.locations.claim(cur, claims)  # refused: the transaction writes nothing
            cur.executemany(self._sql_commit, [new.row for _, new, _ in self.batch])
            overflow = [p for _, new, _ in self.batch for p in new.overflow]
            if overflow:
                cur.executemany(self._sql_pack, overflow)
            if edges:
                cur.executemany(self._sql_edges, edges)
            cur.executemany(self._sql_ancestry, [a.row() for a in anc])
            if rows:
                cur.executemany(self._sql_changes, rows)
            cur.executemany(self._sql_map, [(given.source_hash, new.record.hash)
                                            for given, new, _ in self.batch])
        store.changes.remember(anc)
        for _, new, _ in self.batch:
            store.reader.remember_nodes(new.nodes)
            store.reader.remember_commit(new.record)
        store.stats.add("commits", len(self.batch))
        n = len(self.batch)
        self.batch.clear()
        self.records.clear()
        self.pending.nodes.clear()
        return n

    def discard(self) -> None:
        """Forget a batch that will not land (its objects were never stored)."""
        self.batch.clear()
        self.records.clear()
        self.pending.nodes.clear()
        self.store.reader.clear_caches()

    # -- references ---------------------------------------------------------------------
    def move(self, name: str, ref_type: RefType, expected: str | None, moves: Sequence[Move],
             now_us: int) -> Reference:
        """Create ``name`` (``expected`` None: it must not exist) or move it
        from ``expected``, through ``moves`` (landed commits, each row's old
        head the one before's new, times never going back), in one
        transaction with its reflog rows and one change-feed event."""
        validate_ref_name(name)
        prev = expected
        last_at = None
        for m in moves:
            if m.old != prev or (last_at is not None and m.at_us < last_at):
                raise InvalidInputError(f"the moves of reference '{name}' do not follow on "
                                        "from one another in order")
            prev, last_at = m.new, m.at_us
        head = prev
        if head is None:
            raise InvalidInputError(f"reference '{name}' would point at nothing")
        with self.store.db.write() as conn:
            row = conn.execute(select(REFS.c.type, REFS.c.head).where(REFS.c.name == name)
                               .with_for_update()).first()
            if expected is None:
                if row is not None:
                    raise ReferenceAlreadyExistsError(f"reference '{name}' already exists")
                if conn.execute(select(COMMITS.c.hash).where(COMMITS.c.hash == head)).first() \
                        is None:
                    raise InvalidInputError(f"commit {head} is not in this catalog")
                conn.execute(insert(REFS).values(
                    name=name, type=ref_type.value, head=head, created_us=now_us,
                    **cutoff_index.created(conn, name, ref_type, head)))
            else:
                if row is None or row.head != expected or row.type != ref_type.value:
                    raise ReferenceConflictError(
                        f"reference '{name}' is not the {ref_type.lower()} at {expected} the "
                        "import planned from", expected=expected,
                        actual=row.head if row is not None else None)
                conn.execute(update(REFS).where(REFS.c.name == name).values(head=head))
                cutoff_index.moved(conn, name, head)
            if moves:
                conn.execute(insert(REFLOG), [
                    {"ref": name, "ref_type": ref_type.value, "old_hash": m.old,
                     "new_hash": m.new, "at_us": m.at_us, "principal": None,
                     "reason": m.reason} for m in moves])
            self.store.events.append_conn(conn, "create" if expected is None else "assign",
                                          name, ref_type, expected, head, now_us, None)
        self.store.writer.forget(name)
        return Reference(name, ref_type, head)

    def backdate_creation(self, name: str, at_us: int) -> bool:
        """A reference at the empty root whose reflog holds nothing but its
        creation (a new catalog's main) is said to have been made at
        ``at_us`` when that is earlier: the source's reference existed,
        empty, from then on, and its moves are journaled before the
        creation's time this catalog happened to have. Whether it was so."""
        with self.store.db.write() as conn:
            head = conn.execute(select(REFS.c.head).where(REFS.c.name == name)
                                .with_for_update()).scalar()
            rows = conn.execute(select(REFLOG.c.id, REFLOG.c.old_hash, REFLOG.c.at_us)
                                .where(REFLOG.c.ref == name).limit(2)).all()
            if head != NO_ANCESTOR or len(rows) != 1 or rows[0].old_hash is not None:
                return False
            if rows[0].at_us > at_us:
                conn.execute(update(REFLOG).where(REFLOG.c.id == rows[0].id)
                             .values(at_us=at_us))
        return True
