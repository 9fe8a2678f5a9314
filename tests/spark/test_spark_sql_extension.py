"""Sapwood's Spark SQL extension (issue 37), from plain PySpark: the worker's
JVM carries the jars and both extensions (``spark.sql.extensions`` is static,
spark/session.py's base_conf), and every catalog here is configured by hand as
any Spark user would: ``type=rest``, ``uri=<server>/iceberg/<ref>``, and its
credential or headers. What the statements did is checked over HTTP."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import httpx
import pyarrow as pa
import pytest
from pyspark.errors import AnalysisException, ParseException

from tests.api.auth_setup import set_up
from tests.api.test_view_merge_dialects import add_dialect
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server
from tests.spark.conftest import REQUIRE_SPARK, rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

server = server_fixture(BACKENDS, prefix="sql-ext")
single = server_fixture(prefix="sql-ext-one")
secured = server_fixture(env={"SAPWOOD_AUTH": "1"}, prepare=set_up, prefix="sql-ext-auth")
for_dbt = server_fixture(prefix="sql-ext-dbt")


def plain(jvm: SparkSession, base: str, **props: str) -> SparkSession:
    """A session with catalog ``sw`` on ``main`` of the server at ``base``:
    the Iceberg REST catalog settings alone, nothing of Sapwood's helpers."""
    s = jvm.newSession()
    s.conf.set("spark.sql.catalog.sw", "org.apache.iceberg.spark.SparkCatalog")
    s.conf.set("spark.sql.catalog.sw.type", "rest")
    s.conf.set("spark.sql.catalog.sw.uri", f"{base}/iceberg/main")
    s.conf.set("spark.sql.catalog.sw.cache-enabled", "false")
    for k, v in props.items():
        s.conf.set(f"spark.sql.catalog.sw.{k}", v)
    return s


def head(http: httpx.Client, ref: str) -> str:
    r = http.get(f"/api/v2/trees/{ref}")
    assert r.status_code == 200, r.text
    return str(r.json()["reference"]["hash"])


def one(spark: SparkSession, sql: str) -> tuple:
    found = [tuple(r) for r in spark.sql(sql).collect()]
    assert len(found) == 1, found
    return found[0]


@pytest.fixture(scope="module")
def http(server: Server):
    with http_client(base_url=server.base, timeout=30) as client:
        yield client


