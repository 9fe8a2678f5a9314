"""A commit's message, author and properties are shown only to a caller
that may read the whole reference (issue 43, loose end 1), on SQLite and
PostgreSQL, through a real server with authentication on.

The log needs read on the whole reference (api/auth/policy.py); the other
answers that show a commit's metadata showed it to a reader of part of the
reference too, and free text names anything: "SECRET-MSG drop table
hr.x", written by ``admin`` on commits that also change what ``reader``
(read on namespace ``sales`` of ``main``) may read. Each surface — a
reference's head (``/api/v2/trees?fetch=ALL``, ``/trees/{ref}?fetch=ALL``,
which ignored ``fetch``), the change feed and a webhook, the view audit,
the UI's reference list and view page, and a revert's quote of the
commit it reverts — shows such a reader the commit with an empty message,
no author and no properties (its hash and committer kept), and ``whole``
(read on all of ``main``) everything (core.redact.commit_meta).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
import pytest

from api.ui.client import COOKIE
from tests.api import spark_bodies as sb
from tests.api.auth_setup import People, with_principals
from tests.api.test_webhooks import Receiver, _until
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server

V1 = "/iceberg/v1"
V2 = "/api/v2/trees"
SECRET = "SECRET"
MESSAGE = "SECRET-MSG drop table hr.x"
AUTHOR = "SECRET-AUTHOR"
EVERYTHING = ("read", "write", "create-reference", "delete-reference", "merge-into",
              "manage-grants", "impersonate")
GRANTS: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "admin": [(p, "*", ()) for p in EVERYTHING],
    "reader": [("read", "main", ("sales",))],
    "whole": [("read", "main", ())],
    # Reads and writes namespace sales of main (reverts there).
    "sw": [("read", "main", ("sales",)), ("write", "main", ("sales",))],
}

server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1",
                                       "SAPWOOD_WEBHOOK_ALLOW_PRIVATE": "1"},
                        prepare=lambda url: with_principals(url, GRANTS),
                        prefix="commit-meta")


def client(server: Server, who: str) -> httpx.Client:
    people: People = server.people  # type: ignore[attr-defined]
    return http_client(base_url=server.base, headers=people.headers(who),
                       cookies={COOKIE: people.keys[who]}, timeout=60)


def ok(r: httpx.Response) -> httpx.Response:
    assert r.status_code in (200, 204), r.text
    return r


def head(http: httpx.Client, ref: str = "main") -> str:
    return str(ok(http.get(f"{V2}/{ref}")).json()["reference"]["hash"])


def props(value: str) -> dict[str, Any]:
    return {"requirements": [], "updates": [{"action": "set-properties",
                                             "updates": {"k": value}}]}


@pytest.fixture(scope="module")
def made(server: Server) -> Any:
    """What admin wrote with secret words, as the hashes of its commits, and
    what reader's webhook got meanwhile."""
    admin = client(server, "admin")
    for ns in ("sales", "hr"):
        ok(admin.post(f"{V1}/namespaces", json={"namespace": [ns]}))
        ok(admin.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t")))
    view = sb.create_view("v", "SELECT id FROM sales.t")
    view["view-version"]["default-namespace"] = ["sales"]
    uuid = ok(admin.post(f"{V1}/namespaces/sales/views", json=view)).json()["metadata"][
        "view-uuid"]
    receiver = Receiver()
    hook = ok(client(server, "reader").post("/api/v2/webhooks", json={"url": receiver.url}))
    said = {"Sapwood-Commit-Message": MESSAGE, "Sapwood-Commit-Author": AUTHOR}
    hashes = {}
    ok(admin.post(f"{V1}/namespaces/sales/views/v", headers=said,
                  json=sb.replace_view(uuid, "SELECT id, name FROM sales.t")))
    hashes["view"] = head(admin)
    ok(admin.post(f"{V1}/transactions/commit", headers=said, json={"table-changes": [
        {"identifier": {"namespace": ["sales"], "name": "t"}, **props("1")},
        {"identifier": {"namespace": ["hr"], "name": "t"}, **props("1")}]}))
    hashes["both"] = head(admin)
    ok(admin.post(f"{V2}/{quote('main@' + head(admin), safe='')}/history/commit", json={
        "commitMeta": {"message": MESSAGE, "authors": [AUTHOR],
                       "properties": {"ticket": "SECRET-PROP"}},
        "operations": [{"type": "PUT", "key": {"elements": ["sales", "sub"]},
                        "content": {"type": "NAMESPACE", "properties": {}}}]}))
    hashes["sub"] = head(admin)
    reader = client(server, "reader")
    _until(lambda: reader.get(f"/api/v2/webhooks/{hook.json()['id']}").json()[
        "lastDelivered"] >= _last_event(admin), 60)
    yield hashes, receiver
    receiver.close()


def _last_event(http: httpx.Client) -> int:
    events = ok(http.get("/api/v2/events", params={"maxRecords": 1000})).json()["events"]
    return int(events[-1]["id"])


def _blank(meta: dict[str, Any]) -> None:
    assert meta["message"] == "" and meta["authors"] == [] and meta["allProperties"] == {}, meta
    assert meta["committer"] == "admin", meta


def test_a_reference_head_shows_its_commit_to_a_reader_of_all_of_it(server: Server,
                                                                     made: Any) -> None:
    hashes, _ = made
    for who in ("reader", "whole"):
        http = client(server, who)
        (listed,) = [r for r in ok(http.get(V2, params={"fetch": "ALL"})).json()["references"]
                     if r["name"] == "main"]
        one = ok(http.get(f"{V2}/main", params={"fetch": "ALL"})).json()["reference"]
        by_hash = ok(http.get(f"{V2}/@{hashes['sub']}", params={"fetch": "ALL"})).json()[
            "reference"]
        for ref in (listed, one, by_hash):
            meta = ref["metadata"]["commitMetaOfHEAD"]
            assert meta["hash"] == hashes["sub"], ref
            if who == "reader":
                _blank(meta)
            else:
                assert (meta["message"], meta["authors"], meta["allProperties"]) == (
                    MESSAGE, [AUTHOR], {"ticket": ["SECRET-PROP"]}), meta
    text = client(server, "reader").get(V2, params={"fetch": "ALL"}).text
    assert SECRET not in text, text


def test_the_feed_and_a_webhook_show_it_to_a_reader_of_all_of_it(server: Server,
                                                                  made: Any) -> None:
    hashes, receiver = made
    for who in ("reader", "whole"):
        events = ok(client(server, who).get("/api/v2/events", params={
            "ref": "main", "maxRecords": 1000})).json()["events"]
        commits = {c["hash"]: (c, e["data"]) for e in events
                   for c in e["data"].get("commits", [])}
        assert set(hashes.values()) <= set(commits), commits.keys()
        for h in hashes.values():
            c, data = commits[h]
            if who == "reader":
                assert (c["message"], c["author"], data["message"], data["authors"]) == (
                    "", None, "", []), (c, data)
            else:
                assert (c["message"], c["author"]) == (MESSAGE, AUTHOR), c
    delivered = receiver.acknowledged()
    seen = {c["hash"] for e in delivered for c in e["data"].get("commits", [])}
    assert set(hashes.values()) <= seen
    assert SECRET not in str(delivered), delivered


def test_the_view_audit_shows_it_to_a_reader_of_all_of_it(server: Server, made: Any) -> None:
    hashes, _ = made
    for who in ("reader", "whole"):
        got = ok(client(server, who).get(f"{V2}/main/views/sales.v/history")).json()
        (replaced,) = [v["commit"] for v in got["versions"]
                       if v["commit"]["hash"] == hashes["view"]]
        if who == "reader":
            assert (replaced["message"], replaced["author"]) == ("", None), replaced
            assert replaced["committer"] == "admin"
        else:
            assert (replaced["message"], replaced["author"]) == (MESSAGE, AUTHOR), replaced


def test_the_ui_shows_it_to_a_reader_of_all_of_it(server: Server, made: Any) -> None:
    for who in ("reader", "whole"):
        ui = client(server, who)
        pages = [ok(ui.get("/ui")).text, ok(ui.get("/ui/object/main/sales.v")).text]
        assert all("sales" in p or "main" in p for p in pages)
        assert (AUTHOR in pages[0], MESSAGE in pages[1] or AUTHOR in pages[1]) == (
            (False, False) if who == "reader" else (True, True)), who


def test_a_revert_quotes_a_message_to_a_reader_of_all_of_it(server: Server,
                                                            made: Any) -> None:
    hashes, _ = made
    sub = hashes["sub"]
    at = quote(f"main@{head(client(server, 'admin'))}", safe="")
    for who, said in (("sw", f"revert {sub[:12]}"), ("admin", f"revert {sub[:12]}: {MESSAGE}")):
        r = ok(client(server, who).post(f"{V2}/{at}/history/revert",
                                        json={"commits": [sub], "dryRun": True}))
        assert r.json()["message"] == said, r.text
