"""The change feed under hidden load (issue 34, item 9), over HTTP on SQLite
and PostgreSQL: a reader who may see little of the feed gets pages that
stop after a bounded stretch with ``hasMore`` and a cursor (``after``) past
it, the cursor leads to what it may see, a long poll moves past hidden
events as they land, and a page is computed off the event loop — a request
sent while one is being served is answered before it."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from catalog.access import create_key
from catalog.feed.events import scan_rows
from core.commits import CommitMeta, Put
from core.content import IcebergTable, Namespace
from store import Store
from tests.api.test_webhooks import Receiver, _until
from tests.fixtures import BACKENDS, database_url, server_fixture
from tests.http import http_client
from tests.proxy import LossyProxy
from tests.s3 import LocalS3
from tests.server import Server, serving
from tests.store.helpers import K
from tests.zygote_client import run as sapwood

HIDDEN = 1100


def prepare(url: str) -> dict[str, str]:
    """``admin`` reads everything; ``reader`` reads namespace sales of main."""
    store = Store(url)
    try:
        store.auth.create_principal("admin")
        store.auth.add_grant("admin", "read", "*")
        store.auth.create_principal("reader")
        store.auth.add_grant("reader", "read", "main", ("sales",))
        return {n: create_key(store, n) for n in ("admin", "reader")}
    finally:
        store.close()


def layout(srv: Server) -> None:
    """Namespaces sales and hr on main, and the branch secret."""
    store = Store(srv.database_url)
    try:
        store.commit("main", [Put(K("sales"), Namespace()), Put(K("hr"), Namespace())],
                     CommitMeta("namespaces"))
        store.create_reference("secret")
    finally:
        store.close()


server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1",
                                       "SAPWOOD_WEBHOOK_ALLOW_PRIVATE": "1"},
                        prepare=prepare, ready=layout, prefix="evhidden")


def client(server: Server, who: str) -> httpx.Client:
    keys: dict[str, str] = server.people  # type: ignore[attr-defined]
    return http_client(base_url=server.base, timeout=60,
                       headers={"Authorization": f"Bearer {keys[who]}"})


def commit_hidden(store: Store, n: int, start: int = 0) -> None:
    """Changes ``reader`` may not see: on the branch ``secret``, and on main
    below ``hr``."""
    for i in range(start, start + n):
        store.commit("secret" if i % 2 else "main", [Put(K(f"hr.n{i}"), Namespace())],
                     CommitMeta(f"hr {i}"))


def commit_visible(store: Store, name: str) -> int:
    store.commit("main", [Put(K(f"sales.{name}"), Namespace())], CommitMeta(name))
    return store.events.last()


def test_a_hidden_stretch_answers_with_a_cursor_past_it(server: Server) -> None:
    store = Store(server.database_url)
    try:
        start = store.events.last()
        commit_hidden(store, HIDDEN)
        visible = commit_visible(store, "after_hidden")
    finally:
        store.close()
    reader = client(server, "reader")
    page = reader.get("/api/v2/events", params={"after": start, "maxRecords": 1})
    assert page.status_code == 200, page.text
    # Nothing it may see in the stretch looked at: say so, and where to go on.
    assert page.json() == {"events": [], "hasMore": True, "after": start + scan_rows(1)}
    body = reader.get("/api/v2/events", params={"after": page.json()["after"],
                                                "maxRecords": 1}).json()
    assert [int(e["id"]) for e in body["events"]] == [visible] == [body["after"]]
    assert body["hasMore"] is False
    (commit,) = body["events"][0]["data"]["commits"]
    assert commit["operations"][0]["key"] == ["sales", "after_hidden"]
    # The command line follows the cursor through the hidden stretch too.
    keys: dict[str, str] = server.people  # type: ignore[attr-defined]
    printed = sapwood(["events", "--uri", server.base, "--after", str(start), "--json"],
                      timeout=120, check=True, env={"SAPWOOD_CREDENTIAL": keys["reader"]}).stdout
    assert [int(e["id"]) for e in json.loads(printed)["events"]] == [visible]


def test_a_long_poll_moves_past_hidden_events_as_they_land(server: Server) -> None:
    store = Store(server.database_url)
    try:
        reader = client(server, "reader")
        caught_up = _caught_up(reader)
        landed: list[int] = []

        def land() -> None:
            commit_hidden(store, 40, start=10_000)
            landed.append(commit_visible(store, "after_poll"))

        writer = threading.Timer(0.5, land)
        writer.start()
        r = reader.get("/api/v2/events", params={"after": caught_up, "wait": 30})
        # The poll answers once the commit lands, which may be before the
        # writer's thread has noted its id.
        writer.join(timeout=60)
        assert r.status_code == 200, r.text
        body = r.json()
        assert [int(e["id"]) for e in body["events"]] == landed
        assert body["after"] == landed[0] and body["hasMore"] is False
    finally:
        store.close()


def test_a_readers_webhook_goes_past_hidden_events(server: Server) -> None:
    # The receiver answers a while after it has the event: the catalog
    # records the delivery once the answer is back, and the test waits for
    # that record (reading the hook as soon as the receiver had the event
    # saw the cursor before it, under load: issue 43, defect 13).
    receiver = Receiver(answer_after_s=0.3)
    store = Store(server.database_url)
    try:
        reader = client(server, "reader")
        made = reader.post("/api/v2/webhooks", json={"url": receiver.url})
        assert made.status_code == 200, made.text
        commit_hidden(store, HIDDEN, start=20_000)
        visible = commit_visible(store, "for_the_hook")

        def hook() -> dict[str, Any]:
            state: dict[str, Any] = reader.get(f"/api/v2/webhooks/{made.json()['id']}").json()
            return state

        _until(lambda: hook()["delivered"] >= 1, 60)
        assert [int(e["id"]) for e in receiver.acknowledged()] == [visible]
        state = hook()
        assert state["lastDelivered"] == visible and state["delivered"] == 1
    finally:
        store.close()
        receiver.close()


def _caught_up(reader: httpx.Client) -> int:
    after, more = 0, True
    while more:
        body = reader.get("/api/v2/events", params={"after": after, "maxRecords": 1000}).json()
        after, more = body["after"], body["hasMore"]
    return int(after)


# -- off the event loop --------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_page_is_served_off_the_event_loop(backend: str, request: pytest.FixtureRequest,
                                             tmp_path: Path, s3: LocalS3) -> None:
    """The warehouse is on object storage behind a proxy that holds the read
    of one table's metadata file (a slow store): while a page of the feed
    waits for it, a cheap request to the same server is answered."""
    url = database_url(request, backend, tmp_path)
    warehouse = s3.warehouse(tmp_path.name)
    with LossyProxy(s3.endpoint.removeprefix("http://"), lambda m, p: False,
                    hold=lambda m, p: "/slow" in p) as proxy:
        env = {**s3.env, "AWS_ENDPOINT_URL": proxy.base,
               "SAPWOOD_METADATA_READ_TIMEOUT_S": "300"}
        with serving(url, tmp_path, extra_env=env, warehouse=warehouse) as srv:
            store = Store(url)
            try:
                store.commit("main", [Put(K("ns"), Namespace())], CommitMeta("ns"))
                store.create_reference("other")
                before = store.events.last()
                for branch, name in (("main", "slow1"), ("other", "slow2")):
                    store.commit(branch, [Put(K(f"ns.{name}"), IcebergTable(
                        metadata_location=f"{warehouse}/{name}/metadata.json"))],
                        CommitMeta(name))
            finally:
                store.close()
            http = http_client(base_url=srv.base, timeout=60)
            try:
                feed = _while_held(proxy, http, lambda: http.get("/api/v2/events", params={
                    "after": before, "ref": "main"}))
                assert [e["subject"] for e in feed["events"]] == ["main"]
                iceberg = _while_held(proxy, http, lambda: http.post(
                    "/iceberg/v1/other/events", json={"continuation-token": str(before)}))
                assert [e["operation"]["operation-type"] for e in iceberg["events"]] == [
                    "create-table"]
            finally:
                proxy.release.set()


def _while_held(proxy: LossyProxy, http: httpx.Client, slow: Any) -> dict[str, Any]:
    """Send ``slow``; once the proxy holds its metadata read, a cheap request
    must be answered while ``slow`` still waits; then let it go on."""
    proxy.holding.clear()
    proxy.release.clear()
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(slow)
        assert proxy.holding.wait(60), "the page never read the metadata file"
        cheap = http.get("/iceberg/v1/config", timeout=20)
        assert cheap.status_code == 200 and not pending.done()
        proxy.release.set()
        answer = pending.result(timeout=60)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body