def test_a_branch_from_sql_alone_written_merged_tagged_and_dropped(spark_jvm, server: Server,
                                                                  http: httpx.Client):
    spark = plain(spark_jvm, server.base, **{"header.Sapwood-Commit-Author": "etl-job"})
    sql = spark.sql
    main0 = head(http, "main")
    created = one(spark, "CREATE BRANCH IF NOT EXISTS etl IN sw FROM main")
    assert created == ("BRANCH", "etl", main0)
    assert one(spark, "create branch if not exists etl in sw from main") == created

    assert one(spark, "USE REFERENCE etl IN sw") == ("BRANCH", "etl", main0)
    # The session's catalog moved; another session's catalog of the same name did not.
    assert one(plain(spark_jvm, server.base), "SHOW REFERENCE IN sw") == ("BRANCH", "main", main0)
    sql("CREATE NAMESPACE sw.shop")
    sql("CREATE TABLE sw.shop.orders (id BIGINT, amount BIGINT) USING iceberg")
    sql("INSERT INTO sw.shop.orders VALUES (1, 3), (2, 8), (3, 12)")
    sql("USE sw.shop")
    sql("CREATE VIEW big AS SELECT id, amount FROM orders WHERE amount > 5")
    assert rows(spark, "SELECT * FROM big") == [(2, 8), (3, 12)]

    # Nothing of it on main, all of it on etl.
    assert http.get("/iceberg/main/v1/namespaces/shop").status_code == 404
    assert http.get("/iceberg/main/v1/namespaces/shop/views/big").status_code == 404
    assert http.get("/iceberg/etl/v1/namespaces/shop/views/big").status_code == 200
    etl = head(http, "etl")
    assert etl != main0

    assert one(spark, "SHOW REFERENCE IN sw") == ("BRANCH", "etl", etl)
    log = spark.sql("SHOW LOG etl IN sw").collect()
    assert log[0].hash == etl
    history = http.get("/api/v2/trees/etl/history").json()["logEntries"]
    assert [r.hash for r in log] == [e["commitMeta"]["hash"] for e in history]
    assert [r.message for r in log][:2] == ["create view shop.big", "update table shop.orders"]
    assert log[0].author == "etl-job" and log[0].committerTime is not None
    assert set(spark.sql("LIST REFERENCES IN sw").collect()) == {
        ("BRANCH", "etl", etl), ("BRANCH", "main", main0)}
    assert rows(spark, "SHOW DIFF main etl") == [
        ("shop", "added", "NAMESPACE"), ("shop.big", "added", "ICEBERG_VIEW"),
        ("shop.orders", "added", "ICEBERG_TABLE")]

    merged = one(spark, "MERGE BRANCH etl INTO main IN sw")
    assert merged == ("main", head(http, "main")) and merged[1] != main0
    assert http.get("/iceberg/main/v1/namespaces/shop/views/big").status_code == 200
    assert spark.sql("SHOW LOG main IN sw").first().author == "etl-job"  # the catalog's header

    assert one(spark, "CREATE TAG release IN sw FROM main") == ("TAG", "release", merged[1])
    assert one(spark, "USE REFERENCE main IN sw") == ("BRANCH", "main", merged[1])
    assert one(spark, "DROP BRANCH etl IN sw") == ("OK",)
    assert http.get("/api/v2/trees/etl").status_code == 404
    assert one(spark, "DROP BRANCH IF EXISTS etl IN sw") == ("OK",)
    assert rows(spark, "SELECT * FROM sw.shop.big") == [(2, 8), (3, 12)]


@pytest.fixture(scope="module")
def spark(spark_jvm, single: Server) -> SparkSession:
    """Catalog ``sw`` on main of the SQLite server, the session's current catalog."""
    s = plain(spark_jvm, single.base)
    s.sql("USE sw")
    return s


@pytest.fixture(scope="module")
def on_single(single: Server):
    with http_client(base_url=single.base, timeout=30) as client:
        yield client


def test_view_history_newest_first_and_restore_from_an_instant(spark, on_single):
    sql = spark.sql
    sql("CREATE NAMESPACE sw.audit")
    sql("CREATE TABLE sw.audit.t (id BIGINT) USING iceberg")
    sql("INSERT INTO sw.audit.t VALUES (1), (2), (3)")
    sql("USE sw.audit")
    sql("CREATE VIEW v AS SELECT id FROM t WHERE id > 1")
    between = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    sql("CREATE OR REPLACE VIEW v AS SELECT id * 10 AS id FROM t")
    sql("USE sw")

    history = spark.sql("SHOW VIEW HISTORY audit.v IN sw").collect()
    assert [(h.version_id, h.sql) for h in history] == [
        (2, {"spark": "SELECT id * 10 AS id FROM t"}),
        (1, {"spark": "SELECT id FROM t WHERE id > 1"})]
    assert history[1].current_until == history[0].current_from
    assert history[0].current_until is None and history[0].restored_from is None
    assert history[0].commit == head(on_single, "main")

    restored = spark.sql(f"RESTORE audit.v FROM TIMESTAMP '{between}' IN sw").collect()
    assert [(r.key, r.action, r.type, r.hash) for r in restored] == [
        ("audit.v", "restored", "ICEBERG_VIEW", head(on_single, "main"))]
    assert rows(spark, "SELECT * FROM audit.v") == [(2,), (3,)]
    newest = spark.sql("SHOW VIEW HISTORY audit.v").collect()[0]
    assert (newest.version_id, newest.sql) == (3, {"spark": "SELECT id FROM t WHERE id > 1"})
    assert newest.restored_from == f"version 1 of main*{between} (commit {history[1].commit[:12]})"

    # Lineage and dependents, as the Python helpers give them.
    assert rows(spark, "SHOW VIEW LINEAGE audit.v") == [("id", False, "audit.t", "id")]
    assert rows(spark, "SHOW VIEW DEPENDENTS audit.t") == [("audit.v", 1, "audit.t", "ok")]

    # A catalog pinned at an instant reads the view as it was then; it cannot restore.
    one(spark, f"USE REFERENCE main AT TIMESTAMP '{between}' IN sw")
    try:
        assert rows(spark, "SELECT * FROM audit.v") == [(2,), (3,)]
        with pytest.raises(AnalysisException, match="RESTORE writes on a branch"):
            spark.sql("RESTORE audit.v FROM main~1")
    finally:
        one(spark, "USE REFERENCE main IN sw")


