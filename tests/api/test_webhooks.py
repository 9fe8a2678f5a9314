"""Webhooks: the feed pushed to a receiver in the test, at least once and in
order, signed, retried with backoff, paused after failures in a row and
resumed; URLs that would make the catalog a request forwarder refused."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from catalog.feed.webhooks import check_url
from core.errors import InvalidInputError
from tests.http import http_client, http_request
from tests.pg import free_port
from tests.server import serving
from tests.zygote_client import run as sapwood

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False)])
SECRET = "a-secret-of-enough-length"


class Receiver:
    """Answers 500 to its first ``fail`` deliveries, then 200; keeps what came.
    ``answer_after_s`` holds each answer that long after keeping the delivery
    (a slow receiver or network): the catalog records a delivery only once it
    has the answer, so a test must wait for the catalog's record, not for
    the receiver's list."""

    def __init__(self, fail: int = 0, answer_after_s: float = 0.0) -> None:
        self.fail = fail
        self.answer_after_s = answer_after_s
        self.got: list[tuple[dict[str, str], bytes, int]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status = 500 if receiver.fail > 0 else 200
                receiver.fail -= 1
                receiver.got.append(({k.lower(): v for k, v in self.headers.items()}, body,
                                     status))
                time.sleep(receiver.answer_after_s)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.handler = Handler
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.port}/hook"

    def down(self) -> None:
        """Nobody listens at the URL (connections are refused)."""
        self.server.shutdown()
        self.server.server_close()

    def up(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), self.handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def acknowledged(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _, body, status in self.got if status == 200]

    def close(self) -> None:
        self.server.shutdown()


def _verify(headers: dict[str, str], body: bytes) -> bool:
    parts = dict(p.split("=", 1) for p in headers["sapwood-signature"].split(","))
    mac = hmac.new(SECRET.encode(), f"{parts['t']}.".encode() + body, hashlib.sha256)
    return hmac.compare_digest(mac.hexdigest(), parts["v1"])


def _until(check: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_every_event_delivered_in_order_signed_after_failures(tmp_path: Path) -> None:
    receiver = Receiver(fail=3)
    try:
        with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path,
                     extra_env={"SAPWOOD_WEBHOOK_ALLOW_PRIVATE": "1"}) as server:
            http = http_client(base_url=server.base, timeout=30)
            made = http.post("/api/v2/webhooks", json={"url": receiver.url, "secret": SECRET})
            assert made.status_code == 200, made.text
            hook = made.json()
            assert hook["secret"] == SECRET and hook["state"] == "active"
            cat = server.catalog()
            cat.create_namespace("sales")
            t = cat.create_table("sales.t", SCHEMA)
            for i in range(3):
                t.append(pa.table({"id": [i]}, schema=SCHEMA))
            feed = http.get("/api/v2/events", params={"after": hook["lastDelivered"]}).json()
            ids = [e["id"] for e in feed["events"]]
            assert len(ids) == 5
            # The first delivery fails three times (backoff 1, 2, 4 s), then all go.
            _until(lambda: len(receiver.acknowledged()) == 5)
            assert [e["id"] for e in receiver.acknowledged()] == ids  # in order, each once
            assert [json.loads(b)["id"] for _, b, s in receiver.got if s == 500] == [ids[0]] * 3
            # Then the receiver is down for a while: what lands meanwhile
            # comes after it is back, in order.
            receiver.down()
            for i in range(3, 6):
                t.append(pa.table({"id": [i]}, schema=SCHEMA))
            _until(lambda: http.get(f"/api/v2/webhooks/{hook['id']}").json()["failures"] >= 1)
            down = http.get(f"/api/v2/webhooks/{hook['id']}").json()
            assert down["delivered"] == 5 and down["lastError"]
            receiver.up()
            # The catalog's record, not the receiver's list: it is written
            # once the receiver's answer is back (see Receiver).
            _until(lambda: http.get(f"/api/v2/webhooks/{hook['id']}").json()["delivered"] == 8)
            ids = [e["id"] for e in http.get("/api/v2/events", params={
                "after": hook["lastDelivered"]}).json()["events"]]
            assert [e["id"] for e in receiver.acknowledged()] == ids and len(ids) == 8
            assert all(_verify(h, b) for h, b, _ in receiver.got)
            assert all(h["content-type"] == "application/cloudevents+json"
                       for h, _, _ in receiver.got)
            state = http.get(f"/api/v2/webhooks/{hook['id']}").json()
            assert state["delivered"] == 8 and state["failures"] == 0
            assert state["lastDelivered"] == int(ids[-1]) and "secret" not in state
            assert [h["id"] for h in http.get("/api/v2/webhooks").json()["webhooks"]] == [
                hook["id"]]
            assert http.delete(f"/api/v2/webhooks/{hook['id']}").status_code == 204
            assert http.get(f"/api/v2/webhooks/{hook['id']}").status_code == 404
    finally:
        receiver.close()


