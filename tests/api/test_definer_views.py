"""A definer view may only reach what its definer may read (issue 34, item 1),
on SQLite, PostgreSQL and a warehouse on S3 (where reads through views get
their files signed).

As in the probe: ``reader`` reads namespace ``sales`` of ``main``; ``nsw``
reads and writes ``sales`` on ``etl/work`` only. ``hrdef`` reads ``hr`` and
``hrv`` and writes ``sales`` and ``hrv`` on ``main``: its definer views over
``hr.salaries`` lend to ``reader`` as long as it may read ``hr`` itself.
``d1`` (reads ``hr`` and ``hrv``, writes ``sales``) defines a view over
``hrdef``'s view, to show the definer's reads are checked transitively.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse

import httpx

from store import Store
from tests.api import spark_bodies as sb
from tests.api.auth_setup import People, with_principals
from tests.fixtures import WITH_S3, server_fixture
from tests.http import http_client
from tests.server import Server

DEFINER = {"sapwood.security": "definer"}
SALARIES = "/iceberg/v1/namespaces/hr/tables/salaries"
WORK = "/iceberg/" + quote("etl/work", safe="") + "/v1"

GRANTS: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "admin": [(p, "*", ()) for p in ("read", "write", "create-reference", "delete-reference",
                                     "merge-into", "manage-grants", "impersonate")],
    "reader": [("read", "main", ("sales",))],
    "nsw": [("read", "etl/work", ("sales",)), ("write", "etl/work", ("sales",))],
    "hrdef": [("read", "main", ("hr",)), ("read", "main", ("hrv",)),
              ("write", "main", ("sales",)), ("write", "main", ("hrv",))],
    "d1": [("read", "main", ("hr",)), ("read", "main", ("hrv",)), ("write", "main", ("sales",))],
    "gone": [("read", "main", ("hr",)), ("write", "main", ("sales",))],
    # Reads all of etl/old, and only sales on etl/new, which it writes.
    "rst": [("read", "etl/old", ()), ("read", "etl/new", ("sales",)),
            ("write", "etl/new", ("sales",))],
}


def prepare(url: str) -> People:
    return with_principals(url, GRANTS)


def build(server: Server) -> None:
    admin = as_(server, "admin")
    for ns in ("sales", "hr", "hrv"):
        assert admin.post("/iceberg/v1/namespaces", json={"namespace": [ns]}).status_code == 200
    for ns, name in (("sales", "orders"), ("hr", "salaries")):
        r = admin.post(f"/iceberg/v1/namespaces/{ns}/tables", json=sb.create_table(name))
        assert r.status_code == 200, r.text
    # Before the branch: an invoker view over hr in sales, and one for the merge.
    view(admin, "/iceberg/v1", "sales", "v_inv", "SELECT id FROM hr.salaries")
    view(admin, "/iceberg/v1", "sales", "v_m", "SELECT id FROM sales.orders")
    r = admin.post("/api/v2/trees?name=etl/work", json={"type": "BRANCH", "name": "main"})
    assert r.status_code == 200, r.text


server = server_fixture(WITH_S3, env={"SAPWOOD_AUTH": "1"}, prepare=prepare,
                        ready=build, prefix="definer")


def as_(server: Server, who: str) -> httpx.Client:
    people: People = server.people  # type: ignore[attr-defined]
    return http_client(base_url=server.base, headers=people.headers(who), timeout=30)


def view(http: httpx.Client, base: str, ns: str, name: str, sql: str,
         properties: dict[str, str] | None = None, status: int = 200) -> httpx.Response:
    r = http.post(f"{base}/namespaces/{ns}/views",
                  json=sb.create_view(name, sql, properties=properties))
    assert r.status_code == status, r.text
    return r


def alter(http: httpx.Client, base: str, ns: str, name: str,
          updates: list[dict[str, Any]]) -> httpx.Response:
    return http.post(f"{base}/namespaces/{ns}/views/{name}",
                     json={"requirements": [], "updates": updates})


def through(http: httpx.Client, path: str, chain: str | None, ref: str = "main",
            ) -> httpx.Response:
    base = "/iceberg/v1" if ref == "main" else WORK
    return http.get(base + path.removeprefix("/iceberg/v1"),
                    params={"referenced-by": chain} if chain else None)


def grant_id(admin: httpx.Client, grantee: str, ns: str) -> int:
    grants = admin.get("/api/v2/auth/grants").json()["grants"]
    return int(next(g["id"] for g in grants if g["grantee"] == grantee
                    and g["privilege"] == "read" and g["namespace"] == [ns]))


def revoke(admin: httpx.Client, grantee: str, ns: str) -> None:
    r = admin.delete(f"/api/v2/auth/grants/{grant_id(admin, grantee, ns)}")
    assert r.status_code == 200, r.text


def regrant(admin: httpx.Client, grantee: str, ns: str) -> None:
    r = admin.post("/api/v2/auth/grants", json={"grantee": grantee, "privilege": "read",
                                                 "refs": "main", "namespace": [ns]})
    assert r.status_code == 200, r.text


def refused_as_without(http: httpx.Client, path: str, chain: str, ref: str = "main") -> None:
    """The read through ``chain`` is answered exactly as the read without it."""
    plain = through(http, path, None, ref)
    via = through(http, path, chain, ref)
    assert plain.status_code == 403, plain.text
    assert (via.status_code, via.json()) == (403, plain.json()), via.text


def test_a_writer_cannot_make_a_definer_view_over_what_it_may_not_read(server: Server,
                                                                        ) -> None:
    nsw = as_(server, "nsw")
    # The probe: accepted before, and then it lent all of hr.salaries.
    steal = view(nsw, WORK, "sales", "v_steal", "SELECT id FROM hr.salaries", DEFINER, 403)
    body = steal.json()["error"]
    assert body["type"] == "ForbiddenException" and "'read' privilege" in body["message"]
    assert "hr." not in body["message"] and "salaries" not in body["message"]
    # A name that resolves to nothing is refused alike: no existence oracle.
    nope = view(nsw, WORK, "sales", "v_steal", "SELECT id FROM hr.nope", DEFINER, 403)
    assert nope.json() == steal.json()
    # Through a view it may read, which reads hr.salaries in turn.
    deep = view(nsw, WORK, "sales", "v_steal", "SELECT id FROM sales.v_inv", DEFINER, 403)
    assert deep.json() == steal.json()
    assert through(nsw, SALARIES, "sales.v_steal", "etl/work").status_code == 403
    # Its own definer view over what it reads: nsw is recorded, whatever it sent.
    own = view(nsw, WORK, "sales", "v_own", "SELECT id FROM sales.orders",
               {**DEFINER, "sapwood.definer": "admin"})
    assert own.json()["metadata"]["properties"]["sapwood.definer"] == "nsw"
    # Replacing it to read hr, or making an invoker view over hr definer: refused.
    uuid = own.json()["metadata"]["view-uuid"]
    r = nsw.post(f"{WORK}/namespaces/sales/views/v_own",
                 json=sb.replace_view(uuid, "SELECT id FROM hr.salaries", properties=DEFINER))
    assert r.status_code == 403 and r.json() == {
        "error": {**steal.json()["error"],
                  "message": steal.json()["error"]["message"].replace("v_steal", "v_own")}}
    view(nsw, WORK, "sales", "v_plain", "SELECT id FROM hr.salaries")
    r = alter(nsw, WORK, "sales", "v_plain", [{"action": "set-properties", "updates": DEFINER}])
    assert r.status_code == 403, r.text
    # Nor can it claim another definer by setting the property itself.
    r = alter(nsw, WORK, "sales", "v_own",
              [{"action": "set-properties", "updates": {"sapwood.definer": "admin"}}])
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["properties"]["sapwood.definer"] == "nsw"


def test_a_definer_view_lends_only_while_its_definer_may_read(server: Server) -> None:
    admin, reader = as_(server, "admin"), as_(server, "reader")
    made = view(as_(server, "hrdef"), "/iceberg/v1", "sales", "v_pay",
                "SELECT id FROM hr.salaries", DEFINER)
    ok = through(reader, SALARIES, "sales.v_pay")
    assert ok.status_code == 200 and ok.json()["metadata"]["location"], ok.text
    # Let in (this test's servers vend no credentials: the route says so).
    creds = through(reader, f"{SALARIES}/credentials", "sales.v_pay")
    assert creds.status_code == 400 and "vends no credentials" in creds.text, creds.text
    revoke(admin, "hrdef", "hr")
    try:
        refused_as_without(reader, SALARIES, "sales.v_pay")  # the next request: no restart
        refused_as_without(reader, f"{SALARIES}/credentials", "sales.v_pay")
        if server.s3 is not None:  # type: ignore[attr-defined]
            assert sign(server, reader, ok.json()["metadata"]["location"],
                        "sales.v_pay").status_code == 403
    finally:
        regrant(admin, "hrdef", "hr")
    assert through(reader, SALARIES, "sales.v_pay").status_code == 200
    if server.s3 is not None:  # type: ignore[attr-defined]
        assert sign(server, reader, ok.json()["metadata"]["location"],
                    "sales.v_pay").status_code == 200
    assert made.json()["metadata"]["properties"]["sapwood.definer"] == "hrdef"


def sign(server: Server, http: httpx.Client, location: str, chain: str) -> httpx.Response:
    s3 = server.s3  # type: ignore[attr-defined]
    uri = location.replace("s3://", f"{s3.endpoint}/", 1) + "/data/00000-0-x.parquet"
    return http.post(f"{SALARIES}/sign", params={"referenced-by": chain},
                     json={"method": "GET", "region": "us-east-1", "uri": uri, "headers": {}})


def test_a_revoked_definer_lends_nothing(server: Server) -> None:
    view(as_(server, "gone"), "/iceberg/v1", "sales", "v_gone", "SELECT id FROM hr.salaries",
         DEFINER)
    reader = as_(server, "reader")
    assert through(reader, SALARIES, "sales.v_gone").status_code == 200
    s = Store(server.database_url)
    try:
        s.auth.revoke_principal("gone")
    finally:
        s.close()
    refused_as_without(reader, SALARIES, "sales.v_gone")


def test_nested_definer_views_are_checked_transitively(server: Server) -> None:
    admin, reader = as_(server, "admin"), as_(server, "reader")
    view(as_(server, "hrdef"), "/iceberg/v1", "hrv", "v_inner", "SELECT id FROM hr.salaries",
         DEFINER)
    view(as_(server, "d1"), "/iceberg/v1", "sales", "v_outer", "SELECT id FROM hrv.v_inner",
         DEFINER)
    inner = "/iceberg/v1/namespaces/hrv/views/v_inner"
    both = "sales.v_outer,hrv.v_inner"
    assert through(reader, inner, "sales.v_outer").status_code == 200
    assert through(reader, SALARIES, both).status_code == 200
    # What a view the caller may not read reads is not told through the chain.
    refused_as_without(reader, "/iceberg/v1/namespaces/hr/tables/nope", both)
    # d1 still reads hrv.v_inner, but no longer what it reads: v_outer lends nothing.
    revoke(admin, "d1", "hr")
    try:
        refused_as_without(reader, inner, "sales.v_outer")
        refused_as_without(reader, SALARIES, both)
    finally:
        regrant(admin, "d1", "hr")
    # The inner view's definer counts as much as the outer one's.
    revoke(admin, "hrdef", "hr")
    try:
        assert through(reader, inner, "sales.v_outer").status_code == 200
        refused_as_without(reader, SALARIES, both)
    finally:
        regrant(admin, "hrdef", "hr")
    assert through(reader, SALARIES, both).status_code == 200


def test_a_merge_keeps_a_definer_only_with_the_version_it_vouched_for(server: Server,
                                                                      ) -> None:
    """On etl/work nsw makes ``sales.v_m`` read hr.salaries (an invoker view:
    allowed); on main the admin makes ``sales.v_m`` definer over its old SQL.
    The merge combines nsw's version with main's properties: a definer view
    whose recorded definer never vouched for that SQL. It lends nothing."""
    admin, nsw, reader = as_(server, "admin"), as_(server, "nsw"), as_(server, "reader")
    uuid = nsw.get(f"{WORK}/namespaces/sales/views/v_m").json()["metadata"]["view-uuid"]
    r = nsw.post(f"{WORK}/namespaces/sales/views/v_m",
                 json=sb.replace_view(uuid, "SELECT id FROM hr.salaries"))
    assert r.status_code == 200, r.text
    made = alter(admin, "/iceberg/v1", "sales", "v_m",
                 [{"action": "set-properties", "updates": DEFINER}])
    assert made.status_code == 200, made.text
    main = admin.get("/api/v2/trees/main").json()["reference"]["hash"]
    r = admin.post(f"/api/v2/trees/main@{main}/history/merge", json={"fromRefName": "etl/work"})
    assert r.status_code == 200, r.text
    merged = admin.get("/iceberg/v1/namespaces/sales/views/v_m").json()["metadata"]
    assert "hr.salaries" in sb.current_sql(merged)
    assert merged["properties"]["sapwood.security"] == "definer"
    refused_as_without(reader, SALARIES, "sales.v_m")
    assert made.json()["metadata"]["properties"]["sapwood.definer"] == "admin"
    assert "sapwood.definer" not in merged["properties"]


def test_a_versioning_commit_cannot_name_another_definer(server: Server) -> None:
    """A versioning-API put of a view at a metadata file that names a
    definer: only that definer may put it (a copy of hrdef's view into a
    namespace nsw writes would otherwise lend hrdef's reads)."""
    admin, nsw = as_(server, "admin"), as_(server, "nsw")
    view(as_(server, "hrdef"), "/iceberg/v1", "sales", "v_copied", "SELECT id FROM hr.salaries",
         DEFINER)
    content = admin.get("/api/v2/trees/main/contents/sales.v_copied").json()["content"]
    put = {"type": "ICEBERG_VIEW", "metadataLocation": content["metadataLocation"],
           "versionId": content["versionId"], "schemaId": content["schemaId"]}
    head = nsw.get("/api/v2/trees/etl%2Fwork").json()["reference"]["hash"]
    r = nsw.post(f"/api/v2/trees/etl%2Fwork@{head}/history/commit", json={
        "commitMeta": {"message": "copy"},
        "operations": [{"type": "PUT", "key": {"elements": ["sales", "v_copy"]},
                        "content": put}]})
    assert r.status_code == 403 and "names 'hrdef' as its definer" in r.text, r.text
    assert through(nsw, SALARIES, "sales.v_copy", "etl/work").status_code == 403


def test_a_restored_version_makes_its_restorer_the_definer(server: Server) -> None:
    """A restore writes a new current version with the view's properties of
    now: on a definer view its restorer becomes the definer, and must read
    what the restored SQL reads (else the old SQL would run with the rights
    of whoever made today's version definer)."""
    admin, rst = as_(server, "admin"), as_(server, "rst")
    view(admin, "/iceberg/v1", "sales", "v_r", "SELECT id FROM hr.salaries")
    for name in ("etl/old", "etl/new"):
        r = admin.post(f"/api/v2/trees?name={name}", json={"type": "BRANCH", "name": "main"})
        assert r.status_code == 200, r.text
    new = "/iceberg/" + quote("etl/new", safe="") + "/v1"
    uuid = admin.get(f"{new}/namespaces/sales/views/v_r").json()["metadata"]["view-uuid"]
    r = admin.post(f"{new}/namespaces/sales/views/v_r", json=sb.replace_view(
        uuid, "SELECT id FROM sales.orders", properties=DEFINER))
    assert r.status_code == 200, r.text
    at = admin.get("/api/v2/trees/etl%2Fnew").json()["reference"]["hash"]
    r = rst.post(f"/api/v2/trees/etl%2Fnew@{at}/history/restore", json={
        "source": "etl/old", "keys": [{"elements": ["sales", "v_r"]}]})
    assert r.status_code == 403 and "may only read what its definer" in r.text, r.text
    load = "/iceberg/" + quote("etl/new", safe="") + SALARIES.removeprefix("/iceberg")
    assert rst.get(load, params={"referenced-by": "sales.v_r"}).status_code == 403


def put_file(server: Server, uri: str, data: bytes) -> None:
    """A metadata file written into the warehouse by a client (for register)."""
    if uri.startswith("s3://"):
        bucket, _, key = uri.removeprefix("s3://").partition("/")
        server.s3.client().put_object(Bucket=bucket, Key=key, Body=data)  # type: ignore[attr-defined]
    else:
        path = Path(urlparse(uri).path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def test_a_registered_view_file_names_no_other_definer(server: Server) -> None:
    """Register adopts a file the client wrote: one naming another principal
    as definer is refused; one naming none is adopted and lends nothing (as
    a definer view written before definers were recorded)."""
    nsw = as_(server, "nsw")
    meta = nsw.get(f"{WORK}/namespaces/sales/views/v_inv").json()["metadata"]
    for n, claim in enumerate(("hrdef", None)):
        location = f"{server.warehouse.rstrip('/')}/sales/v_reg{n}"
        file = f"{location}/metadata/00000-{uuid.uuid4()}.metadata.json"
        props = {**DEFINER, **({"sapwood.definer": claim} if claim else {})}
        put_file(server, file, json.dumps({**meta, "location": location, "properties": props,
                                           "view-uuid": str(uuid.uuid4())}).encode())
        r = nsw.post(f"{WORK}/namespaces/sales/register-view",
                     json={"name": f"v_reg{n}", "metadata-location": file})
        if claim:
            assert r.status_code == 403 and "names 'hrdef' as its definer" in r.text, r.text
        else:
            assert r.status_code == 200, r.text
            refused_as_without(nsw, SALARIES, "sales.v_reg1", ref="etl/work")
    # Setting it definer (again) takes it over: not for nsw, who may not
    # read hr; the admin may, and then it lends.
    again = [{"action": "set-properties", "updates": DEFINER}]
    r = alter(nsw, WORK, "sales", "v_reg1", again)
    assert r.status_code == 403 and "may only read what its definer" in r.text, r.text
    r = alter(as_(server, "admin"), WORK, "sales", "v_reg1", again)
    assert r.status_code == 200 and r.json()["metadata"]["properties"]["sapwood.definer"] == \
        "admin", r.text
    assert through(nsw, SALARIES, "sales.v_reg1", "etl/work").status_code == 200
