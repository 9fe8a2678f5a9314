"""Tables of the commit-log store. Rows never leave ``store/``: callers get
the immutable values of ``core.commits``.

Everything but ``refs`` is insert-only: ``commits`` are content-addressed
(the key is the hash of the commit), ``reflog`` is a journal.
"""

from __future__ import annotations

from typing import cast

from sqlalchemy import BigInteger, Index, Integer, LargeBinary, String, Table, Text, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# "C" collation on PostgreSQL: hash-prefix range scans must compare bytes.
HASH = String(64).with_variant(String(64, collation="C"), "postgresql")
REF_NAME = String(255)


class Base(DeclarativeBase):
    pass


def _table(row: type[Base]) -> Table:
    """A model's table, typed as the Table it is (SQLAlchemy types it as a
    FromClause)."""
    return cast(Table, row.__table__)


class CommitRow(Base):
    __tablename__ = "commits"
    hash: Mapped[str] = mapped_column(HASH, primary_key=True)
    parent: Mapped[str | None] = mapped_column(HASH)          # first parent
    merge_parents: Mapped[str | None] = mapped_column(Text)   # JSON list of the others
    generation: Mapped[int] = mapped_column(BigInteger)       # 1 + max(parents')
    created_us: Mapped[int] = mapped_column(BigInteger)
    author: Mapped[str | None] = mapped_column(Text)
    committer: Mapped[str | None] = mapped_column(Text)
    message: Mapped[str] = mapped_column(Text)
    properties: Mapped[str] = mapped_column(Text)             # JSON object
    operations: Mapped[str] = mapped_column(Text)             # JSON list
    root: Mapped[str | None] = mapped_column(HASH)            # key index root node
    root_loc: Mapped[str | None] = mapped_column(String(32))  # the pack holding it
    depth: Mapped[int] = mapped_column(Integer)               # commits since root (store.state)
    # Index nodes and content values this commit created (see store.objects);
    # they are located by hash[:16], a range on the primary key.
    pack: Mapped[bytes | None] = mapped_column(LargeBinary)


class PackRow(Base):
    """Overflow packs of a commit that created many objects (bulk loads)."""

    __tablename__ = "packs"
    loc: Mapped[str] = mapped_column(String(32), primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


# A reference's retention class when it retains every commit of its chain
# by count (a branch that matches no policy): more than any chain holds.
KEEP_ALL = 2**62


class RefRow(Base):
    __tablename__ = "refs"
    name: Mapped[str] = mapped_column(REF_NAME, primary_key=True)
    type: Mapped[str] = mapped_column(String(6))
    head: Mapped[str] = mapped_column(HASH)
    created_us: Mapped[int] = mapped_column(BigInteger)
    # The cutoff index (store.cutoff_index, migration 0011): the head's
    # first-parent depth, moved with the head, and the retention class
    # (newest commits kept by count; the policy's keep in microseconds).
    head_depth: Mapped[int] = mapped_column(BigInteger, server_default="0")
    keep_commits: Mapped[int] = mapped_column(BigInteger, server_default=str(KEEP_ALL))
    keep_us: Mapped[int | None] = mapped_column(BigInteger)

    __table_args__ = (
        Index("ix_refs_count", "keep_commits", "head_depth"),
        Index("ix_refs_keep", "keep_us", "head_depth"),
    )


class ReflogRow(Base):
    __tablename__ = "reflog"
    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    ref: Mapped[str] = mapped_column(REF_NAME)
    ref_type: Mapped[str] = mapped_column(String(6))
    old_hash: Mapped[str | None] = mapped_column(HASH)
    new_hash: Mapped[str | None] = mapped_column(HASH)   # NULL: the ref was deleted
    at_us: Mapped[int] = mapped_column(BigInteger)
    principal: Mapped[str | None] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text)

    __table_args__ = (
        Index("ix_reflog_ref_at", "ref", "at_us", "id"),
        # Deletions only (a handful): the references deleted within gc's
        # grace period, which still retain their history (store.retention).
        Index("ix_reflog_deleted", "at_us", sqlite_where=text("new_hash IS NULL"),
              postgresql_where=text("new_hash IS NULL")),
    )


class DeletedRefRow(Base):
    """A branch deleted within gc's grace period still retains its history
    (store.retention): its head and class as they were, found by the same
    look-ups as a live reference's (store.cutoff_index). Written with the
    deletion, dropped when the name is made again, purged by gc."""

    __tablename__ = "deleted_refs"
    name: Mapped[str] = mapped_column(REF_NAME, primary_key=True)
    type: Mapped[str] = mapped_column(String(6))
    head: Mapped[str] = mapped_column(HASH)
    deleted_us: Mapped[int] = mapped_column(BigInteger)
    head_depth: Mapped[int] = mapped_column(BigInteger)
    keep_commits: Mapped[int] = mapped_column(BigInteger)
    keep_us: Mapped[int | None] = mapped_column(BigInteger)

    __table_args__ = (
        Index("ix_deleted_refs_count", "keep_commits", "head_depth"),
        Index("ix_deleted_refs_keep", "keep_us", "head_depth"),
    )


