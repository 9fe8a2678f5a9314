"""Names and refs that used to lie (issue 11, defect 6): names holding '/'
or '\\' are refused at creation over both APIs; ``v@main#<epoch ms>`` is an
instant, not a hash prefix; RFC 3339 instants in lower case are accepted."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.api import spark_bodies as sb
from tests.api.test_rest_http import V1, make_view

BAD = ["sl/ash", "back\\slash", ".."]


@pytest.mark.parametrize("name", BAD)
def test_a_namespace_that_could_not_be_addressed_is_refused(http, name: str) -> None:
    r = http.post(f"{V1}/namespaces", json={"namespace": [name]})
    assert r.status_code == 400, r.text
    assert "may not contain '/'" in r.json()["error"]["message"]
    listed = http.get(f"{V1}/namespaces").json()["namespaces"]
    assert [name] not in listed


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")} if root.exists() else set()


@pytest.mark.parametrize("name", BAD)
def test_a_table_or_view_that_could_not_be_addressed_is_refused(server, http, ns,
                                                                name: str) -> None:
    warehouse = server.data_dir / "warehouse"
    files = _files(warehouse)
    before = http.get(f"{V1}/namespaces/{ns}/tables").json()["identifiers"]
    r = http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table(name))
    assert r.status_code == 400, r.text
    r = http.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view(name, "SELECT 1"))
    assert r.status_code == 400, r.text
    assert http.get(f"{V1}/namespaces/{ns}/tables").json()["identifiers"] == before
    assert http.get(f"{V1}/namespaces/{ns}/views").json()["identifiers"] == []
    assert _files(warehouse) == files  # refused before any file or folder was written


def test_the_versioning_api_refuses_such_names_too(http) -> None:
    head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    r = http.post(f"/api/v2/trees/main@{head}/history/commit", json={
        "commitMeta": {"message": "bad"},
        "operations": [{"type": "PUT", "key": {"elements": ["sl/ash"]},
                        "content": {"type": "NAMESPACE"}}]})
    assert r.status_code == 400, r.text
    assert "may not contain '/'" in r.json()["message"]
    assert http.get("/api/v2/trees/main").json()["reference"]["hash"] == head


def test_an_epoch_ms_after_hash_sign_is_an_instant(http, ns) -> None:
    uuid = make_view(http, ns, "v", "SELECT 1")["metadata"]["view-uuid"]
    time.sleep(0.05)
    between = int(time.time() * 1000)
    time.sleep(0.05)
    r = http.post(f"{V1}/namespaces/{ns}/views/v", json=sb.replace_view(uuid, "SELECT 2"))
    assert r.status_code == 200, r.text
    # 13 digits are also valid hex: it used to be read as a hash prefix (404).
    old = http.get(f"{V1}/namespaces/{ns}/views/v@main%23{between}")
    assert old.status_code == 200, old.text
    assert sb.current_sql(old.json()["metadata"]) == "SELECT 1"
    new = http.get(f"{V1}/namespaces/{ns}/views/v")
    assert sb.current_sql(new.json()["metadata"]) == "SELECT 2"


def test_lower_case_rfc3339_instants_are_accepted(http, ns) -> None:
    make_view(http, ns, "v", "SELECT 1")
    time.sleep(0.05)
    at = datetime.now(UTC).strftime("%Y-%m-%dt%H:%M:%S.%fz")  # as DuckDB sends it
    r = http.get(f"/iceberg/main*{at}/v1/namespaces/{ns}/views/v")
    assert r.status_code == 200, r.text
    r = http.get(f"/api/v2/trees/main*{at}/entries")
    assert r.status_code == 200, r.text
