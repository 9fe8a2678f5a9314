"""What the ``sapwood`` command prints, checked over its whole command tree
in process (the verbs against a server: tests/api/test_cli_views.py): help
text as plain text, ``--json`` on every verb that prints a record or a
listing, and tables that never cut a value."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from cli.main import command
from cli.output import print_table

APP = command()

# Verbs that print no record or listing of their own: processes, and
# confirmations of a change (the record is what a listing shows).
NO_JSON = {"serve", "demo", "spark-setup", "version", "init", "export", "import", "protect",
           "unprotect", "principal create", "principal revoke", "key create", "key revoke",
           "grant add", "grant revoke", "webhook remove", "mv drop"}


def commands() -> Iterator[tuple[str, Any]]:
    """Every command and group, by its words (the root is "")."""
    def walk(c: Any, words: list[str]) -> Iterator[tuple[str, Any]]:
        yield " ".join(words), c
        for name, sub in getattr(c, "commands", {}).items():
            yield from walk(sub, [*words, name])

    yield from walk(typer.main.get_command(APP), [])


def help_of(words: str) -> str:
    out = CliRunner().invoke(APP, [*words.split(), "--help"], env={"COLUMNS": "80"})
    assert out.exit_code == 0, out.output
    return out.output


MARKUP = [re.compile(p, re.M) for p in (r"``", r":[a-z]+:`", r"^\s*\.\. \w+::", r"\*\*",
                                        r"<bool>", r"\[/?(bold|dim|red|green)\]")]


def test_help_text_is_plain_and_whole() -> None:
    seen = 0
    for words, c in commands():
        text = help_of(words)
        seen += 1
        for pattern in MARKUP:
            assert not pattern.search(text), (words, pattern.pattern, text)
        if hasattr(c, "commands"):
            # A group lists each command by its first sentence, which click
            # cuts with "..." past this width on an 80-column terminal.
            shown = {n: sub for n, sub in c.commands.items() if not sub.hidden}
            room = 80 - 2 - 6 - max(map(len, shown))
            for name, sub in shown.items():
                summary = sub.get_short_help_str(limit=1000)
                assert len(summary) <= room, (words, name, summary)
                assert re.search(rf"^  {name} +{re.escape(summary)}$", text, re.M), text
    assert seen > 50
    root = help_of("")
    assert re.search(r"^  view\s", root, re.M) and not re.search(r"^  views\s", root, re.M)
    assert "--version" in root


def test_every_verb_that_prints_a_record_or_a_listing_takes_json() -> None:
    verbs = {words for words, c in commands() if words and not hasattr(c, "commands")}
    with_json = {words for words in verbs if "--json" in help_of(words)}
    assert verbs - with_json == NO_JSON
    for words in ("log", "diff", "show", "view history", "view deps", "view lineage",
                  "view dependents", "view check", "views check", "branch list", "tag list",
                  "restore", "revert", "events", "gc", "fsck"):
        assert words in with_json, words


HASH = "ab" * 32
INSTANT = "2026-11-25T09:00:00.123456Z"


@pytest.mark.parametrize(("env", "drawn"), [
    ({"TTY_COMPATIBLE": "1", "COLUMNS": "200"}, True),   # a wide terminal
    ({"TTY_COMPATIBLE": "1", "COLUMNS": "80"}, False),   # a narrow one
    ({"TTY_COMPATIBLE": "0", "COLUMNS": "200"}, False),  # piped
])
def test_tables_never_cut_a_value(monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str],
                                  env: dict[str, str], drawn: bool) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    print_table(("hash", "time", "message"),
                [(HASH, INSTANT, "create view a.b\nsecond line\twith a tab")])
    out = capsys.readouterr().out
    assert HASH in out and INSTANT in out and "…" not in out
    if drawn:
        assert out.startswith("┏") and f"│ {HASH} │ {INSTANT} │ create view a.b" in out, out
        assert "│ second line with a tab" in out, out
    else:
        assert out.splitlines() == ["hash\ttime\tmessage",
                                    f"{HASH}\t{INSTANT}\tcreate view a.b second line with a tab"]


def test_principals_and_grants_as_json(tmp_path) -> None:
    from catalog.access import grants_json
    from store import Store

    url = f"sqlite:///{tmp_path / 'cat.db'}"
    made = CliRunner().invoke(APP, ["init", "--auth", "--database", url])
    assert made.exit_code == 0, made.output
    key_id = made.stdout.splitlines()[-1].partition(":")[0]
    listed = CliRunner().invoke(APP, ["principal", "list", "--json", "--database", url])
    assert listed.exit_code == 0, listed.output
    [admin] = json.loads(listed.stdout)["principals"]
    assert admin["name"] == "admin" and admin["roles"] == ["admin"] and admin["keys"] == [key_id]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", admin["created"])
    assert admin["revoked"] is None
    grants = CliRunner().invoke(APP, ["grant", "list", "--json", "--database", url])
    store = Store(url)
    try:
        assert json.loads(grants.stdout) == grants_json(store.auth.current())
    finally:
        store.close()
    assert json.loads(grants.stdout)["protected"] == ["main"]
