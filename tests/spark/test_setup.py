"""``sapwood spark-setup``: the line it picks for the installed pyspark (and
the pysparks it refuses), the official jars fetched with Maven from an
empty cache, the SQL extension built with Maven, what a missing
prerequisite says, and the wheel carrying the extension's Maven project."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from spark.extension import PROJECT, sources
from spark.lines import LINES, current
from spark.maven import jar_names, mvn
from tests.server import sapwood_command
from tests.spark.conftest import REQUIRE_SPARK
from tests.zygote_client import run as sapwood

ROOT = Path(__file__).resolve().parents[2]
SHADED_JACKSON = "org/apache/iceberg/shaded/com/fasterxml/jackson/core/JsonFactoryBuilder.class"
SHADED_POOL_BUILDER = ("org/apache/iceberg/shaded/org/apache/hc/client5/http/impl/io/"
                       "PoolingHttpClientConnectionManagerBuilder.class")


def _setup(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``sapwood spark-setup`` with ``env`` added, forked from the worker's
    zygote (tests/zygote.py: the real command in a process of its own, which
    reads its settings when it runs, without a second of imports per call);
    with a stand-in pyspark on PYTHONPATH, a new process, as the zygote has
    imported the installed one."""
    if "PYTHONPATH" in env:
        return subprocess.run([*sapwood_command(), "spark-setup"], capture_output=True,
                              text=True, timeout=600, env={**os.environ, **env})
    return sapwood(["spark-setup"], env=env, timeout=600)


def _require_maven() -> None:
    if mvn() is None:
        if REQUIRE_SPARK:
            pytest.fail("SAPWOOD_REQUIRE_SPARK=1 but there is no mvn for the official jars")
        pytest.skip("no mvn: the official jars cannot be fetched here")


def test_spark_setup_fetches_the_official_jars_with_maven_once(spark_ready, tmp_path):
    _require_maven()
    env = {"SAPWOOD_CACHE_DIR": str(tmp_path)}
    first = _setup(env)
    assert first.returncode == 0, first.stdout + first.stderr
    line = current()
    assert (f"the {line.describe()} line, with Iceberg 1.12.0's "
            f"iceberg-spark-runtime-{line.name}_{line.scala}\n") in first.stdout, first.stdout
    folder = tmp_path / "spark" / "maven"
    assert f"official, fetched with Maven into {folder}" in first.stdout, first.stdout
    for name in jar_names(line):
        assert f"{folder / name} (" in first.stdout
        with zipfile.ZipFile(folder / name) as z:
            names = set(z.namelist())
        if name.startswith("iceberg-spark-runtime"):
            # Complete: the shaded classes Iceberg's REST client needs are in it.
            assert SHADED_JACKSON in names and SHADED_POOL_BUILDER in names
            assert "org/apache/iceberg/spark/SparkCatalog.class" in names
        else:
            assert "software/amazon/awssdk/services/s3/S3Client.class" in names
    assert not list(folder.glob(".fetch-*")), "a temporary folder was left behind"
    # Sapwood's SQL extension, the line's module built with Maven, and the two
    # settings a plain PySpark needs (docs/spark.md).
    extension = next((tmp_path / "spark").glob(f"sapwood-spark-sql-{line.name}_*.jar"))
    assert (f"building Sapwood's Spark SQL extension for {line.describe()} with Maven "
            f"(module spark-{line.name} of {PROJECT})") in first.stdout
    assert "Sapwood's Spark SQL extension (built now):" in first.stdout
    with zipfile.ZipFile(extension) as z:
        classes = set(z.namelist())
    assert {"dev/sapwood/spark/SapwoodSparkSessionExtensions.class",
            "dev/sapwood/spark/SapwoodCommand.class", "dev/sapwood/spark/Grammar.class"} <= classes
    assert not any(n.startswith(("org/apache/spark/", "scala/")) for n in classes)
    assert not list((tmp_path / "spark").glob(".sql-ext-*")), "a build folder was left behind"
    jars = ",".join([*(str(folder / n) for n in jar_names(line)), str(extension)])
    assert f"  spark.jars={jars}\n" in first.stdout, first.stdout
    assert ("  spark.sql.extensions=org.apache.iceberg.spark.extensions."
            "IcebergSparkSessionExtensions,dev.sapwood.spark.SapwoodSparkSessionExtensions\n"
            ) in first.stdout
    # A catalog's own settings, the table cache off (issue 44, defect 8).
    assert ".cache-enabled=false\n" in first.stdout, first.stdout
    again = _setup(env)
    assert again.returncode == 0, again.stderr
    assert f"official, already fetched into {folder}" in again.stdout
    assert "fetching" not in again.stdout and "building" not in again.stdout
    assert "Sapwood's Spark SQL extension (already built):" in again.stdout


