"""Errors of the Spark side, each saying what to do about it, in the words
the caller used: the view, the reference and the instant as given, never a
catalog a helper defined for itself (``sw__main_…``, ``sapwood_define_…``)."""

from __future__ import annotations

import re

from client.errors import ApiError


class SetupError(Exception):
    """Spark cannot be started here; the message names what to install or set."""


# The catalog answered a versioning request with an error: the shared
# client's (its status, the server's message, the conflicting keys).
CatalogError = ApiError


class NotFoundError(CatalogError):
    """A view, table, namespace or reference is not there on the reference
    (at the instant) asked for; for a view that came later, the message says
    when it was created."""

    def __init__(self, message: str) -> None:
        super().__init__(404, message)
        self.args = (message,)  # said as it is, without "(HTTP 404)"

    def __str__(self) -> str:
        return self.message


class QueryError(Exception):
    """Spark could not analyse SQL a helper ran for the caller (a materialized
    view's query, a view read on another reference): Spark's reason and its
    error class (``error_class``), naming the reference it was read on."""

    def __init__(self, message: str, error_class: str | None = None) -> None:
        super().__init__(message)
        self.error_class = error_class


def spark_reason(error: Exception, internal: str) -> tuple[str | None, str]:
    """Spark's error class and the first line of its message with catalog
    ``internal`` (one a helper defined) left out of every name: the plan
    Spark appends after it names that catalog again, and says nothing more."""
    # getCondition on PySpark 4 (getErrorClass warns there), getErrorClass on 3.5.
    get_class = getattr(error, "getCondition", None) or getattr(error, "getErrorClass", None)
    error_class = get_class() if callable(get_class) else None
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return error_class, re.sub(rf"`?{re.escape(internal)}`?\.", "", first)


def not_found(error_class: str | None) -> bool:
    """Whether Spark's error class says a name does not resolve."""
    return error_class is not None and error_class.endswith("_NOT_FOUND")
