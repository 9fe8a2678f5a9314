"""Webhook rows (catalog.feed.webhooks decides what to deliver; this keeps the
registrations and how far each got).

A webhook is delivered by one process at a time, whatever the number of
replicas: a process *claims* it by taking its lease with one conditional
UPDATE (free, or expired), and every later change of its progress is
conditional on still holding the lease. A process that dies loses the lease
when it expires and another carries on from the last acknowledged event;
only an event whose acknowledgement was lost is then delivered again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, insert, select, update

from store.db import Database
from store.schema import WEBHOOKS

ACTIVE, PAUSED = "active", "paused"


@dataclass(frozen=True, slots=True)
class Webhook:
    id: str
    url: str
    types: tuple[str, ...]
    refs: tuple[str, ...]
    keys: tuple[str, ...]
    secret: str
    owner: str | None
    created_us: int
    state: str
    cursor: int
    delivered: int
    failures: int
    last_error: str | None
    last_attempt_us: int | None
    next_attempt_us: int


def _webhook(r: Any) -> Webhook:
    return Webhook(r.id, r.url, tuple(json.loads(r.types)), tuple(json.loads(r.refs)),
                   tuple(json.loads(r.keys)), r.secret, r.owner, r.created_us, r.state, r.cursor,
                   r.delivered, r.failures, r.last_error, r.last_attempt_us, r.next_attempt_us)


class Webhooks:
    def __init__(self, db: Database) -> None:
        self.db = db

    def create(self, id_: str, url: str, types: list[str], refs: list[str], keys: list[str],
               secret: str, owner: str | None, cursor: int, now_us: int) -> Webhook:
        with self.db.write() as conn:
            conn.execute(insert(WEBHOOKS).values(
                id=id_, url=url, types=json.dumps(types), refs=json.dumps(refs),
                keys=json.dumps(keys), secret=secret, owner=owner, created_us=now_us,
                state=ACTIVE, cursor=cursor, delivered=0, failures=0, last_error=None,
                last_attempt_us=None, next_attempt_us=0, lease_owner=None, lease_until_us=0))
        found = self.get(id_)
        assert found is not None
        return found

    def get(self, id_: str) -> Webhook | None:
        with self.db.read() as conn:
            row = conn.execute(select(WEBHOOKS).where(WEBHOOKS.c.id == id_)).first()
        return _webhook(row) if row is not None else None

    def all(self, owner: str | None = None) -> list[Webhook]:
        q = select(WEBHOOKS).order_by(WEBHOOKS.c.created_us, WEBHOOKS.c.id)
        if owner is not None:
            q = q.where(WEBHOOKS.c.owner == owner)
        with self.db.read() as conn:
            return [_webhook(r) for r in conn.execute(q)]

    def remove(self, id_: str) -> bool:
        with self.db.write() as conn:
            return bool(conn.execute(delete(WEBHOOKS).where(WEBHOOKS.c.id == id_)).rowcount)

    def resume(self, id_: str) -> bool:
        with self.db.write() as conn:
            return bool(conn.execute(update(WEBHOOKS).where(WEBHOOKS.c.id == id_).values(
                state=ACTIVE, failures=0, next_attempt_us=0)).rowcount)

    # -- delivery ------------------------------------------------------------------------
    def due(self, now_us: int, last_seq: int) -> list[str]:
        """Active webhooks behind the feed's newest event (``last_seq``) whose
        next attempt is due and whose lease is free."""
        q = select(WEBHOOKS.c.id).where(WEBHOOKS.c.state == ACTIVE,
                                        WEBHOOKS.c.cursor < last_seq,
                                        WEBHOOKS.c.next_attempt_us <= now_us,
                                        WEBHOOKS.c.lease_until_us <= now_us)
        with self.db.read() as conn:
            return [r.id for r in conn.execute(q)]

    def claim(self, id_: str, holder: str, now_us: int, lease_us: int) -> Webhook | None:
        """Take the webhook's lease (None: another process holds it, or it is
        not due any more)."""
        with self.db.write() as conn:
            taken = conn.execute(update(WEBHOOKS).where(
                WEBHOOKS.c.id == id_, WEBHOOKS.c.state == ACTIVE,
                WEBHOOKS.c.next_attempt_us <= now_us,
                WEBHOOKS.c.lease_until_us <= now_us).values(
                lease_owner=holder, lease_until_us=now_us + lease_us)).rowcount
        return self.get(id_) if taken else None

    def delivered_one(self, id_: str, holder: str, seq: int, now_us: int) -> bool:
        """Record an acknowledged event; False: the lease was lost (stop)."""
        with self.db.write() as conn:
            return bool(conn.execute(update(WEBHOOKS).where(
                WEBHOOKS.c.id == id_, WEBHOOKS.c.lease_owner == holder,
                WEBHOOKS.c.cursor < seq).values(
                cursor=seq, delivered=WEBHOOKS.c.delivered + 1, failures=0, last_error=None,
                last_attempt_us=now_us)).rowcount)

    def skip_to(self, id_: str, holder: str, seq: int) -> None:
        """Move past events this webhook does not deliver (filtered out)."""
        with self.db.write() as conn:
            conn.execute(update(WEBHOOKS).where(
                WEBHOOKS.c.id == id_, WEBHOOKS.c.lease_owner == holder,
                WEBHOOKS.c.cursor < seq).values(cursor=seq))

    def failed(self, id_: str, holder: str, error: str, now_us: int, next_us: int,
               pause_after: int) -> None:
        with self.db.write() as conn:
            conn.execute(update(WEBHOOKS).where(
                WEBHOOKS.c.id == id_, WEBHOOKS.c.lease_owner == holder).values(
                failures=WEBHOOKS.c.failures + 1, last_error=error[:2000],
                last_attempt_us=now_us, next_attempt_us=next_us))
            conn.execute(update(WEBHOOKS).where(
                WEBHOOKS.c.id == id_, WEBHOOKS.c.failures >= pause_after).values(state=PAUSED))

    def release(self, id_: str, holder: str) -> None:
        with self.db.write() as conn:
            conn.execute(update(WEBHOOKS).where(
                WEBHOOKS.c.id == id_, WEBHOOKS.c.lease_owner == holder).values(
                lease_owner=None, lease_until_us=0))
