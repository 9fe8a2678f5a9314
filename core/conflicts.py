"""Conflict types, shared by commits, merges and transplants (Nessie's names)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