def _stand_in_pyspark(folder: Path, version: str) -> dict[str, str]:
    """An environment whose ``import pyspark`` is a stand-in of ``version``
    (only spark-setup's choice of line is under test)."""
    package = folder / "pyspark"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f"__version__ = {version!r}\n")
    return {"PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.parametrize("version, why", [
    ("4.2.1", "Iceberg 1.12.0 publishes no Spark runtime for Spark 4.2"),
    ("4.3.0", "Iceberg 1.12.0 publishes no Spark runtime for Spark 4.3"),
    ("4.0.5", "Sapwood does not support Spark 4.0"),
    ("3.4.4", "Sapwood does not support Spark 3.4"),
])
def test_a_pyspark_of_no_supported_line_is_refused_naming_the_lines(tmp_path, version, why):
    out = _setup({**_stand_in_pyspark(tmp_path, version),
                  "SAPWOOD_CACHE_DIR": str(tmp_path / "cache")})
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stderr == (
        f"error: pyspark {version} is not supported: {why}. Sapwood supports Spark 3.5 "
        "(Scala 2.12), pyspark 3.5.x (pip install -c constraints.txt -e '.[spark]') and "
        "Spark 4.1 (Scala 2.13), pyspark 4.1.x (pip install -c constraints-spark41.txt -e "
        "'.[spark]')\n"), out.stderr
    assert not (tmp_path / "cache").exists(), "nothing is fetched for a refused pyspark"


def test_a_pyspark_41_gets_the_41_runtime_and_module(tmp_path):
    """The 4.1 line's choice, from the 3.5 suite (the Spark 4.1 group runs the
    real one): the runtime named, and the 4.1 module built."""
    _require_maven()
    jar = tmp_path / "iceberg-spark-runtime-4.1_2.13-1.12.0.jar"
    jar.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    out = _setup({**_stand_in_pyspark(tmp_path / "py", "4.1.9"),
                  "SAPWOOD_ICEBERG_SPARK_JARS": str(jar)})
    assert out.returncode == 0, out.stdout + out.stderr
    assert ("pyspark 4.1.9: the Spark 4.1 (Scala 2.13) line, with Iceberg 1.12.0's "
            "iceberg-spark-runtime-4.1_2.13\n") in out.stdout
    built = re.search(r"^  (\S+sapwood-spark-sql-4\.1_2\.13-[0-9a-f]{12}\.jar) \(", out.stdout,
                      re.M)
    assert built, out.stdout
    with zipfile.ZipFile(built.group(1)) as z:
        assert "dev/sapwood/spark/SapwoodSqlParser.class" in z.namelist()


def test_without_maven_the_jars_not_yet_fetched_say_what_to_install(spark_ready, tmp_path):
    out = _setup({"SAPWOOD_CACHE_DIR": str(tmp_path), "SAPWOOD_MVN": "off"})
    assert out.returncode == 1
    line = current()
    assert (f"error: fetching Iceberg's jars for {line.describe()} needs Maven "
            "(SAPWOOD_MVN=off): install Maven (Debian: apt-get install maven) or set "
            "SAPWOOD_MVN to an mvn; or set SAPWOOD_ICEBERG_SPARK_JARS to jars of your own"
            ) in out.stderr, out.stderr
    assert not list(tmp_path.rglob("*.jar"))


