"""Typed domain errors. Every message names the offending input, because it is
shown verbatim to API clients; the API layer maps classes to status codes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.conflicts import Conflict

if TYPE_CHECKING:
    from core.commits import MergeResult


class SapwoodError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# -- bad input (400) ---------------------------------------------------------
class InvalidInputError(SapwoodError, ValueError):
    """The request itself is malformed; nothing was looked up or changed."""


class InvalidKeyError(InvalidInputError):
    pass


class InvalidRefError(InvalidInputError):
    pass


class InvalidHashError(InvalidRefError):
    pass


class InvalidInstantError(InvalidRefError):
    pass


class AmbiguousHashError(InvalidRefError):
    pass


class InvalidExtensionError(InvalidInputError):
    pass


class InvalidContentError(InvalidInputError):
    pass


class InvalidOperationError(InvalidInputError):
    """A commit's operations contradict each other or the request."""


class ReadOnlyReferenceError(InvalidInputError):
    """A write addressed a tag, a detached hash or an instant."""


# -- missing things (404) ----------------------------------------------------
class NotFoundError(SapwoodError):
    pass


class ReferenceNotFoundError(NotFoundError):
    pass


class NoSuchRefAtInstantError(ReferenceNotFoundError):
    pass


class CommitNotFoundError(NotFoundError):
    pass


class ContentNotFoundError(NotFoundError):
    pass


# -- conflicts (409) ---------------------------------------------------------
class ConflictError(SapwoodError):
    pass


class ReferenceAlreadyExistsError(ConflictError):
    pass


class ReferenceConflictError(ConflictError):
    """A ref's head is not the expected one (assign/delete compare-and-swap)."""

    def __init__(self, message: str, *, expected: str | None = None,
                 actual: str | None = None) -> None:
        super().__init__(message)
        self.expected = expected
        self.actual = actual


class ProtectedReferenceError(ConflictError):
    pass


class CommitConflictError(ConflictError):
    """A commit was refused; `conflicts` lists every key that caused it."""

    def __init__(self, conflicts: Sequence[Conflict], message: str | None = None) -> None:
        self.conflicts = list(conflicts)
        super().__init__(message or _conflict_summary(self.conflicts))


class MergeConflictError(CommitConflictError):
    def __init__(self, result: MergeResult) -> None:
        self.result = result
        super().__init__(result.conflicts, _conflict_summary(result.conflicts, "merge"))


class RequirementFailedError(ConflictError):
    """A commit's stated requirement (e.g. the view's UUID) does not hold."""


class RetryLimitError(ConflictError):
    """The branch moved under us more often than the retry budget allows."""


class IncompatibleStoreError(SapwoodError):
    """The database holds data in a storage format this version cannot read."""


def _conflict_summary(conflicts: Sequence[Conflict], what: str = "commit") -> str:
    if not conflicts:
        return f"{what} refused"
    shown = "; ".join(str(c) for c in conflicts[:5])
    more = f" (and {len(conflicts) - 5} more)" if len(conflicts) > 5 else ""
    return f"{what} conflicts on {len(conflicts)} key(s): {shown}{more}"


def error_details(err: SapwoodError) -> dict[str, Any]:
    """Structured extras for an error body (conflict lists, hashes)."""
    out: dict[str, Any] = {}
    if isinstance(err, CommitConflictError):
        out["conflicts"] = [
            {"conflictType": str(c.type), "key": str(c.key) if c.key else None,
             "message": c.message, "retryable": c.retryable}
            for c in err.conflicts
        ]
        # Whether sending the same request again may succeed: every conflict
        # came from the target moving, none from the contents.
        out["retryable"] = bool(err.conflicts) and all(c.retryable for c in err.conflicts)
    if isinstance(err, ReferenceConflictError):
        out["expectedHash"] = err.expected
        out["actualHash"] = err.actual
    return out
