"""Iceberg's error body (and Nessie's, under /api/), and the one place that
turns any failure into it.

Every error answers ``{"error": {"message", "type", "code"}}``. Clients rely on
the ``type`` of a 404 (Spark reads any 404 that is not NoSuchNamespaceException
as "no such table/view") and on a commit never answering 5xx unless the
server itself failed, so the mapping below is part of the protocol.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.exceptions import ValidationError as IcebergValidationError
from starlette.exceptions import HTTPException

from api.asgi import Scope
from api.auth.errors import OAuthError, Unauthorized
from api.v2 import nessie as nessie_client
from core.commits import MergeConflictError
from core.conflicts import CommitConflictError, Conflict
from core.errors import (
    AlreadyExistsError,
    BadRequestError,
    CommitNotFoundError,
    ConflictError,
    DatabaseFailure,
    DatabaseUnavailableError,
    ForbiddenError,
    HistoryExpiredError,
    InvalidInputError,
    InvalidRefError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    NotFoundError,
    ReadOnlyReferenceError,
    ReferenceAlreadyExistsError,
    ReferenceConflictError,
    ReferenceNotFoundError,
    SapwoodError,
    UnavailableError,
    UnprocessableError,
    describe_validation,
)

log = logging.getLogger("sapwood.api")

# Domain errors (core.errors) as the REST spec names them: status and the
# Iceberg exception type, the most specific class first. Nessie's error code
# under /api/ follows from the type (_NESSIE_CODES).
_MAPPING: tuple[tuple[type[SapwoodError], int, str], ...] = (
    (NoSuchNamespaceError, 404, "NoSuchNamespaceException"),
    (NoSuchTableError, 404, "NoSuchTableException"),
    (NoSuchViewError, 404, "NoSuchViewException"),
    (ReferenceNotFoundError, 404, "NoSuchReferenceException"),
    (NotFoundError, 404, "NotFoundException"),
    (UnprocessableError, 422, "UnprocessableEntityException"),
    (InvalidRefError, 400, "BadRequestException"),
    (ReadOnlyReferenceError, 400, "BadRequestException"),
    (InvalidInputError, 400, "IllegalArgumentException"),
    (BadRequestError, 400, "BadRequestException"),
    (AlreadyExistsError, 409, "AlreadyExistsException"),
    (ReferenceAlreadyExistsError, 409, "ReferenceAlreadyExistsException"),
    (NamespaceNotEmptyError, 409, "NamespaceNotEmptyException"),
    (ConflictError, 409, "CommitFailedException"),
    (ForbiddenError, 403, "ForbiddenException"),
    (HistoryExpiredError, 410, "HistoryExpiredException"),
    (UnavailableError, 503, "ServiceUnavailableException"),
)


def status_of(kind: type[SapwoodError]) -> tuple[int, str]:
    """(status, Iceberg exception type) of a domain error class."""
    hit = _STATUS.get(kind)
    if hit is None:
        hit = next(((code, name) for cls, code, name in _MAPPING if issubclass(kind, cls)),
                   (500, "InternalServerError"))
        _STATUS[kind] = hit
    return hit


_STATUS: dict[type[SapwoodError], tuple[int, str]] = {}


def error_details(err: SapwoodError) -> dict[str, Any]:
    """Structured extras for an error body (conflict lists, hashes)."""
    out: dict[str, Any] = {}
    if isinstance(err, CommitConflictError):
        # A refused merge's conflicts carry what a content merge found too
        # (a view's SQL per dialect and its diffs), as its answer does.
        found = {d.key: d.conflict_details for d in err.result.details
                 if d.conflict_details is not None} \
            if isinstance(err, MergeConflictError) else {}
        out["conflicts"] = [
            {"conflictType": str(c.type), "key": str(c.key) if c.key else None,
             "message": c.message, "retryable": c.retryable,
             **({"conflictDetails": found[c.key]} if c.key in found else {})}
            for c in err.conflicts
        ]
        # Whether sending the same request again may succeed: every conflict
        # came from the target moving, none from the contents.
        out["retryable"] = err.retryable
    if isinstance(err, ReferenceConflictError):
        out["expectedHash"] = err.expected
        out["actualHash"] = err.actual
    return out


def body(code: int, type_: str, message: str, **extra: Any) -> dict[str, Any]:
    err: dict[str, Any] = {"message": message, "type": type_, "code": code}
    err.update(extra)
    return {"error": err}


def nessie_body(code: int, error_code: str, message: str, details: dict[str, Any],
                ) -> dict[str, Any]:
    """Nessie's error shape, for the versioning API under /api/v2."""
    return {"status": code, "reason": HTTPStatus(code).phrase, "message": message,
            "errorCode": error_code, "errorDetails": details or None}


