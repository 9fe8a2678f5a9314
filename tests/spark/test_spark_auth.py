"""Real Spark with ``credential=`` against a catalog with authentication on and
a protected ``main``: reads work, a direct INSERT on main is refused (403), the
same job on branch ``etl`` lands, and only a principal with merge-into merges
it. Tokens live TTL_S seconds, so every catalog of the session refreshes its
token several times while the module runs; one catalog's token traffic goes
through a recording pass-through to show the refreshes are token exchanges."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import pytest
from py4j.protocol import Py4JJavaError

import spark as sw
from catalog.access import create_key
from spark.errors import CatalogError
from store import Store
from tests.fixtures import server_fixture
from tests.http import http_client, http_request
from tests.server import Server
from tests.spark.conftest import module_session, rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Short enough that the module outlives several tokens; Iceberg refreshes 10%
# of the lifetime before the end, so 1 s ahead here.
TTL_S = 20  # Iceberg refreshes 10% before the end: a 2 s margin on a busy machine
EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token"
PROTECTED = ("Branch 'main' is protected: direct commits are refused; commit on another "
             "branch and merge it into 'main' (needs merge-into)")

# principal -> [(privilege, refs glob)]
GRANTS: dict[str, list[tuple[str, str]]] = {
    "etl": [("read", "*"), ("write", "etl*"), ("create-reference", "etl*")],
    "publisher": [("read", "*"), ("merge-into", "main")],
    "reader": [("read", "*")],
}


server = server_fixture(env={"SAPWOOD_AUTH": "1", "SAPWOOD_TOKEN_TTL_S": str(TTL_S)},
                        prefix="spark-auth")


@pytest.fixture(scope="module")
def keys(server: Server) -> dict[str, str]:
    """Credentials (``id:secret``) by principal; ``main`` protected. Written
    straight into the catalog database, as ``sapwood principal|key|grant`` do."""
    s = Store(server.database_url)
    try:
        out = {}
        for name, grants in GRANTS.items():
            s.auth.create_principal(name, [])
            for privilege, refs in grants:
                s.auth.add_grant(name, privilege, refs, ())
            out[name] = create_key(s, name)
        s.auth.protect("main")
    finally:
        s.close()
    return out


@dataclass
class TokenTap:
    """A pass-through for the token endpoint that records what each request
    asked (grant type, how the client authenticated) and whether it got a
    token: the server keeps no such log."""

    target: str
    calls: list[dict[str, Any]] = field(default_factory=list)
    httpd: ThreadingHTTPServer | None = None

    @property
    def uri(self) -> str:
        assert self.httpd is not None
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/oauth/tokens"

    def start(self) -> TokenTap:
        tap = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                form = dict(parse_qsl(raw.decode()))
                auth = self.headers.get("Authorization") or ""
                fwd = {k: v for k, v in self.headers.items()
                       if k.lower() in ("authorization", "content-type")}
                subject = form.get("subject_token")
                # Whether the token being exchanged was still valid: a refresh
                # made in time, not one that came after the expiry.
                live = subject is None or _claims(subject)["exp"] > time.time()
                r = http_request("POST", tap.target, content=raw, headers=fwd, timeout=30)
                tap.calls.append({"grant": form.get("grant_type"), "live": live,
                                  "auth": auth.split(" ", 1)[0], "status": r.status_code,
                                  "token": r.json().get("access_token")})
                self.send_response(r.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(r.content)))
                self.end_headers()
                self.wfile.write(r.content)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the test reads tap.calls

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()


@pytest.fixture(scope="module")
def spark(spark_jvm: SparkSession, server: Server, keys: dict[str, str]) -> SparkSession:
    """Catalog ``main`` (the default) as principal etl; ``published`` adds
    ``etl`` and ``tapped`` adds ``tapped``, as etl too."""
    return module_session(spark_jvm, server.base, catalog="main", credential=keys["etl"])


@pytest.fixture(scope="module")
def early_token(server: Server, keys: dict[str, str]) -> str:
    """A token of reader's, minted before Spark's work begins: by the last
    test it has expired without a wait of its own."""
    key_id, _, secret = keys["reader"].partition(":")
    r = http_request("POST", f"{server.base}/iceberg/etl/v1/oauth/tokens", timeout=30, data={
        "grant_type": "client_credentials", "client_id": key_id, "client_secret": secret,
        "scope": "catalog"})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["token_type"] == "bearer" and answer["expires_in"] == TTL_S
    assert answer["issued_token_type"] == ACCESS_TOKEN
    return str(answer["access_token"])


@pytest.fixture(scope="module")
def published(spark: SparkSession, server: Server, keys: dict[str, str],
              early_token: str) -> None:
    """sales.t made on etl by Spark, merged into main by the publisher."""
    sw.create_branch(server.base, "etl", credential=keys["etl"])
    sw.add_catalog(spark, "etl", server.base, "etl", credential=keys["etl"])
    spark.sql("CREATE NAMESPACE etl.sales")
    spark.sql("CREATE TABLE etl.sales.t (id BIGINT, name STRING) USING iceberg")
    spark.sql("INSERT INTO etl.sales.t VALUES (1, 'a'), (2, 'b')")
    assert sw.merge(server.base, "etl", into="main",
                    credential=keys["publisher"])["wasApplied"] is True


@dataclass
class Tapped:
    tap: TokenTap
    started: float


@pytest.fixture(scope="module")
def tapped(spark: SparkSession, server: Server, keys: dict[str, str],
           published: None) -> Iterator[Tapped]:
    """Catalog ``tapped`` on main, in use from here on; its clock starts now,
    so the module's other tests count towards the lifetimes it must outlive."""
    tap = TokenTap(f"{server.base}/iceberg/v1/oauth/tokens").start()
    sw.add_catalog(spark, "tapped", server.base, "main", credential=keys["etl"])
    spark.conf.set("spark.sql.catalog.tapped.oauth2-server-uri", tap.uri)
    started = time.monotonic()
    assert rows(spark, "SELECT id FROM tapped.sales.t") == [(1,), (2,)]
    yield Tapped(tap, started)
    tap.stop()


