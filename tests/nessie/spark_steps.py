"""Issue 47's acceptance 1, the Spark side: plain PySpark 3.5 set up as a
Nessie user sets it up (Iceberg's NessieCatalog, Nessie's Java client
inside Iceberg's Spark runtime, Nessie's Spark SQL extensions 0.99; nothing
Sapwood-specific but the URI), running Nessie's SQL against a server.

Run by tests/nessie/test_nessie_spark.py as a process of its own: Nessie's
SQL extensions are a JVM-wide setting, which a worker's Spark
(tests/spark/conftest.py: ``spark_jvm``, with Sapwood's) cannot take. It
runs every step even after one fails, and writes each step's rows or error
as JSON for the test to check.

    python -m tests.nessie.spark_steps SETTINGS.json RESULTS.json
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

# Acceptance 1's statements, in order (the Spark grammar is Nessie's
# extensions'); each step's name is what the test looks it up by.
STEPS = (
    ("create branch", "CREATE BRANCH dev IN n FROM main"),
    ("use dev", "USE REFERENCE dev IN n"),
    ("create namespace", "CREATE NAMESPACE n.db"),
    ("show namespaces", "SHOW NAMESPACES IN n"),
    ("create table", "CREATE TABLE n.db.t (id bigint, name string) USING iceberg"),
    ("insert", "INSERT INTO n.db.t VALUES (1, 'a'), (2, 'b'), (3, 'c')"),
    ("insert again", "INSERT INTO n.db.t VALUES (4, 'd')"),
    ("create view", "CREATE VIEW n.db.v AS SELECT id, name FROM n.db.t WHERE id > 1"),
    ("table on dev", "SELECT * FROM n.db.t"),
    ("view on dev", "SELECT * FROM n.db.v"),
    ("show tables", "SHOW TABLES IN n.db"),
    ("show views", "SHOW VIEWS IN n.db"),
    ("merge", "MERGE BRANCH dev INTO main IN n"),
    ("log", "SHOW LOG main IN n"),
    ("use main", "USE REFERENCE main IN n"),
    ("table on main", "SELECT * FROM n.db.t"),
    ("view on main", "SELECT * FROM n.db.v"),
    # A table the test made through the Iceberg REST API before Spark began.
    ("rest table", "SELECT * FROM n.rest.r"),
    ("insert into the rest table", "INSERT INTO n.rest.r VALUES (30, 'z')"),
)


def java_steps(spark: Any, uri: str) -> dict[str, Any]:
    """Nessie's Java client itself (the one inside Iceberg's Spark runtime,
    on this JVM), for what NessieCatalog does not ask: each call's answer as
    text, or its error."""
    jvm = spark._jvm
    m = jvm.org.projectnessie.model
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    api = (jvm.org.projectnessie.client.NessieClientBuilder
           .createClientBuilderFromSystemSettings()
           .withUri(jvm.java.net.URI.create(uri))
           .build(jvm.java.lang.Class.forName("org.projectnessie.client.api.NessieApiV2",
                                              True, loader)))
    key = m.ContentKey.fromPathString

    def log_until() -> list[str]:
        entries = api.getCommitLog().refName("main").get().getLogEntries()
        until = entries.get(1).getCommitMeta().getHash()
        got = api.getCommitLog().refName("main").untilHash(until).get().getLogEntries()
        return [str(e.getCommitMeta().getHash()) == str(until) for e in got]

    calls = {
        "default branch": lambda: api.getDefaultBranch().getName(),
        "repository config": lambda: api.getRepositoryConfig().type(
            m.RepositoryConfig.Type.GARBAGE_COLLECTOR).get().getConfigs().size(),
        "namespace": lambda: api.getNamespace().refName("main").namespace(
            m.Namespace.fromPathString("db")).get().name(),
        "full log": lambda: sorted({str(op.getKey()) for e in api.getCommitLog().refName("dev")
                                   .fetch(m.FetchOption.ALL).get().getLogEntries()
                                   for op in (e.getOperations() or [])}),
        "entries by key range": lambda: [str(e.getName()) for e in api.getEntries()
                                         .refName("main").minKey(key("db.t"))
                                         .maxKey(key("db.v")).get().getEntries()],
        "log until a hash": log_until,
    }
    out: dict[str, Any] = {}
    for name, call in calls.items():
        try:
            out[name] = {"ok": True, "value": _plain(call())}
        except Exception as e:  # every call's outcome is the test's to judge
            out[name] = {"ok": False, "error": str(e)[:4000]}
    api.close()
    return out


def conf(settings: dict[str, Any]) -> dict[str, str]:
    return {
        "spark.master": "local[2]",
        "spark.jars": ",".join(settings["jars"]),
        "spark.sql.extensions":
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions,"
            "org.projectnessie.spark.extensions.NessieSparkSessionExtensions",
        "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2", "spark.sql.session.timeZone": "UTC",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={settings['log4j']}",
        # What Nessie's documentation gives, and nothing else.
        "spark.sql.catalog.n": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.n.catalog-impl": "org.apache.iceberg.nessie.NessieCatalog",
        "spark.sql.catalog.n.uri": settings["uri"],
        "spark.sql.catalog.n.client-api-version": "2",
        "spark.sql.catalog.n.ref": "main",
        "spark.sql.catalog.n.warehouse": settings["warehouse"],
    }


def main(settings_file: str, results_file: str) -> None:
    from pyspark.sql import SparkSession

    settings = json.loads(Path(settings_file).read_text())
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    started = time.monotonic()
    builder = SparkSession.builder.appName("nessie-client")
    for k, v in conf(settings).items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    results: dict[str, Any] = {"started_s": time.monotonic() - started, "steps": {}}
    try:
        for name, sql in STEPS:
            try:
                rows = [[_plain(v) for v in r] for r in spark.sql(sql).collect()]
                results["steps"][name] = {"ok": True, "rows": rows}
            except Exception as e:  # every step's outcome is the test's to judge
                results["steps"][name] = {"ok": False, "error": str(e)[:4000]}
        results["java"] = java_steps(spark, settings["uri"])
    finally:
        results["total_s"] = time.monotonic() - started
        Path(results_file).write_text(json.dumps(results))
        spark.stop()


def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
