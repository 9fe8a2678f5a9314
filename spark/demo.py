"""``sapwood demo``: write-audit-publish with PySpark on an embedded catalog.

A pipeline loads generated orders on branch ``etl``, builds views there, and
checks them; a failing check keeps ``main`` untouched until the data is fixed,
then ``etl`` is merged. An analyst replaces a view on ``main``, and an auditor
asks what the view said, and returned, before and after."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spark.embedded import EmbeddedCatalog
from spark.lines import current
from spark.session import add_catalog, session
from spark.views import create_branch, diff, merge, read_view, view_history

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

STEPS = 8
REGIONS = ("north", "south", "east", "west", "centre")
CUSTOMERS = 50

REVENUE_V1 = """SELECT c.region, round(sum(o.amount), 2) AS revenue
FROM orders o JOIN customers c ON o.customer_id = c.id
GROUP BY c.region"""
REVENUE_V2 = """SELECT c.region, count(*) AS orders, round(sum(o.amount), 2) AS revenue
FROM orders o JOIN customers c ON o.customer_id = c.id
WHERE o.amount >= 20
GROUP BY c.region"""


class Progress:
    def __init__(self, out: Callable[[str], None]) -> None:
        self.out = out
        self.started = time.monotonic()
        self.n = 0

    def step(self, text: str) -> None:
        self.n += 1
        self.out(f"[{self.n}/{STEPS}] {text}  (+{time.monotonic() - self.started:.1f} s)")

    def say(self, text: str) -> None:
        for line in text.rstrip("\n").splitlines():
            self.out(f"      {line}")

    def table(self, df: DataFrame, n: int = 20) -> None:
        rows = df.limit(n).collect()
        cols = df.columns
        cells = [[_cell(r[c]) for c in cols] for r in rows]
        widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(cols)]
        self.say("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)))
        for row in cells:
            self.say("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))


def _cell(v: object) -> str:
    if isinstance(v, datetime):
        return v.strftime("%H:%M:%S.%f")[:-3]
    if isinstance(v, dict):
        return "; ".join(f"{k}: {' '.join(str(s).split())}" for k, s in v.items())
    return "-" if v is None else str(v)


def load(spark: SparkSession, rows: int) -> None:
    """Generated customers and orders, written on ``etl``. The loader has a bug:
    every 97th order gets a negative amount."""
    spark.sql("CREATE NAMESPACE IF NOT EXISTS etl.shop")
    spark.sql("CREATE TABLE etl.shop.customers (id BIGINT, name STRING, region STRING) "
              "USING iceberg")
    spark.sql("CREATE TABLE etl.shop.orders (order_id BIGINT, customer_id BIGINT, "
              "amount DOUBLE, day DATE) USING iceberg")
    regions = ", ".join(f"'{r}'" for r in REGIONS)
    spark.range(CUSTOMERS).selectExpr(
        "id", "concat('customer-', id) AS name",
        f"element_at(array({regions}), CAST(id % {len(REGIONS)} AS INT) + 1) AS region",
    ).writeTo("etl.shop.customers").append()
    spark.range(rows).selectExpr(
        "id AS order_id", f"(id * 7) % {CUSTOMERS} AS customer_id",
        "CASE WHEN id % 97 = 96 THEN -1.0 ELSE round(5 + (id * 13) % 200 * 0.5, 2) END "
        "AS amount",
        "date_add(DATE'2026-11-01', CAST(id % 21 AS INT)) AS day",
    ).writeTo("etl.shop.orders").append()


def create_views(spark: SparkSession) -> None:
    # Created with etl.shop current, so the views carry no catalog name and
    # read whichever ref (and instant) they are loaded from.
    spark.sql("USE etl.shop")
    spark.sql(f"CREATE VIEW revenue_by_region AS {REVENUE_V1}")
    spark.sql("CREATE VIEW daily_orders AS SELECT day, count(*) AS orders FROM orders "
              "GROUP BY day")


def checks(spark: SparkSession, rows: int, expected_orders: int) -> list[str]:
    """The audit of the write: each failure is one line."""
    failed = []
    got = {
        "orders": spark.table("etl.shop.orders").count(),
        "customers": spark.table("etl.shop.customers").count(),
        "revenue_by_region rows": spark.table("etl.shop.revenue_by_region").count(),
        "daily_orders days": spark.table("etl.shop.daily_orders").count(),
        "negative amounts": _one(spark, "SELECT count(*) FROM etl.shop.orders "
                                        "WHERE amount < 0"),
    }
    want = {"orders": expected_orders, "customers": CUSTOMERS,
            "revenue_by_region rows": len(REGIONS), "daily_orders days": min(rows, 21),
            "negative amounts": 0}
    for name, value in got.items():
        ok = value == want[name]
        if not ok:
            failed.append(f"{name}: {value}, expected {want[name]}")
    return failed


def run(data_dir: Path | None = None, rows: int = 2000,
        out: Callable[[str], None] = print) -> None:
    if data_dir is not None:
        data_dir.mkdir(parents=True, exist_ok=True)
        if any(data_dir.iterdir()):
            raise SystemExit(f"error: {data_dir} is not empty; the demo starts a new catalog")
        _run(data_dir, rows, out)
        out(f"catalog kept in {data_dir}: SAPWOOD_DATA_DIR={data_dir} sapwood serve")
        return
    with tempfile.TemporaryDirectory(prefix="sapwood-demo-") as tmp:
        _run(Path(tmp), rows, out)


def _run(data_dir: Path, rows: int, out: Callable[[str], None]) -> None:
    p = Progress(out)
    p.step(f"starting an embedded catalog (SQLite + local warehouse in {data_dir})")
    with EmbeddedCatalog(data_dir) as catalog:
        p.say(f"serving {catalog.uri}/iceberg")
        p.step("creating branch etl from main (versioning API)")
        p.say(f"etl at {create_branch(catalog.uri, 'etl')[:12]}")
        p.step(f"starting Spark {current().name} with catalogs main and etl (Iceberg REST)")
        owned = _no_session_yet()
        spark = session(catalog.uri, ref="main", catalog="main", author="analyst",
                        app_name="sapwood-demo", log=p.say)
        try:
            add_catalog(spark, "etl", catalog.uri, "etl", author="etl-job")
            _pipeline(spark, catalog.uri, rows, p)
        finally:
            if owned:  # a session the caller already ran (a notebook's) stays up
                spark.stop()
    p.out(f"demo finished in {time.monotonic() - p.started:.1f} s")


def _no_session_yet() -> bool:
    from spark.session import active_session

    return active_session() is None


def _pipeline(spark: SparkSession, uri: str, rows: int, p: Progress) -> None:
    p.step(f"write: loading {CUSTOMERS} customers and {rows} orders on etl, creating views")
    load(spark, rows)
    create_views(spark)
    p.say("main still has no namespaces: "
          f"{[r[0] for r in spark.sql('SHOW NAMESPACES IN main').collect()]}")

    p.step("audit: checking etl before it may be merged")
    bad = _one(spark, "SELECT count(*) FROM etl.shop.orders WHERE amount < 0")
    failures = checks(spark, rows, rows)
    for f in failures:
        p.say(f"check failed: {f}")
    if failures:
        p.say("merge aborted: main is unchanged; pending on etl:")
        for d in diff(uri, "main", "etl"):
            p.say(f"  {d['change']:8} {d['key']}  ({d['type']})")
        p.say(f"fixing on etl: deleting the {bad} orders with a negative amount")
        spark.sql("DELETE FROM etl.shop.orders WHERE amount < 0")
        failures = checks(spark, rows, rows - bad)
        if failures:
            raise SystemExit("error: checks still fail: " + "; ".join(failures))
    p.say("all checks pass: row counts, 5 regions, 21 days, no negative amounts")

    p.step("publish: merging etl into main")
    # As the etl job (its catalog's author), as its Spark writes on etl were.
    result = merge(spark, "etl", into="main", message="publish shop from etl", catalog="etl")
    p.say(f"main is now at {result['resultantTargetHash'][:12]}; main sees:")
    p.table(spark.sql("SELECT * FROM main.shop.revenue_by_region ORDER BY region"))

    p.step("an analyst replaces revenue_by_region on main")
    before = datetime.now(UTC)
    time.sleep(0.05)
    spark.sql("USE main.shop")
    spark.sql(f"CREATE OR REPLACE VIEW revenue_by_region AS {REVENUE_V2}")
    time.sleep(0.05)
    after = datetime.now(UTC)

    p.step("time travel: what did revenue_by_region say, and return, and who changed it?")
    history = view_history(spark, "shop.revenue_by_region", ref="main", catalog="main")
    p.table(history.selectExpr("version_id AS version", "current_from", "current_until",
                               "author", "substr(commit, 1, 12) AS commit", "message"))
    for row in history.collect():
        p.say(f"version {row.version_id}, spark SQL:")
        p.say("    " + row.sql["spark"].replace("\n", "\n    "))
    stamp = before.strftime("%H:%M:%S.%f")[:-3]
    p.say(f"rows as of {stamp} (before the replacement):")
    p.table(read_view(spark, "shop.revenue_by_region", ref="main", as_of=before,
                      catalog="main").orderBy("region"))
    p.say(f"rows as of {after.strftime('%H:%M:%S.%f')[:-3]} (after):")
    p.table(read_view(spark, "shop.revenue_by_region", ref="main", as_of=after,
                      catalog="main").orderBy("region"))


def _one(spark: SparkSession, sql: str) -> Any:
    """The one value a one-row query gives."""
    row = spark.sql(sql).first()
    assert row is not None  # an aggregate always answers a row
    return row[0]