def test_reads_on_protected_main_work_and_a_direct_insert_is_refused(
        spark: SparkSession, published: None, tapped: Tapped) -> None:
    assert rows(spark, "SELECT * FROM main.sales.t") == [(1, "a"), (2, "b")]
    assert rows(spark, "SELECT * FROM sales.t") == [(1, "a"), (2, "b")]  # the default catalog

    with pytest.raises(Py4JJavaError) as refused:
        spark.sql("INSERT INTO main.sales.t VALUES (3, 'c')")
    # Iceberg's REST client turns the 403 into ForbiddenException("Forbidden:
    # <the server's message>"), which Spark lets through unwrapped; pyspark
    # raises it as Py4JJavaError, whose text starts with the Java exception.
    java = refused.value.java_exception
    assert java.getClass().getName() == "org.apache.iceberg.exceptions.ForbiddenException"
    assert java.getMessage() == f"Forbidden: {PROTECTED}"
    assert f"org.apache.iceberg.exceptions.ForbiddenException: Forbidden: {PROTECTED}" \
        in str(refused.value)
    assert rows(spark, "SELECT * FROM main.sales.t") == [(1, "a"), (2, "b")]


def test_the_same_insert_on_etl_lands_and_only_merge_into_publishes_it(
        spark: SparkSession, server: Server, keys: dict[str, str], published: None,
        tapped: Tapped) -> None:
    spark.sql("INSERT INTO etl.sales.t VALUES (3, 'c')")
    assert rows(spark, "SELECT * FROM etl.sales.t") == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(spark, "SELECT * FROM main.sales.t") == [(1, "a"), (2, "b")]

    for who in ("reader", "etl"):
        with pytest.raises(CatalogError) as e:
            sw.merge(server.base, "etl", into="main", credential=keys[who])
        assert e.value.status == 403
        assert f"Principal '{who}' lacks the 'merge-into' privilege on reference 'main" \
            in e.value.message, e.value.message
    assert rows(spark, "SELECT * FROM main.sales.t") == [(1, "a"), (2, "b")]

    # The helpers take the session's own credential by default: etl's, here.
    with pytest.raises(CatalogError, match="lacks the 'merge-into' privilege"):
        sw.merge(spark, "etl", into="main", catalog="main")

    assert sw.merge(spark, "etl", into="main", catalog="main",
                    credential=keys["publisher"])["wasApplied"] is True
    assert rows(spark, "SELECT * FROM main.sales.t") == [(1, "a"), (2, "b"), (3, "c")]
    assert sw.diff(spark, "main", "etl", catalog="main") == []


