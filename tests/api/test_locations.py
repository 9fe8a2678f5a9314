"""Every table and view has a location of its own, on SQLite and PostgreSQL
(issue 22, defect 3): two different objects on any references may not have
equal or nested locations (``location`` and ``write.*.path``), on create,
register, set-location and property updates, tables and views; register
adopts only objects from outside the catalog, so it never hands out the
metadata of a table on a branch the caller may not read. An object dropped
everywhere frees its location."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import httpx

from tests.api import spark_bodies as sb
from tests.api.auth_setup import People, set_up
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server

V1 = "/iceberg/v1"
TAKEN = "overlaps the location of another table or view"


def refused(r: httpx.Response) -> str:
    assert r.status_code == 400, r.text
    body = r.json()
    message = body["error"]["message"] if "error" in body else body["message"]
    assert TAKEN in message, message
    return str(message)


def table(http: httpx.Client, ns: str, name: str, ref: str | None = None,
          **extra: Any) -> httpx.Response:
    path = f"/iceberg/{ref}/v1" if ref else V1
    return http.post(f"{path}/namespaces/{ns}/tables", json={**sb.create_table(name), **extra})


def test_no_two_objects_share_or_nest_locations(http: httpx.Client, store, ns: str) -> None:
    t = table(http, ns, "t")
    assert t.status_code == 200, t.text
    loc = t.json()["metadata"]["location"]
    parent = loc.rsplit("/", 1)[0]
    # create: equal, inside, holding; tables and views; another branch too.
    refused(table(http, ns, "same", location=loc))
    refused(table(http, ns, "inside", location=f"{loc}/sub"))
    refused(table(http, ns, "holding", location=f"{parent}"))
    refused(http.post(f"{V1}/namespaces/{ns}/views",
                      json={**sb.create_view("v", "SELECT 1 AS id, 'a' AS name"),
                            "location": f"{loc}/views/v"}))
    branch = f"b_{ns}"
    store.create_reference(branch, source="main")
    refused(table(http, ns, "elsewhere", ref=branch, location=f"{loc}/x"))
    # write.*.path properties count as locations too.
    refused(table(http, ns, "data", properties={"write.data.path": f"{loc}/data2"}))
    free = f"{parent}/free_{uuid.uuid4().hex}"
    ok = table(http, ns, "ok", location=free)
    assert ok.status_code == 200, ok.text
    # set-location and property updates on an existing table, and a view.
    tid = ok.json()["metadata"]["table-uuid"]

    def commit(updates: list[dict[str, Any]]) -> httpx.Response:
        return http.post(f"{V1}/namespaces/{ns}/tables/ok", json={
            "requirements": [{"type": "assert-table-uuid", "uuid": tid}], "updates": updates})

    before = store.get_reference("main").hash
    refused(commit([{"action": "set-location", "location": loc}]))
    refused(commit([{"action": "set-properties",
                     "updates": {"write.metadata.path": f"{loc}/meta"}}]))
    assert store.get_reference("main").hash == before  # nothing written
    assert commit([{"action": "set-properties", "updates": {"a": "b"}}]).status_code == 200
    assert commit([{"action": "set-location",
                    "location": f"{free}_moved"}]).status_code == 200
    v = http.post(f"{V1}/namespaces/{ns}/views",
                  json=sb.create_view("v", "SELECT 1 AS id, 'a' AS name"))
    assert v.status_code == 200, v.text
    vid = v.json()["metadata"]["view-uuid"]
    refused(http.post(f"{V1}/namespaces/{ns}/views/v", json={
        "requirements": [{"type": "assert-view-uuid", "uuid": vid}],
        "updates": [{"action": "set-location", "location": f"{loc}/v"}]}))
    # The same object on two branches is one object: its branch copy may move.
    assert http.post(f"/iceberg/{branch}/v1/namespaces/{ns}/tables/t", json={
        "requirements": [], "updates": [{"action": "set-properties",
                                         "updates": {"write.data.path": f"{loc}/d"}}]}
    ).status_code == 200


def test_a_location_is_free_once_its_object_is_gone_everywhere(http, store, ns) -> None:
    t = table(http, ns, "t")
    loc = t.json()["metadata"]["location"]
    branch = f"keep_{ns}"
    store.create_reference(branch, source="main")
    assert http.delete(f"{V1}/namespaces/{ns}/tables/t").status_code == 204
    refused(table(http, ns, "again", location=loc))  # still on the branch
    assert http.delete(f"/iceberg/{branch}/v1/namespaces/{ns}/tables/t").status_code == 204
    again = table(http, ns, "again", location=loc)  # dropped everywhere: free
    assert again.status_code == 200, again.text


def test_two_creates_racing_for_one_location(server: Server, store, ns: str) -> None:
    """On different branches, at once: one lands, the other is refused."""
    loc = f"{server.warehouse}/race_{ns}"
    names = [f"r{i}_{ns}" for i in range(4)]
    for n in names:
        store.create_reference(n, source="main")
    answers: list[httpx.Response] = []
    barrier = threading.Barrier(len(names))

    def create(branch: str) -> None:
        with http_client(base_url=server.base, timeout=30) as c:
            barrier.wait()
            answers.append(table(c, ns, "t", ref=branch, location=loc))

    threads = [threading.Thread(target=create, args=(n,)) for n in names]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    codes = sorted(r.status_code for r in answers)
    assert codes == [200, 400, 400, 400], [r.text for r in answers]


# -- register across branches, with authentication ------------------------------------
def _with_loader(url: str) -> People:
    """The usual principals, and etl/a's writer: it reads main and etl/*,
    nothing of 'secret'."""
    from catalog.access import create_key
    from store import Store

    people = set_up(url, protect_main=False)
    s = Store(url)
    try:
        s.auth.create_principal("loader")
        for privilege, refs in (("read", "main"), ("read", "etl*"), ("write", "etl*"),
                                ("create-reference", "etl*")):
            s.auth.add_grant("loader", privilege, refs, ())
        people.keys["loader"] = create_key(s, "loader")
    finally:
        s.close()
    return people


guarded = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1"}, prepare=_with_loader,
                         prefix="locations-auth")


def test_register_never_hands_out_another_branchs_metadata(guarded) -> None:
    server, people = guarded, guarded.people
    admin = http_client(base_url=server.base, headers=people.headers("admin"), timeout=30)
    loader = http_client(base_url=server.base, headers=people.headers("loader"), timeout=30)
    for name in ("secret", "etl/a"):
        head = admin.get("/api/v2/trees/main").json()["reference"]["hash"]
        assert admin.post("/api/v2/trees", params={"name": name, "type": "BRANCH"},
                          json={"type": "BRANCH", "name": "main", "hash": head}
                          ).status_code == 200
    assert admin.post("/iceberg/secret/v1/namespaces", json={"namespace": ["hr"]}
                      ).status_code == 200
    plans = table(admin, "hr", "plans", ref="secret")
    assert plans.status_code == 200, plans.text
    secret_loc = plans.json()["metadata-location"]
    secret_uuid = plans.json()["metadata"]["table-uuid"]
    # a reference the caller may not read answers as one that does not exist
    assert loader.get("/iceberg/secret/v1/namespaces/hr/tables/plans").status_code == 404
    assert loader.post("/iceberg/etl%2Fa/v1/namespaces", json={"namespace": ["sales"]}
                       ).status_code == 200
    r = loader.post("/iceberg/etl%2Fa/v1/namespaces/sales/register",
                    json={"name": "stolen", "metadata-location": secret_loc})
    message = refused(r)
    assert secret_uuid not in r.text and "plans" not in r.text, r.text
    # The same answer as for a table it may read (no oracle).
    mine = table(loader, "sales", "mine", ref="etl%2Fa")
    assert mine.status_code == 200, mine.text
    r2 = loader.post("/iceberg/etl%2Fa/v1/namespaces/sales/register",
                     json={"name": "stolen", "metadata-location": mine.json()["metadata-location"]})
    assert refused(r2) == message
    assert loader.get("/iceberg/etl%2Fa/v1/namespaces/sales/tables/stolen").status_code == 404


def test_gc_fills_in_the_claims_of_older_catalogs(http: httpx.Client, store, ns: str) -> None:
    """A catalog from before the location index has no claims: the next gc
    reads them from the metadata of every object in history."""
    from sqlalchemy import delete

    from store.schema import LOCATIONS

    t = table(http, ns, "old")
    loc = t.json()["metadata"]["location"]
    with store.db.write() as conn:
        conn.execute(delete(LOCATIONS))
    r = http.post("/api/v2/admin/gc")
    assert r.status_code == 200, r.text
    refused(table(http, ns, "new", location=f"{loc}/inside"))
