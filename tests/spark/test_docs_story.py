"""README.md, then every docs/*.md page in turn, run as one reader follows
them: every block presented as a command (tests/docs_blocks.py), in the
order the pages give them, against one catalog — one ``sapwood serve`` on
the embedded default under the reader's home, as the README's tour starts
it — so that what a block makes is there for the next and a block that
needs something no earlier one made fails here, as it would for a newcomer
copying blocks in order. A page states what it needs in a block of its own,
shown to the reader too.

Shell blocks run in bash and plain Python blocks in ``python``, each a new
process in the reader's shell (their home, ``SAPWOOD_URI``, nothing of the
suite's). Blocks that use Spark run in this worker's one JVM, each as a new
Python process would meet it (a new session, no catalog, none active), so
the story starts Spark once. Only the server's address and the
PostgreSQL server a block names are put in; a block that cannot run here
carries ``<!-- not runnable: why -->``. Every failing block is reported,
each with its output (a later failure may follow from an earlier one).
This replaces running each block on a fresh catalog: that hid blocks that
only worked on a catalog made for them."""

from __future__ import annotations

import contextlib
import io
import os
import re
import site
import subprocess
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tests.docs_blocks import NOT_COMMANDS, RUNNABLE, Block, all_blocks, user_bin
from tests.pg import TempPostgres
from tests.server import Server, serving

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BLOCKS = all_blocks()
# README.md first, then docs/*.md by name (tests/docs_blocks.doc_files).
STORY = [b for b in BLOCKS if b.runnable]
ADDRESSES = ("127.0.0.1:8181", "localhost:8181")
# The reader's PostgreSQL (docs/operations.md's move to PostgreSQL): the suite's.
THEIR_POSTGRES = "postgresql+psycopg://sapwood@db/sapwood"


class BlockFailed(Exception):
    pass


