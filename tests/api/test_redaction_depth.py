"""Issue 34, items 3 and 4: what hidden objects read in turn is left out of
every answer, the change feed's OpenLineage events and webhooks included,
on SQLite and PostgreSQL.

``sales`` reads only below the namespace ``sales``. ``sales.v_nested`` is
``SELECT * FROM hr.v_inner``, and ``hr.v_inner`` reads the column
``secret_salary_amt`` of ``hr.payroll``. Whatever ``sales`` asks about the
view — its lineage, its content (one key, many, entries), its audit, its
UI page, the feed, its OpenLineage events, a webhook of its own — names
``hr.v_inner`` (the name the view's SQL shows) and never ``hr.payroll`` or
its columns; the same questions asked by ``reader`` (who reads everything)
get the base table and its column.
"""

from __future__ import annotations

import json
import threading
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import DoubleType, LongType, NestedField, StringType

from tests.api import spark_bodies as sb
from tests.api.auth_setup import People, set_up
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client, http_request
from tests.openlineage_parse import parse
from tests.server import Server

V1 = "/iceberg/v1"
V2 = "/api/v2/trees/main"
LINEAGE = "dev.sapwood.openlineage"
# What nobody limited to 'sales' may learn: the base table hr.v_inner reads
# and its column.
SECRETS = ("payroll", "secret_salary_amt")
PAYROLL = Schema(NestedField(1, "id", LongType(), required=False),
                 NestedField(2, "secret_salary_amt", DoubleType(), required=False))
T = Schema(NestedField(1, "id", LongType(), required=False),
           NestedField(2, "v", StringType(), required=False))
TYPES = {"id": "long", "pay": "double", "v": "string"}
VIEWS = {
    ("hr", "v_inner"): ("SELECT id, secret_salary_amt AS pay FROM hr.payroll", ["id", "pay"]),
    ("sales", "v_nested"): ("SELECT * FROM hr.v_inner", ["id", "pay"]),
    # A view 'sales' may read over one that reads the hidden view.
    ("sales", "v_outer"): ("SELECT pay FROM sales.v_nested", ["pay"]),
    # Hidden and readable origins side by side.
    ("sales", "v_mix"): ("SELECT n.pay, t.v FROM hr.v_inner n JOIN sales.t t ON n.id = t.id",
                         ["pay", "v"]),
}


def view_body(name: str, sql: str, columns: list[str]) -> dict[str, Any]:
    """CREATE VIEW as Spark sends it, with the view's own schema."""
    return {**sb.create_view(name, sql), "schema": {
        "type": "struct", "schema-id": 0, "fields": [
            {"id": i, "name": c, "required": False, "type": TYPES[c]}
            for i, c in enumerate(columns, 1)]}}


class Receiver:
    """A webhook's receiver: keeps every delivery, acknowledges it, and
    wakes whoever waits for a condition on what came."""

    def __init__(self) -> None:
        self.got: list[dict[str, Any]] = []
        self.changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with receiver.changed:
                    receiver.got.append(json.loads(body))
                    receiver.changed.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait_for(self, ids: set[str], seconds: float = 60) -> list[dict[str, Any]]:
        with self.changed:
            assert self.changed.wait_for(lambda: ids <= {e["id"] for e in self.got}, seconds), (
                ids, [e["id"] for e in self.got])
            return list(self.got)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def build(server: Server) -> None:
    people: People = server.people  # type: ignore[attr-defined]
    admin = http_client(base_url=server.base, headers=people.headers("admin"), timeout=30)
    # The webhook gets what lands from now on, as its owner may read it.
    receiver = Receiver()
    server.receiver = receiver  # type: ignore[attr-defined]
    made = http_request("POST", f"{server.base}/api/v2/webhooks", headers=people.headers("sales"),
                        json={"url": receiver.url, "types": [LINEAGE]}, timeout=30)
    assert made.status_code == 200, made.text
    for ns in ("sales", "hr"):
        assert admin.post(f"{V1}/namespaces", json={"namespace": [ns]}).status_code == 200
    cat = server.catalog(credential=people.keys["admin"])
    cat.create_table("hr.payroll", PAYROLL).append(pa.table({
        "id": pa.array([1, 2], pa.int64()), "secret_salary_amt": pa.array([10.0, 20.0])}))
    cat.create_table("sales.t", T).append(pa.table({
        "id": pa.array([1, 2], pa.int64()), "v": pa.array(["a", "b"])}))
    for (ns, name), (sql, columns) in VIEWS.items():
        r = admin.post(f"{V1}/namespaces/{ns}/views", json=view_body(name, sql, columns))
        assert r.status_code == 200, r.text
    # A materialized view over the hidden view, refreshed (PyIceberg as the engine).
    r = admin.post(f"{V2}/materialized-views", json={
        "key": {"elements": ["sales", "mv_nested"]}, "defaultNamespace": ["sales"],
        "sql": "SELECT id, pay FROM hr.v_inner"})
    assert r.status_code == 200, r.text
    plan = admin.get(f"{V2}/materialized-views/sales.mv_nested/refresh-plan").json()
    pinned = server.catalog(plan["pinnedReference"], credential=people.keys["admin"],
                            **{"header.Sapwood-Refresh": str(plan["versionId"])})
    storage = pinned.load_table("sales.mv_nested")
    storage.overwrite(pa.table({"id": pa.array([1, 2], pa.int64()),
                                "pay": pa.array([10.0, 20.0])}).cast(
        storage.schema().as_arrow()))


