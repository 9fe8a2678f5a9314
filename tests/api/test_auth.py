"""Authentication and authorization against a real server with auth on, on
SQLite and PostgreSQL: PyIceberg with its ``credential`` on a protected
``main``, tokens and their refresh, revocation, namespace-scoped grants,
reads at hashes, impersonation, and the refusal to run open off loopback."""

from __future__ import annotations

import base64
import os
import subprocess
import time
from typing import Any

import httpx
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import ForbiddenError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from spark.embedded import sapwood_command
from store import Store
from tests.api.auth_setup import People, set_up
from tests.fixtures import BACKENDS, server_fixture
from tests.pg import free_port
from tests.server import Server

TTL_S = 3
SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1", "SAPWOOD_TOKEN_TTL_S": str(TTL_S)},
                        prepare=set_up, prefix="auth-server")


@pytest.fixture(scope="module")
def people(server: Server) -> People:
    return server.people  # type: ignore[attr-defined,no-any-return]


def catalog(server: Server, people: People, who: str, ref: str = "main") -> RestCatalog:
    return RestCatalog(f"{who}-{ref}", uri=server.uri(ref), credential=people.keys[who])


def branch(http: httpx.Client, people: People, name: str, who: str = "etl") -> str:
    r = http.post(f"/api/v2/trees?name={name}", json={"type": "BRANCH", "name": "main"},
                  headers=people.headers(who))
    assert r.status_code == 200, r.text
    return str(r.json()["reference"]["hash"])


def head(http: httpx.Client, people: People, ref: str) -> str:
    r = http.get(f"/api/v2/trees/{ref}", headers=people.headers("admin"))
    assert r.status_code == 200, r.text
    return str(r.json()["reference"]["hash"])


def merge(http: httpx.Client, people: People, source: str, who: str) -> httpx.Response:
    return http.post(f"/api/v2/trees/main@{head(http, people, 'main')}/history/merge",
                     json={"fromRefName": source, "fromHash": head(http, people, source)},
                     headers=people.headers(who))


# -- the PyIceberg story (acceptance 2) ---------------------------------------------------
def test_pyiceberg_on_a_protected_main(server, http, people) -> None:
    branch(http, people, "etl_py")
    main = catalog(server, people, "etl")
    assert main.list_namespaces() == [] or isinstance(main.list_namespaces(), list)
    with pytest.raises(ForbiddenError, match="Branch 'main' is protected"):
        main.create_namespace("py_sales")
    etl = catalog(server, people, "etl", "etl_py")
    etl.create_namespace("py_sales")
    etl.create_table("py_sales.orders", SCHEMA)
    assert ("py_sales",) not in main.list_namespaces()
    # The reader may read, not merge; the publisher may merge.
    denied = merge(http, people, "etl_py", "reader")
    assert denied.status_code == 403, denied.text
    assert "'merge-into'" in denied.json()["message"]
    assert denied.json()["errorCode"] == "FORBIDDEN"
    assert merge(http, people, "etl_py", "publisher").status_code == 200
    assert main.load_table("py_sales.orders").schema().find_field("id")
    # Writes on etl_py by the reader are refused by grant, not by protection.
    with pytest.raises(ForbiddenError, match="lacks the 'write' privilege on reference "
                                             "'etl_py'"):
        catalog(server, people, "reader", "etl_py").create_namespace("nope")


def test_tokens_expire_and_pyiceberg_fetches_a_new_one(server, http, people) -> None:
    token = people.token(http, "reader")
    ok = http.get("/iceberg/v1/namespaces", headers={"Authorization": f"Bearer {token}"})
    assert ok.status_code == 200
    cat = catalog(server, people, "reader")
    cat.list_namespaces()
    time.sleep(TTL_S + 1)
    expired = http.get("/iceberg/v1/namespaces", headers={"Authorization": f"Bearer {token}"})
    assert expired.status_code == 401, expired.text
    assert "expired" in expired.json()["error"]["message"]
    assert expired.headers["WWW-Authenticate"].startswith("Bearer")
    # PyIceberg's token expired meanwhile: it gets the 401, asks for a new
    # token with its credential, and retries.
    assert isinstance(cat.list_namespaces(), list)


