"""What a newcomer meets in Spark on the first day (issue 44, defects 5, 7
and 8): the helpers' writes name the session's author and SHOW LOG the
commits' properties; an error names the view, reference and instant as the
caller wrote them, never a catalog a helper defined for itself; and every
Spark configuration the docs give reads another writer's rows at once."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pytest

import spark as sw
from spark.errors import CatalogError, NotFoundError
from spark.mviews import create_materialized_view, refresh
from spark.session import ref_spec
from tests.server import Server
from tests.spark.conftest import rows
from tests.zygote_client import run as sapwood

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parents[2]
# What a helper's own catalogs are called (spark/views.py, spark/mviews.py).
INTERNAL = re.compile(r"__main_|__etl_|sapwood_define_|sapwood_refresh_")


def _instant() -> datetime:
    """A moment strictly between the commits before and after it."""
    time.sleep(0.02)
    now = datetime.now(UTC)
    time.sleep(0.02)
    return now


def _log(server: Server, ref: str) -> list[dict[str, Any]]:
    """``sapwood log REF --json``: the API's log entries."""
    proc = sapwood(["log", ref, "--json", "--limit", "50", "--uri", server.base], timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    entries: list[dict[str, Any]] = json.loads(proc.stdout)["logEntries"]
    return entries


def _orders(server: Server, ns: str, ref: str | None = None) -> None:
    """Table ``ns.orders`` (region, amount) with three rows, by PyIceberg."""
    cat = server.catalog(ref)
    cat.create_namespace(ns)
    data = pa.table({"region": pa.array(["north", "north", "south"]),
                     "amount": pa.array([10, 5, 7], pa.int64())})
    cat.create_table(f"{ns}.orders", data.schema).append(data)


def test_every_helper_that_writes_commits_as_the_sessions_author(spark: SparkSession,
                                                                  server: Server) -> None:
    """Defect 5: docs/spark.md's first block, with restore, revert and a
    materialized view besides; SHOW LOG's properties are the API's."""
    _orders(server, "shop")
    s = sw.session(server.base, ref="etl", catalog="etl", author="etl-job")
    branched = sw.create_branch(s, "etl", catalog="etl")
    s.sql("USE etl.shop")
    s.sql("CREATE VIEW revenue AS SELECT region, sum(amount) AS revenue FROM orders "
          "GROUP BY region")
    merged = sw.merge(s, "etl", into="main")
    main = _log(server, "main")[0]["commitMeta"]
    assert main["hash"] == merged["resultantTargetHash"]
    assert main["authors"] == ["etl-job"], main

    s.sql("CREATE OR REPLACE VIEW revenue AS SELECT region, count(*) AS revenue FROM orders "
          "GROUP BY region")
    restored = sw.restore(s, ["shop.revenue"], "main", branch="etl")
    reverted = sw.revert(s, [restored["hash"]], branch="etl")
    create_materialized_view(s, server.base, "shop.by_region",
                             "SELECT region, sum(amount) AS total FROM orders GROUP BY region",
                             ref="etl")
    assert refresh(s, server.base, "shop.by_region", ref="etl")["kind"] == "full"
    entries = _log(server, "etl")
    by_hash = {e["commitMeta"]["hash"]: e["commitMeta"] for e in entries}
    hashes = list(by_hash)
    own = [by_hash[h] for h in hashes[:hashes.index(branched)]]  # newest first
    # The view's create and replace (Spark's), the restore, the revert, the
    # materialized view's creation and its refresh.
    assert len(own) == 6 and {restored["hash"], reverted["hash"]} <= {m["hash"] for m in own}
    assert [(m["message"], m["authors"]) for m in own] == [
        (m["message"], ["etl-job"]) for m in own]
    # An author given to the helper names the commit instead.
    s.sql("INSERT INTO etl.shop.orders VALUES ('east', 1)")
    merged = sw.merge(s, "etl", into="main", author="reviewer")
    assert _log(server, "main")[0]["commitMeta"]["authors"] == ["reviewer"]

    # SHOW LOG's properties are the log's, values and all.
    shown = {r.hash: r.properties for r in s.sql("SHOW LOG etl IN etl").collect()}
    for meta in by_hash.values():
        want = {k: ", ".join(v) for k, v in meta["allProperties"].items()}
        assert shown[meta["hash"]] == want, meta["message"]
    assert shown[restored["hash"]]["sapwood.restore.commit"] == \
        by_hash[restored["hash"]]["allProperties"]["sapwood.restore.commit"][0] != ""
    assert shown[reverted["hash"]]["sapwood.revert.commits"] == restored["hash"]
    s.catalog.setCurrentCatalog("sapwood")


def test_errors_name_the_view_reference_and_instant_as_written(spark: SparkSession,
                                                                server: Server) -> None:
    """Defect 7: reading a view before it existed, a reference before it
    existed, a materialized view over tables that are not there; and the
    CLI's view history at an instant before the view."""
    _orders(server, "words")
    spark.sql("USE sapwood.words")
    before_view = _instant()
    spark.sql("CREATE VIEW v AS SELECT region FROM orders")
    spark.sql("USE sapwood")
    created = _log(server, "main")[0]["commitMeta"]
    assert created["message"] == "create view words.v"
    then = (f"it was created at {created['commitTime']} by commit {created['hash'][:12]} "
            "(create view words.v)")

    with pytest.raises(NotFoundError) as e:
        sw.read_view(spark, "words.v", as_of=before_view)
    assert str(e.value) == (f"view 'words.v' did not exist on main at "
                            f"{before_view.isoformat()}: {then}")
    ms = int(before_view.timestamp() * 1000)
    with pytest.raises(NotFoundError, match=rf"^view 'words.v' did not exist on main at {ms} "
                                            r"\(epoch ms, 20\d\d-[^)]*Z\): it was created at "):
        sw.read_view(spark, "words.v", ref="main", as_of=ms)
    assert [tuple(r) for r in sw.read_view(spark, "words.v", as_of=_instant()).collect()]

    with pytest.raises(NotFoundError) as e:
        sw.read_view(spark, "words.v", as_of="2000-01-01T00:00:00Z")
    assert str(e.value) == ("cannot read view 'words.v' on main at 2000-01-01T00:00:00Z: "
                            "no such ref 'main' at 2000-01-01T00:00:00Z: it did not exist yet")
    assert isinstance(e.value, CatalogError) and e.value.status == 404

    with pytest.raises(NotFoundError) as e:
        sw.read_view(spark, "words.nope", ref="main")
    assert str(e.value) == "view 'words.nope' does not exist on main"

    # README's materialized view, before its tables are there.
    with pytest.raises(NotFoundError) as e:
        create_materialized_view(
            spark, server.base, "sales.by_region",
            "SELECT c.region, sum(o.amount) AS total FROM sales.orders o "
            "JOIN sales.customers c ON o.cust = c.id GROUP BY c.region")
    assert str(e.value).startswith(
        "cannot define materialized view 'sales.by_region' on main: [SCHEMA_NOT_FOUND] "
        "The schema `sales` cannot be found."), str(e.value)
    with pytest.raises(NotFoundError) as e:
        create_materialized_view(spark, server.base, "words.mv", "SELECT * FROM missing")
    assert str(e.value).startswith(
        "cannot define materialized view 'words.mv' on main: [TABLE_OR_VIEW_NOT_FOUND] "
        "The table or view `missing` cannot be found."), str(e.value)
    assert not INTERNAL.search(str(e.value))

    # The view's audit at that instant, from the CLI and the helper alike.
    spec = ref_spec("main", before_view)
    said = f"view 'words.v' did not exist on main at {spec.split('*')[1]}: {then}"
    proc = sapwood(["view", "history", "words.v", "--ref", spec, "--uri", server.base],
                   timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.strip() == f"error: {said}"
    with pytest.raises(NotFoundError) as e:
        sw.view_history(spark, "words.v", ref=spec)
    assert str(e.value) == said


def _documented_settings() -> dict[str, dict[str, str]]:
    """Every fenced block of README.md and docs/*.md that configures a Spark
    catalog (``spark.sql.catalog.<c>.type``), as its ``spark.sql.catalog.*``
    settings: ``key=value`` lines (a note in parentheses after it) or YAML
    ``key: value``; placeholders (``<…>``: a credential) left out."""
    found = {}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for i, block in enumerate(re.findall(r"^```\w*\n(.*?)^```", page.read_text(),
                                             re.S | re.M)):
            if not re.search(r"spark\.sql\.catalog\.\w+\.type\b", block):
                continue
            settings = {}
            for line in block.splitlines():
                m = re.match(r"\s*(spark\.sql\.catalog\.[\w.-]+)\s*[=:]\s*(.*)$", line)
                value = re.sub(r"\s{2,}\(.*\)$", "", m[2]).strip().strip("\"'") if m else ""
                if m and "<" not in value:
                    settings[m[1]] = value
            found[f"{page.relative_to(ROOT)} block {i}"] = settings
    return found


def _plain(jvm: SparkSession, settings: dict[str, str], base: str) -> SparkSession:
    """A new session with nothing but ``settings`` (the docs' server made ours)."""
    s = jvm.newSession()
    # A session built earlier in this JVM may have left catalogs in its properties.
    for key, _ in jvm.sparkContext.getConf().getAll():
        if key.startswith("spark.sql.catalog."):
            s.conf.unset(key)
    for key, value in settings.items():
        value = value.replace("{{ env_var('SAPWOOD_URI') }}", base)
        s.conf.set(key, value.replace("http://127.0.0.1:8181", base))
    return s


def test_every_documented_configuration_reads_another_writers_rows(
        spark: SparkSession, spark_jvm: SparkSession, server: Server) -> None:
    """Defect 8: a count, a PyIceberg append, the same count again: one more."""
    _orders(server, "fresh")
    table = server.catalog().load_table("fresh.orders")
    documented = _documented_settings()
    # docs/spark.md's plain Spark and its dbt profile, at least.
    assert len([d for d in documented if d.startswith("docs/spark.md")]) >= 2, documented

    def reads_the_append(session: SparkSession, name: str, what: str) -> None:
        before = rows(session, f"SELECT count(*) FROM {name}")[0][0]
        table.append(pa.table({"region": pa.array(["west"]),
                               "amount": pa.array([1], pa.int64())}))
        assert rows(session, f"SELECT count(*) FROM {name}") == [(before + 1,)], what

    for what, settings in documented.items():
        catalog = next(k for k in settings if k.count(".") == 3).rsplit(".", 1)[1]
        assert settings[f"spark.sql.catalog.{catalog}.uri"].endswith("/iceberg/main"), what
        reads_the_append(_plain(spark_jvm, settings, server.base), f"{catalog}.fresh.orders",
                         what)
    # sw.session and add_catalog (docs/spark.md, README.md), on a branch and
    # pinned at an instant still to come (the branch until then).
    s = sw.session(server.base, ref="main", catalog="fresh_s", author="etl-job")
    reads_the_append(s, "fresh_s.fresh.orders", "sw.session")
    sw.add_catalog(s, "fresh_a", server.base, "main")
    reads_the_append(s, "fresh_a.fresh.orders", "sw.add_catalog")
    sw.add_catalog(s, "fresh_t", server.base, "main", as_of=datetime.now(UTC) + timedelta(hours=1))
    reads_the_append(s, "fresh_t.fresh.orders", "sw.add_catalog(as_of=in an hour)")


def test_a_second_session_call_moves_its_catalog_to_the_ref_it_names(spark: SparkSession,
                                                                      server: Server) -> None:
    """``sw.session`` while a session runs, naming a catalog that session
    already loaded on another ref (a notebook following README then
    docs/undo.md): the catalog reads the ref asked for, not the one Spark
    loaded first; the other catalogs come along."""
    _orders(server, "moves")
    first = sw.session(server.base, ref="main", catalog="moving")
    sw.add_catalog(first, "kept", server.base, "main")
    assert rows(first, "SELECT count(*) FROM moving.moves.orders") == [(3,)]
    sw.create_branch(first, "moves_dev", catalog="moving")
    server.catalog("moves_dev").load_table("moves.orders").append(
        pa.table({"region": pa.array(["east"]), "amount": pa.array([1], pa.int64())}))
    second = sw.session(server.base, ref="moves_dev", catalog="moving")
    assert rows(second, "SELECT count(*) FROM moving.moves.orders") == [(4,)]
    assert rows(second, "SELECT count(*) FROM kept.moves.orders") == [(3,)]
    # Asked again as it is: the same session.
    again = sw.session(server.base, ref="moves_dev", catalog="moving")
    assert again._jsparkSession.equals(second._jsparkSession)
