"""The README's five-minute tour, taken from README.md itself and run as a
new user would: its shell block, Python heredocs included, against a fresh
server, stopping at the first command that fails. So the front door cannot
rot: reorder the tour so that the branch is made before the namespace, and
the view's create fails here."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.docs_blocks import readme_tour, user_bin
from tests.server import serving


def test_the_readme_tour_runs_on_a_fresh_catalog(tmp_path: Path) -> None:
    tour = readme_tour()
    assert tour.lang == "bash", tour
    script = tour.body
    assert "sapwood branch create etl" in script
    bin_dir = user_bin(tmp_path / "bin")
    with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path / "srv") as server:
        host = server.base.removeprefix("http://")
        body = script.replace("127.0.0.1:8181", host).replace("localhost:8181", host)
        env = {**os.environ, "SAPWOOD_URI": server.base,
               "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
        env.pop("SAPWOOD_CREDENTIAL", None)
        run = subprocess.run(["bash", "-e", "-c", body], capture_output=True, text=True,
                             env=env, timeout=300, cwd=tmp_path)
    out = run.stdout
    assert run.returncode == 0, f"the tour failed:\n{out}\n{run.stderr}"
    # What the tour's comments promise.
    assert re.search(r"^\+ analytics\.daily\s+\(ICEBERG_VIEW\)", out, re.M), out
    assert re.search(r"^APPLIED\s+analytics\.daily", out, re.M), out
    assert "merge: main is now at" in out and "nothing written" not in out, out
    assert "SELECT count(*) AS n FROM analytics.events" in out, out
    assert "1 view, 0 not ok" in out, out  # view check
    assert "analytics.daily: version 2 adds trino" in out, out
    assert re.search(r"^restored\s+analytics\.daily\s+from main~1 .*view version 1 as new "
                     r"version 3", out, re.M), out
    assert "sapwood_http_requests_total" in out, out