def test_refusals_name_the_reference_or_the_keys_and_are_not_parse_errors(spark, on_single):
    sql = spark.sql
    with pytest.raises(AnalysisException) as missing:
        sql("MERGE BRANCH no_such IN sw")
    assert not isinstance(missing.value, ParseException)
    assert "no_such" in str(missing.value) and "404" in str(missing.value)

    sql("CREATE NAMESPACE sw.clash")
    sql("CREATE TABLE sw.clash.t (id BIGINT) USING iceberg")
    sql("USE sw.clash")  # views name their tables without the catalog: they read its ref
    sql("CREATE VIEW v AS SELECT id FROM t")
    one(spark, "CREATE BRANCH side IN sw")
    one(spark, "USE REFERENCE side IN sw")
    sql("CREATE OR REPLACE VIEW v AS SELECT id + 1 AS id FROM t")
    one(spark, "USE REFERENCE main IN sw")
    sql("CREATE OR REPLACE VIEW v AS SELECT id + 2 AS id FROM t")
    before = head(on_single, "main")

    dry = [tuple(r) for r in sql("MERGE BRANCH side INTO main IN sw DRY RUN").collect()]
    assert [d[:2] for d in dry] == [("clash.v", "CONFLICT")]
    assert dry[0][2][0].startswith("VALUE_DIFFERS: key 'clash.v' was changed on both sides")
    with pytest.raises(AnalysisException) as conflict:
        sql("MERGE BRANCH side INTO main IN sw")
    assert not isinstance(conflict.value, ParseException)
    assert "[clash.v: VALUE_DIFFERS]" in str(conflict.value)
    assert "409" in str(conflict.value)
    assert head(on_single, "main") == before

    # A merge that lands cleanly but breaks views on the target says so first,
    # a view of a broken view too, with the way (issue 44).
    sql("CREATE VIEW w AS SELECT id FROM t")
    sql("CREATE VIEW top AS SELECT id FROM w")
    one(spark, "ASSIGN BRANCH side TO main IN sw")
    one(spark, "USE REFERENCE side IN sw")
    sql("DROP TABLE t")
    one(spark, "USE REFERENCE main IN sw")
    sql("USE sw")
    before = head(on_single, "main")
    dry = rows(spark, "MERGE BRANCH side DRY RUN")
    assert dry == [("clash.t", "APPLIED", []),
                   ("clash.top", "INVALIDATED",
                    ["clash.top → clash.w → clash.t: table clash.t dropped"]),
                   ("clash.v", "INVALIDATED", ["table clash.t dropped"]),
                   ("clash.w", "INVALIDATED", ["table clash.t dropped"])]
    assert head(on_single, "main") == before