def test_a_webhook_is_paused_after_failures_in_a_row_and_resumed(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}/nobody-listens"
    with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path,
                 extra_env={"SAPWOOD_WEBHOOK_ALLOW_PRIVATE": "1",
                            "SAPWOOD_WEBHOOK_PAUSE_AFTER": "2"}) as server:
        http = http_client(base_url=server.base, timeout=30)
        hook = http.post("/api/v2/webhooks", json={"url": dead}).json()
        server.catalog().create_namespace("sales")
        _until(lambda: http.get(f"/api/v2/webhooks/{hook['id']}").json()["state"] == "paused")
        state = http.get(f"/api/v2/webhooks/{hook['id']}").json()
        assert state["failures"] == 2 and "ConnectError" in state["lastError"]
        resumed = http.post(f"/api/v2/webhooks/{hook['id']}/resume").json()
        assert resumed["state"] == "active" and resumed["failures"] == 0


def test_urls_that_would_forward_requests_are_refused(tmp_path: Path) -> None:
    for url, why in [("ftp://example.com/x", "http"), ("http://127.0.0.1:9/x", "non-public"),
                     ("http://10.1.2.3/x", "non-public"), ("http://[::1]/x", "non-public"),
                     ("http://169.254.169.254/latest/meta-data", "non-public")]:
        with pytest.raises(InvalidInputError, match=why):
            check_url(url, allow_private=False)
    check_url("http://127.0.0.1:9/x", allow_private=True)
    with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path) as server:
        r = http_request("POST", f"{server.base}/api/v2/webhooks", json={"url": "http://127.0.0.1:1/x"})
        assert r.status_code == 400 and "SAPWOOD_WEBHOOK_ALLOW_PRIVATE" in r.text
        bad = http_request("POST", f"{server.base}/api/v2/webhooks",
                           json={"url": "https://example.com/x", "types": ["dev.sapwood.x"]})
        assert bad.status_code == 400 and "Unknown event type" in bad.text


def test_sapwood_webhook_add_list_resume_remove(tmp_path: Path) -> None:

    receiver = Receiver()
    try:
        with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path,
                     extra_env={"SAPWOOD_WEBHOOK_ALLOW_PRIVATE": "1"}) as server:
            def cli(*args: str) -> str:
                return sapwood(["webhook", *args, "--uri", server.base], timeout=60, check=True,
                               env={"COLUMNS": "250"}).stdout

            out = cli("add", receiver.url, "--types", "dev.sapwood.commit", "--secret", SECRET)
            hook_id = out.split()[1]
            server.catalog().create_namespace("sales")
            _until(lambda: len(receiver.acknowledged()) == 1)
            assert receiver.acknowledged()[0]["type"] == "dev.sapwood.commit"
            listing = cli("list")
            assert hook_id in listing and "active" in listing
            assert "active" in cli("resume", hook_id)
            cli("remove", hook_id)
            assert hook_id not in cli("list")
    finally:
        receiver.close()


