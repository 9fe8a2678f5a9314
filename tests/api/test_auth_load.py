"""Revocation under load (acceptance 4): eight clients with valid tokens and
one whose key is revoked mid-run. With the grants in the shared database
the propagation delay is zero: no request the revoked client starts after the
revocation returned succeeds, on SQLite and on PostgreSQL, with two server
workers (so the revocation is seen by processes that did not make it)."""

from __future__ import annotations

import threading
import time

from catalog.access import create_key
from store import Store
from tests.api.auth_setup import People, set_up
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client, http_request

CLIENTS = 8
RUN_S = 3.0


server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1"}, workers=2,
                        prepare=lambda url: set_up(url, protect_main=False), prefix="auth-load")


def test_a_revoked_key_stops_working_at_once_under_load(server) -> None:
    people: People = server.people  # type: ignore[attr-defined]
    s = Store(server.database_url)
    try:
        s.auth.create_principal("leaver")
        s.auth.add_grant("leaver", "read", "*")
        leaver_key = create_key(s, "leaver")
    finally:
        s.close()
    with http_client(base_url=server.base) as http:
        tokens = [people.token(http, "reader") for _ in range(CLIENTS)]
        leaver_token = http_request("POST", f"{server.base}/iceberg/v1/oauth/tokens", data={
            "grant_type": "client_credentials", "client_id": leaver_key.split(":")[0],
            "client_secret": leaver_key.split(":")[1]}).json()["access_token"]
    results: dict[str, list[tuple[float, int]]] = {}
    stop = time.monotonic() + RUN_S

    def run(name: str, credential: str) -> None:
        out: list[tuple[float, int]] = []
        with http_client(base_url=server.base, timeout=10,
                         headers={"Authorization": f"Bearer {credential}"}) as c:
            while time.monotonic() < stop:
                started = time.monotonic()
                out.append((started, c.get("/iceberg/v1/namespaces").status_code))
        results[name] = out

    threads = [threading.Thread(target=run, args=(f"ok{i}", t)) for i, t in enumerate(tokens)]
    threads += [threading.Thread(target=run, args=("leaver-key", leaver_key)),
                threading.Thread(target=run, args=("leaver-token", leaver_token))]
    for t in threads:
        t.start()
    time.sleep(RUN_S / 2)
    s = Store(server.database_url)
    try:
        s.auth.revoke_key(leaver_key.split(":")[0])
        revoked_at = time.monotonic()
    finally:
        s.close()
    for t in threads:
        t.join()
    for i in range(CLIENTS):
        statuses = {code for _, code in results[f"ok{i}"]}
        assert statuses == {200}, (i, statuses)
        assert len(results[f"ok{i}"]) > 10
    for name in ("leaver-key", "leaver-token"):
        before = [c for t, c in results[name] if t < revoked_at - 0.5]
        after = [c for t, c in results[name] if t >= revoked_at]
        assert before and set(before) == {200}, (name, set(before))
        assert after and set(after) == {401}, (name, set(after))