COMMITS = _table(CommitRow)
PACKS = _table(PackRow)
REFS = _table(RefRow)
REFLOG = _table(ReflogRow)
DELETED_REFS = _table(DeletedRefRow)


# -- authentication and authorization (store.auth) ------------------------------
# Small tables read whole into each process and cached by ``generation``:
# every change bumps it in the same transaction, and each authenticated
# request reads it (one indexed row), so replicas on one database agree at once.
class AuthStateRow(Base):
    __tablename__ = "auth_state"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    generation: Mapped[int] = mapped_column(BigInteger)
    # The HMAC key that signs this catalog's access tokens (shared by replicas).
    signing_key: Mapped[str] = mapped_column(Text)


class PrincipalRow(Base):
    __tablename__ = "principals"
    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    roles: Mapped[str] = mapped_column(Text)  # JSON list
    created_us: Mapped[int] = mapped_column(BigInteger)
    revoked_us: Mapped[int | None] = mapped_column(BigInteger)


class ApiKeyRow(Base):
    __tablename__ = "api_keys"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    principal: Mapped[str] = mapped_column(String(128))
    secret_hash: Mapped[str] = mapped_column(Text)  # scrypt, salted (core.secrets)
    description: Mapped[str] = mapped_column(Text)
    created_us: Mapped[int] = mapped_column(BigInteger)
    revoked_us: Mapped[int | None] = mapped_column(BigInteger)


class GrantRow(Base):
    __tablename__ = "grants"
    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    grantee: Mapped[str] = mapped_column(String(140))
    privilege: Mapped[str] = mapped_column(String(32))
    refs: Mapped[str] = mapped_column(REF_NAME)
    namespace: Mapped[str] = mapped_column(Text)  # JSON list, [] for every key
    created_us: Mapped[int] = mapped_column(BigInteger)


class ProtectedRefRow(Base):
    __tablename__ = "protected_refs"
    pattern: Mapped[str] = mapped_column(REF_NAME, primary_key=True)
    created_us: Mapped[int] = mapped_column(BigInteger)


AUTH_STATE = _table(AuthStateRow)
PRINCIPALS = _table(PrincipalRow)
API_KEYS = _table(ApiKeyRow)
GRANTS = _table(GrantRow)
PROTECTED_REFS = _table(ProtectedRefRow)


# -- what reads what (store.edges) ---------------------------------------------------
class ViewEdgeRow(Base):
    """One view version reads one object: (the object's key, the view's key,
    the view version's metadata file). Insert-only and branch-less, like a
    secondary index over every view value ever written; a reader keeps the
    rows whose view, at the commit it reads, still has that metadata file."""

    __tablename__ = "view_edges"
    base_key: Mapped[str] = mapped_column(Text, primary_key=True)
    view_key: Mapped[str] = mapped_column(Text, primary_key=True)
    location: Mapped[str] = mapped_column(Text, primary_key=True)


VIEW_EDGES = _table(ViewEdgeRow)


# -- who owns which storage location (store.locations) ---------------------------------
class LocationRow(Base):
    """An object (content id) claimed a location: its table location or a
    ``write.*.path``. Insert-only and branch-less; gc drops the rows of
    objects no commit in history holds any more."""

    __tablename__ = "locations"
    path: Mapped[str] = mapped_column(Text, primary_key=True)
    content_id: Mapped[str] = mapped_column(Text, primary_key=True)


LOCATIONS = _table(LocationRow)


# -- the change index (store.changes) ----------------------------------------------
class AncestryRow(Base):
    """Each commit's place on its first-parent chain: its depth there and one
    skip pointer (Myers' skew-binary scheme), so "is C on the first-parent
    chain of H" and "the newest commit of H's chain at or before T" take
    O(log n) look-ups. Insert-only, written with the commit."""

    __tablename__ = "ancestry"
    __table_args__ = {"sqlite_with_rowid": False}
    hash: Mapped[str] = mapped_column(HASH, primary_key=True)
    parent: Mapped[str | None] = mapped_column(HASH)  # first parent
    depth: Mapped[int] = mapped_column(BigInteger)    # first-parent steps from the root
    created_us: Mapped[int] = mapped_column(BigInteger)
    jump: Mapped[str] = mapped_column(HASH)
    jump_depth: Mapped[int] = mapped_column(BigInteger)
    jump_created_us: Mapped[int] = mapped_column(BigInteger)


class ChangeRow(Base):
    """Posting lists: for each term — a key (``k:``), a content id (``i:``),
    an author (``a:``) — the commits it applies to, on every branch, by
    generation. Insert-only, written with the commit."""

    __tablename__ = "changes"
    __table_args__ = {"sqlite_with_rowid": False}
    term: Mapped[str] = mapped_column(Text, primary_key=True)
    generation: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    hash: Mapped[str] = mapped_column(HASH, primary_key=True)
    depth: Mapped[int] = mapped_column(BigInteger)
    created_us: Mapped[int] = mapped_column(BigInteger)
    # P: puts it, D: deletes it (keys), M: a merge that brings in commits that
    # put it (content ids), A: authored by.
    kind: Mapped[str] = mapped_column(String(1))