def test_a_webhook_delivers_only_what_its_owner_may_read(tmp_path: Path) -> None:
    from catalog.access import create_key
    from store import Store

    url = f"sqlite:///{tmp_path / 'sapwood.db'}"
    store = Store(url)
    store.auth.create_principal("admin")
    for p in ("read", "write"):
        store.auth.add_grant("admin", p, "*")
    store.auth.create_principal("seller")
    store.auth.add_grant("seller", "read", "*", ("sales",))
    keys = {n: create_key(store, n) for n in ("admin", "seller")}
    store.close()
    receiver = Receiver()
    try:
        with serving(url, tmp_path, extra_env={"SAPWOOD_AUTH": "1",
                                               "SAPWOOD_WEBHOOK_ALLOW_PRIVATE": "1"}) as server:
            seller = http_client(base_url=server.base, timeout=30,
                                 headers={"Authorization": f"Bearer {keys['seller']}"})
            made = seller.post("/api/v2/webhooks", json={"url": receiver.url})
            assert made.status_code == 200, made.text
            admin = server.catalog(credential=keys["admin"])
            admin.create_namespace("hr")
            admin.create_table("hr.salaries", SCHEMA)
            admin.create_namespace("sales")
            admin.create_table("sales.t", SCHEMA)
            _until(lambda: len(receiver.acknowledged()) == 2)
            time.sleep(1.5)  # anything else would have come by now
            got = receiver.acknowledged()
            keys_seen = {tuple(op["key"]) for e in got for c in e["data"]["commits"]
                         for op in c["operations"]}
            assert keys_seen == {("sales",), ("sales", "t")}
            assert "hr" not in json.dumps([e["data"] for e in got])
            # Its owner sees it; another reader without manage-grants would not.
            assert seller.get(f"/api/v2/webhooks/{made.json()['id']}").status_code == 200
    finally:
        receiver.close()


def test_a_restart_repeats_only_the_event_whose_answer_was_lost(tmp_path: Path) -> None:
    """The server is SIGKILLed while the receiver answers the second event:
    after it restarts (and its old lease runs out) delivery goes on, and
    only that event arrives twice."""
    import signal

    from tests.server import Server

    server = Server(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path, extra_env={
        "SAPWOOD_WEBHOOK_ALLOW_PRIVATE": "1", "SAPWOOD_WEBHOOK_LEASE_S": "15"}).start()
    receiver = Receiver()
    original = receiver.server.RequestHandlerClass.do_POST  # type: ignore[attr-defined]

    def kill_on_second(handler: Any) -> None:
        if len(receiver.got) != 1 or server.proc is None:
            original(handler)
            return
        # The second delivery: taken in, then the server dies before the answer.
        body = handler.rfile.read(int(handler.headers["Content-Length"]))
        receiver.got.append(({k.lower(): v for k, v in handler.headers.items()}, body, 200))
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait()
        try:
            handler.send_response(200)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
        except OSError:
            pass

    receiver.server.RequestHandlerClass.do_POST = kill_on_second  # type: ignore[attr-defined]
    try:
        http = http_client(base_url=server.base, timeout=30)
        hook = http.post("/api/v2/webhooks", json={"url": receiver.url}).json()
        cat = server.catalog()
        cat.create_namespace("a")
        cat.create_namespace("b")
        _until(lambda: len(receiver.got) == 2)
        server.start()  # on the same database; the dead one's lease runs out
        http = http_client(base_url=server.base, timeout=30)
        server.catalog().create_namespace("c")
        feed = [e["id"] for e in http.get("/api/v2/events",
                                          params={"after": hook["lastDelivered"]}).json()["events"]]
        assert len(feed) == 3
        _until(lambda: [json.loads(b)["id"] for _, b, _ in receiver.got][-1:] == feed[-1:], 60)
        got = [json.loads(b)["id"] for _, b, _ in receiver.got]
        assert got == [feed[0], feed[1], feed[1], feed[2]]  # the lost answer's event twice
    finally:
        server.stop()
        receiver.close()


def test_two_replicas_deliver_each_event_once(tmp_path: Path) -> None:
    from tests.server import Server

    url = f"sqlite:///{tmp_path / 'sapwood.db'}"
    env = {"SAPWOOD_WEBHOOK_ALLOW_PRIVATE": "1"}
    servers = [Server(url, tmp_path / f"s{i}", extra_env=env).start() for i in range(2)]
    receiver = Receiver()
    try:
        http = http_client(base_url=servers[0].base, timeout=30)
        hook = http.post("/api/v2/webhooks", json={"url": receiver.url}).json()
        for i in range(30):
            http_request("POST", f"{servers[i % 2].base}/iceberg/v1/namespaces",
                         json={"namespace": [f"n{i}"]}, timeout=30).raise_for_status()
        feed = [e["id"] for e in http.get("/api/v2/events", params={
            "after": hook["lastDelivered"], "maxRecords": 100}).json()["events"]]
        assert len(feed) == 30
        _until(lambda: len(receiver.got) >= 30)
        time.sleep(1.5)  # a duplicate would have come by now
        assert [json.loads(b)["id"] for _, b, _ in receiver.got] == feed
    finally:
        for s in servers:
            s.stop()
        receiver.close()
