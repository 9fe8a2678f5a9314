"""``sapwood demo``, the README's run command, end to end: its own embedded
catalog (SQLite file + local warehouse) and its own Spark, as a user runs it."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from tests.server import sapwood_command

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _demo(tmp_path: Path) -> tuple[str, Path]:
    """The demo's output and its kept catalog. tests/run.sh has run the
    README's run command in a fresh venv just before the suite (with
    ``--data-dir``), and says where (SAPWOOD_DEMO_RUN): that run, a user's
    install, is the one checked. Otherwise the demo runs here."""
    run = os.environ.get("SAPWOOD_DEMO_RUN")
    if run and (Path(run) / "demo.log").exists():
        return (Path(run) / "demo.log").read_text(), Path(run) / "demo"
    data = tmp_path / "demo"
    out = subprocess.run([*sapwood_command(), "demo", "--data-dir", str(data)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout, data


def demo_in_process(jvm: SparkSession, data: Path) -> tuple[str, Path]:
    """The demo (spark.demo.run) on ``jvm``'s Spark instead of one of its
    own: a new session of it, made the active one, takes the demo's
    catalogs, and the demo leaves running the session it did not start
    (tests/spark/test_spark_lines.py: a line's group shares one JVM)."""
    from spark.demo import run

    s = jvm.newSession()
    sessions = s._jvm.org.apache.spark.sql.SparkSession  # type: ignore[attr-defined]
    sessions.setActiveSession(s._jsparkSession)
    lines: list[str] = []
    run(data, 2000, out=lines.append)
    assert not jvm.sparkContext._jsc.sc().isStopped()
    return "".join(line + "\n" for line in lines), data


def test_the_demo_writes_audits_publishes_and_travels_in_time(spark_ready, tmp_path):
    check_demo(*_demo(tmp_path))


def check_demo(text: str, data: Path) -> None:
    """The demo's story in its output, and its kept catalog."""
    steps = re.findall(r"^\[(\d)/8\] ", text, re.M)
    assert steps == [str(i) for i in range(1, 9)], text

    # write on etl, invisible on main
    assert "main still has no namespaces: []" in text
    # audit: the loader's bad rows fail a check and abort the merge
    assert "check failed: negative amounts: 20, expected 0" in text
    assert "merge aborted: main is unchanged" in text
    assert "added    shop.revenue_by_region  (ICEBERG_VIEW)" in text
    assert "all checks pass" in text
    # publish, and main reads the merged view
    assert re.search(r"main is now at [0-9a-f]{12}; main sees:\n\s+region\s+revenue\n", text)
    before, after = text.split("(before the replacement):")[1].split("(after):")
    assert re.findall(r"^\s+(north|south|east|west|centre)\s+[\d.]+\s*$", before, re.M) \
        and len(re.findall(r"^\s+\w+\s+[\d.]+\s*$", before, re.M)) == 5
    assert re.search(r"^\s+region\s+orders\s+revenue", after, re.M)
    assert len(re.findall(r"^\s+(north|south|east|west|centre)\s+\d+\s+[\d.]+", after,
                          re.M)) == 5
    # the audit names both versions, their authors, and the SQL of each
    assert re.search(r"^\s+1\s+[\d:.]+\s+[\d:.]+\s+etl-job\s+[0-9a-f]{12}\s+create view "
                     r"shop.revenue_by_region", text, re.M)
    assert re.search(r"^\s+2\s+[\d:.]+\s+-\s+analyst\s+[0-9a-f]{12}\s+replace view", text,
                     re.M)
    assert "WHERE o.amount >= 20" in text
    seconds = float(re.search(r"demo finished in ([\d.]+) s", text).group(1))
    assert seconds < 120

    # The kept catalog is the embedded default, and main has what was published.
    assert (data / "warehouse").is_dir()
    db = sqlite3.connect(data / "sapwood.db")
    try:
        assert db.execute("SELECT count(*) FROM refs WHERE name = 'etl'").fetchone() == (1,)
    finally:
        db.close()
    fsck = subprocess.run([*sapwood_command(), "fsck", "--database",
                           f"sqlite:///{data / 'sapwood.db'}"], capture_output=True, text=True)
    assert fsck.returncode == 0 and fsck.stdout.strip().endswith("ok"), fsck.stdout


def test_the_demo_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "something").write_text("x")
    out = subprocess.run([*sapwood_command(), "demo", "--data-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert f"{tmp_path} is not empty" in out.stderr + out.stdout
