"""Commits, references and their operations, as the store's callers see them.

These are plain immutable values: the store turns its rows into them, so no
database object escapes ``store/``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Generic, TypeVar

from core.conflicts import CommitConflictError, Conflict, conflict_summary
from core.content import Content, ContentType
from core.errors import InvalidInputError
from core.keys import ContentKey

# Nessie's well-known hash of the empty commit every new branch starts from.
NO_ANCESTOR = "2e1cfa82b035c26cbbbdae632cea070514eb8b773f616aaeaf668e2f0be8f10d"
DEFAULT_BRANCH = "main"


class RefType(StrEnum):
    BRANCH = "BRANCH"
    TAG = "TAG"


@dataclass(frozen=True, slots=True)
class Reference:
    name: str
    type: RefType
    hash: str


@dataclass(frozen=True, slots=True)
class ResolvedRef:
    """What a reference spec pointed at: a commit, and the named ref if any.

    ``writable`` is true only for a bare branch name: commits, merges and
    transplants may target nothing else.
    """

    hash: str
    name: str | None = None
    type: RefType | None = None
    writable: bool = False


@dataclass(frozen=True, slots=True)
class CommitMeta:
    message: str = ""
    author: str | None = None
    committer: str | None = None
    properties: dict[str, str] = field(default_factory=dict)


# Commit properties under this prefix are the catalog's own word: what a
# drop left invalid (sapwood.invalidated-views), where a restore or a revert
# came from (sapwood.restore.*, sapwood.revert.*). Only the server writes
# them; none is a client's to set (docs/security.md), so a client sending
# one, in any case of letters, is refused rather than believed.
SERVER_PROPERTY_PREFIX = "sapwood."


def check_client_properties(properties: Iterable[str], where: str = "properties") -> None:
    """Refuse (400 naming it) the first property name a client may not
    write: one under the server's ``sapwood.`` prefix."""
    for name in properties:
        if name.casefold().startswith(SERVER_PROPERTY_PREFIX):
            raise InvalidInputError(
                f"commit property {name[:80]!r} in {where} is the catalog's own: names that "
                f"start with {SERVER_PROPERTY_PREFIX!r} are written by the server only")


# -- operations a caller sends -------------------------------------------------
@dataclass(frozen=True, slots=True)
class Put:
    """Create (content has no id) or update (content has the existing id, and
    ``expected`` is the value the caller read) the value at ``key``."""

    key: ContentKey
    content: Content
    expected: Content | None = None
    # Brings back, at an absent key, content this branch had before under
    # its old id (a restore or revert of a drop); the caller vouches for the
    # id, which came from the branch's own history.
    revive: bool = False


@dataclass(frozen=True, slots=True)
class Delete:
    key: ContentKey
    expected: Content | None = None


@dataclass(frozen=True, slots=True)
class Unchanged:
    """Asserts the key did not change since the commit's expected hash."""

    key: ContentKey


Operation = Put | Delete | Unchanged


# -- what the store keeps and returns -----------------------------------------
class IndexEntry:
    """What a key maps to in a commit's key index.

    ``loc`` says where the value is stored (the commit whose pack holds it;
    None while it is being written). It is not part of the entry's identity:
    the same value stored twice is the same value.
    """

    __slots__ = ("_identity", "content_id", "loc", "type", "value_hash")

    def __init__(self, type: ContentType, content_id: str, value_hash: str,
                 loc: str | None = None, identity: str | None = None) -> None:
        self.type = type
        self.content_id = content_id
        self.value_hash = value_hash
        self.loc = loc
        self._identity = identity

    @property
    def identity(self) -> str:
        """Canonical text of type, id and value hash (what equality compares)."""
        if self._identity is None:
            self._identity = f"{self.type.code}{self.content_id}:{self.value_hash}"
        return self._identity

    @classmethod
    def from_identity(cls, identity: str, loc: str | None) -> IndexEntry:
        content_id, value_hash = identity[1:].split(":")
        return cls(ContentType.from_code(identity[0]), content_id, value_hash, loc, identity)

    def with_loc(self, loc: str) -> IndexEntry:
        return IndexEntry(self.type, self.content_id, self.value_hash, loc, self._identity)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, IndexEntry) and self.value_hash == other.value_hash
                and self.content_id == other.content_id and self.type == other.type)

    def __hash__(self) -> int:
        return hash(self.value_hash)

    def __repr__(self) -> str:
        return f"IndexEntry({self.type}, {self.content_id}, {self.value_hash[:12]})"


