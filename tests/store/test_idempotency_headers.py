"""A kept answer keeps its headers (issue 43, loose end 4; migration 0012),
on SQLite and PostgreSQL: recorded in a commit's transaction or on its
own, found again in order; an answer kept before the migration is found
with none."""

from __future__ import annotations

import time

from sqlalchemy import text

from core.commits import CommitMeta, Put
from core.content import Namespace
from store import Store
from store.idempotency import Answer, Once
from tests.store.helpers import K, with_ns

HEADERS = (("etag", '"abc"'), ("location", "/x/y"))


def _now() -> int:
    return time.time_ns() // 1000


def _once(key: str) -> Once:
    return Once("alice", key, "digest", _now() + 60_000_000,
                lambda result: Answer(200, "application/json", b"{}", HEADERS))


def test_an_answer_keeps_its_headers(store: Store) -> None:
    with_ns(store, "main", "ns")
    store.commit("main", [Put(K("ns.a"), Namespace())], CommitMeta("a"), once=_once("c"))
    kept = store.keys.find("alice", "c", _now())
    assert kept is not None and kept.answer.headers == HEADERS
    assert store.keys.record(_once("r"), Answer(409, "application/json", b"{}", HEADERS),
                             _now()) is None
    kept = store.keys.find("alice", "r", _now())
    assert kept is not None and kept.answer == Answer(409, "application/json", b"{}", HEADERS)
    assert store.keys.record(_once("n"), Answer(204, None, b""), _now()) is None
    kept = store.keys.find("alice", "n", _now())
    assert kept is not None and kept.answer.headers == ()


def test_an_answer_kept_before_the_migration_has_none(store_url: str) -> None:
    s = Store(store_url)
    try:
        with s.db.write() as conn:  # back to the schema before revision 0012
            conn.execute(text("DROP TABLE imported_commits"))  # 0013's
            conn.execute(text("ALTER TABLE idempotency DROP COLUMN headers"))
            conn.execute(text("UPDATE alembic_version SET version_num = '0011'"))
            conn.execute(text(
                "INSERT INTO idempotency (principal, request_key, fingerprint, status, "
                "media_type, body, commit_hash, expires_us) VALUES ('alice', 'old', 'digest', "
                "200, 'application/json', :body, NULL, :expires)"),
                {"body": b"{}", "expires": _now() + 60_000_000})
    finally:
        s.close()
    s = Store(store_url)
    try:
        kept = s.keys.find("alice", "old", _now())
        assert kept is not None and kept.answer == Answer(200, "application/json", b"{}")
        s.keys.record(_once("new"), Answer(200, "application/json", b"{}", HEADERS), _now())
        kept = s.keys.find("alice", "new", _now())
        assert kept is not None and kept.answer.headers == HEADERS
    finally:
        s.close()