server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1",
                                       "SAPWOOD_WEBHOOK_ALLOW_PRIVATE": "1"},
                        prepare=lambda url: set_up(url, protect_main=False),
                        ready=build, prefix="redact-depth")


@pytest.fixture(scope="module")
def receiver(server: Server) -> Any:
    r: Receiver = server.receiver  # type: ignore[attr-defined]
    yield r
    r.close()


def client(server: Server, who: str) -> httpx.Client:
    people: People = server.people  # type: ignore[attr-defined]
    return http_client(base_url=server.base, headers=people.headers(who), timeout=30)


class _Hidden(HTMLParser):
    """The hidden inputs of a page's forms (a CSRF token, if it has one)."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "input" and a.get("type") == "hidden" and a.get("name"):
            self.fields[a["name"] or ""] = a.get("value") or ""


def signed_in(server: Server, who: str) -> httpx.Client:
    """The UI, signed in as ``who`` through its login form, as a browser does."""
    people: People = server.people  # type: ignore[attr-defined]
    ui = http_client(base_url=server.base, follow_redirects=True, timeout=30,
                     headers={"Origin": server.base, "Referer": f"{server.base}/ui/login"})
    form = _Hidden()
    form.feed(ui.get("/ui/login").text)
    r = ui.post("/ui/login", data={**form.fields, "client_id": people.keys[who], "next": "/ui"})
    assert r.status_code == 200 and "Sign out" in r.text, r.text[:300]
    return ui


def lineage_events(http: httpx.Client) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    after = 0
    while True:
        r = http.get("/api/v2/events", params={"types": LINEAGE, "after": after,
                                               "maxRecords": 100})
        assert r.status_code == 200, r.text
        out += r.json()["events"]
        if not r.json()["hasMore"]:
            return out
        after = int(out[-1]["id"])


def runs_of(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each run by its job's name (``sales.v_nested (definition)`` …)."""
    return {run["job"]["name"]: run for e in events for run in e["data"]["runEvents"]}


def answers(http: httpx.Client) -> dict[str, Any]:
    """Every answer about the views that the routes give."""
    gets = {
        **{f"lineage {k}": f"{V2}/views/sales.{k}/lineage"
           for k in ("v_nested", "v_outer", "v_mix", "mv_nested")},
        "content": f"{V2}/contents/sales.v_nested",
        "entries": f"{V2}/entries?content=true",
        "audit": f"{V2}/views/sales.v_nested/history",
        "audit_mv": f"{V2}/views/sales.mv_nested/history",
        "mv": f"{V2}/materialized-views/sales.mv_nested",
        "fresh": f"{V2}/materialized-views/sales.mv_nested/freshness",
        "deps": f"{V2}/views/sales.v_outer/dependencies",
        "feed": "/api/v2/events?maxRecords=1000",
    }
    out = {}
    for name, path in gets.items():
        r = http.get(path)
        assert r.status_code == 200, (path, r.text)
        out[name] = r.json()
    r = http.post(f"{V2}/contents", json={"requestedKeys": [
        {"elements": ["sales", k]} for k in ("v_nested", "v_outer", "v_mix")]})
    assert r.status_code == 200, r.text
    out["contents"] = r.json()
    return out