def _claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_session_outlives_its_tokens_by_refreshing_them(
        spark: SparkSession, server: Server, keys: dict[str, str], published: None,
        tapped: Tapped) -> None:
    # Keep working, a query every few seconds, until the tapped catalog has
    # refreshed twice (two generations on: about 1.8 lifetimes after its
    # first token), or 2.2 lifetimes have passed and the asserts say why not.
    while (time.monotonic() - tapped.started < 2.2 * TTL_S
           and len(tapped.tap.calls) < 3):
        assert len(rows(spark, "SELECT id FROM tapped.sales.t")) >= 2
        assert len(rows(spark, "SELECT id FROM main.sales.t")) >= 2
        time.sleep(2)
    assert len(rows(spark, "SELECT id FROM tapped.sales.t")) >= 2
    assert len(rows(spark, "SELECT id FROM etl.sales.t")) >= 2

    calls = tapped.tap.calls
    grants = [(c["grant"], c["auth"], c["status"], c["live"]) for c in calls]
    # One token from the credential, then refreshes by token exchange, all
    # granted, each made while the token it replaced was still valid. The
    # first refresh presents that token as Bearer; Iceberg 1.10 keeps the first
    # token's expiry in its session, so it takes every later refresh for one
    # of an expired token and authenticates it with the credential (Basic).
    assert grants[0] == ("client_credentials", "", 200, True), grants
    assert len(grants) >= 3, grants
    assert grants[1] == (EXCHANGE, "Bearer", 200, True), grants
    assert all(g[0] == EXCHANGE and g[2] == 200 and g[3] for g in grants[2:]), grants

    # From the server's side: the first token has expired (401), the last one
    # (what the session uses now) is a later token of the same key, and valid.
    first, last = calls[0]["token"], calls[-1]["token"]
    with http_client(base_url=server.base, timeout=30) as http:
        expired = http.get("/iceberg/main/v1/namespaces", headers=_bearer(first))
        assert expired.status_code == 401, expired.text
        assert "expired" in expired.json()["error"]["message"]
        assert http.get("/iceberg/main/v1/namespaces", headers=_bearer(last)).status_code == 200
    assert _claims(last)["swk"] == _claims(first)["swk"] == keys["etl"].split(":")[0]
    assert _claims(last)["exp"] > _claims(first)["exp"] + TTL_S  # two generations on


def test_the_token_endpoint_as_iceberg_uses_it(server: Server, keys: dict[str, str],
                                                early_token: str) -> None:
    """What the Java client sends: client credentials first (early_token),
    then an exchange of the live token; and when a refresh came late, an
    exchange of the expired token authenticated with the credential (Basic)."""
    key_id = keys["reader"].split(":")[0]
    # The token outlives the expires_in it was announced with (Iceberg
    # schedules its next refresh from that number).
    claims = _claims(early_token)
    assert claims["exp"] - claims["iat"] >= TTL_S
    with http_client(base_url=server.base, timeout=30) as http:
        live = http.post("/iceberg/v1/oauth/tokens", data={
            "grant_type": "client_credentials", "client_id": key_id,
            "client_secret": keys["reader"].split(":")[1]}).json()["access_token"]
        r = http.post("/iceberg/main/v1/oauth/tokens", data=_exchange(live),
                      headers=_bearer(live))
        assert r.status_code == 200, r.text
        fresh = r.json()["access_token"]
        assert fresh != live and _claims(fresh)["swk"] == key_id
        assert http.get("/iceberg/v1/namespaces", headers=_bearer(fresh)).status_code == 200

        time.sleep(max(0.0, claims["exp"] - time.time() + 0.5))  # no wait after the others
        expired = http.get("/iceberg/v1/namespaces", headers=_bearer(early_token))
        assert expired.status_code == 401, expired.text
        assert "expired" in expired.json()["error"]["message"]
        # An expired token alone cannot be exchanged...
        r = http.post("/iceberg/v1/oauth/tokens", data=_exchange(early_token),
                      headers=_bearer(early_token))
        assert r.status_code == 400 and r.json()["error"] == "invalid_grant", r.text
        # ...with the credential it can (Iceberg's refresh of an expired token)...
        r = http.post("/iceberg/v1/oauth/tokens", data=_exchange(early_token),
                      headers={"Authorization": _basic(keys["reader"])})
        assert r.status_code == 200, r.text
        renewed = r.json()["access_token"]
        assert _claims(renewed)["swk"] == key_id
        assert http.get("/iceberg/v1/namespaces", headers=_bearer(renewed)).status_code == 200
        # ...but not with a wrong one.
        r = http.post("/iceberg/v1/oauth/tokens", data=_exchange(early_token),
                      headers={"Authorization": _basic(f"{key_id}:guess")})
        assert r.status_code == 401 and r.json()["error"] == "invalid_client", r.text


def _exchange(token: str) -> dict[str, str]:
    return {"grant_type": EXCHANGE, "subject_token": token, "subject_token_type": ACCESS_TOKEN,
            "scope": "catalog"}


def _basic(credential: str) -> str:
    return "Basic " + base64.b64encode(credential.encode()).decode()
