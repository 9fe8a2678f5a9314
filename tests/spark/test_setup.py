"""The jars: relocation of compiled classes, ``sapwood spark-setup`` from an
empty cache, the override setting, and what a missing prerequisite says."""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from spark.debian import mirror
from spark.errors import SetupError
from spark.jars import RELOCATIONS, pyspark_jars
from spark.maven import jar_names, mvn
from spark.relocate import Relocation, RelocationError, relocate_class
from tests.server import sapwood_command
from tests.spark.conftest import REQUIRE_SPARK

ROOT = Path(__file__).resolve().parents[2]
JACKSON = "com/fasterxml/jackson/core/JsonFactoryBuilder.class"
SHADED_JACKSON = "org/apache/iceberg/shaded/" + JACKSON
SHADED_POOL_BUILDER = ("org/apache/iceberg/shaded/org/apache/hc/client5/http/impl/io/"
                       "PoolingHttpClientConnectionManagerBuilder.class")


def utf8_constants(data: bytes) -> tuple[list[bytes], int]:
    """The class's UTF-8 constants and where its constant pool ends, read
    independently of the code under test."""
    sizes = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2,
             17: 4, 18: 4, 19: 2, 20: 2}
    count, pos, i, out = struct.unpack_from(">H", data, 8)[0], 10, 1, []
    while i < count:
        tag = data[pos]
        if tag == 1:
            n = struct.unpack_from(">H", data, pos + 1)[0]
            out.append(data[pos + 3:pos + 3 + n])
            pos += 3 + n
        else:
            pos += 1 + sizes[tag]
            i += tag in (5, 6)
        i += 1
    return out, pos


def _jackson_class() -> bytes:
    jar = next(pyspark_jars().glob("jackson-core-2.*.jar"))
    with zipfile.ZipFile(jar) as z:
        return z.read(JACKSON)


def test_relocation_moves_every_name_and_only_those():
    original = _jackson_class()
    moved = relocate_class(original, RELOCATIONS)
    (before, end), (after, moved_end) = utf8_constants(original), utf8_constants(moved)
    assert len(before) == len(after)
    assert b"com/fasterxml/jackson/core/JsonFactoryBuilder" in before
    assert b"org/apache/iceberg/shaded/com/fasterxml/jackson/core/JsonFactoryBuilder" in after
    for old, new in zip(before, after, strict=True):
        if b"com/fasterxml/jackson/" in old or b"com.fasterxml.jackson." in old:
            assert (b"org/apache/iceberg/shaded/com/fasterxml/jackson/" in new
                    or b"org.apache.iceberg.shaded.com.fasterxml.jackson." in new)
            assert new.replace(b"org/apache/iceberg/shaded/", b"").replace(
                b"org.apache.iceberg.shaded.", b"") == old
        else:
            assert new == old
    # The bytes after the constant pool (fields, methods, code) are untouched.
    assert moved[moved_end:] == original[end:]
    assert relocate_class(moved, RELOCATIONS) == moved  # idempotent


def test_relocation_refuses_what_it_cannot_read():
    with pytest.raises(RelocationError, match="not a class file"):
        relocate_class(b"PK\x03\x04", RELOCATIONS)
    bad = b"\xca\xfe\xba\xbe\x00\x00\x00\x34\x00\x02\x63"
    with pytest.raises(RelocationError, match="unknown constant pool tag 99"):
        relocate_class(bad, [Relocation("a.b", "x.")])


def test_the_mirror_comes_from_the_machines_apt_sources(tmp_path):
    parts = tmp_path / "sources.list.d"
    parts.mkdir()
    (parts / "debian.sources").write_text(
        "Types: deb\n# http://snapshot.example/archive\nURIs: http://security.example/debian-security\n"
        "Suites: bookworm-security\nComponents: main\n\n"
        "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\n")
    assert mirror(tmp_path) == "http://mirror.example/debian"
    (parts / "debian.sources").unlink()
    (tmp_path / "sources.list").write_text(
        "# comment\ndeb http://security.example/debian-security bookworm-security main\n"
        "deb [signed-by=/k.gpg] http://legacy.example/debian bookworm main\n")
    assert mirror(tmp_path) == "http://legacy.example/debian"
    (tmp_path / "sources.list").write_text("")
    with pytest.raises(SetupError, match="no Debian package source found"):
        mirror(tmp_path)


def _setup(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*sapwood_command(), "spark-setup"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **env})


