"""What each benchmark promises, and how the suite runs one in its small
mode (issue 44, defect 10): tests/test_bench_smoke.py and
tests/spark/test_spark_bench_smoke.py.

Every ``bench/*.py`` takes ``--smoke``: tiny sizes and one round through the
same code as its full run, ending with the same figures. ``FIGURES`` holds
the ``name: value`` lines each one's full run prints (the names
docs/performance.md and the issues give; a pattern where the name carries a
size); the suite holds every smoke run to all of them, each with a finite
number, so a bench that no longer runs, or no longer prints a figure it
promised, fails the suite instead of its next user."""

from __future__ import annotations

import contextlib
import importlib
import io
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

_SCALE_OPS = ("list_namespaces_page", "list_namespaces_unpaged", "list_tables", "log_main",
              "ui_log", "ui_refs", "refs_default", "refs_page_10", "load_table", "load_view",
              "table_page", "diff", "merge_dry_run", "commit", "audit", "log_by_key",
              "ui_browse", "ui_browse_namespace", "entries_page")
_UI_PAGES = ("references", "log", "log_by_key", "commit", "browse", "view", "diff",
             "merge_preview")
_BOUND = ("floor_us", "sql_only_us", "sapwood_us", "python_us", "sql_only_after_200us_cpu_us",
          "sql_only_after_200us_sleep_us", "sql_only_vs_raw", "commit_vs_raw",
          "python_budget_us_for_half")

# Per bench (its file name), the figures its full run prints.
FIGURES: dict[str, tuple[str, ...]] = {
    "audit_bench": ("audit_deep_vs_shallow", "log_by_key_deep_vs_shallow",
                    r"audit_p50_ms_at_\d+", r"log_by_key_p50_ms_at_\d+"),
    "commit_bound": tuple(f"{f}_{db}" for db in ("sqlite", "postgres") for f in _BOUND),
    "events_bench": ("events_commit_overhead", "events_page_deep_vs_shallow",
                     "webhook_lag_p50_ms", "events_page_hidden_vs_visible",
                     "loop_block_ms_during_hidden_scan"),
    "expired_read": ("expired_read_p50_ms",),
    # A commit on a table of many snapshots ÷ on one of one (issue 48).
    "history_bench": ("history_commit_long_vs_short",),
    "merge_bench": ("content_merge_large_vs_small", "content_merge_vs_plain"),
    "mv_bench": ("mv_read_ms", "mv_compute_ms", "mv_refresh_incremental_ms",
                 "mv_refresh_full_ms", "mv_refresh_incremental_aggregate_ms",
                 "mv_refresh_full_aggregate_ms", "mv_incremental_vs_full_aggregate",
                 "mv_read_vs_compute", "mv_incremental_vs_full"),
    # Sapwood ÷ Nessie per row (issue 48), then both servers' memory.
    "nessie_bench": (*(f"vs_nessie_{row}" for row in (
        "loadtable_raw", "loadtable_pyiceberg", "loadview_raw", "loadview_pyiceberg",
        "list_tables_raw", "list_tables_pyiceberg", "table_commit_raw", "append_pyiceberg",
        "append_commit",
        "view_replace", "create_table", "branch_create", "branch_delete", "log_by_key",
        "merge", "view_audit", "getns_rps")), "rss_mb_sapwood", "rss_mb_nessie"),
    "ops_bench": ("export_s", "import_s", "gc_objects_per_s", "gc_files_per_s",
                  "gc_mark_vs_live_objects", "retention_gc_vs_plain_gc"),
    # Its figures are µs per request of each read, with authentication off
    # and then on: each name twice.
    "read_profile": ("loadtable", "loadview", "getns") * 2,
    "rest_bench": ("loadtable_p50_vs_floor", "loadview_p50_vs_floor", "getns_p50_vs_floor",
                   "loadview_p99_vs_floor", "loadview_p50_auth_vs_open",
                   "getns_rps_1_worker_vs_floor", "loadtable_304_p50_vs_floor",
                   "idempotent_commit_vs_plain", "sign_p50_vs_loadview",
                   "sign_put_p50_vs_loadview", "getns_rps_1_worker", "getns_rps_2_workers",
                   "expired_read_p50_ms"),
    "import_bench": ("import_s", "import_wall_s", "import_commits_per_s", "import_peak_rss_mb"),
    "scale_bench": (*(f"scale_{op}_large_vs_small" for op in _SCALE_OPS),
                    "scale_fsck_rss_mb", "scale_fsck_parallel_rss_mb", "scale_server_rss_mb"),
    # Each figure per Spark line; a line's run prints its own (its suffix).
    "spark_bench": tuple(f"{f}_{line}" for line in ("spark35", "spark41")
                         for f in ("spark_view_read_vs_inmemory", "sql_ext_parse_overhead")),
    "store_bench": ("lookup_deep_vs_shallow", "diff_large_vs_small", "merge_large_vs_small",
                    "commits_per_s_sqlite", "commit_vs_raw_sqlite", "commits_per_s_postgres",
                    "commit_vs_raw_postgres"),
    "ui_bench": tuple(f"ui_page_p50_ms_{p}" for p in _UI_PAGES),
    "view_bench": ("view_create_analysis_overhead", "dependents_large_vs_small"),
}
# Files in bench/ that are not benchmarks: the floor app rest_bench serves.
NOT_BENCHES = {"floor_app"}


