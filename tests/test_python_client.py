"""docs/python-client.md as a script's author follows it: every Python block
runs, in the page's order, as a new process against one real server on a
fresh catalog (SQLite and PostgreSQL), and prints exactly what the ``text``
block after it shows. The page's claims about client.Client (one request a
merge, typed errors naming the server's message) are shown here and in
tests/api/test_merge_requests.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.docs_blocks import ROOT, Block, blocks_of
from tests.fixtures import BACKENDS, server_fixture
from tests.server import Server

PAGE = ROOT / "docs" / "python-client.md"
server = server_fixture(BACKENDS, prefix="pyclient")


def steps() -> list[tuple[Block, str | None]]:
    """Each runnable Python block and the text block right after it, if any."""
    blocks = blocks_of(PAGE)
    out = []
    for i, b in enumerate(blocks):
        if b.lang == "python" and b.runnable:
            after = blocks[i + 1] if i + 1 < len(blocks) else None
            out.append((b, after.body if after is not None and after.lang == "text" else None))
    return out


def test_the_page_has_an_example_for_every_call() -> None:
    code = "".join(b.body for b, _ in steps())
    for call in ("reference(", "references(", "create(", "delete(", "log(", "diff(",
                 "content(", "merge(", "transplant(", "revert(", "restore(",
                 "view_history(", "lineage(", "dependents(", "events("):
        assert f".{call}" in code, call
    assert all(expected is not None for _, expected in steps())


def test_every_example_prints_what_the_page_shows(server: Server, tmp_path: Path) -> None:
    host = server.base.removeprefix("http://")
    for block, expected in steps():
        script = tmp_path / "block.py"
        script.write_text(block.body.replace("127.0.0.1:8181", host))
        run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             timeout=120, cwd=tmp_path)
        assert run.returncode == 0, f"{block.id}\n{run.stdout}\n{run.stderr}"
        assert run.stdout == expected, f"{block.id}\n{run.stdout}"
