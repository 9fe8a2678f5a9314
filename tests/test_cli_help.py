"""``sapwood VERB --help`` reads as git's (docs/cli.md, "Help"): every verb's
usage line and lists name arguments and option values in capitals (KEY,
REF, HASH...), never as typer spells them by default (``{key}``, ``[ref]``,
``<str>``, ``<list[str]>``); every option and argument is described; an
option that may be given more than once says so. The whole command tree is
walked in process (its help does not depend on a server), and the real
executable is asked once."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer
from typer.testing import CliRunner

from cli.main import command
from tests.zygote_client import run

APP = command()
# What typer writes where no metavar was set: a required argument in
# braces, an optional one in lower case, a Python type in angle brackets.
TYPER_SPELLINGS = re.compile(r"\{[^}]*\}|\[(?!required\])[a-z_][a-z_0-9]*\]|<[a-z][^>]*>")


def verbs() -> Iterator[tuple[str, Any]]:
    """Every command that is not a group, by its words."""
    def walk(c: Any, words: list[str]) -> Iterator[tuple[str, Any]]:
        subs = getattr(c, "commands", None)
        if subs is None:
            yield " ".join(words), c
            return
        for name, sub in subs.items():
            yield from walk(sub, [*words, name])

    yield from walk(typer.main.get_command(APP), [])


def help_of(words: str) -> str:
    out = CliRunner().invoke(APP, [*words.split(), "--help"], env={"COLUMNS": "100"},
                             prog_name="sapwood")
    assert out.exit_code == 0, out.output
    return out.output


def test_every_verbs_help_names_its_values_and_describes_every_option() -> None:
    seen = 0
    problems: list[str] = []
    for words, verb in verbs():
        seen += 1
        text = help_of(words)
        usage = text.splitlines()[0]
        assert usage.startswith(f"Usage: sapwood {words} [OPTIONS]"), usage
        for m in TYPER_SPELLINGS.finditer(text):
            problems.append(f"{words}: {m.group()!r} in its help")
        for p in verb.params:
            if getattr(p, "hidden", False) or p.name == "help":
                continue
            described = (p.help or "").strip()
            label = "/".join(p.opts)
            if not described:
                problems.append(f"{words}: {label} is not described")
            if p.param_type_name == "option" and p.multiple and "repeatable" not in described:
                problems.append(f"{words}: {label} may be repeated and does not say so")
            if p.param_type_name == "argument":
                name = (p.metavar or "").removesuffix("...")
                if not name.isupper():
                    problems.append(f"{words}: argument {p.name} is shown as {name!r}")
    assert seen > 50
    assert problems == [], "\n".join(problems)


def test_the_executables_usage_lines() -> None:
    usages = {}
    for words in ("merge", "revert", "log", "view deps", "transplant", "restore"):
        out = run([*words.split(), "--help"], env={"COLUMNS": "100"}, timeout=60)
        assert out.returncode == 0, out.stderr
        usages[words] = out.stdout.splitlines()[0]
    assert usages == {
        "merge": "Usage: sapwood merge [OPTIONS] SOURCE",
        "revert": "Usage: sapwood revert [OPTIONS] HASH...",
        "log": "Usage: sapwood log [OPTIONS]",
        "view deps": "Usage: sapwood view deps [OPTIONS] KEY",
        "transplant": "Usage: sapwood transplant [OPTIONS] HASH...",
        "restore": "Usage: sapwood restore [OPTIONS] KEY...",
    }
    merge = run(["merge", "--help"], env={"COLUMNS": "100"}, timeout=60).stdout
    assert re.search(r"^  --force KEY +Take the source's change of KEY, conflict or not "
                     r"\(repeatable\)$", merge, re.M), merge
    assert re.search(r"^  --into BRANCH +The branch merged into +\[required\]$", merge, re.M)


def test_every_commands_summary_is_a_sentence() -> None:
    """Each line of every command list (sapwood --help, sapwood view --help,
    …) ends with a period, the groups' as the verbs' (issue 44's trial)."""
    groups = [""] + [name for name, sub in typer.main.get_command(APP).commands.items()
                     if getattr(sub, "commands", None) is not None]
    unfinished = []
    for group in groups:
        out = CliRunner().invoke(APP, [*group.split(), "--help"], env={"COLUMNS": "200"},
                                 prog_name="sapwood")
        listed = out.output.split("Commands:", 1)[1].splitlines()
        unfinished += [f"{group}: {line.strip()}" for line in listed
                       if line.strip() and not line.rstrip().endswith(".")]
    assert len(groups) > 5 and unfinished == [], unfinished
