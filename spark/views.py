"""Views and versioning from a SparkSession: read a view on a ref or as of an
instant, its audit as a DataFrame, and branch / merge / diff.

Spark reads a view itself, through the REST catalog: a view and the tables its
SQL names are read from one catalog, pinned to one ref (at one instant), so a
view as of T reads its base tables as of T too."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from client.errors import Conflict
from spark.client import Versioning
from spark.errors import CatalogError
from spark.explain import history_error, view_read_error
from spark.session import AUTHOR_HEADER, add_catalog, ref_spec, server_root

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

HISTORY_SCHEMA = ("version_id INT, current_from TIMESTAMP, current_until TIMESTAMP, "
                  "commit STRING, author STRING, message STRING, key STRING, "
                  "sql MAP<STRING, STRING>, restored_from STRING")


def quoted(name: str) -> str:
    """``a.b.c`` as Spark's ```a`.`b`.`c``` (names with dots need the REST form)."""
    return ".".join(f"`{p.replace('`', '``')}`" for p in name.split("."))


def session_catalog(spark: SparkSession, catalog: str | None = None) -> str:
    """``catalog``, or else the session's current catalog: the one ``session()``
    made the default, or the last ``USE`` (where unqualified names resolve)."""
    return catalog if catalog is not None else spark.catalog.currentCatalog()


def _catalog_uri(spark: SparkSession, catalog: str | None) -> str:
    name = session_catalog(spark, catalog)
    uri = spark.conf.get(f"spark.sql.catalog.{name}.uri", None)
    if not uri:
        if catalog is not None:
            raise ValueError(f"this SparkSession has no catalog {name!r}")
        raise ValueError(f"this SparkSession's current catalog {name!r} is not a Sapwood "
                         "catalog: name one with catalog=")
    return uri


def server_uri(target: SparkSession | str, catalog: str | None = None) -> str:
    """The catalog server's root URI, from a URI or from a session's catalog."""
    return server_root(target if isinstance(target, str) else _catalog_uri(target, catalog))


def catalog_credential(target: SparkSession | str, catalog: str | None = None,
                       credential: str | None = None) -> str | None:
    """``credential`` if given, else the one the session's catalog uses (None
    for a URI or a catalog without one): the helpers then act as that catalog's
    principal."""
    if credential is not None or isinstance(target, str):
        return credential
    name = session_catalog(target, catalog)
    return target.conf.get(f"spark.sql.catalog.{name}.credential", None) or None


def catalog_author(target: SparkSession | str, catalog: str | None = None,
                   author: str | None = None) -> str | None:
    """``author`` if given, else the one the session's catalog names its
    commits with (its ``header.Sapwood-Commit-Author``, which
    ``session(author=)`` sets): the helpers' writes are then the same job's
    as Spark's own (None for a URI or a catalog without one)."""
    if author is not None or isinstance(target, str):
        return author
    name = session_catalog(target, catalog)
    return target.conf.get(f"spark.sql.catalog.{name}.header.{AUTHOR_HEADER}", None) or None


def catalog_ref(spark: SparkSession, catalog: str | None = None) -> str:
    """The ref spec a session's catalog reads (``main``, ``etl``, ``main*…``)."""
    tail = _catalog_uri(spark, catalog).rstrip("/").split("/iceberg", 1)[1]
    return unquote(tail.lstrip("/")) or "main"


def pinned_catalog(spark: SparkSession, ref: str, as_of: datetime | str | int | None = None,
                   catalog: str | None = None) -> str:
    """A catalog of ``spark`` on ``ref`` (at ``as_of``), defined once per spec."""
    spec = ref_spec(ref, as_of)
    # Readable, and unique per spec ('a-b' and 'a_b' must not share a catalog).
    digest = hashlib.sha256(spec.encode()).hexdigest()[:8]
    name = f"{session_catalog(spark, catalog)}__{re.sub(r'[^A-Za-z0-9]', '_', spec)}_{digest}"
    if spark.conf.get(f"spark.sql.catalog.{name}", None) is None:
        add_catalog(spark, name, server_uri(spark, catalog), ref, as_of,
                    credential=catalog_credential(spark, catalog))
    return name


def read_view(spark: SparkSession, name: str, ref: str | None = None,
              as_of: datetime | str | int | None = None,
              catalog: str | None = None) -> DataFrame:
    """View ``name`` (``ns.v``) as a DataFrame: on the session's catalog, or on
    ``ref`` and/or as of ``as_of`` (a zoned datetime, ISO-8601 text or epoch ms).
    A view, reference or instant that is not there raises NotFoundError in
    the words given (a view created later says when); SQL Spark cannot
    analyse there raises QueryError."""
    if ref is None and as_of is None:
        return spark.table(f"`{session_catalog(spark, catalog)}`.{quoted(name)}")
    base = ref or catalog_ref(spark, catalog).split("*", 1)[0]
    pinned = pinned_catalog(spark, base, as_of, catalog)
    try:
        return spark.table(f"`{pinned}`.{quoted(name)}")
    except Exception as e:  # Spark's, naming the pinned catalog; or Iceberg's raw one
        raise view_read_error(versioning_client(spark, catalog, None), e, name, base, as_of,
                              pinned) from None


