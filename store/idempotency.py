"""Idempotency keys: a request that carries one takes effect once.

A request sent again after its answer was lost (a timeout, a dropped
connection, a proxy restart) must not commit twice. The first request with a
key executes; its answer is kept under (principal, key) with a digest of the
request, and a repeat within the key's lifetime gets that answer back. The
row of a request that commits is written *in the commit's own transaction*
(``record_in``): the key is recorded if and only if the commit landed, so a
server killed between its commit and its answer still has the answer for the
retry, and any replica finds it. Two requests racing with one key both plan,
but only one commit can insert the row: the other's transaction fails on the
primary key, writes nothing, and its caller answers with the winner's answer
(``KeyTakenError``). Requests that end without a commit (refused before any
write, or with nothing to change) are recorded in a transaction of their own
(``record``). Expired rows are removed by gc (``purge``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select

from core.errors import ConflictError
from store.db import Database
from store.schema import IDEMPOTENCY


@dataclass(frozen=True, slots=True)
class Answer:
    """What the first request was answered: kept as it was sent, with the
    headers a client reads off it (api.idempotency.KEPT_HEADERS: a table's
    ETag among them), in order."""

    status: int
    media_type: str | None
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Recorded:
    fingerprint: str
    answer: Answer
    # The commit the request made (None: it made none).
    commit: str | None
    expires_us: int


class Once:
    """A request that must take effect once: who sent it with which key, a
    digest of what it asked, until when the key holds, and how its answer
    is made from what the write returns (set by the layer that shapes the
    answer; the store calls it inside the commit's transaction)."""

    __slots__ = ("_kept", "answer", "expires_us", "fingerprint", "key", "principal")

    def __init__(self, principal: str, key: str, fingerprint: str, expires_us: int,
                 answer: Callable[[Any], Answer] | None = None) -> None:
        self.principal = principal
        self.key = key
        self.fingerprint = fingerprint
        self.expires_us = expires_us
        self.answer = answer
        self._kept: list[Answer] = []  # shared with the copies bind makes

    @property
    def recorded(self) -> Answer | None:
        """The answer a commit recorded with the key (None: none yet)."""
        return self._kept[0] if self._kept else None

    def landed(self, answer: Answer) -> None:
        self._kept[:] = [answer]

    def bind(self, answer: Callable[[Any], Answer]) -> Once:
        """The same request answered by ``answer``; what a copy records
        shows on this one too."""
        copy = Once(self.principal, self.key, self.fingerprint, self.expires_us, answer)
        copy._kept = self._kept
        return copy


class KeyTakenError(ConflictError):
    """Another request with the same key committed first; this one's
    transaction wrote nothing. Its caller answers with what that one got."""


class IdempotencyKeys:
    def __init__(self, db: Database) -> None:
        self.db = db
        p = db.param
        # One statement: a new key is inserted, an expired one taken over,
        # a live one left alone (rowcount 0).
        self._sql_insert = (
            "INSERT INTO idempotency (principal, request_key, fingerprint, status, media_type, "
            "body, headers, commit_hash, expires_us) VALUES "
            f"({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}) "
            "ON CONFLICT (principal, request_key) DO UPDATE SET fingerprint = "
            "excluded.fingerprint, status = excluded.status, media_type = excluded.media_type, "
            "body = excluded.body, headers = excluded.headers, "
            "commit_hash = excluded.commit_hash, "
            f"expires_us = excluded.expires_us WHERE idempotency.expires_us <= {p}")

    def find(self, principal: str, key: str, now_us: int) -> Recorded | None:
        """The answer kept for ``key`` (None: none, or it expired)."""
        p = self.db.param
        rows = self.db.raw_read(
            "SELECT fingerprint, status, media_type, body, headers, commit_hash, expires_us "
            f"FROM idempotency WHERE principal = {p} AND request_key = {p} AND expires_us > {p}",
            (principal, key, now_us))
        if not rows:
            return None
        fp, status, media, body, headers, commit, expires = rows[0]
        return Recorded(fp, Answer(int(status), media, bytes(body), _headers(headers)), commit,
                        int(expires))

    def record_in(self, cur: Any, once: Once, result: Any, commit: str | None,
                  now_us: int) -> Answer:
        """Record the key and its answer (made from the write's ``result``)
        inside a write transaction (``cur``, a DB-API cursor); KeyTakenError
        when another request holds it (the transaction must then roll back).
        Telling ``Once.landed`` is the caller's, once the transaction is
        committed."""
        assert once.answer is not None, "a recorded request says how it is answered"
        answer = once.answer(result)
        cur.execute(self._sql_insert, (*self._row(once, answer, commit), now_us))
        if cur.rowcount != 1:
            raise KeyTakenError(f"Idempotency-Key {once.key} was used by another request "
                                "that committed first")
        return answer

    def record(self, once: Once, answer: Answer, now_us: int) -> Recorded | None:
        """Record the answer of a request that made no commit, in its own
        transaction. Returns what is kept instead when another request with
        the key got there first (None: this answer is the one kept)."""
        with self.db.raw_write() as cur:
            cur.execute(self._sql_insert, (*self._row(once, answer, None), now_us))
            if cur.rowcount == 1:
                return None
        return self.find(once.principal, once.key, now_us)

    def purge(self, now_us: int) -> int:
        """Remove expired keys (gc); returns how many."""
        with self.db.write() as conn:
            return int(conn.execute(delete(IDEMPOTENCY).where(
                IDEMPOTENCY.c.expires_us <= now_us)).rowcount or 0)

    def count(self) -> int:
        with self.db.read() as conn:
            return int(conn.execute(select(func.count()).select_from(IDEMPOTENCY)).scalar_one())

    @staticmethod
    def _row(once: Once, answer: Answer, commit: str | None) -> tuple[object, ...]:
        headers = json.dumps([list(h) for h in answer.headers]) if answer.headers else None
        return (once.principal, once.key, once.fingerprint, answer.status, answer.media_type,
                answer.body, headers, commit, once.expires_us)


def _headers(text: str | None) -> tuple[tuple[str, str], ...]:
    """The headers kept with an answer (None: none; a row written before
    migration 0012 kept none)."""
    if not text:
        return ()
    return tuple((str(k), str(v)) for k, v in json.loads(text))
