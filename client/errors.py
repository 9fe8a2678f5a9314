"""The client's errors: one class per kind of refusal, each carrying the
HTTP status and the server's own message (with a refused merge's conflicting
keys after it), so that a script can catch what it can act on."""

from __future__ import annotations

from typing import Any

import httpx


class ApiError(Exception):
    """The catalog refused a request. ``message``: the server's words;
    ``code``: its ``errorCode`` (Nessie's), if any; ``conflicts``: a refused
    merge's, transplant's or commit's conflicting keys, dotted."""

    def __init__(self, status: int, message: str, code: str | None = None,
                 conflicts: list[str] | None = None, body: dict[str, Any] | None = None,
                 ) -> None:
        super().__init__(f"{message} (HTTP {status})")
        self.status = status
        self.message = message
        self.code = code
        self.conflicts = conflicts or []
        self.body = body or {}


class BadRequest(ApiError):
    """400: the request names something wrong (the message says what)."""


class Unauthorized(ApiError):
    """401: no credential, or one the catalog does not take."""


class Forbidden(ApiError):
    """403: the caller lacks a privilege the request needs."""


class NotFound(ApiError):
    """404: a reference, commit or key not there (or not readable by the caller)."""


class Conflict(ApiError):
    """409: the target moved, a reference exists, or keys conflict (``conflicts``)."""


class Unreachable(ApiError):
    """No answer: the catalog could not be reached (status 0)."""

    def __init__(self, uri: str, why: str) -> None:
        super().__init__(0, f"cannot reach the catalog at {uri}: {why}")
        self.why = why


_BY_STATUS: dict[int, type[ApiError]] = {400: BadRequest, 401: Unauthorized, 403: Forbidden,
                                         404: NotFound, 409: Conflict}


def body_of(r: httpx.Response) -> dict[str, Any]:
    """A refusal's JSON body, or {} when it has none."""
    try:
        body = r.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def conflicts_of(body: dict[str, Any]) -> list[str]:
    """The conflicting keys of a refusal's ``errorDetails``, dotted."""
    return [_dotted(c.get("key")) for c in
            (body.get("errorDetails") or {}).get("conflicts") or []]


def message_of(r: httpx.Response, body: dict[str, Any]) -> str:
    """The API's message as it is: the versioning API's ``message``, the
    Iceberg REST API's ``error.message``, else the body's first characters;
    a refused commit's conflicts after it."""
    error = body.get("error")
    msg = (body.get("message") or (error.get("message") if isinstance(error, dict) else None)
           or r.text[:200] or f"HTTP {r.status_code}")
    conflicts = (body.get("errorDetails") or {}).get("conflicts") or []
    if conflicts:
        msg += " [" + ", ".join(f"{_dotted(c.get('key'))}: {c.get('conflictType')}"
                                for c in conflicts) + "]"
    return str(msg)


def refusal(r: httpx.Response) -> ApiError:
    """The typed error for a refused response."""
    body = body_of(r)
    kind = _BY_STATUS.get(r.status_code, ApiError)
    return kind(r.status_code, message_of(r, body), body.get("errorCode"),
                conflicts_of(body), body)


def _dotted(key: Any) -> str:
    return ".".join(key["elements"]) if isinstance(key, dict) else str(key)
