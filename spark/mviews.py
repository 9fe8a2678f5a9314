"""Materialized views from a SparkSession: create one from a query, refresh
it, and ask how fresh it is.

A refresh follows the catalog's plan (``/api/v2/…/refresh-plan``): it adds a
catalog pinned at the plan's ``branch@hash``, so every base table is read
from that one commit, runs the view's SQL there (or, for an incremental
refresh, the same SQL over the rows appended since the last refresh, read
with Iceberg's incremental read options), and writes the result into the
view's storage through that catalog with the ``Sapwood-Refresh`` header; the
catalog records the refresh with the snapshots of that commit. Reading the
view needs nothing of this module: ``SELECT … FROM cat.ns.mv`` gets the
stored rows when they are fresh enough, else Spark runs the view's SQL.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from spark.client import Versioning
from spark.explain import query_error
from spark.session import add_catalog, server_root
from spark.views import catalog_author, quoted

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

REFRESH_HEADER = "Sapwood-Refresh"
REFRESH_KIND = "snapshot-property.sapwood.refresh"


def _path(ref: str, key: str, tail: str = "") -> str:
    return (f"/api/v2/trees/{quote(ref, safe='')}/materialized-views/"
            f"{quote(key, safe='')}{tail}")


def iceberg_schema(df: DataFrame) -> dict[str, Any]:
    """Spark's output columns as an Iceberg schema (what the view's storage holds)."""
    from pyspark.sql import types as T

    simple = {T.LongType: "long", T.IntegerType: "int", T.ShortType: "int",
              T.ByteType: "int", T.StringType: "string", T.DoubleType: "double",
              T.FloatType: "float", T.BooleanType: "boolean", T.DateType: "date",
              T.TimestampType: "timestamptz", T.TimestampNTZType: "timestamp",
              T.BinaryType: "binary"}
    fields = []
    for i, f in enumerate(df.schema.fields, start=1):
        dt = f.dataType
        kind = (f"decimal({dt.precision}, {dt.scale})" if isinstance(dt, T.DecimalType)
                else next((v for t, v in simple.items() if type(dt) is t), None))
        if kind is None:
            raise ValueError(f"column {f.name} has type {dt.simpleString()}, which a "
                             "materialized view cannot store yet")
        fields.append({"id": i, "name": f.name, "type": kind, "required": False})
    return {"type": "struct", "schema-id": 0, "fields": fields}


def _in_namespace(spark: SparkSession, catalog: str, namespace: list[str]) -> tuple[str, str]:
    """``USE catalog.namespace``; returns what was current, to go back to."""
    before = (spark.catalog.currentCatalog(), spark.catalog.currentDatabase())
    spark.sql(f"USE {catalog}" + (f".{quoted('.'.join(namespace))}" if namespace else ""))
    return before


def _back(spark: SparkSession, before: tuple[str, str]) -> None:
    spark.sql(f"USE {before[0]}.{quoted(before[1])}" if before[1] else f"USE {before[0]}")


def create_materialized_view(spark: SparkSession, uri: str, key: str, sql: str,
                             ref: str = "main", properties: dict[str, str] | None = None,
                             default_namespace: list[str] | None = None,
                             credential: str | None = None,
                             author: str | None = None) -> dict[str, Any]:
    """Create materialized view ``key`` (``ns.name``) on branch ``ref`` from a
    Spark SQL query; its columns and types are the ones Spark gives the query
    there. Not refreshed yet: it reads as its view until ``refresh``.
    Committed as ``author`` (default: the session's current catalog's). SQL
    that does not resolve on ``ref`` raises spark.errors.NotFoundError (else
    QueryError) naming the key and ``ref``."""
    namespace = default_namespace if default_namespace is not None else key.split(".")[:-1]
    name = "sapwood_define_" + hashlib.sha1(f"{uri}|{ref}".encode()).hexdigest()[:10]
    add_catalog(spark, name, uri, ref, credential=credential)
    try:
        before = _in_namespace(spark, name, namespace)
        try:
            schema = iceberg_schema(spark.sql(sql))
        finally:
            _back(spark, before)
    except Exception as e:  # Spark's words name the catalog defined here
        raise query_error(e, name, f"cannot define materialized view '{key}' on {ref}") \
            from None
    body = {"key": {"elements": key.split(".")}, "sql": sql, "dialect": "spark",
            "defaultNamespace": namespace, "schema": schema, "properties": properties or {}}
    return Versioning(uri, credential=credential, author=_author(spark, author)).call(
        "POST", f"/api/v2/trees/{quote(ref, safe='')}/materialized-views", json=body)


def refresh(spark: SparkSession, uri: str, key: str, ref: str = "main", mode: str = "auto",
            credential: str | None = None, report_files: bool = False,
            author: str | None = None) -> dict[str, Any]:
    """Refresh ``key`` on branch ``ref`` (``mode`` "full" recomputes whatever
    the catalog's plan says). Returns the plan followed: ``kind`` (full,
    incremental or none when already fresh), ``reason``, the pinned commit
    and the base snapshots read; with ``report_files``, also ``filesRead``:
    the base-table data files the refresh read rows from. The refresh's
    commit names ``author`` (default: the session's current catalog's)."""
    author = _author(spark, author)
    client = Versioning(uri, credential=credential, author=author)
    plan = client.call("GET", _path(ref, key, "/refresh-plan"), params={"mode": mode})
    if plan["kind"] == "none":
        return plan
    name = "sapwood_refresh_" + hashlib.sha1(
        f"{server_root(uri)}|{plan['pinnedReference']}|{key}|{plan['versionId']}".encode()
    ).hexdigest()[:12]
    add_catalog(spark, name, uri, plan["pinnedReference"], author=author,
                credential=credential)
    spark.conf.set(f"spark.sql.catalog.{name}.header.{REFRESH_HEADER}", str(plan["versionId"]))
    target = f"{name}.{quoted(key)}"
    # The view's own SQL names tables relative to its default namespace; the
    # incremental SQL names only the temporary views, so it needs no USE
    # (two statements, about a tenth of a small refresh).
    before = _in_namespace(spark, name, plan["defaultNamespace"]) \
        if plan["kind"] == "full" else None
    try:
        files = _run(spark, plan, name, target, report_files)
    except Exception as e:  # Spark's words name the catalog pinned here
        raise query_error(e, name, f"cannot refresh materialized view '{key}' on "
                                   f"{plan['pinnedReference']}") from None
    finally:
        if before is not None:
            _back(spark, before)
        inc = plan.get("incremental") or {}
        for view in (inc.get("deltaView"), inc.get("storedView"), inc.get("deltaResultView")):
            if view:
                spark.catalog.dropTempView(view)
    if files is not None:
        plan["filesRead"] = files
    return plan


def _run(spark: SparkSession, plan: dict[str, Any], name: str, target: str,
         report_files: bool) -> list[str] | None:
    """Compute and write; with ``report_files``, the data files the rows came from."""
    from pyspark.sql import functions as F

    def files(*frames: DataFrame) -> list[str] | None:
        if not report_files:
            return None
        return sorted({r[0] for df in frames
                       for r in df.select(F.input_file_name()).distinct().collect()})

    if plan["kind"] == "full":
        spark.sql(plan["sql"]).writeTo(target).option(REFRESH_KIND, "full").overwrite(F.lit(True))
        return files(*(spark.table(f"{name}.{quoted(t)}") for t in plan["baseTables"]))
    inc = plan["incremental"]
    delta = (spark.read.format("iceberg")
             .option("start-snapshot-id", str(inc["fromSnapshot"]))
             .option("end-snapshot-id", str(inc["toSnapshot"]))
             .load(f"{name}.{quoted(inc['table'])}"))
    delta.createOrReplaceTempView(inc["deltaView"])
    rows = spark.sql(inc["deltaSql"])
    writer_kind = "incremental"
    if inc["shape"] == "append":
        rows.writeTo(target).option(REFRESH_KIND, writer_kind).append()
    else:
        rows.createOrReplaceTempView(inc["deltaResultView"])
        stored = spark.table(target)
        stored.createOrReplaceTempView(inc["storedView"])
        merged = spark.sql(inc["mergeSql"])
        # The storage keeps its column types (sum of a sum may widen).
        merged = merged.select(*[F.col(quoted(f.name)).cast(f.dataType).alias(f.name)
                                 for f in stored.schema.fields])
        merged.writeTo(target).option(REFRESH_KIND, writer_kind).overwrite(F.lit(True))
    return files(delta)


def _author(spark: SparkSession, author: str | None) -> str | None:
    """``author``, else the one the session's current catalog names its
    commits with (``session(author=)``), if any."""
    return author if author is not None else catalog_author(spark)


def freshness(uri: str, key: str, ref: str = "main",
              credential: str | None = None) -> dict[str, Any]:
    """Fresh, stale (per base table: the snapshot read, the current one, how
    long ago it changed) or invalid, at a branch, ``branch@hash`` or
    ``branch*instant``."""
    return Versioning(uri, credential=credential).call("GET", _path(ref, key, "/freshness"))
