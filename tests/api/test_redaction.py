"""What the catalog says, through a view a principal may read, about the
objects it may not read (issue 22, defect 9), on SQLite and PostgreSQL,
over HTTP and in the web UI.

``sales`` reads and writes below the namespace ``sales`` only. Its views
read ``hr.salaries`` (one with ``*``), a name that does not exist
(``hr.nope``), and a materialized view that reads ``hr.salaries`` has been
refreshed. Every answer about them keeps the names the SQL shows and
nothing else: no content id, type, column, snapshot id or existence of a
hidden object appears anywhere in what ``sales`` gets, while ``reader``
(who reads everything) gets all of it.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pyarrow as pa

from tests.api import spark_bodies as sb
from tests.api.auth_setup import People, set_up
from tests.api.test_mviews_http import SCHEMA
from tests.api.ui_forms import sign_in
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server

V1 = "/iceberg/v1"
V2 = "/api/v2/trees/main"


server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1"},
                        prepare=lambda url: set_up(url, protect_main=False),
                        ready=lambda srv: build(srv, srv.people), prefix="redaction")


def build(server: Server, people: People) -> None:
    admin = http_client(base_url=server.base, headers=people.headers("admin"), timeout=30)
    for ns in ("sales", "hr"):
        assert admin.post(f"{V1}/namespaces", json={"namespace": [ns]}).status_code == 200
    cat = server.catalog(credential=people.keys["admin"])
    rows = pa.table({"id": pa.array([1, 2], pa.int64()), "v": pa.array(["a", "b"])})
    for name in ("hr.salaries", "sales.t"):
        cat.create_table(name, SCHEMA).append(rows)
    views = {"sales": {
        "v_hr": "SELECT s.id, s.v, t.v AS w FROM hr.salaries s JOIN sales.t t ON s.id = t.id",
        "v_star": "SELECT * FROM hr.salaries",
        "v_missing": "SELECT id FROM hr.nope"},
        "hr": {"v_sales": "SELECT id FROM sales.t"}}
    for ns, made in views.items():
        for name, sql in made.items():
            r = admin.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view(name, sql))
            assert r.status_code == 200, r.text
    r = admin.post(f"{V2}/materialized-views", json={
        "key": {"elements": ["sales", "mv_hr"]}, "defaultNamespace": ["sales"],
        "sql": "SELECT id, v FROM hr.salaries WHERE v = 'a'"})
    assert r.status_code == 200, r.text
    # A refresh (PyIceberg as the engine), then hr.salaries moves on.
    plan = admin.get(f"{V2}/materialized-views/sales.mv_hr/refresh-plan").json()
    pinned = server.catalog(plan["pinnedReference"], credential=people.keys["admin"],
                            **{"header.Sapwood-Refresh": str(plan["versionId"])})
    storage = pinned.load_table("sales.mv_hr")
    storage.overwrite(rows.slice(0, 1).cast(storage.schema().as_arrow()))
    cat.load_table("hr.salaries").append(rows)


def client(server: Server, who: str) -> httpx.Client:
    people: People = server.people  # type: ignore[attr-defined]
    return http_client(base_url=server.base, headers=people.headers(who), timeout=30)


def secrets(server: Server) -> list[str]:
    """What nobody limited to 'sales' may learn: hr's content ids and snapshot ids."""
    reader = client(server, "reader")
    out = [reader.get(f"{V2}/contents/hr.salaries").json()["content"]["id"]]
    meta = reader.get(f"{V1}/namespaces/hr/tables/salaries").json()["metadata"]
    out += [str(s["snapshot-id"]) for s in meta["snapshots"]]
    return out


def answers(http: httpx.Client) -> dict[str, Any]:
    gets = {
        "deps": f"{V2}/views/sales.v_hr/dependencies",
        "deps_star": f"{V2}/views/sales.v_star/dependencies",
        "deps_missing": f"{V2}/views/sales.v_missing/dependencies",
        "lineage": f"{V2}/views/sales.v_hr/lineage",
        "content": f"{V2}/contents/sales.v_hr",
        "content_star": f"{V2}/contents/sales.v_star",
        "entries": f"{V2}/entries?content=true&prefixKey=sales",
        "audit": f"{V2}/views/sales.v_hr/history",
        "mv": f"{V2}/materialized-views/sales.mv_hr",
        "fresh": f"{V2}/materialized-views/sales.mv_hr/freshness",
        "audit_mv": f"{V2}/views/sales.mv_hr/history",
        "dependents": f"{V2}/contents/sales.t/dependents",
        "status": f"{V2}/views?status=all",
    }
    out = {}
    for name, path in gets.items():
        r = http.get(path)
        assert r.status_code == 200, (path, r.text)
        out[name] = r.json()
    return out


