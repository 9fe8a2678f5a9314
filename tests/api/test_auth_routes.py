"""401 and 403 for every route, generated from the application's own route
table: a route added without a rule in api/auth/policy.py stops the app from
starting (check_complete), and one whose rule does not hold fails here."""

from __future__ import annotations

import re

import pytest
from fastapi.routing import APIRoute

from api.app import create_app, fastapi_of
from api.auth.policy import RULES, check_complete
from api.settings import Settings
from tests.api.auth_setup import People, set_up
from tests.fixtures import server_fixture

SAMPLE = {"namespace": "ns", "table": "t", "view": "v", "ref": "main", "key": "ns.v",
          "from_ref": "main", "to_ref": "main", "grant_id": "1", "pattern": "main",
          "hash": "ab" * 32, "name": "main", "id": "0" * 32}


def routes() -> list[APIRoute]:
    app = fastapi_of(create_app(Settings("sqlite:////nonexistent/unused.db",
                                         "file:///unused")))
    return [r for r in app.routes if isinstance(r, APIRoute)]


def cases() -> list[tuple[str, str, str]]:
    out = []
    for r in routes():
        if r.name == "root" or r.name.startswith("ui_"):
            # The web UI's pages hold no powers: they answer with the API's
            # own status for the visitor (tests/api/test_ui_auth.py).
            continue
        path = re.sub(r"{(\w+)(?::path)?}", lambda m: SAMPLE[m.group(1)], r.path)
        if r.name == "create_reference":
            path += "?name=newbranch"
        for method in sorted(r.methods):
            out.append((r.name, method, path))
    return out


CASES = cases()
GROUPS = {"namespaces", "tables", "views", "transactions", "trees", "history", "contents",
          "diff", "merge", "transplant", "views/{key}/history", "auth/grants"}


def test_every_route_group_is_covered() -> None:
    paths = " ".join(r.path for r in routes())
    for group in GROUPS:
        assert group in paths, group
    assert len(CASES) >= 40


def test_a_route_without_a_rule_stops_the_app() -> None:
    with pytest.raises(RuntimeError, match="new_route"):
        check_complete([*RULES, "new_route"])


server = server_fixture(env={"SAPWOOD_AUTH": "1"}, prepare=set_up, prefix="auth-routes")


@pytest.mark.parametrize(("name", "method", "path"), CASES,
                         ids=[f"{n}-{m}" for n, m, _ in CASES])
def test_without_a_credential(http, name: str, method: str, path: str) -> None:
    r = http.request(method, path, json={})
    if RULES[name].privilege is None:
        assert r.status_code != 401, r.text
        return
    assert r.status_code == 401, (name, r.status_code, r.text)
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    if method != "HEAD":
        body = r.json()
        if path.startswith("/api/"):
            assert body["errorCode"] == "UNAUTHORIZED", body
        else:
            assert body["error"]["type"] == "NotAuthorizedException", body


@pytest.mark.parametrize(("name", "method", "path"), CASES,
                         ids=[f"{n}-{m}" for n, m, _ in CASES])
def test_without_the_privilege(server, http, name: str, method: str, path: str) -> None:
    people: People = server.people  # type: ignore[attr-defined]
    r = http.request(method, path, json={}, headers=people.headers("nobody"))
    rule = RULES[name]
    if rule.privilege is None:
        return
    if name in ("list_references", "retention_cutoffs"):  # a listing: shows nothing
        assert r.status_code == 200 and r.json()["references"] == [], r.text
        return
    if rule.ref not in ("*", "any", "all") and not rule.ref.startswith("query:") \
            and not rule.direct_write:
        # 'nobody' may read no reference: 'main' answers exactly as one that
        # does not exist (tests/api/test_hidden_as_missing.py). (Protection
        # answers a direct write first, whatever the caller's grants.)
        assert r.status_code == 404, (name, r.status_code, r.text)
        if method != "HEAD":
            body = r.json()
            if path.startswith("/api/"):
                assert body["errorCode"] == "REFERENCE_NOT_FOUND", body
                assert body["message"] == "reference 'main' does not exist", body
            else:
                assert body["error"]["type"] == "NoSuchReferenceException", body
                assert body["error"]["message"] == "reference 'main' does not exist", body
        return
    assert r.status_code == 403, (name, r.status_code, r.text)
    if method != "HEAD":
        body = r.json()
        if path.startswith("/api/"):
            assert body["errorCode"] == "FORBIDDEN", body
            message = body["message"]
        else:
            assert body["error"]["type"] == "ForbiddenException", body
            message = body["error"]["message"]
        assert "Principal 'nobody'" in message or "protected" in message, message
