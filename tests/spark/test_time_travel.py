"""A view read as of an instant: the SQL current then, over the base tables as
they were then (one catalog pinned at ``main*T`` serves both)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

import spark as sw
from spark.client import Versioning
from spark.errors import NotFoundError
from spark.session import ref_spec
from tests.server import Server
from tests.spark.conftest import rows
from tests.zygote_client import run as sapwood

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
    with pytest.raises(NotFoundError, match=r"^view 'tt.v' did not exist on main at "):
        sw.read_view(spark, "tt.v", as_of=before_view).collect()
    # A pinned catalog is read-only: Spark raises the server's 400 itself, as
    # Iceberg's BadRequestException (docs/spark.md).
    from py4j.protocol import Py4JJavaError

    with pytest.raises(Py4JJavaError, match=r"BadRequestException: Malformed request: Cannot "
                       r"write to reference .*it pins a commit .*writes need a branch name"):
        sql("INSERT INTO main_t0.tt.t VALUES (99)")
    assert rows(spark, "SELECT count(*) FROM sapwood.tt.t") == [(4,)]


def _cli(server: Server, *args: str) -> str:

    proc = sapwood([*args, "--uri", server.base], timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_restore_a_view_and_a_table_to_an_instant(spark, server: Server):
    """Issue 27: a view replaced three times, restored with ``sapwood
    restore`` to an instant between its first and second versions: Spark
    reads the first version's rows, the audit lists five versions (the last
    naming its origin), and catalogs at earlier instants read what they read
    before. A table appended three times, restored (Spark helper) to just
    after the first append: count(*) is the first append's, and each later
    snapshot still reads with VERSION AS OF."""
    sql = spark.sql
    sql("CREATE NAMESPACE sapwood.rs")
    sql("CREATE TABLE sapwood.rs.t (id BIGINT) USING iceberg")
    sql("INSERT INTO sapwood.rs.t VALUES (1), (2), (3)")
    sql("USE sapwood.rs")
    sql(f"CREATE VIEW v AS {SQL[0]}")
    between = _instant()
    for text in (*SQL[1:], "SELECT -id AS id FROM t"):
        sql(f"CREATE OR REPLACE VIEW v AS {text}")
    before_restore = _instant()
    sql("USE sapwood")
    before = sw.add_catalog(spark, "rs_before", server.base, "main", as_of=before_restore)
    want_then = rows(spark, f"SELECT * FROM {before}.rs.v")
    assert want_then == [(-3,), (-2,), (-1,)]

    out = _cli(server, "restore", "rs.v", "--from", ref_spec("main", between))
    assert "restored" in out and "view version 1 as new version 5" in out, out
    assert rows(spark, "SELECT * FROM sapwood.rs.v") == [(1,), (2,), (3,)]
    audit = sw.view_history(spark, "rs.v").orderBy("version_id").collect()
    assert [r["version_id"] for r in audit] == [1, 2, 3, 4, 5]
    assert [r["restored_from"] for r in audit][:4] == [None] * 4
    assert audit[4]["restored_from"].startswith(f"version 1 of {ref_spec('main', between)}")
    history = Versioning(server.base).view_history("rs.v")
    assert history[-1]["restoredFrom"]["versionId"] == 1
    assert history[-1]["restoredFrom"]["ref"] == ref_spec("main", between)
    # Catalogs at earlier instants read what they read before.
    for name, at, want in (("rs_between", between, [(1,), (2,), (3,)]),
                           ("rs_before2", before_restore, want_then)):
        cat = sw.add_catalog(spark, name, server.base, "main", as_of=at)
        assert rows(spark, f"SELECT * FROM {cat}.rs.v") == want, name

    # The table.
    sql("CREATE TABLE sapwood.rs.facts (id BIGINT) USING iceberg")
    sql("INSERT INTO sapwood.rs.facts VALUES (1), (2)")
    after_first = _instant()
    sql("INSERT INTO sapwood.rs.facts VALUES (3)")
    sql("INSERT INTO sapwood.rs.facts VALUES (4), (5), (6)")
    snaps = [r[0] for r in sql("SELECT snapshot_id FROM sapwood.rs.facts.snapshots "
                                "ORDER BY committed_at").collect()]
    assert len(snaps) == 3
    done = sw.restore(spark, ["rs.facts"], ref_spec("main", after_first))
    assert done["keys"][0]["sourceSnapshotId"] == snaps[0] and done["hash"]
    sql("REFRESH TABLE sapwood.rs.facts")
    assert rows(spark, "SELECT count(*) FROM sapwood.rs.facts") == [(2,)]
    for snap, n in zip(snaps, (2, 3, 6), strict=True):
        assert rows(spark, f"SELECT count(*) FROM sapwood.rs.facts VERSION AS OF {snap}") == [
            (n,)]
