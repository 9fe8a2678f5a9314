"""Webhooks: the change feed pushed to a URL, at least once and in order.

A webhook names which events it wants (types, refs, keys) and is delivered
what its owner may read of them, as the feed shows it to that principal
(catalog.feed.events). Each event is POSTed on its own, as a structured
CloudEvent (``application/cloudevents+json``), and the next one only once
the receiver answered 2xx; a failure is retried with exponential backoff
(1 s doubling to 5 min), and after ``pause_after`` failures in a row the
webhook is paused until resumed. One process delivers a webhook at a time
(store.webhooks: a lease), so replicas never both deliver an event; a
restarted or replaced process carries on from the last acknowledged event.

The receiver can check that a delivery is the catalog's: the header
``Sapwood-Signature: t=<unix seconds>,v1=<hex>`` carries HMAC-SHA256 with
the webhook's secret over ``"<t>.<body>"`` (docs/events.md).

A webhook must not turn the catalog into a request forwarder: only http(s)
URLs, no redirects followed, and addresses that are loopback, private,
link-local or otherwise not public are refused — when it is registered and
again at every delivery (a name may be re-pointed) — unless
``SAPWOOD_WEBHOOK_ALLOW_PRIVATE=1``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from catalog.feed.events import TYPES, Feed, FeedQuery, KeyFilter, RefFilter
from catalog.kernel import Catalog
from core.auth import Principal, Privilege
from core.errors import InvalidInputError, NotFoundError
from core.keys import ContentKey
from core.settings import number_setting
from store.webhooks import Webhook as Webhook

SIGNATURE_HEADER = "Sapwood-Signature"
MAX_BACKOFF_S = 300.0
LEASE_S = 60.0
TIMEOUT_S = 10.0
# A lease outlasts any one delivery (its timeout) with room to record it.
MIN_LEASE_S = TIMEOUT_S + 5
BATCH = 100


@dataclass(frozen=True)
class WebhookSettings:
    allow_private: bool = False
    pause_after: int = 10
    # How long a process holds a webhook (a dead one's lease runs out).
    lease_s: float = LEASE_S

    @staticmethod
    def from_env() -> WebhookSettings:
        n = int(number_setting("SAPWOOD_WEBHOOK_PAUSE_AFTER",
                               os.environ.get("SAPWOOD_WEBHOOK_PAUSE_AFTER"), 10, whole=True))
        lease_s = number_setting("SAPWOOD_WEBHOOK_LEASE_S",
                                 os.environ.get("SAPWOOD_WEBHOOK_LEASE_S"), LEASE_S,
                                 MIN_LEASE_S, 3600)
        return WebhookSettings(
            os.environ.get("SAPWOOD_WEBHOOK_ALLOW_PRIVATE", "") in ("1", "true", "yes"),
            max(1, n), lease_s)


def signature(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def check_url(url: str, allow_private: bool) -> None:
    """InvalidInputError unless ``url`` is an http(s) URL to a public address."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInputError(f"A webhook URL must be http(s)://host/…, not {url[:200]!r}")
    if allow_private:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 443, type=socket.SOCK_STREAM)
    except OSError as e:
        raise InvalidInputError(f"The webhook's host {parts.hostname!r} does not resolve: "
                                f"{e}") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if not address.is_global:
            raise InvalidInputError(
                f"The webhook's host {parts.hostname!r} is at {address}, a loopback, private or "
                "otherwise non-public address: refused (SAPWOOD_WEBHOOK_ALLOW_PRIVATE=1 allows "
                "it where the catalog's network is trusted)")


