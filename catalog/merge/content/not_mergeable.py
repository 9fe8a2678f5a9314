"""Why a content merge cannot combine two sides' changes of one table or
view: the conflict's reason."""

from __future__ import annotations

from typing import Any


class NotMergeable(Exception):
    """Why the two sides cannot be combined (the conflict's reason, one
    line), and what was found, for the merge's details."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details
