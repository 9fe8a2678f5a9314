"""The docs' PySpark blocks (those that import ``spark``: README.md's
materialized view, docs/spark.md's session and its SQL statements), run as
written against a fresh server each, with what the block's text says is
already there.

A JVM costs seconds, so the blocks share one; each runs in a session of its
own (``newSession``: its own settings and catalogs) that no one has made
active, which is what a new Python process finds: the block's
``session(...)`` then configures it as it would a new one."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest

from spark.client import Versioning
from tests.docs_blocks import Block, all_blocks
from tests.server import Server, serving

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BLOCKS = [b for b in all_blocks() if b.runnable and b.uses_spark]


def _sales_on_etl(server: Server) -> None:
    """README: tables sales.orders and sales.customers on branch etl."""
    Versioning(server.base).create_branch("etl")
    etl = server.catalog("etl")
    etl.create_namespace("sales")
    orders = pa.table({"cust": pa.array([1, 1, 2], pa.int64()),
                       "amount": pa.array([10, 5, 7], pa.int64())})
    customers = pa.table({"id": pa.array([1, 2], pa.int64()),
                          "region": pa.array(["north", "south"])})
    etl.create_table("sales.orders", orders.schema).append(orders)
    etl.create_table("sales.customers", customers.schema).append(customers)


def _shop_orders_only_on_main(server: Server) -> None:
    """docs/spark.md's SQL session: table shop.orders (region, amount), made on main."""
    main = server.catalog()
    main.create_namespace("shop")
    orders = pa.table({"region": pa.array(["north", "north", "south"]),
                       "amount": pa.array([10, 5, 7], pa.int64())})
    main.create_table("shop.orders", orders.schema).append(orders)


def _shop_orders_on_main(server: Server) -> None:
    """docs/spark.md: table shop.orders (region, amount), made on main; branch etl."""
    _shop_orders_only_on_main(server)
    Versioning(server.base).create_branch("etl")


# Keyed by (file, the block's first line): what it takes as there, what it promises.
GIVEN: dict[tuple[str, str], tuple[Callable[[Server], None], tuple[str, ...]]] = {
    ("README.md", "from spark import session"):
        (_sales_on_etl, (r"\|\s*north\|\s*15\|", r"\|\s*south\|\s*7\|")),
    ("docs/spark.md", "from datetime import datetime, timezone"):
        (_shop_orders_on_main, (r"\{'key': 'shop\.revenue', 'change': 'added'",
                                r"\|\s*north\|\s*15\|")),
    ("docs/spark.md", "import spark as sw                       # sw.session loads the SQL "
                      "extension too"):
        (_shop_orders_only_on_main,
         (r"\|BRANCH +\|etl +\|[0-9a-f]{16,} *\|",
          r"\|shop\.revenue\|added +\|ICEBERG_VIEW\|",
          r"\|shop\.revenue\|APPLIED\|\[\] +\|",
          r"\|main\|[0-9a-f]{16,}\|",
          r"\|etl-job *\|[^|\n]*\|[0-9a-f]{16,}\|merge etl into main",
          r"\|north *\|15 *\|", r"\|south *\|7 *\|",
          r"\|1 +\|[^\n]*\|etl-job\|create view shop\.revenue\|shop\.revenue\|"
          r"\{spark -> SELECT region",
          r"\|revenue\|true +\|shop\.orders +\|amount +\|",
          r"\|TAG +\|release\|", r"\|OK +\|")),
}


def test_every_spark_block_has_its_given() -> None:
    assert {(b.path, b.first_line) for b in BLOCKS} == set(GIVEN)


@pytest.fixture(scope="module")
def jvm(spark_jvm: SparkSession) -> SparkSession:
    """The worker's one Spark (tests/spark/conftest.py), never stopped here:
    later modules share it."""
    return spark_jvm


def as_a_new_process(jvm: SparkSession) -> None:
    """The JVM as a new Python process would meet it through
    ``SparkSession.builder.getOrCreate``: no session of Python's, none active,
    and a default one (the next ``SparkSession(sc)`` takes it) with no catalog."""
    from pyspark.sql import SparkSession

    fresh = jvm.newSession()
    # An earlier module's session settings live on as the JVM's properties.
    for key, _ in jvm.sparkContext.getConf().getAll():
        if key.startswith("spark.sql.catalog.") or key == "spark.sql.defaultCatalog":
            fresh.conf.unset(key)
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
    java = jvm.sparkContext._jvm
    assert java is not None
    java.SparkSession.clearActiveSession()
    java.SparkSession.setDefaultSession(fresh._jsparkSession)


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_the_spark_block_runs_as_written(block: Block, jvm: SparkSession,
                                         tmp_path: Path) -> None:
    setup, promises = GIVEN[(block.path, block.first_line)]
    with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path / "srv") as server:
        setup(server)
        host = server.base.removeprefix("http://")
        code = compile(block.body.replace("127.0.0.1:8181", host), block.id, "exec")
        as_a_new_process(jvm)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(code, {"__name__": "__main__"})  # the docs' own text, as a script
    printed = out.getvalue()
    for promise in promises:
        assert re.search(promise, printed), f"{block.id}: no {promise!r} in\n{printed}"
