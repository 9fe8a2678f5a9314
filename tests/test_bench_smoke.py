"""Every benchmark runs (issue 44, defect 10; acceptance 3): each
``bench/*.py`` in its small mode (``--smoke``: tiny sizes, one round, the
same code paths) exits cleanly and prints every figure its full run
promises (tests/bench_smoke.py: FIGURES), its servers answering no 5xx.
The two Spark benchmarks run on the worker's Spark
(tests/spark/test_spark_bench_smoke.py).

Most run in this process (``main(argv)``): a bench's imports are the
worker's already and its servers fork from the worker's zygote, where a
process of its own would pay 3-4 s of CPU for imports and a zygote. Two
change the process they run in (rest_bench pins itself to a core and runs
an S3 server in itself; read_profile runs the application and its logging
in itself) and run as processes of their own. The benchmarks that measure
PostgreSQL get a database on the session's server instead of starting one.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.bench_smoke import (
    FIGURES,
    NOT_BENCHES,
    ROOT,
    figures,
    optional_postgres_url,
    run_main,
    run_process,
)

SPARK = {"spark_bench", "mv_bench"}


def test_every_benchmark_has_a_smoke_run_in_the_suite():
    """A new bench/*.py is named in FIGURES (and so run below) or fails here."""
    found = {p.stem for p in (ROOT / "bench").glob("*.py")} - NOT_BENCHES
    assert found == set(FIGURES), (f"not run by the suite: {sorted(found - set(FIGURES))}; "
                                   f"gone: {sorted(set(FIGURES) - found)}")
    run_here = {n.removeprefix("test_") for n in globals() if n.startswith("test_")}
    assert set(FIGURES) - SPARK <= run_here, sorted(set(FIGURES) - SPARK - run_here)


def _postgres_args(request: pytest.FixtureRequest, name: str) -> tuple[list[str], bool]:
    url = optional_postgres_url(request, name)
    return (["--postgres-url", url] if url else []), url is not None


def test_audit_bench(tmp_path: Path):
    figures(run_main("audit_bench", ["--smoke"], tmp_path), FIGURES["audit_bench"])


def test_commit_bound(tmp_path: Path, request: pytest.FixtureRequest):
    args, pg = _postgres_args(request, "commit_bound")
    out = run_main("commit_bound", ["--smoke", *args], tmp_path)
    figures(out, [f for f in FIGURES["commit_bound"] if pg or not f.endswith("_postgres")])


def test_events_bench(tmp_path: Path):
    figures(run_main("events_bench", ["--smoke"], tmp_path), FIGURES["events_bench"])


def test_expired_read(tmp_path: Path, request: pytest.FixtureRequest):
    args, _ = _postgres_args(request, "expired_read")
    figures(run_main("expired_read", ["--smoke", *args], tmp_path), FIGURES["expired_read"])


def test_history_bench(tmp_path: Path):
    figures(run_main("history_bench", ["--smoke"], tmp_path), FIGURES["history_bench"])


def test_import_bench(tmp_path: Path):
    """A Nessie history imported (it needs Nessie's server: skipped without
    it, failed instead under SAPWOOD_REQUIRE_SPARK=1, as tests/nessie's)."""
    _nessie_or_skip()
    figures(run_main("import_bench", ["--smoke"], tmp_path), FIGURES["import_bench"])


def _nessie_or_skip() -> None:
    from tests.nessie.server import environment_ready

    found = environment_ready()
    if isinstance(found, str):
        if os.environ.get("SAPWOOD_REQUIRE_SPARK") == "1":
            pytest.fail(f"SAPWOOD_REQUIRE_SPARK=1 but Nessie's server cannot run: {found}")
        pytest.skip(f"Nessie's server unavailable: {found}")


def test_merge_bench(tmp_path: Path):
    figures(run_main("merge_bench", ["--smoke"], tmp_path), FIGURES["merge_bench"])


def test_nessie_bench(tmp_path: Path):
    """Sapwood and Nessie side by side on moto S3 (it needs Nessie's
    server: skipped without it, failed instead under
    SAPWOOD_REQUIRE_SPARK=1, as test_import_bench)."""
    _nessie_or_skip()
    figures(run_main("nessie_bench", ["--smoke"], tmp_path), FIGURES["nessie_bench"])


def test_ops_bench(tmp_path: Path, request: pytest.FixtureRequest):
    args, pg = _postgres_args(request, "ops_bench")
    out = run_main("ops_bench", ["--smoke", *args], tmp_path)
    figures(out, FIGURES["ops_bench"])
    assert ("import into PostgreSQL" in out) == pg, out


def test_read_profile(tmp_path: Path):
    out = run_process("read_profile", ["--smoke"], tmp_path)
    figures(out, FIGURES["read_profile"])
    assert "authentication off:" in out and "authentication on:" in out, out


def test_rest_bench(tmp_path: Path):
    figures(run_process("rest_bench", ["--smoke"], tmp_path), FIGURES["rest_bench"])


def test_scale_bench(tmp_path: Path):
    figures(run_main("scale_bench", ["--smoke"], tmp_path), FIGURES["scale_bench"])


def test_store_bench(tmp_path: Path, request: pytest.FixtureRequest):
    args, pg = _postgres_args(request, "store_bench")
    out = run_main("store_bench", ["--smoke", *args], tmp_path)
    figures(out, [f for f in FIGURES["store_bench"] if pg or not f.endswith("_postgres")])


def test_ui_bench(tmp_path: Path):
    figures(run_main("ui_bench", ["--smoke"], tmp_path), FIGURES["ui_bench"])


def test_view_bench(tmp_path: Path):
    """It named its table ``file:///bench/t.json``, outside the warehouse of
    the server it then asked, which refuses such a location (400)."""
    figures(run_main("view_bench", ["--smoke"], tmp_path), FIGURES["view_bench"])
