"""ETag and If-None-Match on loadTable and loadView (and their HEAD routes):
a client that has an answer asks again for nothing but "not modified"."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import httpx

from tests.api import spark_bodies as sb

T = "/iceberg/v1/namespaces/tags/tables/t"
V = "/iceberg/v1/namespaces/tags/views/v"


def _append(http: httpx.Client) -> None:
    meta = http.get(T).json()["metadata"]
    parent = meta.get("current-snapshot-id")
    snapshot_id = (parent or 1000) + 1
    sb.write_manifest_list(meta["location"], snapshot_id)
    r = http.post(T, json=sb.append(meta["table-uuid"], snapshot_id, parent, meta["location"],
                                    meta["last-sequence-number"] + 1))
    assert r.status_code == 200, r.text


def test_load_table_answers_304_until_it_changes(http: httpx.Client) -> None:
    assert http.post("/iceberg/v1/namespaces", json={"namespace": ["tags"]}).status_code == 200
    created = http.post("/iceberg/v1/namespaces/tags/tables", json=sb.create_table("t"))
    assert created.status_code == 200 and created.headers["ETag"].startswith('"')
    first = http.get(T)
    etag = first.headers["ETag"]
    assert etag == created.headers["ETag"]  # the create's answer is the same table
    again = http.get(T, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["ETag"] == etag
    assert http.head(T).headers["ETag"] == etag
    # Another tag, or a weak form of this one in a list.
    assert http.get(T, headers={"If-None-Match": '"other"'}).status_code == 200
    assert http.get(T, headers={"If-None-Match": f'"x", W/{etag}'}).status_code == 304

    _append(http)
    changed = http.get(T, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"] != etag
    assert changed.json()["metadata"]["current-snapshot-id"] is not None


def test_at_an_instant_the_etag_never_changes(http: httpx.Client) -> None:
    time.sleep(0.05)
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    pinned = f"/iceberg/main*{at}/v1/namespaces/tags/tables/t"
    etag = http.get(pinned).headers["ETag"]
    _append(http)
    assert http.get(pinned).headers["ETag"] == etag
    assert http.get(pinned, headers={"If-None-Match": etag}).status_code == 304
    assert http.get(T).headers["ETag"] != etag


def test_load_view_answers_304_until_it_changes(http: httpx.Client) -> None:
    # Its namespace, whether or not the table test ran first (-k).
    made = http.post("/iceberg/v1/namespaces", json={"namespace": ["tags"]})
    assert made.status_code in (200, 409), made.text
    r = http.post("/iceberg/v1/namespaces/tags/views", json=sb.create_view("v", "SELECT 1"))
    assert r.status_code == 200, r.text
    uuid = r.json()["metadata"]["view-uuid"]
    etag = http.get(V).headers["ETag"]
    assert http.get(V, headers={"If-None-Match": etag}).status_code == 304
    assert http.head(V).headers["ETag"] == etag
    assert http.post(V, json=sb.replace_view(uuid, "SELECT 2")).status_code == 200
    changed = http.get(V, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"] != etag
