"""The head of a ref and the auth snapshot are not read again while the
SQLite database's data_version says nothing was committed (store.data_version):
every commit, by this process or another, must still be seen at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core.commits import RefType
from store import Store
from store.data_version import DataVersion
from tests.store.helpers import put_new, table, with_ns


def _sqlite_store(tmp_path: Path) -> tuple[Store, str]:
    url = f"sqlite:///{tmp_path / 'sapwood.db'}"
    return Store(url), str(tmp_path / "sapwood.db")


def test_the_token_changes_with_every_commit_and_only_then(tmp_path: Path) -> None:
    store, path = _sqlite_store(tmp_path)
    try:
        with_ns(store, "main", "ns")
        watch = DataVersion(path, 5)
        first = watch.token()
        assert first is not None
        store.get_reference("main")  # reads change nothing
        store.log("main")
        assert watch.token() == first
        put_new(store, "main", ("ns.t", table("v1")))
        second = watch.token()
        assert second is not None and second != first
        watch.close()
    finally:
        store.close()


def test_a_commit_by_another_process_is_seen_by_the_next_read(tmp_path: Path) -> None:
    store, path = _sqlite_store(tmp_path)
    try:
        with_ns(store, "main", "ns")
        other = Store(f"sqlite:///{path}")  # other connections: another process's view
        for i in range(30):
            before = store.get_reference("main").hash
            assert store.get_reference("main").hash == before  # answered from the cache
            put_new(other, "main", (f"ns.t{i}", table(str(i))))
            assert store.get_reference("main").hash == other.get_reference("main").hash != before
        other.close()
        # And from a process of its own, writing with SQLite directly.
        head = store.get_reference("main").hash
        script = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                  "c.execute('UPDATE refs SET head = (SELECT head FROM refs WHERE name = ?) "
                  "WHERE name = ?', ('main', 'main')); "
                  "c.execute('INSERT INTO refs (name, type, head, created_us) "
                  "VALUES (?, ?, ?, 0)', ('copy', ?, ?)); c.commit()".replace(
                      "('copy', ?, ?)", f"('copy', '{RefType.BRANCH.value}', '{head}')"))
        subprocess.run([sys.executable, "-c", script, path], check=True)
        assert store.get_reference("copy").hash == head
    finally:
        store.close()


def test_a_grant_made_elsewhere_is_seen_by_the_next_check(tmp_path: Path) -> None:
    store, path = _sqlite_store(tmp_path)
    try:
        store.auth.create_principal("ann")
        assert store.auth.current().grants == ()
        assert store.auth.current().grants == ()  # from the snapshot, no read
        other = Store(f"sqlite:///{path}")
        other.auth.add_grant("ann", "read", "*")
        other.close()
        assert [g.grant.grantee for g in store.auth.current().grants] == ["ann"]
    finally:
        store.close()


def test_a_database_that_cannot_be_opened_means_unknown(tmp_path: Path) -> None:
    assert DataVersion(str(tmp_path / "missing" / "x.db"), 5).token() is None


def test_gc_killed_beside_a_reading_process_leaves_it_reading(tmp_path: Path) -> None:
    """Other processes opening, writing and dying (SIGKILL) beside a store
    that answers heads from its version check: it sees every commit."""
    store, path = _sqlite_store(tmp_path)
    try:
        with_ns(store, "main", "ns")
        script = ("import sqlite3, sys, os, signal; c = sqlite3.connect(sys.argv[1]); "
                  "c.execute('BEGIN IMMEDIATE'); c.execute('UPDATE refs SET created_us = "
                  "created_us + 1'); c.commit(); os.kill(os.getpid(), signal.SIGKILL)")
        for _ in range(5):
            before = store.get_reference("main")
            subprocess.run([sys.executable, "-c", script, path], check=False)
            put_new(store, "main", (f"ns.t{_}", table("x")))
            assert store.get_reference("main").hash != before.hash
    finally:
        store.close()