def test_merge_resolves_keys_with_force_and_drop_and_combines_dialects(spark, on_single):
    """MERGE BRANCH ... FORCE (k) DROP (k) (issue 44): a refused merge's
    error and its dry run say how to resolve each key, as the statement to
    run; the keys resolved, it lands; a view main gave a trino
    representation and the branch a duckdb one merges into one version
    with both, which Spark still reads."""
    sql = spark.sql
    sql("CREATE NAMESPACE sw.modes")
    sql("CREATE TABLE sw.modes.t (id BIGINT) USING iceberg")
    sql("INSERT INTO sw.modes.t VALUES (1), (2)")
    sql("USE sw.modes")
    for name in ("v", "w", "x"):
        sql(f"CREATE VIEW {name} AS SELECT id FROM t")
    one(spark, "CREATE BRANCH modes_dev IN sw")
    add_dialect(on_single, "main", "modes", "v", "trino", "SELECT id FROM t")
    add_dialect(on_single, "modes_dev", "modes", "v", "duckdb", "SELECT id FROM t")
    one(spark, "USE REFERENCE modes_dev IN sw")
    for name in ("w", "x"):
        sql(f"CREATE OR REPLACE VIEW {name} AS SELECT id + 1 AS id FROM t")
    one(spark, "USE REFERENCE main IN sw")
    for name in ("w", "x"):
        sql(f"CREATE OR REPLACE VIEW {name} AS SELECT id + 2 AS id FROM t")
    before = head(on_single, "main")

    with pytest.raises(AnalysisException) as refused:
        sql("MERGE BRANCH modes_dev INTO main IN sw")
    text = str(refused.value)
    assert "both sides gave spark different SQL" in text and "None" not in text, text
    assert ("resolve each key: take modes_dev's change with MERGE BRANCH modes_dev INTO main "
            "IN sw FORCE (modes.w, modes.x), or keep main's value with MERGE BRANCH "
            "modes_dev INTO main IN sw DROP (modes.w, modes.x)") in text, text
    dry = {r[0]: r for r in sql("MERGE BRANCH modes_dev INTO main IN sw DRY RUN "
                                 "FORCE (modes.x)").collect()}
    assert (dry["modes.v"][1], dry["modes.x"][1], dry["modes.w"][1]) == (
        "MERGED", "FORCED", "CONFLICT")
    assert dry["modes.w"][2][1:] == [
        "spark diff:\n--- target/spark\n+++ source/spark\n@@ -1 +1 @@\n"
        "-SELECT id + 2 AS id FROM t\n+SELECT id + 1 AS id FROM t",
        "resolve it: take modes_dev's change with MERGE BRANCH modes_dev INTO main IN sw "
        "FORCE (modes.x, modes.w), or keep main's value with MERGE BRANCH modes_dev INTO "
        "main IN sw FORCE (modes.x) DROP (modes.w)"]
    # In the statement's words (FORCE/DROP), not the API's field.
    with pytest.raises(AnalysisException, match=r"FORCE/DROP names a key this merge does not "
                       r"change: 'modes\.ww' \(did you mean 'modes\.w'"):
        sql("MERGE BRANCH modes_dev INTO main IN sw FORCE (modes.ww)")
    assert head(on_single, "main") == before

    merged = one(spark, "MERGE BRANCH modes_dev INTO main IN sw FORCE (modes.w) DROP (modes.x)")
    assert merged == ("main", head(on_single, "main")) and merged[1] != before
    assert rows(spark, "SELECT * FROM w") == [(2,), (3,)]  # the branch's, forced
    assert rows(spark, "SELECT * FROM x") == [(3,), (4,)]  # main's, kept
    view = on_single.get("/iceberg/main/v1/namespaces/modes/views/v").json()["metadata"]
    current = next(v for v in view["versions"]
                   if v["version-id"] == view["current-version-id"])
    assert [r["dialect"] for r in current["representations"]] == ["spark", "trino", "duckdb"]
    assert rows(spark, "SELECT * FROM v") == [(1,), (2,)]
    sql("USE sw")


