"""Conflict types, shared by commits, merges and transplants (Nessie's names)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from core.errors import ConflictError
from core.keys import ContentKey


class ConflictType(StrEnum):
    KEY_EXISTS = "KEY_EXISTS"
    KEY_DOES_NOT_EXIST = "KEY_DOES_NOT_EXIST"
    PAYLOAD_DIFFERS = "PAYLOAD_DIFFERS"
    CONTENT_ID_DIFFERS = "CONTENT_ID_DIFFERS"
    VALUE_DIFFERS = "VALUE_DIFFERS"
    NAMESPACE_ABSENT = "NAMESPACE_ABSENT"
    NAMESPACE_NOT_EMPTY = "NAMESPACE_NOT_EMPTY"
    UNEXPECTED_HASH = "UNEXPECTED_HASH"


@dataclass(frozen=True, slots=True)
class Conflict:
    type: ConflictType
    key: ContentKey | None
    message: str
    # The same request may succeed if sent again: the conflict came from
    # the target moving while the request was worked out, not from the
    # contents (a content merge abandoned after its attempts, say).
    retryable: bool = False

    def __str__(self) -> str:
        return f"{self.type}: {self.message}"


class CommitConflictError(ConflictError):
    """A commit was refused; `conflicts` lists every key that caused it."""

    def __init__(self, conflicts: Sequence[Conflict], message: str | None = None) -> None:
        self.conflicts = list(conflicts)
        super().__init__(message or conflict_summary(self.conflicts))

    @property
    def retryable(self) -> bool:
        """Whether the same request may succeed if sent again: every conflict
        came from the target moving, none from the contents."""
        return bool(self.conflicts) and all(c.retryable for c in self.conflicts)


def conflict_summary(conflicts: Sequence[Conflict], what: str = "commit") -> str:
    if not conflicts:
        return f"{what} refused"
    shown = "; ".join(str(c) for c in conflicts[:5])
    more = f" (and {len(conflicts) - 5} more)" if len(conflicts) > 5 else ""
    return f"{what} conflicts on {len(conflicts)} key(s): {shown}{more}"
