"""A view read as of an instant: the SQL current then, over the base tables as
they were then (one catalog pinned at ``main*T`` serves both)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from pyspark.errors import AnalysisException

import spark as sw
from tests.server import Server
from tests.spark.conftest import rows

SQL = ("SELECT id FROM t",
       "SELECT id * 10 AS id FROM t",
       "SELECT id * 100 AS id FROM t WHERE id > 1")


def _instant() -> datetime:
    """A moment strictly between the commits before and after it."""
    time.sleep(0.02)
    now = datetime.now(UTC)
    time.sleep(0.02)
    return now


def test_a_session_at_an_instant_reads_the_view_and_its_tables_as_they_were(
        spark, server: Server):
    sql = spark.sql
    sql("CREATE NAMESPACE sapwood.tt")
    sql("CREATE TABLE sapwood.tt.t (id BIGINT) USING iceberg")
    sql("INSERT INTO sapwood.tt.t VALUES (1)")
    before_view = _instant()
    sql("USE sapwood.tt")
    gaps = []
    for i, text in enumerate(SQL):
        sql(f"CREATE OR REPLACE VIEW v AS {text}")
        sql(f"INSERT INTO sapwood.tt.t VALUES ({i + 2})")
        gaps.append(_instant())
    sql("USE sapwood")

    expected = [[(1,), (2,)],                       # SQL 1 over {1, 2}
                [(10,), (20,), (30,)],              # SQL 2 over {1, 2, 3}
                [(200,), (300,), (400,)]]           # SQL 3 over {1, 2, 3, 4}
    for i, (at, want) in enumerate(zip(gaps, expected, strict=True)):
        name = sw.add_catalog(spark, f"main_t{i}", server.base, "main", as_of=at)
        assert rows(spark, f"SELECT * FROM {name}.tt.v") == want, f"gap {i}"
        assert sorted(tuple(r) for r in sw.read_view(spark, "tt.v", as_of=at).collect()) == want
        ms = int(at.timestamp() * 1000)
        assert sorted(tuple(r) for r in sw.read_view(spark, "tt.v", ref="main",
                                                       as_of=ms).collect()) == want

    # The present: the last SQL over all rows.
    assert rows(spark, "SELECT * FROM sapwood.tt.v") == [(200,), (300,), (400,)]
    # Before the view existed, the pinned catalog has no such view.
    with pytest.raises(AnalysisException):
        sw.read_view(spark, "tt.v", as_of=before_view).collect()
    # A pinned catalog is read-only.
    with pytest.raises(Exception, match=r"it pins a commit .*writes need a branch name"):
        sql("INSERT INTO main_t0.tt.t VALUES (99)")
    assert rows(spark, "SELECT count(*) FROM sapwood.tt.t") == [(4,)]