# Nessie's error codes, by the Iceberg exception type the same failure maps to.
_NESSIE_CODES = {
    "NoSuchReferenceException": "REFERENCE_NOT_FOUND",
    "NoSuchViewException": "CONTENT_NOT_FOUND",
    "NoSuchTableException": "CONTENT_NOT_FOUND",
    "NoSuchNamespaceException": "NAMESPACE_NOT_FOUND",
    "NotFoundException": "CONTENT_NOT_FOUND",
    "ReferenceAlreadyExistsException": "REFERENCE_ALREADY_EXISTS",
    "CommitFailedException": "REFERENCE_CONFLICT",
    "InternalServerError": "UNKNOWN",
    "NotAuthorizedException": "UNAUTHORIZED",
    "ForbiddenException": "FORBIDDEN",
    "HistoryExpiredException": "HISTORY_EXPIRED",
    "NoSuchEndpointException": "UNKNOWN",
}


def _respond(code: int, type_: str, message: str, request: Request | None = None,
             raised: Sequence[Conflict] = (), **extra: Any) -> JSONResponse:
    if request is not None and request.scope["path"].startswith("/api/"):
        nessie = _NESSIE_CODES.get(type_) or {404: "CONTENT_NOT_FOUND",
                                               409: "REFERENCE_CONFLICT"}.get(
            code, "BAD_REQUEST" if code < 500 else "UNKNOWN")
        if nessie_client.strict(request):
            # Nessie's Java client fails on details it cannot read (api.v2.nessie).
            payload = nessie_body(code, nessie, message, {})
            payload["errorDetails"] = nessie_client.error_details(raised)
            return JSONResponse(payload, status_code=code)
        return JSONResponse(nessie_body(code, nessie, message, extra), status_code=code)
    payload = body(code, type_, message, **extra)
    if request is not None and (code in (404, 409) or code >= 500) and \
            "/views" in request.scope["path"]:
        # The spec documents these view answers as a bare ErrorModel while every
        # client reads the wrapped form: send both (ErrorModel allows extra keys).
        payload.update(payload["error"])
    return JSONResponse(payload, status_code=code)


def error_response(code: int, type_: str, message: str, scope: Scope,
                   ) -> JSONResponse:
    """The error answer for a request the middlewares refuse before routing."""
    return _respond(code, type_, message, Request(scope))


def _from_database(e: DatabaseFailure, r: Request) -> JSONResponse:
    """The catalog database failed (the store says how: store.faults). Not
    answering: a client should retry, and learns nothing about the database
    from the answer. Anything else it refused: a bug, named by the driver's
    error class alone."""
    if isinstance(e, DatabaseUnavailableError):
        # One line, no traceback and no "internal error": the fault is
        # outside this process, and its text may name hosts and credentials.
        log.warning("catalog database unavailable: %s", e.cause)
        resp = _respond(503, "ServiceUnavailableException", e.message, r)
        resp.headers["Retry-After"] = str(e.retry_after_s)
        return resp
    log.error("internal error", exc_info=e)  # the cause, with its text, in the log only
    return _respond(500, "InternalServerError", e.message, r)


def _from_domain(e: SapwoodError, r: Request) -> JSONResponse:
    code, kind = status_of(type(e))
    if code == 500:
        log.error("unmapped domain error %s: %s", type(e).__name__, e.message)
        return _respond(500, "InternalServerError", e.message, r)
    if isinstance(e, CommitNotFoundError) and nessie_client.strict(r):
        # Nessie answers a commit it does not have as a missing reference
        # (its client raises NessieReferenceNotFoundException).
        kind = "NoSuchReferenceException"
    resp = _respond(code, kind, e.message, r,
                    e.conflicts if isinstance(e, CommitConflictError) else (),
                    **error_details(e))
    if isinstance(e, UnavailableError):
        resp.headers["Retry-After"] = str(e.retry_after_s)
    return resp