def test_token_exchange_refreshes_a_live_token(http, people) -> None:
    token = people.token(http, "reader", base="/iceberg/main/v1")
    r = http.post("/iceberg/v1/oauth/tokens", data={
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token": token,
        "subject_token_type": "urn:ietf:params:oauth:token-type:access_token"},
        headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    fresh = r.json()
    assert fresh["token_type"] == "bearer" and fresh["expires_in"] == TTL_S
    assert fresh["access_token"] != token
    assert http.get("/iceberg/v1/namespaces", headers={
        "Authorization": f"Bearer {fresh['access_token']}"}).status_code == 200


@pytest.mark.parametrize(("form", "code", "error"), [
    ({"grant_type": "client_credentials", "client_id": "sw_nope", "client_secret": "x"},
     401, "invalid_client"),
    ({"grant_type": "client_credentials"}, 401, "invalid_client"),
    ({"grant_type": "password", "username": "a", "password": "b"}, 400,
     "unsupported_grant_type"),
    ({"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
      "subject_token": "not-a-jwt"}, 400, "invalid_grant"),
])
def test_the_token_endpoint_refuses_bad_requests(http, form, code, error) -> None:
    r = http.post("/iceberg/v1/oauth/tokens", data=form)
    assert r.status_code == code, r.text
    assert r.json()["error"] == error


def test_a_wrong_secret_gets_no_token(http, people) -> None:
    key_id = people.keys["reader"].split(":")[0]
    r = http.post("/iceberg/v1/oauth/tokens", data={
        "grant_type": "client_credentials", "client_id": key_id, "client_secret": "guess"})
    assert r.status_code == 401
    bad = http.get("/iceberg/v1/namespaces", headers={"Authorization": f"Bearer {key_id}:x"})
    assert bad.status_code == 401



def test_a_secret_that_passed_once_opens_nothing_else(server, http) -> None:
    """The server remembers secrets that passed (scrypt once per key): on each
    way a secret is sent, the remembered one works again, another secret for
    the same key does not, and a revoked key is refused all the same."""
    from catalog.access import create_key

    s = Store(server.database_url)
    try:
        s.auth.create_principal("remembered")
        s.auth.add_grant("remembered", "read", "*")
        key = create_key(s, "remembered")
        key_id, _, secret = key.partition(":")
        basic = "Basic " + base64.b64encode(key.encode()).decode()
        wrong = "Basic " + base64.b64encode(f"{key_id}:{secret}x".encode()).decode()
        exchange = {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                    "subject_token": "expired-or-not"}

        def ways(client_secret: str, basic_header: str) -> list[int]:
            return [
                http.post("/iceberg/v1/oauth/tokens", data={
                    "grant_type": "client_credentials", "client_id": key_id,
                    "client_secret": client_secret}).status_code,
                http.post("/iceberg/v1/oauth/tokens", data=exchange,
                          headers={"Authorization": basic_header}).status_code,
                http.get("/iceberg/v1/namespaces", headers={
                    "Authorization": f"Bearer {key_id}:{client_secret}"}).status_code,
            ]

        assert ways(secret, basic) == [200, 200, 200]
        assert ways(secret, basic) == [200, 200, 200]  # now from memory
        assert ways(secret + "x", wrong) == [401, 401, 401]
        assert ways(secret[:-1], wrong) == [401, 401, 401]
        s.auth.revoke_key(key_id)
        assert ways(secret, basic) == [401, 401, 401]
    finally:
        s.close()

@pytest.mark.parametrize("header", [None, "Bearer", "Bearer None", "Basic abc",
                                   "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.",
                                   "Bearer garbage"])
def test_missing_or_bad_credentials_are_401(http, header) -> None:
    r = http.get("/iceberg/v1/namespaces",
                 headers={"Authorization": header} if header else {})
    assert r.status_code == 401, r.text
    assert r.json()["error"]["type"] == "NotAuthorizedException"
    r = http.get("/api/v2/trees", headers={"Authorization": header} if header else {})
    assert r.status_code == 401
    assert r.json()["errorCode"] == "UNAUTHORIZED"


def test_revoking_a_key_or_principal_takes_effect_at_once(server, http, people) -> None:
    s = Store(server.database_url)
    try:
        s.auth.create_principal("temp")
        s.auth.add_grant("temp", "read", "*")
        from catalog.access import create_key

        k1, k2 = create_key(s, "temp"), create_key(s, "temp")
        h1 = {"Authorization": f"Bearer {k1}"}
        assert http.get("/iceberg/v1/namespaces", headers=h1).status_code == 200
        tok = people.token(http, "reader")  # someone else's token keeps working
        key_id, _, secret = k2.partition(":")
        t2 = http.post("/iceberg/v1/oauth/tokens", data={
            "grant_type": "client_credentials", "client_id": key_id,
            "client_secret": secret}).json()["access_token"]
        s.auth.revoke_key(k1.split(":")[0])
        assert http.get("/iceberg/v1/namespaces", headers=h1).status_code == 401
        t2h = {"Authorization": f"Bearer {t2}"}
        assert http.get("/iceberg/v1/namespaces", headers=t2h).status_code == 200
        s.auth.revoke_principal("temp")
        assert http.get("/iceberg/v1/namespaces", headers=t2h).status_code == 401
        assert http.get("/iceberg/v1/namespaces",
                        headers={"Authorization": f"Bearer {tok}"}).status_code == 200
    finally:
        s.close()


# -- grants below a namespace, listings, hashes ---------------------------------------
def test_namespace_grants_and_filtered_listings(server, http, people) -> None:
    admin, sales = people.headers("admin"), people.headers("sales")
    branch(http, people, "ns_scope", "admin")
    base = "/iceberg/ns_scope/v1"
    for ns in (["sales"], ["sales", "eu"], ["hr"]):
        assert http.post(f"{base}/namespaces", json={"namespace": ns},
                         headers=admin).status_code == 200
    listed = http.get(f"{base}/namespaces", headers=sales).json()["namespaces"]
    assert listed == [["sales"]]
    assert http.get(f"{base}/namespaces/hr", headers=sales).status_code == 403
    assert http.get(f"{base}/namespaces/sales%1Feu", headers=sales).status_code == 200
    r = http.post(f"{base}/namespaces", json={"namespace": ["hr", "x"]}, headers=sales)
    assert r.status_code == 403 and "namespace hr.x" in r.json()["error"]["message"]
    assert http.post(f"{base}/namespaces", json={"namespace": ["sales", "us"]},
                     headers=sales).status_code == 200
    entries = http.get("/api/v2/trees/ns_scope/entries", headers=sales).json()["entries"]
    assert {".".join(e["name"]["elements"]) for e in entries} == {
        "sales", "sales.eu", "sales.us"}
    # The whole log needs read on the whole reference.
    assert http.get("/api/v2/trees/ns_scope/history", headers=sales).status_code == 403
    assert http.get("/api/v2/trees/ns_scope/history", headers=admin).status_code == 200


def main_reader(server: Server, name: str) -> dict[str, str]:
    """The headers of a new principal ``name`` who may read main only."""
    from catalog.access import create_key

    s = Store(server.database_url)
    try:
        s.auth.create_principal(name)
        s.auth.add_grant(name, "read", "main")
        return {"Authorization": f"Bearer {create_key(s, name)}"}
    finally:
        s.close()


def test_reading_at_a_hash_needs_read_on_a_ref_that_holds_it(server, http, people) -> None:
    admin = people.headers("admin")
    mine = main_reader(server, "mainonly")
    branch(http, people, "secret_work", "admin")
    r = http.post("/iceberg/secret_work/v1/namespaces", json={"namespace": ["hidden"]},
                  headers=admin)
    assert r.status_code == 200
    secret = head(http, people, "secret_work")
    on_main = head(http, people, "main")
    # A commit (or reference) it may not read answers as one that does not exist.
    for path in (f"/api/v2/trees/@{secret}/entries", f"/api/v2/trees/main@{secret}/entries"):
        r = http.get(path, headers=mine)
        assert r.status_code == 404, r.text
        assert r.json()["message"] == f"commit {secret} does not exist", r.text
    r = http.get(f"/iceberg/%40{secret}/v1/namespaces", headers=mine)
    assert r.status_code == 404 and r.json()["error"]["type"] == "NotFoundException", r.text
    assert http.get(f"/api/v2/trees/@{on_main}/entries", headers=mine).status_code == 200
    r = http.get("/api/v2/trees/secret_work", headers=mine)
    assert r.status_code == 404, r.text
    assert r.json()["message"] == "reference 'secret_work' does not exist", r.text
    refs = http.get("/api/v2/trees", headers=mine).json()["references"]
    assert [r["name"] for r in refs] == ["main"]


def test_naming_another_author_needs_impersonate(server, http, people) -> None:
    branch(http, people, "etl_author")
    base = "/iceberg/etl_author/v1"
    r = http.post(f"{base}/namespaces", json={"namespace": ["a1"]},
                  headers={**people.headers("etl"), "Sapwood-Commit-Author": "someone"})
    assert r.status_code == 403, r.text
    assert "impersonate" in r.json()["error"]["message"]
    r = http.post(f"{base}/namespaces", json={"namespace": ["a2"]},
                  headers=people.headers("etl"))
    assert r.status_code == 200
    r = http.post(f"{base}/namespaces", json={"namespace": ["a3"]},
                  headers={**people.headers("admin"), "Sapwood-Commit-Author": "someone"})
    assert r.status_code == 200
    log = http.get("/api/v2/trees/etl_author/history?maxRecords=2",
                   headers=people.headers("admin")).json()["logEntries"]
    assert [e["commitMeta"]["authors"] for e in log] == [["someone"], ["etl"]]


def test_versioning_commits_to_a_protected_branch_are_refused(http, people) -> None:
    h = head(http, people, "main")
    r = http.post(f"/api/v2/trees/main@{h}/history/commit", json={
        "commitMeta": {"message": "direct"},
        "operations": [{"type": "PUT", "key": {"elements": ["direct"]},
                        "content": {"type": "NAMESPACE"}}]}, headers=people.headers("admin"))
    assert r.status_code == 403, r.text
    assert "protected" in r.json()["message"]
    assert head(http, people, "main") == h


def test_assign_and_delete_of_a_protected_branch_need_manage_grants(http, people) -> None:
    branch(http, people, "etl_tmp")
    s = Store(people.url)
    try:
        s.auth.protect("etl_tmp")
    finally:
        s.close()
    h = head(http, people, "etl_tmp")
    r = http.delete(f"/api/v2/trees/etl_tmp@{h}", headers=people.headers("etl"))
    assert r.status_code == 403, r.text
    r = http.put(f"/api/v2/trees/etl_tmp@{h}", json={"type": "BRANCH", "name": "main"},
                 headers=people.headers("etl"))
    assert r.status_code == 403 and "manage-grants" in r.json()["message"]
    assert http.delete(f"/api/v2/trees/etl_tmp@{h}",
                       headers=people.headers("admin")).status_code == 200


def test_grants_over_http_need_manage_grants(http, people) -> None:
    grant = {"grantee": "reader", "privilege": "write", "refs": "reader_*"}
    r = http.post("/api/v2/auth/grants", json=grant, headers=people.headers("publisher"))
    assert r.status_code == 403 and "every reference" in r.json()["message"]
    bad = http.post("/api/v2/auth/grants", json=grant | {"privilege": "root"},
                    headers=people.headers("admin"))
    assert bad.status_code == 400 and "Unknown privilege 'root'" in bad.json()["message"]
    branch(http, people, "reader_own", "admin")
    ns = {"namespace": ["mine"]}
    path = "/iceberg/reader_own/v1/namespaces"
    assert http.post(path, json=ns, headers=people.headers("reader")).status_code == 403
    r = http.post("/api/v2/auth/grants", json=grant, headers=people.headers("admin"))
    assert r.status_code == 200, r.text
    gid = next(g["id"] for g in r.json()["grants"] if g["refs"] == "reader_*")
    assert http.post(path, json=ns, headers=people.headers("reader")).status_code == 200
    assert http.delete(f"/api/v2/auth/grants/{gid}",
                       headers=people.headers("admin")).status_code == 200
    again = http.post(path, json={"namespace": ["mine2"]}, headers=people.headers("reader"))
    assert again.status_code == 403


# -- starting up -----------------------------------------------------------------------
def _serve(tmp_path, *args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, SAPWOOD_DATA_DIR=str(tmp_path))
    env.pop("SAPWOOD_AUTH", None)
    return subprocess.Popen([*sapwood_command(), "serve", "--port", str(free_port()), *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_an_open_catalog_refuses_a_public_address(tmp_path) -> None:
    proc = _serve(tmp_path, "--host", "0.0.0.0")
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert b"SAPWOOD_AUTH" in out and b"--insecure" in out


def test_insecure_opt_out_starts_with_a_warning(tmp_path) -> None:
    proc = _serve(tmp_path, "--host", "0.0.0.0", "--insecure")
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(2)]
        assert any(b"warning: serving an OPEN catalog" in line for line in lines), lines
        assert any(b"SAPWOOD_ALLOWED_HOSTS" in line for line in lines), lines
    finally:
        proc.kill()
        proc.wait()


def _json(r: httpx.Response) -> Any:
    return r.json()


def test_a_table_on_a_hidden_ref_answers_as_missing_whatever_snapshots_it_asks(
        server, http, people) -> None:
    """loadTable's ``snapshots`` mode changes nothing of what a caller
    without read gets: the answer of a reference that does not exist."""
    mine = main_reader(server, "refsmain")
    admin = people.headers("admin")
    branch(http, people, "refs_hidden", "admin")
    base = "/iceberg/refs_hidden/v1/namespaces"
    assert http.post(base, json={"namespace": ["h"]}, headers=admin).status_code == 200
    r = http.post(f"{base}/h/tables", headers=admin, json={
        "name": "t", "schema": {"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "required": False, "type": "long"}]}})
    assert r.status_code == 200, r.text
    answers = [http.get(f"{prefix}/h/tables/t", params=params, headers=mine)
               for prefix in (base, "/iceberg/refs_nowhere/v1/namespaces")
               for params in ({}, {"snapshots": "all"}, {"snapshots": "refs"})]
    assert {a.status_code for a in answers} == {404}, [a.text for a in answers]
    hidden, missing = answers[:3], answers[3:]
    assert {a.text for a in hidden} == {hidden[0].text}
    assert hidden[0].text == missing[0].text.replace("refs_nowhere", "refs_hidden")