def view_history(spark: SparkSession, name: str, ref: str = "main",
                 catalog: str | None = None, credential: str | None = None) -> DataFrame:
    """The view's audit on ``ref``, oldest version first: when each version was
    current, the commit that brought it, its author, its SQL per dialect, and
    for a restored version where it came from. At ``ref*instant`` before
    the view was created, NotFoundError says when it was."""
    client = versioning_client(spark, catalog, credential)
    try:
        versions = client.view_history(name, ref)
    except CatalogError as e:
        raise history_error(client, e, name, ref) from None
    rows = [(v["versionId"], _time(v["currentFrom"]), _time(v["currentUntil"]),
             v["commit"]["hash"], v["commit"]["author"], v["commit"]["message"],
             ".".join(v["key"]["elements"]), dict(v["representations"]),
             _origin(v.get("restoredFrom")))
            for v in versions]
    return spark.createDataFrame(rows, HISTORY_SCHEMA)


def create_branch(target: SparkSession | str, name: str, from_ref: str = "main",
                  catalog: str | None = None, credential: str | None = None,
                  author: str | None = None) -> str:
    """Create branch ``name`` at ``from_ref``; returns its hash. (The author
    goes with the request, as with every helper; a reference's change
    records its principal, not an author.)"""
    return versioning_client(target, catalog, credential, author).create_branch(name,
                                                                               from_ref)


def merge(target: SparkSession | str, source: str, into: str = "main",
          message: str | None = None, catalog: str | None = None,
          credential: str | None = None, author: str | None = None,
          force: Sequence[str] = (), drop: Sequence[str] = ()) -> dict[str, Any]:
    """Merge ``source`` into ``into``, committed as ``author`` (default: the
    session's catalog's); ``force``: keys that take ``source``'s change,
    ``drop``: keys that keep ``into``'s (MERGE BRANCH's FORCE and DROP).
    Raises CatalogError (409) on a conflict, its message saying how to
    resolve each key, (403) without merge-into on ``into``."""
    try:
        return versioning_client(target, catalog, credential, author).merge(
            source, into, message=message, force=force, drop=drop).json
    except Conflict as e:
        if not e.conflicts:
            raise
        keys = [k for k in e.conflicts if k not in force and k not in drop]
        # The way out, as the CLI, the SQL extension and the UI give it.
        hint = (f"; resolve: take {source}'s change with merge(..., force={keys!r}), or "
                f"keep {into}'s value with merge(..., drop={keys!r})")
        raise Conflict(e.status, e.message + hint, e.code, e.conflicts, e.body) from None


def diff(target: SparkSession | str, from_ref: str, to_ref: str,
         catalog: str | None = None, credential: str | None = None) -> list[dict[str, Any]]:
    """Keys that differ from ``from_ref`` to ``to_ref``: ``{key, change, type}``."""
    return [asdict(d) for d in versioning_client(target, catalog, credential).diff(from_ref,
                                                                                   to_ref)]


def restore(target: SparkSession | str, keys: list[str], source: str, branch: str = "main",
            dry_run: bool = False, catalog: str | None = None,
            credential: str | None = None, author: str | None = None) -> dict[str, Any]:
    """Make ``keys`` on ``branch`` as they were at ``source`` (``ref``,
    ``ref@hash`` or ``ref*instant``; spark.session.ref_spec builds one from a
    datetime), in one new commit; a view gets a new version equal to the
    source's; committed as ``author`` (default: the session's catalog's).
    Returns the new hash and, per key, what came from where."""
    return versioning_client(target, catalog, credential, author).restore(
        keys, source, branch, dry_run=dry_run)


def revert(target: SparkSession | str, commits: list[str], branch: str = "main",
           parent: int = 1, dry_run: bool = False, catalog: str | None = None,
           credential: str | None = None, author: str | None = None) -> dict[str, Any]:
    """Undo ``commits`` (a merge against its ``parent``) in one new commit,
    committed as ``author`` (default: the session's catalog's)."""
    return versioning_client(target, catalog, credential, author).revert(
        commits, branch, parent=parent, dry_run=dry_run)


def versioning_client(target: SparkSession | str, catalog: str | None,
                      credential: str | None, author: str | None = None) -> Versioning:
    """A client as the session's catalog: its server, its credential and the
    author it names its commits with, unless given."""
    return Versioning(server_uri(target, catalog),
                      credential=catalog_credential(target, catalog, credential),
                      author=catalog_author(target, catalog, author))


def _origin(restored: dict[str, Any] | None) -> str | None:
    """A restored version's origin: ``version N of REF (commit HASH)``."""
    if not restored:
        return None
    return (f"version {restored['versionId']} of {restored['ref']} "
            f"(commit {restored['commit'][:12]})")


def _time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None