class OpKind(StrEnum):
    PUT = "PUT"
    DELETE = "DELETE"


@dataclass(frozen=True, slots=True)
class CommitOperation:
    kind: OpKind
    key: ContentKey
    entry: IndexEntry | None = None  # the new value of a PUT


@dataclass(frozen=True, slots=True)
class Commit:
    hash: str
    parents: tuple[str, ...]
    message: str
    author: str | None
    committer: str | None
    created_at: datetime
    properties: dict[str, str]
    operations: tuple[CommitOperation, ...]

    @property
    def parent(self) -> str | None:
        return self.parents[0] if self.parents else None


@dataclass(frozen=True, slots=True)
class CommitResult:
    hash: str
    parent: str
    created_at: datetime
    # Content ids the store assigned to new values, by key.
    assigned_ids: dict[ContentKey, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Entry:
    key: ContentKey
    type: ContentType
    content_id: str
    content: Content | None = None


@dataclass(frozen=True, slots=True)
class DiffEntry:
    key: ContentKey
    before: Content | None
    after: Content | None


@dataclass(frozen=True, slots=True)
class ReflogEntry:
    ref: str
    ref_type: RefType
    old_hash: str | None
    new_hash: str | None
    at: datetime
    principal: str | None
    reason: str


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    next_token: str | None = None


# -- merges and transplants ----------------------------------------------------
class MergeBehavior(StrEnum):
    NORMAL = "NORMAL"  # apply; a conflict fails the merge
    FORCE = "FORCE"    # apply the source's change even over a conflict
    DROP = "DROP"      # keep the target's value, ignore the source's change


class KeyOutcome(StrEnum):
    APPLIED = "APPLIED"      # the source's change was applied
    FORCED = "FORCED"        # applied over a conflict (FORCE)
    DROPPED = "DROPPED"      # the source's change was left out (DROP)
    UNCHANGED = "UNCHANGED"  # both sides made the same change already
    MERGED = "MERGED"        # both sides' changes combined into a new value
    CONFLICT = "CONFLICT"    # refused; fails the merge


@dataclass(frozen=True, slots=True)
class KeyMergeDetail:
    key: ContentKey
    behavior: MergeBehavior
    outcome: KeyOutcome
    conflict: Conflict | None = None
    # For MERGED: what was taken from each side (files, rows, properties …).
    combined: dict[str, Any] | None = None
    # For a CONFLICT a content merge looked into: what it found (both sides'
    # SQL and their diff, say), beside the one-line message.
    conflict_details: dict[str, Any] | None = None


# Works out a value that combines both sides' changes of a key during a
# transplant (key, base, source, target values): the value and what was
# combined, or why it cannot be (None: no opinion).
Combiner = Callable[[ContentKey, Content, Content, Content],
                    "tuple[Content, dict[str, Any]] | str | None"]


@dataclass(frozen=True, slots=True)
class Resolution:
    """A value that combines both sides' changes of a key changed on both
    (a content-aware merge, worked out above the store): valid only while
    the target still holds ``expected``."""

    expected: Content
    content: Content
    combined: dict[str, Any]


@dataclass(frozen=True, slots=True)
class MergeResult:
    target_branch: str
    source_hash: str
    expected_target_hash: str
    common_ancestor: str | None
    details: list[KeyMergeDetail]
    dry_run: bool
    # Hash of the new head (None when nothing was written).
    result_hash: str | None = None
    created_commits: list[str] = field(default_factory=list)

    @property
    def conflicts(self) -> list[Conflict]:
        return [d.conflict for d in self.details
                if d.outcome is KeyOutcome.CONFLICT and d.conflict is not None]

    @property
    def applied(self) -> bool:
        return self.result_hash is not None


class MergeConflictError(CommitConflictError):
    """A merge or transplant was refused; ``result`` has every key's outcome."""

    def __init__(self, result: MergeResult) -> None:
        self.result = result
        super().__init__(result.conflicts, conflict_summary(result.conflicts, "merge"))
