"""Spark SQL through the Iceberg REST catalog on a branch, merged into main;
views read across refs; a view with several dialects; the helpers."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import httpx
import pytest
from pyspark.errors import AnalysisException

import spark as sw
from tests.server import Server
from tests.spark.conftest import rows


def _describe(spark, name: str) -> dict[str, str]:
    return {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE EXTENDED {name}").collect()}


def test_branch_catalog_ddl_is_invisible_on_main_until_the_merge(spark, server: Server,
                                                                 http: httpx.Client):
    sw.create_branch(spark, "etl")
    sw.add_catalog(spark, "etl", server.base, "etl", author="etl-job")
    sw.add_catalog(spark, "main", server.base, "main")
    sql = spark.sql

    sql("CREATE NAMESPACE etl.sales")
    sql("CREATE TABLE etl.sales.t (id BIGINT, name STRING) USING iceberg")
    sql("INSERT INTO etl.sales.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    sql("USE etl.sales")
    sql("CREATE VIEW v AS SELECT id, name FROM t WHERE id >= 2")
    assert rows(spark, "SELECT * FROM etl.sales.v") == [(2, "b"), (3, "c")]
    assert [r.viewName for r in sql("SHOW VIEWS IN etl.sales").collect()] == ["v"]
    described = _describe(spark, "etl.sales.v")
    assert described["View Catalog and Namespace"] == "etl.sales"
    assert described["View Query Output Columns"] == "[id, name]"

    sql("CREATE OR REPLACE VIEW v AS SELECT id FROM t WHERE id = 1")
    assert rows(spark, "SELECT * FROM etl.sales.v") == [(1,)]
    sql("ALTER VIEW etl.sales.v SET TBLPROPERTIES ('team' = 'finance')")
    props = dict(tuple(r) for r in sql("SHOW TBLPROPERTIES etl.sales.v").collect())
    assert props["team"] == "finance"

    sql("CREATE VIEW w AS SELECT count(*) AS n FROM t")
    sql("ALTER VIEW etl.sales.w RENAME TO sales.w2")
    assert rows(spark, "SELECT * FROM etl.sales.w2") == [(3,)]
    assert sorted(r.viewName for r in sql("SHOW VIEWS IN etl.sales").collect()) == ["v", "w2"]
    sql("DROP VIEW etl.sales.w2")
    assert [r.viewName for r in sql("SHOW VIEWS IN etl.sales").collect()] == ["v"]

    # main sees none of it
    assert "sales" not in [r[0] for r in sql("SHOW NAMESPACES IN main").collect()]
    with pytest.raises(AnalysisException):
        sql("SELECT * FROM main.sales.v").collect()
    pending = {(d["key"], d["change"]) for d in sw.diff(spark, "main", "etl")}
    assert pending == {("sales", "added"), ("sales.t", "added"), ("sales.v", "added")}

    result = sw.merge(spark, "etl", into="main")
    assert result["wasApplied"] is True
    assert rows(spark, "SELECT * FROM main.sales.v") == [(1,)]
    assert [r.viewName for r in sql("SHOW VIEWS IN main.sales").collect()] == ["v"]
    assert rows(spark, "SELECT * FROM main.sales.t") == [(1, "a"), (2, "b"), (3, "c")]
    props = dict(tuple(r) for r in sql("SHOW TBLPROPERTIES main.sales.v").collect())
    assert props["team"] == "finance"

    # The view carries no catalog name: through `main` it reads main's table.
    meta = http.get("/iceberg/main/v1/namespaces/sales/views/v").json()["metadata"]
    assert all("default-catalog" not in v for v in meta["versions"])
    sql("INSERT INTO etl.sales.t VALUES (1, 'only on etl')")
    assert rows(spark, "SELECT * FROM main.sales.v") == [(1,)]
    assert rows(spark, "SELECT * FROM etl.sales.v") == [(1,), (1,)]

    # Spark's writes carry the catalog's author.
    log = http.get("/api/v2/trees/etl/history").json()["logEntries"]
    assert log[0]["commitMeta"]["authors"] == ["etl-job"]


def test_a_view_on_another_branch_by_identifier(spark, server: Server):
    sql = spark.sql
    sql("CREATE NAMESPACE sapwood.shared")
    sql("CREATE TABLE sapwood.shared.t (id BIGINT) USING iceberg")
    sql("INSERT INTO sapwood.shared.t VALUES (1), (2), (3)")
    sw.create_branch(spark, "feature")
    sw.add_catalog(spark, "feature", server.base, "feature")
    sql("USE feature.shared")
    sql("CREATE VIEW odd AS SELECT id FROM t WHERE id % 2 = 1")
    sql("USE sapwood")

    with pytest.raises(AnalysisException):
        sql("SELECT * FROM sapwood.shared.odd").collect()
    assert rows(spark, "SELECT * FROM sapwood.shared.`odd@feature`") == [(1,), (3,)]
    assert rows(spark, "SELECT * FROM shared.`odd@feature` WHERE id > 1") == [(3,)]


def test_spark_reads_the_spark_representation(spark, http: httpx.Client):
    spark.sql("CREATE NAMESPACE sapwood.dialects")
    spark.sql("CREATE TABLE sapwood.dialects.t (id BIGINT) USING iceberg")
    spark.sql("INSERT INTO sapwood.dialects.t VALUES (1), (2)")
    version = {
        "version-id": 1, "timestamp-ms": 1, "schema-id": 0,
        "summary": {"engine-name": "trino"}, "default-namespace": ["dialects"],
        "representations": [
            {"type": "sql", "dialect": "trino",
             "sql": "SELECT x FROM t CROSS JOIN UNNEST(ARRAY[id * 1000]) AS u(x)"},
            {"type": "sql", "dialect": "spark", "sql": "SELECT id * 10 AS x FROM t"}]}
    schema = {"type": "struct", "schema-id": 0,
              "fields": [{"id": 1, "name": "x", "required": False, "type": "long"}]}
    r = http.post("/iceberg/v1/namespaces/dialects/views",
                  json={"name": "both", "schema": schema, "view-version": version,
                        "properties": {}})
    assert r.status_code == 200, r.text
    assert rows(spark, "SELECT * FROM sapwood.dialects.both") == [(10,), (20,)]


def test_helpers_read_view_history_and_refuse_a_conflicting_merge(spark, server: Server):
    sql = spark.sql
    sql("CREATE NAMESPACE sapwood.helpers")
    sql("CREATE TABLE sapwood.helpers.t (id BIGINT) USING iceberg")
    sql("INSERT INTO sapwood.helpers.t VALUES (5)")
    sql("USE sapwood.helpers")
    sql("CREATE VIEW v AS SELECT id FROM t")
    sw.create_branch(server.base, "side")
    sw.add_catalog(spark, "side", server.base, "side", author="side-job")
    sql("USE side.helpers")
    sql("CREATE OR REPLACE VIEW v AS SELECT id + 1 AS id FROM t")
    sql("USE sapwood.helpers")
    sql("CREATE OR REPLACE VIEW v AS SELECT id + 2 AS id FROM t")
    sql("USE sapwood")

    assert [tuple(r) for r in sw.read_view(spark, "helpers.v").collect()] == [(7,)]
    assert [tuple(r) for r in sw.read_view(spark, "helpers.v", ref="side").collect()] == [(6,)]

    history = sw.view_history(spark, "helpers.v", ref="side").orderBy("version_id").collect()
    assert [(h.version_id, h.author) for h in history] == [(1, "anonymous"), (2, "side-job")]
    assert history[0].sql == {"spark": "SELECT id FROM t"}
    assert history[1].sql == {"spark": "SELECT id + 1 AS id FROM t"}
    assert history[0].current_until == history[1].current_from
    assert history[1].current_until is None

    with pytest.raises(sw.CatalogError) as conflict:
        sw.merge(spark, "side", into="main")
    assert conflict.value.status == 409
    assert "helpers.v" in conflict.value.message
    assert [tuple(r) for r in sw.read_view(spark, "helpers.v").collect()] == [(7,)]


def test_helpers_default_to_the_sessions_current_catalog(spark, server: Server):
    """Without ``catalog=``, a helper uses the catalog unqualified names resolve
    in (docs/spark.md makes its session with ``catalog="etl"``)."""
    spark.sql("USE spark_catalog")
    try:
        with pytest.raises(ValueError, match="current catalog 'spark_catalog' is not a "
                                             "Sapwood catalog: name one with catalog="):
            sw.diff(spark, "main", "main")
        assert sw.diff(spark, "main", "main", catalog="sapwood") == []
    finally:
        spark.sql("USE sapwood")
    assert sw.diff(spark, "main", "main") == []


def test_spark_sends_an_idempotency_key_on_every_write(spark, server: Server):
    """docs/iceberg-rest.md says Iceberg 1.12's REST client (Spark, both
    lines) sends an Idempotency-Key of its own on each mutation, as the
    server's /v1/config offers (idempotency-key-lifetime), and none on a
    read: its requests, through a proxy that records what it is sent. (1.10's
    sent none.)"""
    import uuid

    from spark.session import catalog_conf
    from tests.proxy import LossyProxy

    with LossyProxy(f"127.0.0.1:{server.port}", lambda m, p: False) as proxy:
        for k, v in catalog_conf("proxied", proxy.base).items():
            spark.conf.set(k, v)
        spark.sql("CREATE NAMESPACE IF NOT EXISTS proxied.idem")
        spark.sql("CREATE TABLE proxied.idem.t (id BIGINT) USING iceberg")
        spark.sql("INSERT INTO proxied.idem.t VALUES (1), (2)")
        assert rows(spark, "SELECT id FROM proxied.idem.t") == [(1,), (2,)]
        spark.sql("CREATE VIEW proxied.idem.v AS SELECT id FROM proxied.idem.t")
        spark.sql("DROP VIEW proxied.idem.v")
    writes = [(m, p, h.get("idempotency-key")) for m, p, h in proxy.received
              if m not in ("GET", "HEAD")]
    assert [(m, p.split("/v1/", 1)[1]) for m, p, _ in writes] == [
        ("POST", "main/namespaces"), ("POST", "main/namespaces/idem/tables"),
        ("POST", "main/namespaces/idem/tables/t"), ("POST", "main/namespaces/idem/views"),
        ("DELETE", "main/namespaces/idem/views/v")], writes
    keys = [k for _, _, k in writes]
    assert all(k is not None and uuid.UUID(k) for k in keys), writes
    assert len(set(keys)) == len(keys)
    assert not any("idempotency-key" in h for m, _, h in proxy.received
                   if m in ("GET", "HEAD"))


def test_a_view_trino_made_on_a_branch_reads_in_spark_with_the_branchs_rows(
        spark, server: Server, http: httpx.Client):
    """Trino 476 with docs/trino/iceberg.properties (catalog iceberg_dev on
    the branch) creates a view as captured from it: config asked with the
    catalog's name as warehouse, its prefix used, the catalog's name in the
    SQL, no default-catalog, Trino SQL only. Spark, whose catalog for the
    branch has another name, reads the branch's rows, and Sapwood analyses
    the view ok (issue 49, defect 3: TABLE_OR_VIEW_NOT_FOUND iceberg_dev.tr.orders,
    and 'does not exist')."""
    sql = spark.sql
    sql("CREATE NAMESPACE IF NOT EXISTS sapwood.tr")
    sql("CREATE TABLE sapwood.tr.orders (id BIGINT, src STRING) USING iceberg")
    sql("INSERT INTO sapwood.tr.orders VALUES (1, 'main')")
    sw.create_branch(spark, "tdev")
    sw.add_catalog(spark, "tdev", server.base, "tdev")
    sql("INSERT INTO tdev.tr.orders VALUES (2, 'dev')")

    config = http.get("/iceberg/tdev/v1/config", params={"warehouse": "iceberg_dev"})
    assert config.status_code == 200, config.text
    prefix = config.json()["overrides"]["prefix"]
    r = http.post(f"/iceberg/tdev/v1/{prefix}/namespaces/tr/views", json={
        "name": "by_trino",
        "schema": {"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "required": True, "type": "long"},
            {"id": 2, "name": "src", "required": True, "type": "string"}]},
        "view-version": {
            "version-id": 1, "schema-id": 0, "timestamp-ms": 1795832034760,
            "summary": {"engine-version": "476", "engine-name": "trino",
                        "iceberg-version": "Apache Iceberg 1.9.1"},
            "default-namespace": ["tr"],
            "representations": [{"type": "sql", "dialect": "trino",
                                 "sql": "SELECT\n  id\n, src\nFROM\n  iceberg_dev.tr.orders\n"}]},
        "properties": {}})
    assert r.status_code == 200, r.text
    assert rows(spark, "SELECT * FROM tdev.tr.by_trino") == [(1, "main"), (2, "dev")]
    status = http.get("/api/v2/trees/tdev/views", params={"status": "all", "key": "tr.by_trino"})
    assert [v["status"] for v in status.json()["views"]] == ["ok"], status.text


def test_a_view_served_with_derived_trino_sql_is_replaced_in_spark_and_pinned_reads_the_old(
        spark, server: Server, http: httpx.Client):
    """A view Spark made is served, to a catalog that named itself (as
    Trino's does: docs/trino/iceberg.properties), with Trino and DuckDB SQL
    derived from its Spark SQL (core/sql/derived.py) and
    replace.drop-dialect.allowed=true, and to Spark as written: Spark's
    CREATE OR REPLACE VIEW (Spark SQL alone) works, twice, as the derived
    SQL is never stored; a catalog pinned at an instant before the replaces
    reads the old definition (issue 49, acceptance 2)."""
    sql = spark.sql
    sql("CREATE NAMESPACE IF NOT EXISTS sapwood.derived")
    sql("USE sapwood.derived")
    sql("CREATE TABLE t (id BIGINT) USING iceberg")
    sql("INSERT INTO t VALUES (1)")
    sql("CREATE VIEW v AS SELECT id FROM t")
    for path, dialects in (("/iceberg/main/v1/main%7Ctrino/namespaces/derived/views/v",
                            ["duckdb", "spark", "trino"]),
                           ("/iceberg/v1/namespaces/derived/views/v", ["spark"])):
        served = http.get(path).json()["metadata"]
        [current] = [v for v in served["versions"]
                     if v["version-id"] == served["current-version-id"]]
        assert sorted(r["dialect"] for r in current["representations"]) == dialects
        assert ("replace.drop-dialect.allowed" in served["properties"]) == (len(dialects) > 1)
    time.sleep(0.01)
    instant = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    time.sleep(0.01)
    sql("CREATE OR REPLACE VIEW v AS SELECT id + 1 AS id FROM t")
    sql("CREATE OR REPLACE VIEW v AS SELECT id + 2 AS id FROM t")
    sql("USE sapwood")
    assert rows(spark, "SELECT * FROM sapwood.derived.v") == [(3,)]
    sw.add_catalog(spark, "derived_then", server.base, "main", as_of=instant)
    assert rows(spark, "SELECT * FROM derived_then.derived.v") == [(1,)]