ANCESTRY = _table(AncestryRow)
CHANGES = _table(ChangeRow)


# -- idempotency keys (store.idempotency) ---------------------------------------------
class IdempotencyRow(Base):
    """A request sent with an Idempotency-Key, and its answer: written in
    the transaction of the commit it made (or on its own if it made none);
    gc removes it once ``expires_us`` has passed."""

    __tablename__ = "idempotency"
    principal: Mapped[str] = mapped_column(Text, primary_key=True)
    request_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64))
    status: Mapped[int] = mapped_column(Integer)
    media_type: Mapped[str | None] = mapped_column(Text)
    body: Mapped[bytes] = mapped_column(LargeBinary)
    # The answer's headers a client reads (its ETag ...), as a JSON list of
    # [name, value] pairs; NULL: none (migration 0012).
    headers: Mapped[str | None] = mapped_column(Text)
    commit_hash: Mapped[str | None] = mapped_column(HASH)
    expires_us: Mapped[int] = mapped_column(BigInteger, index=True)


IDEMPOTENCY = _table(IdempotencyRow)


# -- the change feed (store.events) ------------------------------------------------------
class EventRow(Base):
    """One event per landed change (a commit, merge or transplant, a
    reference created, assigned or deleted), written in the change's own
    transaction: the outbox the feed and the webhooks read. ``id`` is the
    order of insertion; ``seq`` the order of delivery and the public id —
    set at insert on SQLite (one writer at a time), and on PostgreSQL by the
    sequencer once no transaction that could still insert an earlier event
    is running (``txid`` below the oldest running transaction)."""

    __tablename__ = "events"
    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    seq: Mapped[int | None] = mapped_column(BigInteger, unique=True)
    txid: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(32))
    ref: Mapped[str] = mapped_column(REF_NAME)
    ref_type: Mapped[str] = mapped_column(String(6))
    old_hash: Mapped[str | None] = mapped_column(HASH)
    new_hash: Mapped[str | None] = mapped_column(HASH)
    at_us: Mapped[int] = mapped_column(BigInteger, index=True)
    principal: Mapped[str | None] = mapped_column(Text)
    # The commits it brought, with their operations (JSON; store.events).
    data: Mapped[str] = mapped_column(Text)

    __table_args__ = (Index("ix_events_unsequenced", "txid", "id",
                            postgresql_where=text("seq IS NULL"),
                            sqlite_where=text("seq IS NULL")),)


EVENTS = _table(EventRow)


class RetentionRow(Base):
    """Retention policies (core.retention), in the order they are matched."""

    __tablename__ = "retention_policies"
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    refs: Mapped[str] = mapped_column(REF_NAME)
    keep: Mapped[str | None] = mapped_column(String(64))  # ISO-8601, as given
    keep_commits: Mapped[int | None] = mapped_column(Integer)


class WebhookRow(Base):
    """A webhook (catalog.feed.webhooks): where the feed's events go, which ones,
    as whom, and how far delivery got. ``lease_*``: the process delivering
    it now (one at a time, whatever the number of replicas)."""

    __tablename__ = "webhooks"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    url: Mapped[str] = mapped_column(Text)
    types: Mapped[str] = mapped_column(Text)  # JSON lists
    refs: Mapped[str] = mapped_column(Text)
    keys: Mapped[str] = mapped_column(Text)
    secret: Mapped[str] = mapped_column(Text)
    owner: Mapped[str | None] = mapped_column(Text)
    created_us: Mapped[int] = mapped_column(BigInteger)
    state: Mapped[str] = mapped_column(String(8))  # active | paused
    cursor: Mapped[int] = mapped_column(BigInteger)  # the last event delivered
    delivered: Mapped[int] = mapped_column(BigInteger)
    failures: Mapped[int] = mapped_column(Integer)  # in a row
    last_error: Mapped[str | None] = mapped_column(Text)
    last_attempt_us: Mapped[int | None] = mapped_column(BigInteger)
    next_attempt_us: Mapped[int] = mapped_column(BigInteger)
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_until_us: Mapped[int] = mapped_column(BigInteger)


WEBHOOKS = _table(WebhookRow)
RETENTION = _table(RetentionRow)


# -- what an import brought (store.imports, migration 0013) ---------------------------
class ImportedCommitRow(Base):
    """A commit an import made: the source's hash of it (a Nessie commit's)
    and this catalog's. Written in the transaction of the commit it maps;
    read by the next import, which continues from there."""

    __tablename__ = "imported_commits"
    source_hash: Mapped[str] = mapped_column(String(128), primary_key=True)
    hash: Mapped[str] = mapped_column(HASH)

    __table_args__ = (Index("ix_imported_commits_hash", "hash"),)


IMPORTED_COMMITS = _table(ImportedCommitRow)