def test_spark_setup_fetches_the_official_jars_with_maven_once(spark_ready, tmp_path):
    if mvn() is None:
        if REQUIRE_SPARK:
            pytest.fail("SAPWOOD_REQUIRE_SPARK=1 but there is no mvn for the official jars")
        pytest.skip("no mvn: the official jars cannot be fetched here")
    env = {"SAPWOOD_CACHE_DIR": str(tmp_path)}
    first = _setup(env)
    assert first.returncode == 0, first.stderr
    folder = tmp_path / "spark" / "maven"
    assert f"official, fetched with Maven into {folder}" in first.stdout, first.stdout
    assert "fallback" not in first.stdout
    for name in jar_names():
        assert f"{folder / name} (" in first.stdout
        with zipfile.ZipFile(folder / name) as z:
            names = set(z.namelist())
        if name.startswith("iceberg-spark-runtime"):
            # Complete: the shaded classes the PyPI jar lacks are in it.
            assert SHADED_JACKSON in names and SHADED_POOL_BUILDER in names
            assert "org/apache/iceberg/spark/SparkCatalog.class" in names
        else:
            assert "software/amazon/awssdk/services/s3/S3Client.class" in names
    assert not list(folder.glob(".fetch-*")), "a temporary folder was left behind"
    # Sapwood's SQL extension, compiled from the repository's source, and the
    # two settings a plain PySpark needs (docs/spark.md).
    extension = next((tmp_path / "spark").glob("sapwood-spark-sql-*.jar"))
    assert "Sapwood's Spark SQL extension (compiled now):" in first.stdout
    with zipfile.ZipFile(extension) as z:
        assert "dev/sapwood/spark/SapwoodSparkSessionExtensions.class" in z.namelist()
    jars = ",".join([*(str(folder / n) for n in jar_names()), str(extension)])
    assert f"  spark.jars={jars}\n" in first.stdout, first.stdout
    assert ("  spark.sql.extensions=org.apache.iceberg.spark.extensions."
            "IcebergSparkSessionExtensions,dev.sapwood.spark.SapwoodSparkSessionExtensions\n"
            ) in first.stdout
    again = _setup(env)
    assert again.returncode == 0, again.stderr
    assert f"official, already fetched into {folder}" in again.stdout
    assert "fetching" not in again.stdout
    assert "Sapwood's Spark SQL extension (already compiled):" in again.stdout


Run = subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def without_maven(spark_ready, tmp_path_factory: pytest.TempPathFactory,
                  ) -> tuple[Path, Run, Run]:
    """spark-setup without Maven into an empty cache, then again: the cache
    and both runs (the fallback build is made once for the module)."""
    cache = tmp_path_factory.mktemp("no-maven-cache")
    env = {"SAPWOOD_CACHE_DIR": str(cache), "SAPWOOD_MVN": "off"}
    return cache, _setup(env), _setup(env)


def test_without_maven_spark_setup_builds_once_into_an_empty_cache(without_maven):
    cache, first, again = without_maven
    assert first.returncode == 0, first.stderr
    assert "note: the official jars were not fetched (SAPWOOD_MVN=off)" in first.stdout
    assert "downloading libhttpclient5-java, libhttpcore5-java" in first.stdout
    assert f"built into {cache / 'spark'}" in first.stdout
    jar = next((cache / "spark").glob("iceberg-shaded-deps-*.jar"))
    assert str(jar) in first.stdout
    with zipfile.ZipFile(jar) as z:
        names = set(z.namelist())
        assert SHADED_JACKSON in names and JACKSON not in names
        # HttpClient >= 5.4: the method Iceberg's HTTPClient calls is there.
        assert b"setTlsSocketStrategy" in z.read(SHADED_POOL_BUILDER)
        assert not any(n.startswith(("com/", "org/apache/hc/")) for n in names)

    assert again.returncode == 0, again.stderr
    assert f"already built in {cache / 'spark'}" in again.stdout
    assert "downloading" not in again.stdout


def test_a_maven_that_fails_is_named_and_the_fallback_is_said(without_maven):
    # Into the cache the fallback was built in (building it is the test
    # above): only what Maven's failure prints matters here.
    cache, _, _ = without_maven
    out = _setup({"SAPWOOD_CACHE_DIR": str(cache), "SAPWOOD_MVN": "/bin/false"})
    assert out.returncode == 0, out.stderr
    assert "Maven could not fetch org.apache.iceberg:iceberg-spark-runtime-3.5_2.12" in (
        out.stdout + out.stderr), out.stdout + out.stderr
    assert "using the fallback built from PyPI and Debian packages" in out.stdout
    assert f"already built in {cache / 'spark'}" in out.stdout


def test_the_override_takes_given_jars_or_names_the_missing_ones(tmp_path):
    jar = tmp_path / "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
    jar.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    ok = _setup({"SAPWOOD_ICEBERG_SPARK_JARS": str(jar)})
    assert ok.returncode == 0, ok.stderr
    assert "taken from SAPWOOD_ICEBERG_SPARK_JARS" in ok.stdout and str(jar) in ok.stdout
    missing = _setup({"SAPWOOD_ICEBERG_SPARK_JARS": str(tmp_path / "nope.jar")})
    assert missing.returncode == 1
    assert f"names jars that do not exist: {tmp_path / 'nope.jar'}" in missing.stderr


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
