"""Every fenced block of README.md and docs/*.md that is presented as a
command runs, as a user would type it: shell blocks in bash, Python blocks in
``python``, each in a new home folder, against the module's real server
(``127.0.0.1:8181`` in a block becomes its address), stopping at the first
command that fails. Blocks that import ``spark`` run in
tests/spark/test_docs_spark.py, the README's tour in tests/test_readme_tour.py.
A block that is not a command says so (tests/docs_blocks.py), so a new block
either runs here or carries its reason."""

from __future__ import annotations

import os
import re
import site
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from spark.client import Versioning
from store import Store
from tests.docs_blocks import NOT_COMMANDS, RUNNABLE, Block, all_blocks, readme_tour, user_bin
from tests.fixtures import server_fixture
from tests.server import Server

BLOCKS = all_blocks()
TOUR = readme_tour()
SPARK = [b for b in BLOCKS if b.runnable and b.uses_spark]
HERE = [b for b in BLOCKS if b.runnable and not b.uses_spark and b != TOUR]

server = server_fixture(prefix="docs-blocks")


@dataclass
class Given:
    """What a block takes as already there (its text says so), and what its
    comments promise in its output."""

    setup: Callable[[pytest.FixtureRequest, Server, Path], dict[str, str]] | None = None
    promises: tuple[str, ...] = ()


def _branch_dev(request: pytest.FixtureRequest, server: Server, home: Path) -> dict[str, str]:
    Versioning(server.base).create_branch("dev")
    return {}


def _sqlite_catalog_and_postgres(request: pytest.FixtureRequest, server: Server,
                                 home: Path) -> dict[str, str]:
    """The embedded catalog under ~/.sapwood, and the suite's PostgreSQL for
    the block's ``sapwood@db``."""
    (home / ".sapwood").mkdir()
    Store(f"sqlite:///{home / '.sapwood' / 'sapwood.db'}").close()
    target = request.getfixturevalue("postgres").create_database(f"docs_{os.getpid()}")
    return {"postgresql+psycopg://sapwood@db/sapwood": target}


# Keyed by (file, the block's first line); each key must name a block that runs here.
GIVEN: dict[tuple[str, str], Given] = {
    ("README.md", "sapwood init --auth                           # starter configuration, "
                  "prints admin's key once"):
        Given(promises=(r"admin's credential \(shown once\):\n\S+:\S+\n",
                        r"principal etl created with roles loader",
                        r"(?m)^\S+:\S+$")),
    ("docs/security.md", "sapwood init --auth                  # once: the starter "
                         "configuration (below)"):
        Given(promises=(r"role admin holds every privilege, main is protected",)),
    ("docs/iceberg-rest.md", "from datetime import datetime, timezone"):
        Given(_branch_dev),
    ("docs/operations.md", "sapwood export catalog.jsonl --database "
                           "sqlite:///$HOME/.sapwood/sapwood.db"):
        Given(_sqlite_catalog_and_postgres, promises=(r"(?i)\bok\b",)),
}


def test_every_block_says_what_it_is() -> None:
    assert len(BLOCKS) > 10, "found too few blocks: is the extraction broken?"
    for b in BLOCKS:
        assert b.lang in RUNNABLE | NOT_COMMANDS, (
            f"{b.id}: a block with language {b.lang!r}: use bash, sh or python for a "
            f"command (it then runs in a test), or one of {sorted(NOT_COMMANDS)} for what "
            "is not, or put <!-- not runnable: why --> before a command that cannot run")
        assert b.not_runnable is None or b.lang in RUNNABLE, (
            f"{b.id}: a {b.lang} block is not a command anyway; drop its note")
    # Every command runs somewhere: here, in the Spark module or as the tour.
    assert TOUR.runnable and TOUR.path == "README.md"
    assert {b.id for b in BLOCKS if b.runnable} == {b.id for b in [*HERE, *SPARK, TOUR]}


def test_every_given_names_a_block_that_runs_here() -> None:
    here = {(b.path, b.first_line) for b in HERE}
    assert set(GIVEN) <= here, set(GIVEN) - here


def _user_env(home: Path, server: Server) -> dict[str, str]:
    """A user's shell: their own home, the server's address, nothing of the suite's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAPWOOD_")}
    # The interpreter's user site stays where it was (a moved HOME would hide it).
    env.update(HOME=str(home), PYTHONUSERBASE=site.getuserbase(), SAPWOOD_URI=server.base,
               PATH=f"{user_bin(home / 'bin')}{os.pathsep}{os.environ['PATH']}")
    return env


@pytest.mark.parametrize("block", HERE, ids=[b.id for b in HERE])
def test_the_block_runs_as_written(block: Block, server: Server, tmp_path: Path,
                                   request: pytest.FixtureRequest) -> None:
    given = GIVEN.get((block.path, block.first_line), Given())
    home = tmp_path / "home"
    home.mkdir()
    swaps = given.setup(request, server, home) if given.setup else {}
    host = server.base.removeprefix("http://")
    text = block.body.replace("127.0.0.1:8181", host).replace("localhost:8181", host)
    for old, new in swaps.items():
        assert old in text, f"{block.id} no longer names {old}"
        text = text.replace(old, new)
    if block.lang == "python":
        script = home / "block.py"
        script.write_text(text)
        cmd = ["python", str(script)]
    else:
        cmd = ["bash", "-e", "-c", text]
    env = _user_env(home, server)
    # bash finds `python` on the user's PATH; so does this.
    cmd[0] = str(home / "bin" / "python") if cmd[0] == "python" else cmd[0]
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, cwd=home)
    assert run.returncode == 0, f"{block.id} failed:\n{run.stdout}\n{run.stderr}"
    for promise in given.promises:
        assert re.search(promise, run.stdout), f"{block.id}: no {promise!r} in\n{run.stdout}"
