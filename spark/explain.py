"""What to tell the caller when Spark cannot read what a helper asked for.

A helper reads through a catalog it defines for itself (``read_view`` pins
one at ``ref*instant``, a materialized view's definition and refresh use one
of their own), so Spark's own errors name that catalog
(``sw__main_2026_11_27T17_58_28Z_1467edb1``) and Iceberg's REST client lets
a refused reference through as a raw ``RESTException``. Here they become
``spark.errors`` exceptions in the caller's words: the view, the reference
and the instant as given, and for a view that came later, when and by which
commit it was created."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from spark.client import Versioning
from spark.errors import CatalogError, NotFoundError, QueryError, not_found, spark_reason
from spark.session import ref_spec


def given(as_of: datetime | str | int) -> str:
    """The instant as the caller gave it (epoch ms with its ISO form beside)."""
    if isinstance(as_of, datetime):
        return as_of.isoformat()
    if isinstance(as_of, int):
        iso = datetime.fromtimestamp(as_of / 1000, UTC).isoformat(timespec="milliseconds")
        return f"{as_of} (epoch ms, {iso.replace('+00:00', 'Z')})"
    return as_of


def is_analysis(error: BaseException) -> bool:
    """Spark's AnalysisException (a name or a plan that does not resolve)."""
    try:
        from pyspark.errors import AnalysisException
    except ImportError:  # pragma: no cover - pyspark is there when Spark ran
        return False
    return isinstance(error, AnalysisException)


def view_read_error(client: Versioning, error: Exception, name: str, ref: str,
                    as_of: datetime | str | int | None, internal: str) -> Exception:
    """The error to raise for ``error``, which Spark raised reading view
    ``name`` on ``ref`` (at ``as_of``) through catalog ``internal``: the
    reference (at the instant) refused, the view not there then, a name in
    its SQL that does not resolve there; else ``error`` itself."""
    where = ref if as_of is None else f"{ref} at {given(as_of)}"
    spec = ref_spec(ref, as_of)
    try:
        client.head(spec)
    except CatalogError as refused:
        if refused.status == 404:
            return NotFoundError(f"cannot read view '{name}' on {where}: {refused.message}")
        return CatalogError(refused.status, f"cannot read view '{name}' on {where}: "
                                            f"{refused.message}")
    if not is_analysis(error):
        return error
    error_class, reason = spark_reason(error, internal)
    if error_class == "TABLE_OR_VIEW_NOT_FOUND" and _names(error, internal, name):
        return NotFoundError(_missing_view(client, name, ref, as_of, spec))
    if not_found(error_class):
        return NotFoundError(f"cannot read view '{name}' on {where}: {reason}")
    return QueryError(f"cannot read view '{name}' on {where}: {reason}", error_class)


def _names(error: Exception, internal: str, name: str) -> bool:
    """Whether Spark's missing relation is the view itself (not a table its SQL reads)."""
    params: dict[str, Any] = getattr(error, "getMessageParameters", dict)() or {}
    relation = str(params.get("relationName", ""))
    wanted = ".".join(f"`{p}`" for p in [internal, *name.split(".")])
    return relation.replace("``", "`") == wanted


def _missing_view(client: Versioning, name: str, ref: str,
                  as_of: datetime | str | int | None, spec: str) -> str:
    if as_of is None:
        return f"view '{name}' does not exist on {ref}"
    instant = spec.rsplit("*", 1)[1]
    try:
        created = client.first_change_since(name, ref, instant)
    except CatalogError:
        created = None
    said = f"view '{name}' did not exist on {ref} at {given(as_of)}"
    if created is None:
        return f"{said}, and has not been created on {ref} since"
    return (f"{said}: it was created at {created['commitTime']} by commit "
            f"{created['hash'][:12]} ({created['message']})")


def history_error(client: Versioning, error: CatalogError, name: str, ref: str) -> Exception:
    """For view ``name``'s audit refused at ``ref``: a view missing at
    ``branch*instant`` that was created since says when (NotFoundError);
    anything else as the server said it."""
    if error.status != 404 or "*" not in ref:
        return error
    base, instant = ref.rsplit("*", 1)
    try:
        client.head(ref)
    except CatalogError as refused:
        return NotFoundError(f"no audit of view '{name}' on {ref}: {refused.message}")
    return NotFoundError(_missing_view(client, name, base, instant, ref))


def query_error(error: Exception, internal: str, what: str) -> Exception:
    """``error`` (Spark's, analysing SQL through catalog ``internal``) as a
    NotFoundError or QueryError that starts with ``what`` and names no
    internal catalog; anything else than an analysis error as it is."""
    if not is_analysis(error):
        return error
    error_class, reason = spark_reason(error, internal)
    if not_found(error_class):
        return NotFoundError(f"{what}: {reason}")
    return QueryError(f"{what}: {reason}", error_class)
