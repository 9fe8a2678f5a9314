"""What a reference or a commit that does not exist answers, spelt once.

The store raises these when it finds nothing; the API's guard raises the
very same for a reference or commit the caller may not read, so that the
two cannot be told apart (docs/security.md: hidden answers as missing).
"""

from __future__ import annotations

from core.errors import (
    AmbiguousHashError,
    CommitNotFoundError,
    NoSuchRefAtInstantError,
    NotFoundError,
    ReferenceNotFoundError,
)
from core.instants import format_instant, from_micros, to_micros
from core.refs import HASH_LENGTH, RefSpec


def no_such_reference(name: str) -> ReferenceNotFoundError:
    return ReferenceNotFoundError(f"reference '{name}' does not exist")


def no_such_ref_at(name: str, at_us: int, deleted: bool = False) -> NoSuchRefAtInstantError:
    when = format_instant(from_micros(at_us))
    why = "it had been deleted" if deleted else "it did not exist yet"
    return NoSuchRefAtInstantError(f"no such ref '{name}' at {when}: {why}")


def no_such_commit(hash_or_prefix: str) -> CommitNotFoundError:
    """A full hash, or a prefix of one, that names no commit."""
    if len(hash_or_prefix) == HASH_LENGTH:
        return CommitNotFoundError(f"commit {hash_or_prefix} does not exist")
    return CommitNotFoundError(f"no commit hash starts with {hash_or_prefix}")


def ambiguous_prefix(prefix: str) -> AmbiguousHashError:
    return AmbiguousHashError(f"hash prefix {prefix} matches more than one commit")


def missing_reference(spec: RefSpec) -> NotFoundError:
    """What resolving ``spec`` answers when its reference does not exist:
    ``name*T`` asks the reflog (which has never heard of it), anything
    else the references."""
    assert spec.name is not None
    at = spec.reflog_instant
    if at is not None:
        return no_such_ref_at(spec.name, to_micros(at))
    return no_such_reference(spec.name)