def install(app: FastAPI) -> None:
    @app.exception_handler(Unauthorized)
    async def _unauthorized(r: Request, e: Unauthorized) -> JSONResponse:
        resp = _respond(401, "NotAuthorizedException", e.message, r)
        resp.headers["WWW-Authenticate"] = 'Bearer realm="sapwood"'
        return resp

    @app.exception_handler(OAuthError)
    async def _oauth(_: Request, e: OAuthError) -> JSONResponse:
        # RFC 6749 §5.2: a bad client is 401, any other refusal 400.
        code = 401 if e.error == "invalid_client" else 400
        return JSONResponse({"error": e.error, "error_description": e.description},
                            status_code=code)

    @app.exception_handler(SapwoodError)
    async def _domain(r: Request, e: SapwoodError) -> JSONResponse:
        return _from_domain(e, r)

    @app.exception_handler(CommitFailedException)
    async def _requirement(r: Request, e: CommitFailedException) -> JSONResponse:
        return _respond(409, "CommitFailedException", str(e), r)

    @app.exception_handler(RequestValidationError)
    async def _request(r: Request, e: RequestValidationError) -> JSONResponse:
        return _respond(400, "BadRequestException", describe_validation(e.errors()), r)

    @app.exception_handler(ValidationError)
    async def _model(r: Request, e: ValidationError) -> JSONResponse:
        return _respond(400, "BadRequestException", describe_validation(e.errors()), r)

    @app.exception_handler(IcebergValidationError)
    async def _metadata(r: Request, e: IcebergValidationError) -> JSONResponse:
        # PyIceberg wraps pydantic's error, whose text quotes the input.
        cause = e.args[0] if e.args else None
        message = describe_validation(cause.errors(include_input=False)) \
            if isinstance(cause, ValidationError) else str(e)
        return _respond(400, "ValidationException", message, r)

    @app.exception_handler(HTTPException)
    async def _http(r: Request, e: HTTPException) -> JSONResponse:
        kind = {404: "NotFoundException", 405: "MethodNotAllowedException",
                413: "RequestEntityTooLargeException"}.get(e.status_code, "BadRequestException")
        if e.status_code == 404 and e.detail == "Not Found" and \
                r.scope["path"].startswith("/api/"):
            # No route matched: not a missing content (Nessie's client would
            # raise NessieContentNotFoundException for CONTENT_NOT_FOUND).
            return _respond(404, "NoSuchEndpointException",
                            f"No endpoint {r.method} {r.scope['path']} "
                            "(docs/nessie-compatibility.md lists Nessie's)", r)
        return _respond(e.status_code, kind, str(e.detail), r)

    @app.exception_handler(ValueError)
    async def _value(r: Request, e: ValueError) -> JSONResponse:
        # PyIceberg's metadata logic reports invalid updates as ValueError.
        return _respond(400, "IllegalArgumentException", str(e), r)

    @app.exception_handler(DatabaseFailure)
    async def _database(r: Request, e: DatabaseFailure) -> JSONResponse:
        return _from_database(e, r)

    @app.exception_handler(Exception)
    async def _bug(r: Request, e: Exception) -> JSONResponse:
        if isinstance(e, DatabaseFailure):  # raised outside a route (a middleware)
            return _from_database(e, r)
        log.exception("internal error")
        return _respond(500, "InternalServerError", f"{type(e).__name__}: {e}", r)


async def answer_for(request: Request, e: Exception) -> Response:
    """The answer the application's handlers give for ``e`` (for a layer
    that must see the final answer of a route that raised)."""
    handlers = request.app.exception_handlers
    for kind in type(e).__mro__:
        handler = handlers.get(kind)
        if handler is not None:
            found: Response = await handler(request, e)
            return found
    raise e