@pytest.mark.parametrize("statement, near, pos", [
    ("CREATE BRANCH", "end of input", 13),
    ("CREATE BRANCH dev IN", "end of input", 20),
    ("MERGE BRANCH etl INTO main IN sw extra", "'extra'", 33),
    ("SHOW VIEW TREE a.v", "'TREE'", 10),
    ("USE REFERENCE dev AT", "end of input", 20),
    ("DROP TAG IF v1", "'v1'", 12),
    ("CREATE BRANCH a IN sw IN sw", "'IN'", 22),
    ("RESTORE a.v", "end of input", 11),
    ("MERGE BRANCH etl FORCE ns.v", "'ns'", 23),
    ("MERGE BRANCH etl FORCE (a.v) DROP (a.v)", "'a'", 35),
])
def test_a_malformed_statement_is_sparks_parse_error_at_the_token(spark, statement, near, pos):
    with pytest.raises(ParseException) as e:
        spark.sql(statement)
    text = str(e.value)
    assert f"Syntax error at or near {near}" in text, text
    assert f"(line 1, pos {pos})" in text and "-" * pos + "^^^" in text, text


def test_statements_run_once_at_execution_and_explain_runs_none(spark, on_single):
    tagged = spark.sql("CREATE TAG once IN sw")
    # A command runs inside spark.sql; the rows are kept: no second creation (a 409).
    assert tagged.collect() == tagged.collect() and tagged.count() == 1
    with pytest.raises(ParseException):
        spark.sql("EXPLAIN CREATE TAG never IN sw")
    names = [r.name for r in spark.sql("LIST REFERENCES").collect()]
    assert "once" in names and "never" not in names
    # Spark's own statements that start with our words are still Spark's.
    spark.sql("CREATE NAMESPACE sw.once")
    assert spark.sql("SHOW VIEWS IN sw.once").collect() == []


def test_statements_leave_no_warning_in_the_servers_log(spark, single: Server):
    """The extension speaks HTTP/1.1: Java's HttpClient defaults to HTTP/2 and
    asks a plain-http server for an ``Upgrade: h2c``, which uvicorn answers
    with two warnings (one telling the operator to install websockets) per
    statement in the ``sapwood serve`` terminal."""
    for statement in ("SHOW REFERENCE IN sw", "LIST REFERENCES IN sw", "SHOW LOG main IN sw"):
        spark.sql(statement).collect()
    text = single.log.read_text(errors="replace")
    assert "Unsupported upgrade request" not in text
    assert "WebSocket" not in text


def test_credentials_from_the_catalog_and_a_refused_grant(spark_jvm, secured: Server):
    people = secured.people
    reader = plain(spark_jvm, secured.base, credential=people.keys["reader"])
    with pytest.raises(AnalysisException) as refused:
        reader.sql("CREATE BRANCH etl_x IN sw")
    assert "'create-reference'" in str(refused.value) and "403" in str(refused.value)
    assert one(reader, "SHOW REFERENCE IN sw")[:2] == ("BRANCH", "main")

    loader = plain(spark_jvm, secured.base, credential=people.keys["etl"])
    assert one(loader, "CREATE BRANCH etl_x IN sw")[:2] == ("BRANCH", "etl_x")
    token = plain(spark_jvm, secured.base, token=people.keys["reader"])  # a bearer token
    assert ("BRANCH", "etl_x") in {tuple(r)[:2] for r in token.sql("LIST REFERENCES IN sw")
                                   .collect()}

    # A reference the principal may not read answers exactly as a missing one (issue 34).
    nobody = plain(spark_jvm, secured.base, credential=people.keys["nobody"])
    assert nobody.sql("LIST REFERENCES IN sw").collect() == []
    with pytest.raises(AnalysisException) as hidden:
        nobody.sql("SHOW LOG etl_x IN sw")
    with pytest.raises(AnalysisException) as missing:
        nobody.sql("SHOW LOG etl_y IN sw")
    assert "etl_x" in str(hidden.value) and "404" in str(hidden.value)
    assert str(hidden.value).replace("etl_x", "etl_y") == str(missing.value)


@dataclass
class DbtRun:
    process: subprocess.Popen[str] | None
    why_not: str = ""


