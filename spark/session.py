"""SparkSessions whose Iceberg REST catalogs point at Sapwood refs.

A catalog is a ref seen through Iceberg's REST client: ``/iceberg/<ref>`` for a
branch, ``/iceberg/<ref>*<instant>`` for the branch as it was at an instant.
A view created while its own catalog is the current one (``USE cat.ns``) is
stored without a default catalog, which Iceberg reads as "the catalog the view
is loaded from": the same view then reads ``main``'s tables through a ``main``
catalog and the tables as of T through a catalog pinned at T.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from client.http import AUTHOR_HEADER as AUTHOR_HEADER
from client.http import server_root as server_root
from spark.errors import SetupError
from spark.extension import CLASS as SQL_EXTENSION
from spark.extension import optional_extension_jar
from spark.jars import java, spark_jars

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

STALENESS_HEADER = "Sapwood-Max-Staleness-Ms"
LOG_CONFIG = Path(__file__).with_name("log4j2.properties").as_uri()
EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
# How far past an instant must be before a catalog pinned there caches tables:
# beyond any clock difference between this machine and the server.
SETTLED_AFTER = timedelta(minutes=5)


def ref_spec(ref: str = "main", as_of: datetime | str | int | None = None) -> str:
    """``ref`` alone, or ``ref*instant`` (ISO-8601 with a zone, or epoch ms)."""
    if as_of is None:
        return ref
    if isinstance(as_of, datetime):
        if as_of.tzinfo is None:
            raise ValueError("as_of needs a time zone (a naive datetime is ambiguous)")
        as_of = as_of.astimezone(UTC).isoformat(timespec="microseconds").replace(
            "+00:00", "Z")
    return f"{ref}*{as_of}"


def catalog_uri(uri: str, ref: str = "main", as_of: datetime | str | int | None = None) -> str:
    """The Iceberg REST base URI of ``ref`` (at ``as_of``) on the server at ``uri``."""
    return f"{server_root(uri)}/iceberg/{quote(ref_spec(ref, as_of), safe='')}"


def catalog_conf(name: str, uri: str, ref: str = "main",
                 as_of: datetime | str | int | None = None,
                 author: str | None = None, credential: str | None = None,
                 max_staleness_ms: int | None = None) -> dict[str, str]:
    """Spark settings that define catalog ``name`` on ``ref`` (at ``as_of``);
    ``author`` is recorded on the commits its writes make (with authentication
    on, naming anyone but oneself needs the impersonate privilege).
    ``credential`` (``id:secret``) is for a catalog with authentication on.
    ``max_staleness_ms``: how stale a materialized view's stored rows may be
    for this catalog's readers (overrides each view's own setting)."""
    key = f"spark.sql.catalog.{name}"
    extra = {f"{key}.header.{AUTHOR_HEADER}": author} if author else {}
    if max_staleness_ms is not None:
        extra[f"{key}.header.{STALENESS_HEADER}"] = str(int(max_staleness_ms))
    if credential:
        # Iceberg's REST client trades it for a token at <uri>/v1/oauth/tokens,
        # which the server answers under every /iceberg/<ref> base, so no
        # oauth2-server-uri is needed; it refreshes the token by token exchange.
        extra[f"{key}.credential"] = credential
    return {**extra,
        key: "org.apache.iceberg.spark.SparkCatalog",
        f"{key}.type": "rest",
        f"{key}.uri": catalog_uri(uri, ref, as_of),
        # A branch moves under other writers (a merge, another job); Spark's
        # 30 s table cache would hide that. A ref pinned at an instant that
        # has passed never changes; one at an instant still to come (or just
        # now, by a clock that may differ from the server's) is the branch
        # until then.
        f"{key}.cache-enabled": "true" if settled(as_of) else "false",
    }


def settled(as_of: datetime | str | int | None) -> bool:
    """Whether ``as_of`` is an instant at least SETTLED_AFTER past (by this
    machine's clock): what a catalog pinned there reads can no longer change."""
    if as_of is None:
        return False
    try:
        if isinstance(as_of, datetime):
            at = as_of
        elif isinstance(as_of, int) or as_of.isdigit():
            at = datetime.fromtimestamp(int(as_of) / 1000, UTC)
        else:
            at = datetime.fromisoformat(as_of.upper())
    except (ValueError, OverflowError, OSError):
        return False  # the server will say what is wrong with it
    return at.tzinfo is not None and at <= datetime.now(UTC) - SETTLED_AFTER


def add_catalog(spark: SparkSession, name: str, uri: str, ref: str = "main",
                as_of: datetime | str | int | None = None, author: str | None = None,
                credential: str | None = None, max_staleness_ms: int | None = None) -> str:
    """Define one more catalog on a running session; returns its name."""
    for k, v in catalog_conf(name, uri, ref, as_of, author, credential,
                             max_staleness_ms).items():
        spark.conf.set(k, v)
    return name


def base_conf(log: Callable[[str], None] = print) -> dict[str, str]:
    """The JVM-wide settings: the jars and the SQL extensions (static: every
    session of the JVM has them). Sapwood's SQL extension comes after
    Iceberg's, when a JDK could build it."""
    java()
    paths = [str(p) for p in spark_jars(log).paths]
    extensions = EXTENSIONS
    sql_extension = optional_extension_jar(log)
    if sql_extension is not None:
        paths.append(str(sql_extension))
        extensions += f",{SQL_EXTENSION}"
    return {
        "spark.master": "local[2]",
        "spark.jars": ",".join(paths),
        "spark.sql.extensions": extensions,
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG_CONFIG}",
        "spark.ui.showConsoleProgress": "false",
    }


