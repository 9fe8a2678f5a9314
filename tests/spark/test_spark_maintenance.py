"""Iceberg's own maintenance, run by Spark 3.5 with Iceberg 1.10 as a user
would, cannot destroy what another branch or the catalog's history reads:
every table says gc.enabled=false, so expire_snapshots, remove_orphan_files
and DROP TABLE … PURGE refuse with Iceberg's own error, and turning the
property on is refused by the catalog. Table-level branches (write-audit-
publish) still work. Without the property, each procedure here deletes
files a branch still reads (issue 35)."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest

import spark as sw
from tests.server import Server
from tests.spark.conftest import rows

THREE_DAYS_S = 3 * 24 * 3600


def _ts(at: datetime) -> str:
    """A Spark timestamp literal for an instant (UTC, whatever the session's zone)."""
    return "TIMESTAMP '" + at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f") + "+00:00'"


@pytest.fixture(scope="module")
def sql(spark, server: Server):  # type: ignore[no-untyped-def]
    spark.sql("CREATE NAMESPACE IF NOT EXISTS sapwood.mnt")
    return spark.sql


def test_expire_snapshots_is_refused_and_both_histories_stay_readable(spark, sql,
                                                                      server: Server):
    sql("CREATE TABLE sapwood.mnt.exp (id BIGINT) USING iceberg")
    sql("INSERT INTO sapwood.mnt.exp VALUES (1), (2)")
    sw.create_branch(spark, "keep")
    sw.add_catalog(spark, "keep", server.base, "keep")
    time.sleep(0.01)  # an instant strictly between the two commits
    before = datetime.now(UTC)
    time.sleep(0.01)
    sql("INSERT OVERWRITE sapwood.mnt.exp VALUES (3)")

    with pytest.raises(Exception, match="Cannot expire snapshots: GC is disabled"):
        sql("CALL sapwood.system.expire_snapshots(table => 'mnt.exp', "
            f"older_than => {_ts(datetime.now(UTC))}, retain_last => 1)")

    sw.add_catalog(spark, "before_overwrite", server.base, "main", as_of=before)
    assert rows(spark, "SELECT * FROM keep.mnt.exp") == [(1,), (2,)]
    assert rows(spark, "SELECT * FROM before_overwrite.mnt.exp") == [(1,), (2,)]
    assert rows(spark, "SELECT * FROM sapwood.mnt.exp") == [(3,)]


def test_remove_orphan_files_is_refused_and_an_old_branch_stays_readable(
        spark, sql, server: Server, http: httpx.Client):
    sql("CREATE TABLE sapwood.mnt.orph (id BIGINT) USING iceberg")
    sql("INSERT INTO sapwood.mnt.orph VALUES (1)")
    sw.create_branch(spark, "old")
    sw.add_catalog(spark, "old", server.base, "old")
    sql("INSERT INTO old.mnt.orph VALUES (2), (3)")
    # Three days old: past Spark's 24-hour guard and the older_than below.
    # main's metadata knows none of the branch's files.
    loaded = http.get("/iceberg/v1/namespaces/mnt/tables/orph").json()
    table_dir = Path(urlparse(loaded["metadata"]["location"]).path)
    files = [p for p in table_dir.rglob("*") if p.is_file()]
    then = time.time() - THREE_DAYS_S
    for p in files:
        os.utime(p, (then, then))

    with pytest.raises(Exception, match="Cannot delete orphan files: GC is disabled"):
        sql("CALL sapwood.system.remove_orphan_files(table => 'mnt.orph', "
            f"older_than => {_ts(datetime.now(UTC) - timedelta(days=2))})")

    assert all(p.exists() for p in files)
    assert rows(spark, "SELECT * FROM old.mnt.orph") == [(1,), (2,), (3,)]
    assert rows(spark, "SELECT * FROM sapwood.mnt.orph") == [(1,)]


def test_drop_purge_and_turning_gc_on_are_refused(spark, sql, server: Server):
    sql("CREATE TABLE sapwood.mnt.pur (id BIGINT) USING iceberg")
    sql("INSERT INTO sapwood.mnt.pur VALUES (1)")
    props = dict(tuple(r) for r in sql("SHOW TBLPROPERTIES sapwood.mnt.pur").collect())
    assert props["gc.enabled"] == "false"
    sw.create_branch(spark, "side")
    sw.add_catalog(spark, "side", server.base, "side")

    with pytest.raises(Exception, match=r"gc\.enabled cannot be turned on for mnt\.pur"):
        sql("ALTER TABLE sapwood.mnt.pur SET TBLPROPERTIES ('gc.enabled' = 'true')")
    with pytest.raises(Exception, match=r"gc\.enabled cannot be removed from mnt\.pur"):
        sql("ALTER TABLE sapwood.mnt.pur UNSET TBLPROPERTIES ('gc.enabled')")
    with pytest.raises(Exception, match="Cannot purge table: GC is disabled"):
        sql("DROP TABLE sapwood.mnt.pur PURGE")

    assert rows(spark, "SELECT * FROM sapwood.mnt.pur") == [(1,)]
    assert rows(spark, "SELECT * FROM side.mnt.pur") == [(1,)]


def test_write_audit_publish_with_a_table_branch_still_works(spark, sql):
    sql("CREATE TABLE sapwood.mnt.wap (id BIGINT) USING iceberg")
    sql("INSERT INTO sapwood.mnt.wap VALUES (1)")
    sql("ALTER TABLE sapwood.mnt.wap CREATE BRANCH audit")
    sql("INSERT INTO sapwood.mnt.wap.branch_audit VALUES (2)")
    assert rows(spark, "SELECT * FROM sapwood.mnt.wap.branch_audit") == [(1,), (2,)]
    assert rows(spark, "SELECT * FROM sapwood.mnt.wap") == [(1,)]

    sql("CALL sapwood.system.fast_forward('mnt.wap', 'main', 'audit')")
    assert rows(spark, "SELECT * FROM sapwood.mnt.wap") == [(1,), (2,)]
    assert rows(spark, "SELECT * FROM sapwood.mnt.wap.branch_audit") == [(1,), (2,)]
