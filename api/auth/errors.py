"""The refusals of authentication and authorization (api.errors turns them
into each API's error body)."""

from __future__ import annotations

from core.errors import ForbiddenError


class Unauthorized(Exception):
    """401: no credential, or one that cannot be trusted."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Forbidden(ForbiddenError):
    """403: a known caller without the privilege the request needs."""


class OAuthError(Exception):
    """An RFC 6749 §5.2 error answer of the token endpoint."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