def test_hidden_objects_are_named_and_nothing_more(server: Server) -> None:
    hidden = secrets(server)
    got = answers(client(server, "sales"))
    text = json.dumps(got)
    for secret in hidden:
        assert secret not in text, f"{secret} leaked: {text[:2000]}"
    (dep,) = [d for d in got["deps"]["dependencies"] if d["key"] == ["hr", "salaries"]]
    assert dep == {"key": ["hr", "salaries"], "depth": 1, "via": ["sales", "v_hr"],
                   "vias": [["sales", "v_hr"]], "redacted": True}
    # A name that exists and one that does not look the same.
    (missing,) = got["deps_missing"]["dependencies"]
    assert missing == {"key": ["hr", "nope"], "depth": 1, "via": ["sales", "v_missing"],
                       "vias": [["sales", "v_missing"]], "redacted": True}
    assert got["deps_missing"]["unresolved"] == []
    readable = [d for d in got["deps"]["dependencies"] if not d.get("redacted")]
    assert [d["key"] for d in readable] == [["sales", "t"]] and readable[0]["exists"]
    cols = {c["name"]: c["origins"] for c in got["lineage"]["columns"]}
    assert cols["id"] == [{"table": ["hr", "salaries"], "redacted": True}]
    assert cols["w"] == [{"table": ["sales", "t"], "column": "v"}]
    (a,) = got["content"]["content"]["analysis"]
    assert {"key": ["hr", "salaries"], "redacted": True} in a["dependencies"]
    assert "expanded-text" not in got["content_star"]["content"]["extensions"].get("hive", {})
    fresh = got["fresh"]
    assert fresh["status"] == "stale" and fresh["staleForMs"] is not None
    assert fresh["baseTables"] == [{"identifier": "hr.salaries", "redacted": True}]
    assert fresh["reasons"] == ["not shown: it concerns objects you may not read"]
    (refresh,) = got["mv"]["refreshes"]
    assert refresh["base-tables"] == {"hr.salaries": {"identifier": "hr.salaries",
                                                      "redacted": True}}
    assert got["audit_mv"]["refreshes"][0]["baseTables"] == {"hr.salaries": None}
    # hr.v_sales reads sales.t, but sales may not read it: not listed.
    assert got["dependents"]["dependents"] == [
        d for d in got["dependents"]["dependents"] if d["key"][0] == "sales"]
    assert ["hr", "v_sales"] not in [d["key"] for d in got["dependents"]["dependents"]]
    status = {tuple(v["key"]): v for v in got["status"]["views"]}
    assert status[("sales", "v_missing")]["status"] == "invalid"
    assert status[("sales", "v_missing")]["reasons"] == [
        "not shown: it concerns objects you may not read"]


def test_a_principal_reading_everything_sees_everything(server: Server) -> None:
    hidden = secrets(server)
    got = answers(client(server, "reader"))
    text = json.dumps(got)
    assert all(secret in text for secret in hidden[:2]), hidden
    (dep,) = [d for d in got["deps"]["dependencies"] if d["key"] == ["hr", "salaries"]]
    assert dep["contentId"] == hidden[0] and dep["exists"] is True
    assert got["deps_missing"]["unresolved"] == ["hr.nope"]
    assert "expanded-text" in got["content_star"]["content"]["extensions"]["hive"]
    assert got["fresh"]["baseTables"][0]["snapshotCurrent"] is not None
    assert ["hr", "v_sales"] in [d["key"] for d in got["dependents"]["dependents"]]


def test_the_ui_shows_the_name_only(server: Server) -> None:
    people: People = server.people  # type: ignore[attr-defined]
    ui = sign_in(server, people.keys["sales"])
    hidden = secrets(server)
    for key in ("sales.v_hr", "sales.mv_hr", "sales.v_missing"):
        page = ui.get(f"/ui/object/main/{key}")
        assert page.status_code == 200, page.text[:500]
        assert "not readable for you" in page.text
        for secret in hidden:
            assert secret not in page.text, (key, secret)
    lineage = ui.get("/ui/object/main/sales.v_hr").text
    assert "hr.salaries (not readable)" in lineage and "sales.t.v" in lineage


def test_a_view_status_about_hidden_objects_is_one_neutral_reason(server: Server) -> None:
    """The status of a view that names a hidden object (``hr.nope``, which
    does not exist) is the same everywhere, and for ``sales`` everywhere the
    neutral reason: the listing, the dependency and lineage answers, the
    audit, the change feed and the UI page."""
    people: People = server.people  # type: ignore[attr-defined]
    for who, reason in (("sales", "not shown: it concerns objects you may not read"),
                        ("reader", "hr.nope does not exist")):
        http = client(server, who)
        view = f"{V2}/views/sales.v_missing"
        listed = {tuple(v["key"]): v for v in http.get(f"{V2}/views").json()["views"]}
        audit = http.get(f"{view}/history").json()
        events = http.get("/api/v2/events", params={"key": "sales.v_missing"}).json()
        (op,) = [op for e in events["events"] for c in e["data"]["commits"]
                 for op in c["operations"] if op["key"] == ["sales", "v_missing"]]
        seen = [listed[("sales", "v_missing")], http.get(f"{view}/dependencies").json(),
                http.get(f"{view}/lineage").json(), audit, audit["versions"][-1], op]
        for doc in seen:
            assert (doc["status"], doc["reasons"]) == ("invalid", [reason]), (who, doc)
        ui = sign_in(server, people.keys[who])
        page = ui.get("/ui/object/main/sales.v_missing").text
        assert '<span class="badge invalid">invalid</span>' in page
        assert f"<li>{reason}</li>" in page
        if who == "sales":
            assert "hr.nope does not exist" not in page
            assert "hr.nope does not exist" not in json.dumps([audit, events])