def origins(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {c["name"]: c["origins"] for c in doc["columns"]}


INNER = [{"table": ["hr", "v_inner"], "redacted": True}]


def test_a_reader_of_sales_is_told_the_hidden_view_and_nothing_it_reads(
        server: Server) -> None:
    got = answers(client(server, "sales"))
    text = json.dumps(got)
    for secret in SECRETS:
        assert secret not in text, f"{secret} leaked: {text[:3000]}"
    assert origins(got["lineage v_nested"]) == {"id": INNER, "pay": INNER}
    # Through a view it may read, the way stops at the first hidden object.
    assert origins(got["lineage v_outer"]) == {"pay": INNER}
    assert origins(got["lineage v_mix"]) == {
        "pay": INNER, "v": [{"table": ["sales", "t"], "column": "v"}]}
    assert origins(got["lineage mv_nested"]) == {"id": INNER, "pay": INNER}
    (a,) = got["content"]["content"]["analysis"]
    assert a["dependencies"] == [{"key": ["hr", "v_inner"], "redacted": True}]
    assert [f["origins"] for f in a["fieldOrigins"]] == [INNER, INNER]
    entries = {tuple(e["name"]["elements"]): e for e in got["entries"]["entries"]}
    assert entries[("sales", "v_nested")]["content"]["analysis"] == [a]
    many = {tuple(c["key"]["elements"]): c["content"] for c in got["contents"]["contents"]}
    assert many[("sales", "v_nested")]["analysis"] == [a]
    assert [f["origins"] for f in many[("sales", "v_outer")]["analysis"][0]["fieldOrigins"]
            ] == [INNER]
    # A refresh through the hidden view names none of what it read there.
    (refresh,) = got["mv"]["refreshes"]
    assert refresh["base-tables"] == {} and refresh["base-views"] == {}
    assert got["fresh"]["baseTables"] == []
    assert got["audit_mv"]["refreshes"][0]["baseTables"] == {}


def test_reader_sees_the_base_table_and_its_column(server: Server) -> None:
    got = answers(client(server, "reader"))
    base = [{"table": ["hr", "payroll"], "column": "secret_salary_amt"}]
    assert origins(got["lineage v_nested"])["pay"] == base
    assert origins(got["lineage v_outer"]) == {"pay": base}
    (a,) = got["content"]["content"]["analysis"]
    (pay,) = [f for f in a["fieldOrigins"] if f["name"] == "pay"]
    # Stored with the way it went: the hidden view is the first step.
    assert pay["origins"] == [{"table": ["hr", "payroll"], "column": "secret_salary_amt",
                               "via": [["hr", "v_inner"]]}]
    (refresh,) = got["mv"]["refreshes"]
    assert list(refresh["base-tables"]) == ["hr.payroll"]
    assert refresh["base-views"] == {"hr.v_inner": 1}


def test_openlineage_events_carry_the_routes_redaction(server: Server) -> None:
    for who in ("sales", "reader"):
        http = client(server, who)
        events = lineage_events(http)
        runs = runs_of(events)
        if who == "sales":
            for secret in SECRETS:
                assert secret not in json.dumps(events), secret
        for key in ("v_nested", "v_outer", "v_mix", "mv_nested"):
            run = runs[f"sales.{key} (definition)"]
            parse(run)  # still an OpenLineage RunEvent
            (out,) = run["outputs"]
            facet = out["facets"]["columnLineage"]["fields"]
            recorded = http.get(f"{V2}/views/sales.{key}/lineage").json()["columns"]
            # The facet is exactly the lineage answer: a hidden object by its
            # name with no field.
            assert {c: [(i["name"], i["field"]) for i in f["inputFields"]]
                    for c, f in facet.items()} == {
                c["name"]: [(".".join(o["table"]), o.get("column", "")) for o in c["origins"]]
                for c in recorded}, (who, key)
        nested = runs["sales.v_nested (definition)"]
        pay = nested["outputs"][0]["facets"]["columnLineage"]["fields"]["pay"]["inputFields"]
        assert [(i["name"], i["field"]) for i in pay] == (
            [("hr.v_inner", "")] if who == "sales" else [("hr.payroll", "secret_salary_amt")])
        # Inputs are what the SQL reads: the hidden view, by name.
        assert [i["name"] for i in nested["inputs"]] == ["hr.v_inner"]
        refresh = runs["sales.mv_nested (refresh)"]
        parse(refresh)
        assert [(i["name"], "version" in i.get("facets", {})) for i in refresh["inputs"]] == (
            [] if who == "sales" else [("hr.payroll", True)])


def test_a_webhook_delivers_what_the_feed_shows_its_owner(server: Server,
                                                          receiver: Receiver) -> None:
    feed = lineage_events(client(server, "sales"))
    delivered = receiver.wait_for({e["id"] for e in feed})
    assert {e["id"]: e for e in delivered} == {e["id"]: e for e in feed}
    for secret in SECRETS:
        assert secret not in json.dumps(delivered), secret
    run = runs_of(delivered)["sales.v_nested (definition)"]
    pay = run["outputs"][0]["facets"]["columnLineage"]["fields"]["pay"]["inputFields"]
    assert [(i["name"], i["field"]) for i in pay] == [("hr.v_inner", "")]


def test_the_ui_names_the_hidden_view_only(server: Server) -> None:
    for who in ("sales", "reader"):
        ui = signed_in(server, who)
        for key in ("sales.v_nested", "sales.v_outer", "sales.mv_nested"):
            page = ui.get(f"/ui/object/main/{key}")
            assert page.status_code == 200, page.text[:500]
            if who == "sales":
                assert "hr.v_inner (not readable)" in page.text, key
                for secret in SECRETS:
                    assert secret not in page.text, (key, secret)
            else:
                assert "hr.payroll.secret_salary_amt" in page.text, key
