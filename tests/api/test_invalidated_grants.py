"""The views a change breaks, as a caller who may not read some of them is
told (issue 44 after defect 1): a view it may not read is named nowhere —
not listed, not inside another view's reasons (whose way through the views
names every hop) — exactly as if it were not there, and a listed view whose
way passes it gives the neutral reason, as a view's status does.

On SQLite and PostgreSQL, through a real server with authentication on:

* a merge's ``invalidatedViews`` (its dry run, the real merge and its replay
  under an Idempotency-Key, which is the first answer byte for byte), as
  the API, ``sapwood merge --dry-run`` and the UI's merge preview show it;
* a drop's record of what it left invalid: the change feed's DELETE; the
  ``sapwood.invalidated-views`` commit property itself only a reader of the
  whole reference sees (a reference's head in ``/api/v2/trees?fetch=ALL``,
  the log), as every commit property (tests/api/test_commit_meta_grants.py).
"""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from tests.api import spark_bodies as sb
from tests.api.auth_setup import People, with_principals
from tests.api.ui_forms import sign_in
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server
from tests.zygote_client import run as sapwood

V1 = "/iceberg/v1"
V2 = "/api/v2/trees"
HIDDEN = "not shown: it concerns objects you may not read"
EVERYTHING = ("read", "write", "create-reference", "delete-reference", "merge-into",
              "manage-grants", "impersonate")
GRANTS: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "admin": [(p, "*", ()) for p in EVERYTHING],
    # Merges dev* into main, reads all of dev*, and only 'sales' on main.
    "merger": [("merge-into", "main", ()), ("read", "dev*", ()), ("read", "main", ("sales",))],
    # Reads namespace 'sales' of main.
    "reader": [("read", "main", ("sales",))],
}

server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1"},
                        prepare=lambda url: with_principals(url, GRANTS),
                        prefix="invalid-grants")


@pytest.fixture(scope="module")
def people(server: Server) -> People:
    return server.people  # type: ignore[attr-defined, no-any-return]


def client(server: Server, people: People, who: str) -> httpx.Client:
    return http_client(base_url=server.base, headers=people.headers(who), timeout=60)


def ok(r: httpx.Response) -> httpx.Response:
    assert r.status_code in (200, 204), r.text
    return r


def view(http: httpx.Client, ns: str, name: str, sql: str) -> None:
    body = sb.create_view(name, sql)
    body["view-version"]["default-namespace"] = [ns]
    ok(http.post(f"{V1}/namespaces/{ns}/views", json=body))


def head(http: httpx.Client, ref: str) -> str:
    return str(ok(http.get(f"{V2}/{ref}")).json()["reference"]["hash"])


def namespaces(admin: httpx.Client) -> None:
    for ns in ("sales", "hr"):
        r = admin.post(f"{V1}/namespaces", json={"namespace": [ns]})
        assert r.status_code in (200, 409), r.text


def broken(answer: dict[str, object]) -> dict[str, list[str]]:
    views = answer["invalidatedViews"]
    assert isinstance(views, list)
    return {".".join(v["key"]): v["reasons"] for v in views}


