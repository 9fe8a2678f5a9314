"""What views read, as DataFrames: a view's column lineage and the views that
read a table or view, at a branch, a hash or an instant (over HTTP)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spark.views import versioning_client

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

LINEAGE_SCHEMA = "column STRING, derived BOOLEAN, origin_table STRING, origin_column STRING"
DEPENDENTS_SCHEMA = "view STRING, depth INT, reads STRING, status STRING"


def view_lineage(spark: SparkSession, name: str, ref: str = "main",
                 catalog: str | None = None, credential: str | None = None) -> DataFrame:
    """One row per (output column, base-table column it comes from); a column
    with no origin (a literal, ``count(*)``) has one row with null origins."""
    rows = []
    for c in versioning_client(spark, catalog, credential).lineage(name, ref):
        origins = c["origins"] or [None]
        for o in origins:
            rows.append((c["name"], c["derived"], ".".join(o["table"]) if o else None,
                         o["column"] if o else None))
    return spark.createDataFrame(rows, LINEAGE_SCHEMA)


def view_dependents(spark: SparkSession, name: str, ref: str = "main",
                    catalog: str | None = None, credential: str | None = None) -> DataFrame:
    """The views that read ``name`` (a table or view), recursively: each with
    its depth, the object it reads on the way, and its status."""
    rows = [(".".join(d["key"]), d["depth"], ".".join(d["via"]), d["status"])
            for d in versioning_client(spark, catalog, credential).dependents(name, ref)]
    return spark.createDataFrame(rows, DEPENDENTS_SCHEMA)
