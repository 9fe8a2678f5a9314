"""The change feed over HTTP (GET /api/v2/events): CloudEvents 1.0 that
parse with the cloudevents library, one per landed change, paged from a
cursor, long-polled, and filtered by the caller's grants."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pyarrow as pa
from cloudevents.conversion import from_dict
from cloudevents.http import CloudEvent

from catalog.access import create_key
from store import Store
from tests.http import http_client, http_request
from tests.openlineage_parse import parse
from tests.server import serving
from tests.zygote_client import run as sapwood

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False)])


def _feed(http: httpx.Client, **params: object) -> list[dict]:
    out: list[dict] = []
    after = 0
    while True:
        r = http.get("/api/v2/events", params={"after": after, "maxRecords": 2, **params})
        assert r.status_code == 200, r.text
        body = r.json()
        out += body["events"]
        if not body["hasMore"]:
            return out
        after = body["after"]


def test_the_feed_says_what_changed_in_order(tmp_path: Path) -> None:
    with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path) as server:
        http = http_client(base_url=server.base, timeout=30)
        cat = server.catalog()
        cat.create_namespace("sales")
        t = cat.create_table("sales.t", SCHEMA)
        t.append(pa.table({"id": [1, 2, 3]}, schema=SCHEMA))
        main = http.get("/api/v2/trees/main").json()["reference"]["hash"]
        assert http.post("/api/v2/trees", params={"name": "etl"},
                         json={"type": "BRANCH", "name": "main", "hash": main}).status_code == 200
        events = _feed(http)
        parsed = [from_dict(CloudEvent, e) for e in events]
        assert [p["type"] for p in parsed] == [
            "dev.sapwood.reference.created", "dev.sapwood.commit", "dev.sapwood.commit",
            "dev.sapwood.commit", "dev.sapwood.reference.created"]
        ids = [int(p["id"]) for p in parsed]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        assert all(p["specversion"] == "1.0" and p["subject"] in ("main", "etl")
                   for p in parsed)
        append = parsed[3].data
        (op,) = append["commits"][0]["operations"]
        assert op["key"] == ["sales", "t"] and op["type"] == "ICEBERG_TABLE"
        assert op["snapshotId"] == cat.load_table("sales.t").current_snapshot().snapshot_id
        assert op["summary"]["operation"] == "append" and op["summary"]["added-records"] == "3"
        assert append["hashBefore"] and append["hashAfter"] != append["hashBefore"]
        # Filters: by type, by ref, by key.
        assert [e["subject"] for e in _feed(http, types="dev.sapwood.reference.created")] == [
            "main", "etl"]
        assert len(_feed(http, ref="etl")) == 1
        assert len(_feed(http, key="sales.t")) == 2  # create and append
        bad = http.get("/api/v2/events", params={"types": "dev.sapwood.nope"})
        assert bad.status_code == 400 and "Unknown event type" in bad.text
        # A long poll answers as soon as something lands.
        last = ids[-1]
        threading.Timer(0.5, lambda: t.append(pa.table({"id": [4]}, schema=SCHEMA))).start()
        started = time.monotonic()
        r = http.get("/api/v2/events", params={"after": last, "wait": 20})
        took = time.monotonic() - started
        assert [int(e["id"]) for e in r.json()["events"]] == [last + 1] and took < 10
        quiet = http.get("/api/v2/events", params={"after": last + 1, "wait": 0.3})
        assert quiet.json() == {"events": [], "hasMore": False, "after": last + 1}


def test_a_reader_of_sales_learns_nothing_about_hr(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sapwood.db'}"
    store = Store(url)
    store.auth.create_principal("admin")
    for p in ("read", "write", "create-reference"):
        store.auth.add_grant("admin", p, "*")
    store.auth.create_principal("seller")
    store.auth.add_grant("seller", "read", "*", ("sales",))
    keys = {n: create_key(store, n) for n in ("admin", "seller")}
    store.close()
    with serving(url, tmp_path, extra_env={"SAPWOOD_AUTH": "1"}) as server:
        admin = server.catalog(credential=keys["admin"])
        admin.create_namespace("sales")
        admin.create_namespace("hr")
        admin.create_table("hr.salaries", SCHEMA).append(pa.table({"id": [1]}, schema=SCHEMA))
        admin.create_table("sales.t", SCHEMA)
        key_id, _, secret = keys["seller"].partition(":")
        token = http_request("POST", f"{server.base}/iceberg/v1/oauth/tokens", data={
            "grant_type": "client_credentials", "client_id": key_id,
            "client_secret": secret}).json()["access_token"]
        seller = http_client(base_url=server.base, timeout=30,
                             headers={"Authorization": f"Bearer {token}"})
        seen = _feed(seller)
        keys_seen = {tuple(op["key"]) for e in seen for c in e["data"].get("commits", [])
                     for op in c["operations"]}
        assert keys_seen == {("sales",), ("sales", "t")}
        everything = _feed(http_client(base_url=server.base, timeout=30, headers={
            "Authorization": f"Bearer {_token(server.base, keys['admin'])}"}))
        assert len(everything) > len(seen)  # the hr commits are not shown to the seller
        # The Iceberg REST shape of the feed hides the same.
        iceberg = [e for e in seller.post("/iceberg/v1/events", json={
            "page-size": 100}).json()["events"]
            if not e["operation"]["operation-type"].startswith("x-sapwood-reference")]
        assert {(*o.get("namespace", []), *o.get("identifier", {}).get("namespace", []))[0]
                for o in (e["operation"] for e in iceberg)} == {"sales"}
        assert [e["operation"]["operation-type"] for e in iceberg] == [
            "create-namespace", "create-table"]


def _token(base: str, key: str) -> str:
    key_id, _, secret = key.partition(":")
    return str(http_request("POST", f"{base}/iceberg/v1/oauth/tokens", data={
        "grant_type": "client_credentials", "client_id": key_id,
        "client_secret": secret}).json()["access_token"])


def test_sapwood_events_prints_and_follows_the_feed(tmp_path: Path) -> None:
    import json
    import subprocess

    from spark.embedded import sapwood_command

    with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path) as server:
        cat = server.catalog()
        cat.create_namespace("sales")
        # --json: the API's answer, one document.
        feed = json.loads(sapwood(["events", "--uri", server.base, "--json"], timeout=60,
                                  check=True).stdout)
        assert feed == http_request("GET", f"{server.base}/api/v2/events",
                                    params={"maxRecords": 500}).json()
        assert [e["type"] for e in feed["events"]] == ["dev.sapwood.reference.created",
                                                       "dev.sapwood.commit"]
        last = feed["events"][-1]["id"]
        # With --follow the feed never ends: one CloudEvent per line.
        follow = subprocess.Popen([*sapwood_command(), "events", "--uri", server.base,
                                   "--follow", "--json", "--after", last],
                                  stdout=subprocess.PIPE, text=True)
        try:
            cat.create_table("sales.t", SCHEMA)
            assert follow.stdout is not None
            event = json.loads(follow.stdout.readline())  # waits for the commit, no polling
            assert event["type"] == "dev.sapwood.commit" and event["id"] == str(int(last) + 1)
            assert [op["key"] for c in event["data"]["commits"] for op in c["operations"]] == [
                ["sales", "t"]]
        finally:
            follow.kill()
            follow.wait()


def test_a_long_poll_ends_with_its_client(tmp_path: Path) -> None:
    """A client that goes away ends its long poll: a server told to stop
    then stops at once instead of waiting out an answer nobody will read
    (it waited the whole 60 s)."""
    import socket
    from urllib.parse import urlsplit

    with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path) as server:
        url = urlsplit(server.base)
        poll = socket.create_connection((url.hostname, url.port))
        poll.sendall(b"GET /api/v2/events?after=1000&wait=60 HTTP/1.1\r\n"
                     b"Host: 127.0.0.1\r\n\r\n")
        # Answered after the poll's request was read: the poll is waiting now.
        assert http_request("GET", f"{server.base}/api/v2/events").status_code == 200
        poll.close()
        assert server.proc is not None
        server.proc.terminate()
        server.proc.wait(10)  # TimeoutExpired: it waited out the poll


def test_openlineage_for_a_view_carries_its_recorded_column_lineage(tmp_path: Path) -> None:
    import uuid

    from tests.api import spark_bodies as sb

    with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path) as server:
        http = http_client(base_url=server.base, timeout=30)
        server.catalog().create_namespace("sales")
        assert http.post("/iceberg/v1/namespaces/sales/tables",
                         json=sb.create_table("base")).status_code == 200
        assert http.post("/iceberg/v1/namespaces/sales/views", json=sb.create_view(
            "v", "SELECT id, upper(name) AS name FROM sales.base")).status_code == 200
        both = http.get("/api/v2/events", params={
            "types": "dev.sapwood.openlineage,dev.sapwood.commit"})
        assert both.status_code == 400 and "on its own" in both.text
        (event,) = _feed(http, types="dev.sapwood.openlineage")
        assert event["type"] == "dev.sapwood.openlineage"
        (run,) = event["data"]["runEvents"]
        parsed = parse(run)
        assert parsed.outputs and parsed.outputs[0].name == "sales.v"
        assert run["eventType"] == "COMPLETE" and uuid.UUID(run["run"]["runId"])
        assert run["producer"] and run["job"]["name"] == "sales.v (definition)"
        assert [i["name"] for i in run["inputs"]] == ["sales.base"]
        (out,) = run["outputs"]
        assert out["name"] == "sales.v" and out["namespace"] == "urn:sapwood:catalog:main"
        assert [f["name"] for f in out["facets"]["schema"]["fields"]] == ["id", "name"]
        lineage = out["facets"]["columnLineage"]
        assert lineage["_schemaURL"].startswith("https://openlineage.io/spec/facets/")
        recorded = http.get("/api/v2/trees/main/views/sales.v/lineage").json()["columns"]
        assert {name: ([(i["name"], i["field"]) for i in f["inputFields"]],
                       f["transformationType"] == "TRANSFORMATION")
                for name, f in lineage["fields"].items()} == {
            c["name"]: ([(".".join(o["table"]), o["column"]) for o in c["origins"]],
                        c["derived"]) for c in recorded}
