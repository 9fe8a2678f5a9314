"""The Spark side's own verbs, run as ``python -m spark VERB``: ``setup``
(the Iceberg jars and the SQL extension, said with the settings a plain
Spark needs), ``demo`` (write-audit-publish on an embedded catalog) and
``mv-refresh`` (a materialized view refreshed by a local Spark). The
``sapwood`` command's ``spark-setup``, ``demo`` and ``mv refresh`` run
these in a process of their own, so that cli/ and spark/ import nothing of
each other (tests/test_layers.py); each prints what the verb says and
exits 1 with an ``error:`` line on standard error, as the CLI does."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from spark.errors import CatalogError, SetupError


def say(text: str) -> None:
    print(text, flush=True)


def setup() -> None:
    """Fetch the Iceberg jars, build the SQL extension; say where."""
    from spark.jars import OVERRIDE, cache_dir, java, java_version, spark_jars
    from spark.lines import ICEBERG, current, pyspark_version

    java()
    say(f"java: {java_version()}")
    line = current()
    say(f"pyspark {pyspark_version()}: the {line.describe()} line, with Iceberg "
        f"{ICEBERG}'s {line.runtime}")
    jars = spark_jars(log=say)
    how = {"override": f"taken from {OVERRIDE}",
           "maven": f"official, fetched with Maven into {cache_dir() / 'maven'}",
           "maven-cache": f"official, already fetched into {cache_dir() / 'maven'}"}[jars.source]
    say(f"Iceberg jars for Spark ({how}):")
    for path in jars.paths:
        say(f"  {path} ({path.stat().st_size / 1e6:.1f} MB)")
    _sql_extension(list(jars.paths))


def _sql_extension(jars: list[Path]) -> None:
    """Builds Sapwood's Spark SQL extension (once) and prints it with the two
    settings a plain PySpark needs; without a JDK or Maven, says what to install."""
    from spark.extension import CLASS, extension_jar
    from spark.session import EXTENSIONS

    try:
        path, built = extension_jar(log=say)
    except SetupError as e:
        say(f"note: Sapwood's Spark SQL extension was not built: {e}; "
            "the Python helpers work without it")
        return
    say(f"Sapwood's Spark SQL extension ({'built now' if built else 'already built'}):")
    say(f"  {path} ({path.stat().st_size / 1e3:.0f} kB)")
    say("Settings for a plain Spark session:")
    say("  spark.jars=" + ",".join(str(p) for p in [*jars, path]))
    say(f"  spark.sql.extensions={EXTENSIONS},{CLASS}")
    say("and per catalog (docs/spark.md), with its table cache off so that others' "
        "commits show at once:")
    say("  spark.sql.catalog.<name>=org.apache.iceberg.spark.SparkCatalog, "
        ".type=rest, .uri=<server>/iceberg/<ref>, .cache-enabled=false")


def demo(data_dir: Path | None, rows: int) -> None:
    from spark.demo import run

    run(data_dir, rows, out=say)


def mv_refresh(uri: str, key: str, branch: str, full: bool, as_json: bool) -> None:
    from spark.mviews import refresh
    from spark.session import session

    spark = session(uri, ref=branch, catalog="sapwood", app_name="sapwood-mv-refresh",
                    log=lambda line: None)
    try:
        out = refresh(spark, uri, key, branch, "full" if full else "auto")
    finally:
        spark.stop()
    if as_json:
        say(json.dumps(out, indent=2, ensure_ascii=False))
        return
    say(f"{key}: {out['kind']} refresh ({out['reason']}); base tables at "
        f"{out['pinnedReference']}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spark")
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("setup")
    d = verbs.add_parser("demo")
    d.add_argument("--data-dir", type=Path)
    d.add_argument("--rows", type=int, default=2000)
    m = verbs.add_parser("mv-refresh")
    m.add_argument("key")
    m.add_argument("--uri", required=True)
    m.add_argument("--branch", default="main")
    m.add_argument("--full", action="store_true")
    m.add_argument("--json", action="store_true", dest="as_json")
    args = parser.parse_args(argv)
    try:
        if args.verb == "setup":
            setup()
        elif args.verb == "demo":
            demo(args.data_dir, args.rows)
        else:
            mv_refresh(args.uri, args.key, args.branch, args.full, args.as_json)
    except (SetupError, CatalogError) as e:
        print(f"error: {e}", file=sys.stderr, flush=True)
        return 1
    return 0