class WebhookService:
    def __init__(self, catalog: Catalog, settings: WebhookSettings | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.catalog = catalog
        self.store = catalog.store
        self.settings = settings or WebhookSettings.from_env()
        self.feed = Feed(catalog)
        self.clock = clock
        self.holder = f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._http: httpx.Client | None = None

    # -- registration ------------------------------------------------------------------
    def add(self, url: str, types: list[str], refs: list[str], keys: list[str],
            secret: str | None, owner: str | None) -> Webhook:
        unknown = [t for t in types if t not in TYPES]
        if unknown:
            raise InvalidInputError(f"Unknown event type {unknown[0]!r}: one of {', '.join(TYPES)}")
        for k in keys:
            ContentKey.parse(k)  # a bad key is refused here, not at delivery
        if secret is not None and len(secret) < 16:
            raise InvalidInputError("A webhook secret must have at least 16 characters")
        check_url(url, self.settings.allow_private)  # last: it may ask the DNS
        # Events from now on: a new webhook does not replay the past.
        return self.store.webhooks.create(
            uuid.uuid4().hex, url, types, refs, keys, secret or secrets.token_urlsafe(32),
            owner, self.feed.events.last(), int(self.clock() * 1e6))

    def get(self, id_: str) -> Webhook:
        found = self.store.webhooks.get(id_)
        if found is None:
            raise NotFoundError(f"Webhook {id_!r} does not exist")
        return found

    def all(self, owner: str | None = None) -> list[Webhook]:
        """Every webhook, or ``owner``'s."""
        return self.store.webhooks.all(owner)

    def remove(self, id_: str) -> None:
        self.store.webhooks.remove(id_)

    def resume(self, id_: str) -> Webhook:
        """A paused webhook delivering again; answers it as it is now."""
        self.store.webhooks.resume(id_)
        return self.get(id_)

    def change_token(self) -> int | None:
        """Equal tokens at two moments: nothing was committed in between, by
        any process (None: unknown, on PostgreSQL); the delivery loop polls it."""
        return self.store.db.change_token()

    # -- delivery ------------------------------------------------------------------------
    def deliver_due(self) -> int:
        """Deliver what is due, webhook by webhook; returns events delivered."""
        now_us = int(self.clock() * 1e6)
        sent = 0
        for id_ in self.store.webhooks.due(now_us, self.feed.events.last()):
            hook = self.store.webhooks.claim(id_, self.holder, now_us,
                                             int(self.settings.lease_s * 1e6))
            if hook is None:
                continue  # another process has it
            try:
                sent += self._deliver(hook)
            finally:
                self.store.webhooks.release(id_, self.holder)
        return sent

    def _deliver(self, hook: Webhook) -> int:
        ref_filter, keys_of = self._grants_of(hook.owner)
        sent = 0
        # Each delivery starts only while the lease will outlast it.
        deadline = time.monotonic() + self.settings.lease_s - (TIMEOUT_S + 2)
        cursor = hook.cursor
        while time.monotonic() < deadline:
            keys = [ContentKey.parse(k) for k in hook.keys]
            events, more, page_end = self.feed.page_to(
                FeedQuery(cursor, BATCH, hook.types, hook.refs[0] if len(hook.refs) == 1
                          else None, keys[0] if len(keys) == 1 else None),
                ref_filter, keys_of)
            events = [e for e in events if (not hook.refs or e["subject"] in hook.refs)
                      and (len(keys) <= 1 or _touches(e, keys))]
            for event in events:
                if time.monotonic() >= deadline:
                    return sent  # the lease could run out mid-delivery: next round
                error = self._post(hook, event)
                now_us = int(self.clock() * 1e6)
                if error is not None:
                    wait = min(MAX_BACKOFF_S, 2.0 ** min(hook.failures, 16))
                    self.store.webhooks.failed(hook.id, self.holder, error, now_us,
                                               now_us + int(wait * 1e6),
                                               self.settings.pause_after)
                    return sent
                if not self.store.webhooks.delivered_one(hook.id, self.holder,
                                                         int(event["id"]), now_us):
                    return sent  # the lease was lost: another process carries on
                cursor = int(event["id"])
                sent += 1
            if page_end > cursor:  # events looked at that this webhook does not get
                self.store.webhooks.skip_to(hook.id, self.holder, page_end)
                cursor = page_end
            if not more:
                return sent
        return sent

    def _post(self, hook: Webhook, event: dict[str, Any]) -> str | None:
        """None when the receiver acknowledged the event, else why not."""
        try:
            check_url(hook.url, self.settings.allow_private)
        except InvalidInputError as e:
            return e.message
        body = json.dumps(event, separators=(",", ":")).encode()
        stamp = int(self.clock())
        try:
            r = self._client().post(hook.url, content=body, headers={
                "Content-Type": "application/cloudevents+json",
                SIGNATURE_HEADER: signature(hook.secret, stamp, body),
                "Sapwood-Webhook": hook.id})
        except httpx.HTTPError as e:
            return f"{type(e).__name__}: {e}"[:500]
        if 200 <= r.status_code < 300:
            return None
        return f"HTTP {r.status_code}: {r.text[:300]}"

    def _client(self) -> httpx.Client:
        if self._http is None:
            self._http = httpx.Client(timeout=TIMEOUT_S, follow_redirects=False)
        return self._http

    def _grants_of(self, owner: str | None) -> tuple[RefFilter | None, KeyFilter | None]:
        """What the owner may read, as the feed's filters (None: no auth)."""
        data = self.store.auth.current()
        if owner is None or not data.principals:
            return None, None
        record = data.principals.get(owner)
        if record is None or not record.active:
            return (lambda _ref: False), None
        who = Principal(owner, frozenset(record.roles))
        policy = data.policy

        def may_read(ref: str) -> bool:
            return policy.reaches(who, Privilege.READ, ref)

        def keys_of(ref: str) -> Callable[[tuple[str, ...]], bool] | None:
            if policy.allows(who, Privilege.READ, ref, None):
                return None
            return lambda key: policy.readable_key(who, ref, key)

        return may_read, keys_of


def _touches(event: dict[str, Any], keys: list[ContentKey]) -> bool:
    wanted = {k.elements for k in keys}
    return any(tuple(op["key"]) in wanted for c in event.get("data", {}).get("commits", [])
               for op in c.get("operations", []))