@pytest.fixture(scope="module", autouse=True)
def dbt_run(spark_ready: None, for_dbt: Server,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[DbtRun]:
    """``dbt run`` of tests/spark/dbt against ``for_dbt``, started with the
    module's first test so that its Spark starts while the others run; the
    source table shop.orders is made on main first (PyIceberg)."""
    from spark.errors import SetupError
    from spark.session import base_conf
    from tests.spark.dbt_env import PROJECT, dbt

    try:
        exe = dbt()
    except SetupError as e:
        yield DbtRun(None, str(e))
        return
    main = for_dbt.catalog()
    main.create_namespace("shop")
    orders = pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                       "amount": pa.array([3, 8, 12], pa.int64())})
    main.create_table("shop.orders", orders.schema).append(orders)
    work = tmp_path_factory.mktemp("dbt")
    env = {**os.environ, "SAPWOOD_URI": for_dbt.base, "SPARK_LOCAL_IP": "127.0.0.1",
           "SAPWOOD_SPARK_JARS": base_conf(log=lambda _: None)["spark.jars"],
           "DBT_TARGET_PATH": str(work / "target"), "DBT_LOG_PATH": str(work / "logs"),
           "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DBT_VERSION_CHECK": "false"}
    process = subprocess.Popen(
        [str(exe), "run", "--no-use-colors", "--project-dir", str(PROJECT),
         "--profiles-dir", str(PROJECT)],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        yield DbtRun(process)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


def test_a_dbt_project_publishes_through_a_branch_from_its_own_sql(dbt_run: DbtRun,
                                                                   for_dbt: Server,
                                                                   spark_jvm):
    """tests/spark/dbt: on-run-start CREATE BRANCH IF NOT EXISTS / USE
    REFERENCE, a table and a view model on it, MERGE BRANCH in the last model's post-hook."""
    if dbt_run.process is None:
        if REQUIRE_SPARK:
            pytest.fail(f"SAPWOOD_REQUIRE_SPARK=1 but dbt cannot run here: {dbt_run.why_not}")
        pytest.skip(f"dbt unavailable: {dbt_run.why_not}")
    out, _ = dbt_run.process.communicate(timeout=600)
    assert dbt_run.process.returncode == 0, out[-4000:]
    assert "Completed successfully" in out

    with http_client(base_url=for_dbt.base, timeout=30) as http:
        branch = [e["commitMeta"] for e in
                  http.get("/api/v2/trees/dbt_run/history").json()["logEntries"]]
        main = [e["commitMeta"] for e in
                http.get("/api/v2/trees/main/history").json()["logEntries"]]
    # The models were written on the branch, as dbt; main got them in one merge.
    assert {m["message"] for m in branch} >= {"create table shop.big_orders",
                                             "create view shop.revenue"}
    assert all(m["authors"] == ["dbt"] for m in branch[:2])
    assert (main[0]["message"], main[0]["authors"]) == ("merge dbt_run into main", ["dbt"])
    assert [m["message"] for m in main[1:]] == ["update table shop.orders",
                                                "create table shop.orders",
                                                "create namespace shop"]
    spark = plain(spark_jvm, for_dbt.base)
    assert rows(spark, "SELECT * FROM sw.shop.big_orders") == [(2, 8), (3, 12)]
    assert rows(spark, "SELECT * FROM sw.shop.revenue") == [(2, 20)]


def test_the_docs_dbt_example_is_the_project_this_module_runs():
    """docs/spark.md shows tests/spark/dbt's dbt_project.yml and profiles.yml as they are."""
    from tests.docs_blocks import ROOT, blocks_of
    from tests.spark.dbt_env import PROJECT

    shown = {b.body for b in blocks_of(ROOT / "docs" / "spark.md") if b.lang == "yaml"}
    for name in ("dbt_project.yml", "profiles.yml"):
        assert (PROJECT / name).read_text() in shown, f"docs/spark.md no longer shows {name}"