def test_a_merge_names_no_view_the_caller_may_not_read(server: Server, people: People) -> None:
    """``sales.big`` reads ``sales.revenue``; ``hr.mid`` reads it too and
    ``sales.top`` reads ``hr.mid``, ``sales.outer`` reads ``sales.top``. On
    ``dev`` the table is dropped: merging dev into main breaks all four.
    ``merger`` may not read ``hr`` on main: it is told of three, ``hr.mid``
    named nowhere, the two whose way passes it with the neutral reason."""
    admin = client(server, people, "admin")
    namespaces(admin)
    ok(admin.post(f"{V1}/namespaces/sales/tables", json=sb.create_table("revenue")))
    view(admin, "sales", "big", "SELECT id, name FROM revenue WHERE id > 10")
    view(admin, "hr", "mid", "SELECT id, name FROM sales.revenue")
    view(admin, "sales", "top", "SELECT id FROM hr.mid")
    view(admin, "sales", "outer", "SELECT id FROM top")
    ok(admin.post(V2, params={"name": "dev", "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": head(admin, "main")}))
    ok(admin.delete("/iceberg/dev/v1/namespaces/sales/tables/revenue"))
    before = head(admin, "main")
    dropped = "table sales.revenue dropped"

    # A reader of everything sees every view and the way.
    seen = broken(ok(admin.post(f"{V2}/main@{before}/history/merge",
                                json={"fromRefName": "dev", "dryRun": True})).json())
    assert seen == {
        "hr.mid": [dropped], "sales.big": [dropped],
        "sales.top": [f"sales.top → hr.mid → sales.revenue: {dropped}"],
        "sales.outer": [f"sales.outer → sales.top → hr.mid → sales.revenue: {dropped}"]}

    told = {"sales.big": [dropped], "sales.top": [HIDDEN], "sales.outer": [HIDDEN]}
    merger = client(server, people, "merger")
    dry = ok(merger.post(f"{V2}/main@{before}/history/merge",
                         json={"fromRefName": "dev", "dryRun": True}))
    assert broken(dry.json()) == told
    assert "hr.mid" not in dry.text and "hr" not in json.dumps(dry.json()["invalidatedViews"])

    # The CLI prints the API's answer: the same three, hr.mid nowhere.
    cli = sapwood(["merge", "dev", "--into", "main", "--dry-run"], timeout=60,
                  env={"SAPWOOD_URI": server.base, "SAPWOOD_CREDENTIAL": people.keys["merger"],
                       "COLUMNS": "400"})
    assert cli.returncode == 0, cli.stderr
    assert "would invalidate 3 views on main:" in cli.stdout, cli.stdout
    assert f"  sales.top: {HIDDEN}\n" in cli.stdout and f"  sales.big: {dropped}\n" in cli.stdout
    assert "hr.mid" not in cli.stdout + cli.stderr

    # The UI's preview, signed in as merger: the three, the neutral reason.
    ui = sign_in(server, people.keys["merger"])
    page = ui.get("/ui/merge", params={"from": "dev", "into": "main"})
    assert page.status_code == 200, page.text[:300]
    listed = page.text.split('<ul id="invalidated">')[1].split("</ul></li></ul>")[0]
    for key in told:
        assert f'href="/ui/object/main/{key}">{key}</a>' in listed
    assert f"<li>{HIDDEN}</li>" in listed
    assert "hr.mid" not in page.text
    assert "Merge dev into main and break 3 views</button>" in page.text

    # The merge itself, with an Idempotency-Key: its answer says the same,
    # and sent again the answer is the first one, byte for byte.
    key = str(uuid.uuid4())
    landed = ok(merger.post(f"{V2}/main@{before}/history/merge", json={"fromRefName": "dev"},
                            headers={"Idempotency-Key": key}))
    assert landed.json()["wasApplied"] and broken(landed.json()) == told
    assert "hr.mid" not in landed.text
    again = ok(merger.post(f"{V2}/main@{before}/history/merge", json={"fromRefName": "dev"},
                           headers={"Idempotency-Key": key}))
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.content == landed.content
    assert head(admin, "main") == landed.json()["resultantTargetHash"]


def test_a_drop_records_only_what_each_reader_may_read(server: Server, people: People) -> None:
    """``sales.orders`` is read by ``sales.v_orders`` and ``hr.v_orders``
    and dropped on main: its commit records both views, and ``reader`` (who
    may read only ``sales`` there) is shown one, as the change feed's
    DELETE says it, and none of the head's properties."""
    admin = client(server, people, "admin")
    namespaces(admin)
    ok(admin.post(f"{V1}/namespaces/sales/tables", json=sb.create_table("orders")))
    view(admin, "sales", "v_orders", "SELECT id FROM orders")
    view(admin, "hr", "v_orders", "SELECT id FROM sales.orders")
    ok(admin.delete(f"{V1}/namespaces/sales/tables/orders"))
    dropped = head(admin, "main")
    reader = client(server, people, "reader")

    def recorded(http: httpx.Client) -> list[str] | None:
        refs = ok(http.get(V2, params={"fetch": "ALL"})).json()["references"]
        (main,) = [r for r in refs if r["name"] == "main"]
        meta = main["metadata"]["commitMetaOfHEAD"]
        assert meta["hash"] == dropped
        found = meta["allProperties"].get("sapwood.invalidated-views")
        return None if found is None else json.loads(found[0])

    def feed(http: httpx.Client) -> list[list[str]] | None:
        events = ok(http.get("/api/v2/events", params={
            "key": "sales.orders", "types": "dev.sapwood.commit", "ref": "main"})).json()
        (op,) = [op for e in events["events"] for c in e["data"]["commits"]
                 if c["hash"] == dropped for op in c["operations"]]
        assert op["op"] == "DELETE" and op["key"] == ["sales", "orders"], op
        return op.get("invalidatedViews")  # type: ignore[no-any-return]

    assert recorded(admin) == ["hr.v_orders", "sales.v_orders"]
    assert feed(admin) == [["hr", "v_orders"], ["sales", "v_orders"]]
    assert recorded(reader) is None
    assert feed(reader) == [["sales", "v_orders"]]
    listing = ok(reader.get(V2, params={"fetch": "ALL"})).text
    assert "hr.v_orders" not in listing
    # The log shows every property, to a reader of the whole reference only.
    assert reader.get(f"{V2}/main/history").status_code == 403
