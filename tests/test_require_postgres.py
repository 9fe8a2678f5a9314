"""SAPWOOD_REQUIRE_POSTGRES=1 turns a missing PostgreSQL into a failure."""

import os
import subprocess
import sys


def _run_postgres_test(tmp_path, require: bool) -> subprocess.CompletedProcess:
    env = {**os.environ, "SAPWOOD_PG_BIN": str(tmp_path / "no-postgres-here")}
    env.pop("SAPWOOD_REQUIRE_POSTGRES", None)
    if require:
        env["SAPWOOD_REQUIRE_POSTGRES"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/store/test_smoke_backends.py", "-k", "fresh_store and postgres"],
        capture_output=True, text=True, timeout=300, env=env,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_missing_postgres_fails_when_required(tmp_path):
    out = _run_postgres_test(tmp_path, require=True)
    assert out.returncode == 1, out.stdout
    assert "SAPWOOD_REQUIRE_POSTGRES=1 but PostgreSQL is unavailable" in out.stdout


def test_missing_postgres_skips_otherwise(tmp_path):
    out = _run_postgres_test(tmp_path, require=False)
    assert out.returncode == 0, out.stdout
    assert "1 skipped" in out.stdout
