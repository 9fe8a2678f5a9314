"""The cutoff index: which references could retain a commit, found by a few
index range look-ups instead of a walk over every reference (issue 43).

Every reference row carries its *retention class* and its head's depth on
the first-parent chain (columns of ``refs``, migration 0011):

* ``keep_commits``: how many of its newest commits it retains by count — 1
  for a tag and for a branch whose policy keeps only its head or only a
  duration, ``KEEP_ALL`` for a branch that matches no policy (all of them),
  else its policy's count;
* ``keep_us``: its policy's ``keep`` in microseconds (None: no duration);
* ``head_depth``: moved with the head, in the same statement as the swap
  (store.writes, store.refs).

Commit times strictly increase along a first-parent chain (store.writes
gives a commit at least its parent's time plus 1 µs), so a reference retains
a commit ``h`` of its chain (depth ``d``, age ``a``) exactly when its head is
as deep as ``h`` or deeper and its head's depth is below ``d + keep_commits``
or ``a <= keep_us``. The references that *could* retain ``h`` — it remains to
test that ``h`` is on their chain — are therefore one index range per
distinct count (``ix_refs_count``: ``keep_commits``, ``head_depth``) and one
on ``keep_us`` (``ix_refs_keep``), all in one statement: O(log n) however
many references there are, plus one chain test per reference found.

The class follows the policies: it is set when a reference is made and
recomputed for every reference when the list is replaced, each of those in
one transaction that holds ``_LOCK_ID`` on PostgreSQL (SQLite's writes are
serialised anyway), so a reference made while the list changes is classed by
the list that lands. Branches (and tags) deleted within gc's grace period
keep their row in ``deleted_refs``, found the same way; gc purges the rows
past its grace.
"""

from __future__ import annotations

from functools import lru_cache

from sqlalchemy import (
    Connection,
    bindparam,
    delete,
    insert,
    select,
    text,
    update,
)

from core.commits import RefType
from core.retention import Policy, parse_duration, policy_of
from store.db import Database
from store.schema import ANCESTRY, DELETED_REFS, KEEP_ALL, REFLOG, REFS, RETENTION

# Serialises class changes (a reference made, the policy list replaced) on
# PostgreSQL, where two READ COMMITTED transactions would not see each other.
_LOCK_ID = 0x5A9_0043
# A reference that could retain a commit: (name, type, head).
Candidate = tuple[str, RefType, str]
# The statements a reference's create and delete run, built once: building
# them per call cost more than running them (issue 48, the branch rows).
_POLICIES = (select(RETENTION.c.refs, RETENTION.c.keep, RETENTION.c.keep_commits)
             .order_by(RETENTION.c.position))
_DEPTH = select(ANCESTRY.c.depth).where(ANCESTRY.c.hash == bindparam("h"))
_FORGET_DELETED = delete(DELETED_REFS).where(DELETED_REFS.c.name == bindparam("n"))
_REF_ROW = (select(REFS.c.type, REFS.c.head, REFS.c.head_depth, REFS.c.keep_commits,
                   REFS.c.keep_us).where(REFS.c.name == bindparam("n")))


def retention_class(items: list[Policy], name: str, ref_type: RefType) -> tuple[int, int | None]:
    """(keep_commits, keep_us) of reference ``name`` under the policies ``items``."""
    if ref_type is RefType.TAG:
        return 1, None
    p = policy_of(items, name)
    if p is None:
        return KEEP_ALL, None
    keep_us = int(parse_duration(p.keep) * 1_000_000) if p.keep is not None else None
    return p.keep_commits or 1, keep_us


def counts_of(items: list[Policy]) -> list[int]:
    """Every ``keep_commits`` a reference may carry under ``items``."""
    return sorted({1, KEEP_ALL, *(p.keep_commits for p in items if p.keep_commits)})


def lock(conn: Connection) -> None:
    """Held until the transaction ends, by every change of a class."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _LOCK_ID})


def policies_in(conn: Connection) -> list[Policy]:
    rows = conn.execute(_POLICIES).all()
    return [Policy(r.refs, r.keep, r.keep_commits) for r in rows]


def depth_of(conn: Connection, h: str) -> int:
    depth = conn.execute(_DEPTH, {"h": h}).scalar()
    return int(depth or 0)


# -- kept with the references (store.refs), in their transactions -------------------------
def created(conn: Connection, name: str, ref_type: RefType, head: str) -> dict[str, object]:
    """The index columns of a reference about to be inserted; a deleted
    branch of that name retains nothing any more (it is made again)."""
    lock(conn)
    keep_commits, keep_us = retention_class(policies_in(conn), name, ref_type)
    conn.execute(_FORGET_DELETED, {"n": name})
    return {"head_depth": depth_of(conn, head), "keep_commits": keep_commits,
            "keep_us": keep_us}


def moved(conn: Connection, name: str, head: str) -> None:
    conn.execute(update(REFS).where(REFS.c.name == name)
                 .values(head_depth=depth_of(conn, head)))


def deleting(conn: Connection, name: str, at_us: int) -> None:
    """Before reference ``name`` is deleted: its row, as it is, is kept for
    gc's grace period."""
    row = conn.execute(_REF_ROW, {"n": name}).first()
    if row is None:
        return
    conn.execute(_FORGET_DELETED, {"n": name})
    conn.execute(insert(DELETED_REFS), {
        "name": name, "type": row.type, "head": row.head, "deleted_us": at_us,
        "head_depth": row.head_depth, "keep_commits": row.keep_commits,
        "keep_us": row.keep_us})