def figures(output: str, names: tuple[str, ...] | list[str]) -> dict[str, list[float]]:
    """Each of ``names`` (a pattern) read from ``output``: the values of its
    ``name: value`` lines (``name  value`` where a bench prints a table; for
    read_profile ``name: <µs> µs per request``). Fails naming each figure
    missing or not a finite number."""
    found: dict[str, list[float]] = {}
    problems = []
    for name in dict.fromkeys(names):
        values = re.findall(rf"^\s*{name}:?\s+(\S+)", output, re.MULTILINE)
        numbers = []
        for v in values:
            try:
                numbers.append(float(v))
            except ValueError:
                numbers.append(math.nan)
        if len(values) < list(names).count(name):
            problems.append(f"{name}: printed {len(values)} times, expected "
                            f"{list(names).count(name)}")
        elif not all(math.isfinite(x) for x in numbers):
            problems.append(f"{name}: {values} is not a number")
        found[name] = numbers
    assert not problems, "\n".join(problems) + f"\n--- output ---\n{output[-6000:]}"
    return found


def run_main(bench: str, argv: list[str], tmp: Path, **kwargs: Any) -> str:
    """``bench/<bench>.py`` run in this process (its imports are mostly this
    worker's already, its servers forked from the worker's zygote): its
    ``main(argv)``, what it prints, its temporary files in ``tmp``."""
    module = importlib.import_module(f"bench.{bench}")
    out = io.StringIO()
    # Only the bench's own temporary folders go to ``tmp`` (not, say, the
    # zygote's, which outlives this test).
    saved = module.tempfile
    module.tempfile = _In(tmp)
    try:
        with contextlib.redirect_stdout(out):
            module.main(argv, **kwargs)
    except SystemExit as e:
        pytest.fail(f"bench/{bench}.py {' '.join(argv)} exited {e.code}:\n{out.getvalue()}")
    finally:
        module.tempfile = saved
    no_5xx(tmp)
    return out.getvalue()


class _In:
    """The two ``tempfile`` calls the benches make, in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)

    def mkdtemp(self, suffix: str | None = None, prefix: str | None = None) -> str:
        return tempfile.mkdtemp(suffix, prefix, self.folder)

    def TemporaryDirectory(self, suffix: str | None = None,
                           prefix: str | None = None) -> tempfile.TemporaryDirectory[str]:
        return tempfile.TemporaryDirectory(suffix, prefix, self.folder)


def run_process(bench: str, argv: list[str], tmp: Path, timeout: float = 300) -> str:
    """``python bench/<bench>.py ARGV`` as a process of its own (for a bench
    that changes its process: pins it to a core, configures logging, runs
    the application in itself): its output; it must exit 0."""
    import os

    done = subprocess.run([sys.executable, str(ROOT / "bench" / f"{bench}.py"), *argv],
                          cwd=ROOT, env={**os.environ, "TMPDIR": str(tmp)},
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (f"bench/{bench}.py exited {done.returncode}:\n"
                                  f"{done.stdout[-4000:]}\n{done.stderr[-6000:]}")
    no_5xx(tmp)
    return done.stdout


def no_5xx(tmp: Path) -> None:
    """No server the bench started (its log under ``tmp``) answered a 5xx."""
    errors = [f"{log}: {line}" for log in tmp.rglob("*.log")
              for line in log.read_text(errors="replace").splitlines()
              if "internal error" in line]
    assert not errors, "a server answered 5xx:\n" + "\n".join(errors[:20])


def optional_postgres_url(request: pytest.FixtureRequest, name: str) -> str | None:
    """A new database on the session's PostgreSQL, or None where there is
    none (the fixture fails instead under SAPWOOD_REQUIRE_POSTGRES=1)."""
    try:
        pg = request.getfixturevalue("postgres")
    except pytest.skip.Exception:
        return None
    return str(pg.create_database(f"{name}_{next(_names)}"))


_names = iter(range(10**9))
