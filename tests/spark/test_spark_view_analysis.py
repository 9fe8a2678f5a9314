"""Views created by real Spark (CREATE VIEW through the Iceberg REST catalog)
are analysed as the SQL Spark stores: corpus views (tests/core/sql_corpus)
created over empty Iceberg tables match their hand-written dependencies and
column origins; the lineage and dependents helpers return DataFrames."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

import spark as sw
from tests.server import Server

CORPUS = Path(__file__).parent.parent / "core" / "sql_corpus"
SPARK_TYPES = {"long": "BIGINT", "int": "INT", "double": "DOUBLE", "string": "STRING",
               "date": "DATE", "timestamp": "TIMESTAMP"}
WANTED = 15


def _ddl(kind: str) -> str:
    return SPARK_TYPES.get(kind, kind.upper())


def _chosen(views: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first Spark-creatable views whose dependencies are tables or views
    chosen before them."""
    out: list[dict[str, Any]] = []
    keys: set[str] = set()
    tables = set(json.loads((CORPUS / "schema.json").read_text())["tables"])
    for v in views:
        if v.get("spark") and all(d in tables or d in keys for d in v["dependencies"]):
            out.append(v)
            keys.add(v["key"])
        if len(out) == WANTED:
            break
    return out


def test_corpus_views_created_by_spark_match_their_expectations(spark, server: Server,
                                                                http: httpx.Client) -> None:
    schema = json.loads((CORPUS / "schema.json").read_text())["tables"]
    views = _chosen(json.loads((CORPUS / "views.json").read_text()))
    assert len(views) == WANTED
    namespaces = {t.split(".")[0] for t in schema} | {v["key"].split(".")[0] for v in views}
    for ns in sorted(namespaces):
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS sapwood.{ns}")
    for name, cols in schema.items():
        body = ", ".join(f"{c} {_ddl(t)}" for c, t in cols.items())
        spark.sql(f"CREATE TABLE sapwood.{name} ({body}) USING iceberg")
    for v in views:
        spark.sql(f"USE sapwood.{'.'.join(v['default_namespace'])}")
        spark.sql(f"CREATE VIEW sapwood.{v['key']} AS {v['sql']}")
    for v in views:
        got = http.get(f"/api/v2/trees/main/contents/{v['key']}").json()["content"]
        (a,) = got["analysis"]
        assert a["status"] == "ok", (v["key"], a)
        assert sorted(".".join(d["key"]) for d in a["dependencies"]) == \
            sorted(v["dependencies"]), v["key"]
        lineage = http.get(f"/api/v2/trees/main/views/{v['key']}/lineage").json()["columns"]
        assert [c["name"] for c in lineage] == list(v["columns"]), v["key"]
        for c in lineage:
            want = v["columns"][c["name"]]
            assert sorted(".".join([*o["table"], o["column"]]) for o in c["origins"]) == \
                sorted(want["origins"]), (v["key"], c["name"])
            assert c["derived"] == want["derived"], (v["key"], c["name"])
    # The helpers, as DataFrames.
    first = views[0]
    frame = sw.view_lineage(spark, first["key"])
    assert {r["column"] for r in frame.collect()} == set(first["columns"])
    base = first["dependencies"][0]
    readers = {r["view"] for r in sw.view_dependents(spark, base).collect()}
    assert first["key"] in readers