def test_a_maven_that_fails_is_named(spark_ready, tmp_path):
    out = _setup({"SAPWOOD_CACHE_DIR": str(tmp_path), "SAPWOOD_MVN": "/bin/false"})
    assert out.returncode == 1
    line = current()
    assert (f"error: Maven could not fetch org.apache.iceberg:iceberg-spark-runtime-"
            f"{line.name}_{line.scala}:1.12.0: mvn exited 1") in out.stderr, out.stderr


def test_the_override_takes_given_jars_or_names_the_missing_ones(tmp_path):
    jar = tmp_path / "iceberg-spark-runtime-3.5_2.12-1.12.0.jar"
    jar.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    ok = _setup({"SAPWOOD_ICEBERG_SPARK_JARS": str(jar)})
    assert ok.returncode == 0, ok.stderr
    assert "taken from SAPWOOD_ICEBERG_SPARK_JARS" in ok.stdout and str(jar) in ok.stdout
    missing = _setup({"SAPWOOD_ICEBERG_SPARK_JARS": str(tmp_path / "nope.jar")})
    assert missing.returncode == 1
    assert f"names jars that do not exist: {tmp_path / 'nope.jar'}" in missing.stderr


def test_the_wheel_carries_the_extensions_maven_project(tmp_path):
    """A user's install builds the extension from the wheel's copy: every
    file spark-setup builds either line from is in it, the tests are not.
    Built from a copy of the checkout's files as git sees them (no build/
    folder of an earlier build; nothing written into the checkout)."""
    tree = tmp_path / "tree"
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / name, tree / name)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                           "-w", str(tmp_path), str(tree)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    with zipfile.ZipFile(next(tmp_path.glob("sapwood-*.whl"))) as wheel:
        names = set(wheel.namelist())
    needed = {f"spark/sql-extension/{p.as_posix()}" for line in LINES for p in sources(line)}
    needed |= {f"spark/sql-extension/spark-{line.name}/pom.xml" for line in LINES}
    assert needed - names == set()
    # The shared Python client (cli and spark import it) ships too.
    assert {"client/__init__.py", "client/errors.py", "client/http.py",
            "client/versioning.py", "spark/commands.py", "spark/__main__.py"} <= names
    assert not [n for n in names if "/src/test/" in n or "/target/" in n]
    assert not [n for n in names if n.startswith("spark/") and n.endswith(("relocate.py",
                                                                          "debian.py"))]


def test_a_missing_java_says_what_to_install(tmp_path):
    out = _setup({"JAVA_HOME": str(tmp_path / "no-java")})
    assert out.returncode == 1
    assert "Spark needs a Java 17 runtime" in out.stderr
    assert "apt-get install openjdk-17-jre-headless" in out.stderr


def _spark_test_without_java(tmp_path: Path, require: bool) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}
    env.pop("SAPWOOD_REQUIRE_SPARK", None)
    if require:
        env["SAPWOOD_REQUIRE_SPARK"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/spark/test_time_travel.py"],
        capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)


def test_missing_spark_fails_when_required(tmp_path):
    out = _spark_test_without_java(tmp_path, require=True)
    assert out.returncode == 1, out.stdout
    assert "SAPWOOD_REQUIRE_SPARK=1 but Spark cannot run here" in out.stdout


def test_missing_spark_skips_otherwise(tmp_path):
    out = _spark_test_without_java(tmp_path, require=False)
    assert out.returncode == 0, out.stdout
    # Every test of the module skipped, none run or failed.
    assert re.search(r"^\d+ skipped in ", out.stdout, re.M), out.stdout
