"""The fenced code blocks of README.md and docs/*.md, and what each one is.

A block is a command a user would type when its language is one of
``RUNNABLE`` and no ``<!-- not runnable: why -->`` comment stands on the
line just before it; every such block runs, in the pages' order against one
catalog, in tests/spark/test_docs_story.py. Any other block says what it is
by its language (``text`` for listings and output, ``http`` for request
shapes, ``nginx`` for configuration); a block with no language fails
tests/spark/test_docs_story.py."""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from spark.embedded import sapwood_command

ROOT = Path(__file__).resolve().parents[1]
RUNNABLE = frozenset({"bash", "sh", "python"})
NOT_COMMANDS = frozenset({"text", "console", "http", "json", "nginx", "yaml", "sql",
                          "properties"})
NOT_RUNNABLE = re.compile(r"^<!--\s*not runnable:\s*(\S.*?)\s*-->$")
FENCE = re.compile(r"^(`{3,}|~{3,})\s*(\S*)\s*$")
SPARK_IMPORT = re.compile(r"^\s*(?:import spark\b|from spark(?:\.\w+)* import )", re.M)


@dataclass(frozen=True)
class Block:
    path: str  # relative to the repository, e.g. "docs/spark.md"
    line: int  # of the opening fence
    lang: str
    body: str
    not_runnable: str | None  # the reason its comment gives

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def first_line(self) -> str:
        return self.body.splitlines()[0] if self.body else ""

    @property
    def runnable(self) -> bool:
        return self.lang in RUNNABLE and self.not_runnable is None

    @property
    def uses_spark(self) -> bool:
        return self.lang == "python" and SPARK_IMPORT.search(self.body) is not None


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks_of(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2)
        end = i + 1
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        assert end < len(lines), f"{path.name}:{i + 1}: a fence that never closes"
        note = NOT_RUNNABLE.match(lines[i - 1].strip()) if i else None
        found.append(Block(str(path.relative_to(ROOT)), i + 1, lang,
                           "\n".join(lines[i + 1:end]) + "\n",
                           note.group(1) if note else None))
        i = end + 1
    return found


def all_blocks() -> list[Block]:
    return [b for p in doc_files() for b in blocks_of(p)]


def user_bin(folder: Path) -> Path:
    """``python`` and ``sapwood`` as a user's virtual environment has them on
    PATH. Wrapper scripts, not links: a link to a venv's interpreter from
    outside the venv starts the base interpreter, without the venv's packages."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, cmd in (("python", [sys.executable]), ("sapwood", sapwood_command())):
        exe = folder / name
        exe.write_text(f"#!/bin/sh\nexec {shlex.join(cmd)} \"$@\"\n")
        exe.chmod(0o755)
    return folder