# -- kept with the policies (store.retention), in the replacing transaction -----------------
def reclassify(conn: Connection, items: list[Policy]) -> None:
    """Every reference's class (live or deleted) under the list ``items``."""
    lock(conn)
    for table in (REFS, DELETED_REFS):
        rows = conn.execute(select(table.c.name, table.c.type, table.c.keep_commits,
                                   table.c.keep_us)).all()
        changed = []
        for r in rows:
            keep_commits, keep_us = retention_class(items, r.name, RefType(r.type))
            if (keep_commits, keep_us) != (r.keep_commits, r.keep_us):
                changed.append({"n": r.name, "k": keep_commits, "u": keep_us})
        if changed:
            conn.execute(update(table).where(table.c.name == bindparam("n"))
                         .values(keep_commits=bindparam("k"), keep_us=bindparam("u")),
                         changed)


def rebuild(conn: Connection, since_us: int) -> None:
    """The whole index from the references, the reflog and the policies (a
    catalog migrated or imported): heads' depths, the branches deleted at or
    after ``since_us`` and not made again, and every class."""
    conn.execute(update(REFS).values(head_depth=select(ANCESTRY.c.depth).where(
        ANCESTRY.c.hash == REFS.c.head).scalar_subquery()))
    conn.execute(update(REFS).where(REFS.c.head_depth.is_(None)).values(head_depth=0))
    conn.execute(delete(DELETED_REFS))
    live = {n for (n,) in conn.execute(select(REFS.c.name))}
    gone = conn.execute(select(REFLOG.c.ref, REFLOG.c.ref_type, REFLOG.c.old_hash,
                               REFLOG.c.at_us)
                        .where(REFLOG.c.new_hash.is_(None), REFLOG.c.at_us >= since_us)
                        .order_by(REFLOG.c.at_us, REFLOG.c.id)).all()
    last = {r.ref: r for r in gone if r.old_hash and r.ref not in live}
    for r in last.values():
        conn.execute(insert(DELETED_REFS).values(
            name=r.ref, type=r.ref_type, head=r.old_hash, deleted_us=r.at_us,
            head_depth=depth_of(conn, r.old_hash), keep_commits=KEEP_ALL, keep_us=None))
    reclassify(conn, policies_in(conn))


def purge(conn: Connection, before_us: int) -> int:
    """Forget the branches deleted before ``before_us`` (gc: past its grace
    period, their history is collected)."""
    return int(conn.execute(delete(DELETED_REFS)
                            .where(DELETED_REFS.c.deleted_us < before_us)).rowcount or 0)


# -- the look-up --------------------------------------------------------------------------------
@lru_cache(maxsize=64)
def _lookup_sql(counts: tuple[int, ...], param: str) -> str:
    """The look-up's statement for these counts (prebuilt: it runs on every
    read at a commit that is not a head). Parameters, in order: per
    count the depth twice (from, below + count), then the depth and the
    age; the same again for ``deleted_refs``, each part with the horizon."""
    parts = []
    for table, recent in (("refs", ""), ("deleted_refs", f" AND deleted_us >= {param}")):
        head = f"SELECT name, type, head FROM {table} WHERE "
        for k in counts:
            parts.append(f"{head}keep_commits = {k} AND head_depth >= {param} "
                         f"AND head_depth < {param}{recent}")
        parts.append(f"{head}keep_us >= {param} AND head_depth >= {param}{recent}")
    return " UNION ALL ".join(parts)


def candidates(db: Database, depth: int, age_us: int, counts: list[int],
               horizon_us: int) -> list[Candidate]:
    """The references (and the branches deleted at or after ``horizon_us``)
    that retain a commit at ``depth`` made ``age_us`` ago if it lies on their
    chain: one statement of index ranges."""
    params: list[object] = []
    for recent in ((), (horizon_us,)):
        for k in counts:
            params += [depth, depth + k, *recent]
        params += [age_us, depth, *recent]
    rows = db.raw_read(_lookup_sql(tuple(counts), db.param), tuple(params))
    seen: set[tuple[str, str]] = set()
    out: list[Candidate] = []
    for row in rows:
        name, kind, head = str(row[0]), str(row[1]), str(row[2])
        if (name, head) not in seen:  # in two ranges: a count and a duration
            seen.add((name, head))
            out.append((name, RefType(kind), head))
    return out
