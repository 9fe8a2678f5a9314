"""A replayed answer is the first answer, headers included (issue 43, loose
end 4), on SQLite and PostgreSQL, over HTTP.

A write sent with an Idempotency-Key whose answer is lost (a loopback
proxy reads the server's answer and drops it: tests/proxy.py) and sent
again gets the answer kept with the key: its status, media type and body
were kept, its headers were not, so a table's or view's ETag — what the
client sends as If-None-Match on its next load — was missing from the
replay. Now the headers a client reads (api.idempotency.KEPT_HEADERS) are
kept with the answer (migration 0012) and sent again; the replay's ETag is
the first answer's, and a load with it answers 304.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.api import spark_bodies as sb
from tests.http import http_request
from tests.proxy import LossyProxy
from tests.server import Server

KEY = "Idempotency-Key"
NS = "/iceberg/v1/namespaces/hdr"


def lost_then_replayed(server: Server, method: str, path: str, body: Any,
                       ) -> tuple[httpx.Response, dict[str, str], bytes]:
    """The write through the proxy, its answer lost, then again straight
    with the same key: the replay, and the lost answer's headers and body."""
    key = str(uuid.uuid4())
    with LossyProxy(f"127.0.0.1:{server.port}", lambda m, p: p == path) as proxy, \
            pytest.raises(httpx.HTTPError):
        http_request(method, proxy.base + path, json=body, headers={KEY: key}, timeout=60)
    (lost,) = proxy.dropped
    assert lost.status == 200, lost.answer
    retry = http_request(method, server.base + path, json=body, headers={KEY: key},
                         timeout=60)
    assert retry.headers.get("Idempotent-Replayed") == "true", retry.headers
    assert (retry.status_code, retry.content) == (200, lost.answer)
    return retry, lost.answer_headers, lost.answer


@pytest.fixture(scope="module")
def namespace(http: httpx.Client) -> str:
    r = http.post("/iceberg/v1/namespaces", json={"namespace": ["hdr"]})
    assert r.status_code == 200, r.text
    return "hdr"


def _same_etag(http: httpx.Client, retry: httpx.Response, lost: dict[str, str],
               load: str) -> None:
    assert lost.get("etag"), lost  # the first answer had one
    assert retry.headers.get("ETag") == lost["etag"]
    again = http.get(load, headers={"If-None-Match": retry.headers["ETag"]})
    assert again.status_code == 304, again.text


def test_a_create_table_whose_answer_is_lost_is_replayed_with_its_etag(
        server: Server, http: httpx.Client, namespace: str) -> None:
    retry, lost, _ = lost_then_replayed(server, "POST", f"{NS}/tables", sb.create_table("t"))
    _same_etag(http, retry, lost, f"{NS}/tables/t")


def test_a_table_commit_whose_answer_is_lost_is_replayed_with_its_etag(
        server: Server, http: httpx.Client, namespace: str) -> None:
    r = http.post(f"{NS}/tables", json=sb.create_table("c"))
    assert r.status_code == 200, r.text
    body = {"requirements": [], "updates": [{"action": "set-properties",
                                             "updates": {"k": "v"}}]}
    retry, lost, _ = lost_then_replayed(server, "POST", f"{NS}/tables/c", body)
    _same_etag(http, retry, lost, f"{NS}/tables/c")


def test_a_view_create_whose_answer_is_lost_is_replayed_with_its_etag(
        server: Server, http: httpx.Client, namespace: str) -> None:
    retry, lost, _ = lost_then_replayed(server, "POST", f"{NS}/views",
                                        sb.create_view("v", "SELECT 1 AS one"))
    _same_etag(http, retry, lost, f"{NS}/views/v")
