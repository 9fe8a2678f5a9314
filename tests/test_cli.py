import json
import subprocess

from tests.server import sapwood_command
from tests.zygote_client import run


def _sapwood(*args: str) -> subprocess.CompletedProcess:
    """The verb, forked from the worker's zygote (tests/zygote.py)."""
    return run(list(args))


def test_version_from_the_installed_console_script():
    # The console script of the interpreter running the tests (not whichever
    # one PATH finds first: a virtual environment need not be activated), as
    # a process of its own: what `pip install -e .` put there runs.
    cmd = sapwood_command()
    assert cmd, "the sapwood console script is not installed (pip install -e .)"
    out = subprocess.run([*cmd, "version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "0.1.0"
    flag = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=120)
    assert flag.returncode == 0 and flag.stdout == "0.1.0\n", flag.stderr


def test_init_creates_the_catalog_and_is_repeatable(tmp_path):
    url = f"sqlite:///{tmp_path / 'cat.db'}"
    first = _sapwood("init", "--database", url)
    assert first.returncode == 0, first.stderr
    assert "main is at 2e1cfa82b035" in first.stdout
    again = _sapwood("init", "--database", url)
    assert again.returncode == 0 and again.stdout == first.stdout


def test_init_refuses_a_bad_database_url(tmp_path):
    out = _sapwood("init", "--database", "mysql://nope/x")
    assert out.returncode == 1
    assert out.stderr.strip() == ("error: unsupported database 'mysql': use sqlite:///file.db "
                                  "or postgresql://…")


def test_fsck_reports_a_clean_catalog_and_fails_on_damage(tmp_path):
    import sqlite3

    url = f"sqlite:///{tmp_path / 'cat.db'}"
    assert _sapwood("init", "--database", url).returncode == 0
    ok = _sapwood("fsck", "--database", url)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines() == ["1 refs, 1 commits (0 unreachable), 0 index nodes, "
                                      "0 content values, 1 change-index rows", "ok"]
    with sqlite3.connect(tmp_path / "cat.db") as db:
        db.execute("UPDATE refs SET head = ? WHERE name = 'main'", ("cd" * 32,))
    bad = _sapwood("fsck", "--database", url)
    assert bad.returncode == 1
    assert bad.stdout.splitlines()[1] == (f"missing-commit: ref main: commit {'cd' * 32} "
                                          "is missing")
    # Standard error names the database it checked, then counts the problems.
    assert bad.stderr.splitlines() == [f"database: {url}", "1 problem(s)"]
    as_json = _sapwood("fsck", "--database", url, "--json")
    assert as_json.returncode == 1 and as_json.stderr.splitlines()[-1] == "1 problem(s)"
    report = json.loads(as_json.stdout)
    assert report["ok"] is False and report["store"]["refs"] == 1
    assert report["store"]["problems"] == [f"missing-commit: ref main: commit {'cd' * 32} "
                                           "is missing"]


def test_gc_dry_run_then_run(tmp_path):
    from core.commits import CommitMeta, Put
    from core.content import IcebergTable, Namespace
    from core.keys import ContentKey
    from store import Store

    url = f"sqlite:///{tmp_path / 'cat.db'}"
    s = Store(url)
    s.commit("main", [Put(ContentKey(["ns"]), Namespace())], CommitMeta("ns"))
    s.create_reference("tmp")
    for i in range(3):
        s.commit("tmp", [Put(ContentKey(["ns", f"t{i}"]), IcebergTable(
            metadata_location=f"file:///x/{i}.json"))], CommitMeta(f"c{i}"))
    s.delete_reference("tmp", s.get_reference("tmp").hash)
    s.close()
    dry = _sapwood("gc", "--database", url, "--dry-run", "--grace", "0")
    assert dry.returncode == 0 and "would remove 3 commits" in dry.stdout, dry.stdout
    run = _sapwood("gc", "--database", url, "--grace", "0")
    assert run.returncode == 0 and "removed 3 commits" in run.stdout, run.stdout
    assert "removed 0 commits" in _sapwood("gc", "--database", url, "--grace", "0").stdout
    assert _sapwood("fsck", "--database", url).returncode == 0


def test_export_then_import(tmp_path):
    from core.commits import CommitMeta, Put
    from core.content import Namespace
    from core.keys import ContentKey
    from store import Store

    src, dst = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    s = Store(src)
    s.commit("main", [Put(ContentKey(["ns"]), Namespace())], CommitMeta("ns"))
    head = s.get_reference("main").hash
    s.close()
    out = tmp_path / "dump.jsonl"
    assert _sapwood("export", str(out), "--database", src).returncode == 0
    done = _sapwood("import", str(out), "--database", dst)
    assert done.returncode == 0 and "2 commits" in done.stdout, done.stderr
    t = Store(dst)
    assert t.get_reference("main").hash == head
    t.close()
    again = _sapwood("import", str(out), "--database", dst)
    assert again.returncode == 1 and "not empty" in again.stderr
