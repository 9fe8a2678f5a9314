"""The domain's failures, in one vocabulary that every layer raises and only
the HTTP layer translates (api/errors.py: the Iceberg and the Nessie error
bodies). Every message names the offending input, because it is shown
verbatim to clients. A class says what went wrong; nothing above decides by
reading a message's text.

    bad request (400)   BadRequestError, and InvalidInputError below it
    not found (404)     NotFoundError: the namespace, table, view, reference,
                        commit, content or file
    already exists (409) AlreadyExistsError
    conflict (409)      ConflictError (core.conflicts.CommitConflictError
                        carries the keys and their reasons)
    forbidden (403)     ForbiddenError
    gone (410)          HistoryExpiredError: past every reference's retention
    unavailable (503)   UnavailableError: try again later

The catalog database failing under a request is not a failure of the
request: ``DatabaseFailure`` is no SapwoodError, so no code that weighs a
request's failures (``except SapwoodError``) takes it for one, and it passes
up to the HTTP layer whole:

    unavailable (503)   DatabaseUnavailableError: try again later
    a bug (500)         DatabaseError: refused what the store did not expect

The store turns its driver's failures into these (store.faults): nothing
of SQLAlchemy, sqlite3 or psycopg is raised above store/.
"""

from __future__ import annotations

from typing import Any


class SapwoodError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# -- bad input (400) ---------------------------------------------------------
class BadRequestError(SapwoodError, ValueError):
    """The request cannot be carried out as sent; nothing was changed."""


class UnprocessableError(BadRequestError):
    """Well-formed but contradicting itself (the spec's 422: a property both
    set and removed)."""


class InvalidInputError(BadRequestError):
    """An argument is malformed; nothing was looked up or changed."""


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


class NoSuchNamespaceError(NotFoundError):
    pass


class NoSuchTableError(NotFoundError):
    pass


class NoSuchViewError(NotFoundError):
    pass


class ReferenceNotFoundError(NotFoundError):
    pass


class NoSuchRefAtInstantError(ReferenceNotFoundError):
    pass


class CommitNotFoundError(NotFoundError):
    pass


class ContentNotFoundError(NotFoundError):
    pass


class FileNotFoundInWarehouseError(NotFoundError):
    """A metadata file a request names is not there."""


# -- already there (409) -----------------------------------------------------
class AlreadyExistsError(SapwoodError):
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


class NamespaceNotEmptyError(ConflictError):
    pass


class RequirementFailedError(ConflictError):
    """A commit's stated requirement (e.g. the view's UUID) does not hold, or
    the change cannot be made against what the branch holds now."""


class RetryLimitError(ConflictError):
    """The branch moved under us more often than the retry budget allows."""


# -- gone (410) --------------------------------------------------------------
class HistoryExpiredError(SapwoodError):
    """A read at a commit no reference retains any more (core.retention):
    its files may be gone, so nothing is answered from it."""


# -- refused (403) -----------------------------------------------------------
class ForbiddenError(SapwoodError):
    pass


# -- not now (503) -----------------------------------------------------------
class UnavailableError(SapwoodError):
    """Something the request needs does not answer (storage, a timeout):
    the same request may succeed later."""

    def __init__(self, message: str, retry_after_s: int = 5) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class IncompatibleStoreError(SapwoodError):
    """The database holds data in a storage format this version cannot read."""


# -- the catalog database failing (503, 500) ---------------------------------------
class DatabaseFailure(Exception):
    """The catalog database failed under a request. ``message`` is what a
    client is told (nothing of the database: no host, no statement);
    ``cause`` names the driver's error class, for the server's log."""

    def __init__(self, message: str, cause: str) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause


class DatabaseUnavailableError(DatabaseFailure):
    """The database does not answer (stopped, restarting, the network gone,
    SQLite locked past its busy timeout, a transaction PostgreSQL could not
    serialize): the same request may succeed later."""

    MESSAGE = "the catalog database is unavailable; retry later"

    def __init__(self, cause: str, retry_after_s: int = 5) -> None:
        super().__init__(self.MESSAGE, cause)
        self.retry_after_s = retry_after_s


class DatabaseError(DatabaseFailure):
    """The database refused a statement the store did not expect it to
    refuse (a constraint it does not check first, a malformed statement):
    a bug. Told by the driver's error class alone; its text (which may quote
    the statement and its values) stays with the cause, in the log."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause, cause)


# -- the messages clients rely on (the REST spec's shapes) -------------------------
def bad_request(message: str) -> BadRequestError:
    return BadRequestError(message)


def no_such_namespace(name: str) -> NoSuchNamespaceError:
    return NoSuchNamespaceError(f"Namespace does not exist: {name}")


def no_such_table(name: str) -> NoSuchTableError:
    return NoSuchTableError(f"Table does not exist: {name}")


def no_such_view(name: str) -> NoSuchViewError:
    return NoSuchViewError(f"View does not exist: {name}")


def already_exists(message: str) -> AlreadyExistsError:
    return AlreadyExistsError(message)


def commit_failed(message: str) -> RequirementFailedError:
    return RequirementFailedError(message)


def describe_validation(errors: Any) -> str:
    parts = []
    for err in list(errors)[:3]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        parts.append(f"{loc or 'body'}: {err.get('msg')}")
    return "Invalid request: " + "; ".join(parts)