def active_session() -> SparkSession | None:
    """The session active in the JVM for this thread: the one Spark itself
    resolves names in. (pyspark's getActiveSession answers a cache of its own,
    which createDataFrame moves to whichever session made a frame last, so a
    catalog added there could land on another session.)"""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    context = SparkContext._active_spark_context
    if context is None or context._jvm is None:
        return None
    # Spark 4's SparkSession is abstract; pyspark knows its class (3.5 has no such method).
    classic = getattr(SparkSession, "_get_j_spark_session_class", None)
    sessions = classic(context._jvm) if classic else context._jvm.SparkSession
    found = sessions.getActiveSession()
    if not found.isDefined():
        return None
    cached = SparkSession._activeSession
    if cached is not None and cached._jsparkSession.equals(found.get()):
        return cached
    return SparkSession(context, found.get())


def _with_catalog(active: SparkSession, name: str, uri: str, ref: str,
                  as_of: datetime | str | int | None, author: str | None,
                  credential: str | None) -> SparkSession:
    """``active`` with catalog ``name`` on ``ref``; or, when ``active``
    defined ``name`` otherwise already, a new session of the same JVM with
    the same catalogs but that one. Spark loads a catalog once per session
    and keeps it whatever its settings say afterwards, so a second
    ``session(ref="dev")`` would have gone on reading the first's ref (or a
    server long gone)."""
    wanted = catalog_conf(name, uri, ref, as_of, author, credential)
    prefix = f"spark.sql.catalog.{name}"
    jvm = active.sparkContext._jvm
    assert jvm is not None
    runtime = active._jsparkSession.conf().getAll()
    held = {str(k): str(v) for k, v in
            jvm.scala.collection.JavaConverters.mapAsJavaMap(runtime).items()}
    mine = {k: v for k, v in held.items() if k == prefix or k.startswith(prefix + ".")}
    if not mine or mine == wanted:
        add_catalog(active, name, uri, ref, as_of, author, credential)
        return active
    fresh = active.newSession()
    for k, v in held.items():
        if (k.startswith("spark.sql.catalog.") and k not in mine) \
                or k == "spark.sql.defaultCatalog":
            fresh.conf.set(k, v)
    add_catalog(fresh, name, uri, ref, as_of, author, credential)
    # Active in the JVM too, where names are resolved (active_session).
    classic = getattr(type(fresh), "_get_j_spark_session_class", None)
    sessions = classic(jvm) if classic else jvm.SparkSession
    sessions.setActiveSession(fresh._jsparkSession)
    return fresh


def session(uri: str, ref: str = "main", as_of: datetime | str | int | None = None,
            catalog: str = "sapwood", author: str | None = None, app_name: str = "sapwood",
            conf: Mapping[str, str] | None = None,
            log: Callable[[str], None] = print,
            credential: str | None = None) -> SparkSession:
    """A local SparkSession with catalog ``catalog`` (the default catalog) on ``ref``.

    Builds the Iceberg jars on first use (``sapwood spark-setup`` does it ahead).
    One JVM serves a Python process: if a session already runs, the catalog is
    added to it. ``credential`` (``id:secret``) is for a catalog with
    authentication on."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise SetupError("pyspark is not installed: install the Spark extra: "
                         "python -m pip install -e '.[spark]'") from e
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    active = active_session()
    if active is not None:
        return _with_catalog(active, catalog, uri, ref, as_of, author, credential)
    builder = SparkSession.builder.appName(app_name)
    settings = {**base_conf(log), **catalog_conf(catalog, uri, ref, as_of, author),
                "spark.sql.defaultCatalog": catalog, **(conf or {})}
    for k, v in settings.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if credential:
        # On the running session, not the builder: the first session's builder
        # settings go on the JVM's command line (visible to ps) and become its
        # system properties, which every later session of this process
        # inherits. Catalogs load on first use, so it is in time.
        add_catalog(spark, catalog, uri, ref, as_of, author, credential)
    return spark