@dataclass
class Reader:
    """The reader's machine: their home (``~/.sapwood`` is the catalog the
    server serves), their shell and the one Spark of the story."""

    home: Path
    server: Server
    jvm: SparkSession
    postgres_url: str

    def env(self, uri: str | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SAPWOOD_")}
        # The interpreter's user site stays where it was (a moved HOME would hide it).
        env.update(HOME=str(self.home), PYTHONUSERBASE=site.getuserbase(),
                   SAPWOOD_URI=uri or self.server.base,
                   PATH=f"{user_bin(self.home / 'bin')}{os.pathsep}{os.environ['PATH']}")
        return env

    def text(self, block: Block) -> str:
        host = self.server.base.removeprefix("http://")
        text = block.body
        for address in ADDRESSES:
            text = text.replace(address, host)
        return text.replace(THEIR_POSTGRES, self.postgres_url)

    def run(self, block: Block) -> str:
        """What the block printed; BlockFailed with its output if it failed."""
        if block.uses_spark:
            return self._in_spark(block)
        if block.lang == "python":
            script = self.home / "block.py"
            script.write_text(self.text(block))
            cmd = [str(self.home / "bin" / "python"), str(script)]
        else:
            cmd = ["bash", "-e", "-c", self.text(block)]
        run = subprocess.run(cmd, capture_output=True, text=True, env=self.env(), timeout=180,
                             cwd=self.home)
        if run.returncode != 0:
            raise BlockFailed(f"exit {run.returncode}\n{run.stdout}\n{run.stderr}")
        return run.stdout

    def _in_spark(self, block: Block) -> str:
        code = compile(self.text(block), block.id, "exec")
        as_a_new_process(self.jvm)
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(code, {"__name__": "__main__"})  # the docs' own text, as a script
        except Exception:
            raise BlockFailed(f"{out.getvalue()}\n{traceback.format_exc()}") from None
        return out.getvalue()


def as_a_new_process(jvm: SparkSession) -> None:
    """The JVM as a new Python process would meet it through
    ``SparkSession.builder.getOrCreate``: no session of Python's, none active,
    and a default one (the next ``SparkSession(sc)`` takes it) with no catalog."""
    from pyspark.sql import SparkSession

    fresh = jvm.newSession()
    # An earlier session's settings live on as the JVM's properties.
    for key, _ in jvm.sparkContext.getConf().getAll():
        if key.startswith("spark.sql.catalog.") or key == "spark.sql.defaultCatalog":
            fresh.conf.unset(key)
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
    java = jvm.sparkContext._jvm
    assert java is not None
    java.SparkSession.clearActiveSession()
    java.SparkSession.setDefaultSession(fresh._jsparkSession)


def _cli(reader: Reader, uri: str, *args: str,
         credential: str | None = None) -> subprocess.CompletedProcess[str]:
    env = reader.env(uri) | ({"SAPWOOD_CREDENTIAL": credential} if credential else {})
    return subprocess.run(["sapwood", *args], capture_output=True, text=True, env=env,
                           timeout=60, cwd=reader.home)


def the_loader_loads_on_etl(reader: Reader, printed: str) -> None:
    """README's security block: with the key it printed for ``etl``, once the
    catalog serves with authentication on (its next block, here on
    loopback), the loader writes branch ``etl``, creates and writes
    ``etl/…`` branches and reads ``main``, but cannot commit to ``main``;
    without a credential the CLI says to set SAPWOOD_CREDENTIAL."""
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.exceptions import ForbiddenError

    key = re.findall(r"(?m)^(\S+:\S+)$", printed)[-1]  # `sapwood key create etl`'s line
    server = reader.server
    with serving(server.database_url, reader.home / "with-auth", warehouse=server.warehouse,
                 extra_env={"SAPWOOD_AUTH": "1"}) as secured:
        anonymous = _cli(reader, secured.base, "log", "--limit", "1")
        assert anonymous.returncode == 1 and "SAPWOOD_CREDENTIAL" in anonymous.stderr, (
            anonymous.stdout + anonymous.stderr)
        made = _cli(reader, secured.base, "branch", "create", "etl/2026-11-27", credential=key)
        assert made.returncode == 0, made.stdout + made.stderr
        for ref in ("etl", "etl/2026-11-27"):
            branch = RestCatalog(ref, uri=secured.uri(ref), credential=key)
            branch.create_namespace("loaded")
            branch.drop_namespace("loaded")
        main = RestCatalog("main", uri=secured.uri(), credential=key)
        assert ("analytics",) in main.list_namespaces()
        try:
            main.create_namespace("loaded")
        except ForbiddenError as e:
            assert "protected" in str(e), e
        else:
            raise AssertionError("the loader committed to main")


def the_readme_view_is_back(reader: Reader, printed: str) -> None:
    """docs/undo.md: after the restore and the revert, the README's view
    says what the tour made it say."""
    view = reader.server.catalog().load_view("analytics.daily")
    sql = [r.root.sql for r in view.current_version().representations]
    assert sql == ["SELECT count(*) AS n FROM analytics.events"], sql


@dataclass(frozen=True)
class Promise:
    """What a block's comments say it prints (regular expressions), and what
    else its text promises (a check, given what it printed)."""

    printed: tuple[str, ...] = ()
    check: Callable[[Reader, str], None] | None = None


# Keyed by (file, the block's first line); each key must name a block of the story.
PROMISES: dict[tuple[str, str], Promise] = {
    ("README.md", "python - <<'PY'                           # a namespace and a table "
                  "on main"):
        Promise((r"(?m)^\+ analytics\.daily\s+\(ICEBERG_VIEW\)",
                 r"(?m)^APPLIED\s+analytics\.daily", r"merge: main is now at",
                 r"SELECT count\(\*\) AS n FROM analytics\.events",
                 r"1 view, 0 not ok",  # view check
                 r"analytics\.daily: version 2 adds trino",
                 r"(?m)^restored\s+analytics\.daily\s+from main~1 .*view version 1 as new "
                 r"version 3",
                 r"sapwood_http_requests_total")),
    ("README.md", "from spark import session"):
        Promise((r"(?m)^fresh$", r"\|\s*north\|\s*15\|", r"\|\s*south\|\s*7\|")),
    ("README.md", "sapwood init --auth                           # starter configuration, "
                  "prints admin's key once"):
        Promise((r"admin's credential \(shown once\):\n\S+:\S+\n",
                 r"principal etl created with roles loader", r"(?m)^\S+:\S+$"),
                the_loader_loads_on_etl),
    ("docs/operations.md", "sapwood export catalog.jsonl --database "
                           "sqlite:///$HOME/.sapwood/sapwood.db"):
        Promise((r"(?i)\bok\b",)),
    ("docs/undo.md", "from datetime import datetime, timezone"):
        Promise((r"'message': 'restore analytics\.daily from main\*[^']*'.*'action': 'restored'",
                 r"'message': 'revert [0-9a-f]{12}: .*'action': 'restored'"),
                the_readme_view_is_back),
    ("docs/spark.md", "from datetime import datetime, timezone"):
        Promise((r"\{'key': 'shop\.revenue', 'change': 'added'", r"\|\s*north\|\s*15\|")),
    ("docs/spark.md", "import spark as sw                       # sw.session loads the SQL "
                      "extension too"):
        Promise((r"\|BRANCH +\|weekly *\|[0-9a-f]{16,} *\|",
                 r"\|shop\.totals\|added +\|ICEBERG_VIEW\|",
                 r"\|shop\.totals\|APPLIED\|\[\] +\|",
                 r"\|main\|[0-9a-f]{16,}\|",
                 r"\|etl-job *\|[^|\n]*\|[0-9a-f]{16,}\|merge weekly into main",
                 r"\|north *\|2 *\|15 *\|", r"\|south *\|1 *\|7 *\|",
                 r"\|1 +\|[^\n]*\|etl-job\|create view shop\.totals\|shop\.totals\|"
                 r"\{spark -> SELECT region",
                 r"\|total +\|true +\|shop\.orders +\|amount +\|",
                 r"\|TAG +\|release\|", r"\|OK +\|")),
}


def test_every_block_says_what_it_is() -> None:
    assert len(BLOCKS) > 10, "found too few blocks: is the extraction broken?"
    for b in BLOCKS:
        assert b.lang in RUNNABLE | NOT_COMMANDS, (
            f"{b.id}: a block with language {b.lang!r}: use bash, sh or python for a "
            f"command (it then runs in the story), or one of {sorted(NOT_COMMANDS)} for "
            "what is not, or put <!-- not runnable: why --> before a command that cannot run")
        assert b.not_runnable is None or b.lang in RUNNABLE, (
            f"{b.id}: a {b.lang} block is not a command anyway; drop its note")
    assert STORY[0].path == "README.md" and STORY[0].lang == "bash", STORY[0]


def test_every_promise_names_a_block_of_the_story() -> None:
    story = {(b.path, b.first_line) for b in STORY}
    assert set(PROMISES) <= story, set(PROMISES) - story


def test_the_docs_run_as_a_story(spark_jvm: SparkSession, postgres: TempPostgres,
                                 tmp_path: Path) -> None:
    home = (tmp_path / "home").resolve()
    catalog = home / ".sapwood"  # `sapwood serve`'s embedded default, as the tour starts it
    catalog.mkdir(parents=True)
    theirs = postgres.create_database(f"docs_story_{os.getpid()}")
    failures: list[str] = []
    with serving(f"sqlite:///{catalog / 'sapwood.db'}", catalog) as server:
        reader = Reader(home, server, spark_jvm, theirs)
        for block in STORY:
            promise = PROMISES.get((block.path, block.first_line), Promise())
            try:
                printed = reader.run(block)
            except BlockFailed as e:
                failures.append(f"{block.id} ({block.first_line.strip()}) failed: {e}")
                continue
            missing = [p for p in promise.printed if not re.search(p, printed)]
            if missing:
                failures.append(f"{block.id}: no {missing} in what it printed:\n{printed}")
            if promise.check is not None:
                try:
                    promise.check(reader, printed)
                except Exception:
                    failures.append(f"{block.id}: what it promises does not hold:\n"
                                    f"{traceback.format_exc()}")
    assert not failures, "\n\n".join(failures)
