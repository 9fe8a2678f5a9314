"""A commit hash answers one way on every route that takes one (issue 43,
loose end 3), on SQLite and PostgreSQL, over HTTP.

The routes: revert's ``commits``, transplant's ``hashesToTransplant``, a
merge's ``fromHash``, a restore's ``source`` (``@hash``, ``name@hash``),
the ``hash`` of a reference created or assigned, the expected hash of
``name@hash`` in a path (commit, assign, delete), and ``@hash`` read
specs of both APIs. A malformed hash (not hex, too short, too long) is a
400 ``BAD_REQUEST`` (Iceberg: ``BadRequestException``) saying
``invalid commit hash '<it>' in '<field or spec>': <why>``, the same why
everywhere; a well-formed hash that names no commit is the same 404
(``no commit hash starts with <it>`` / ``commit <it> does not exist``), in
any case of letters; and a known hash in capitals is that commit (revert
answered ``zz`` with 404 and took no capitals). A hidden commit answering
as an unknown one is tests/api/test_hidden_as_missing.py's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.api import spark_bodies as sb
from tests.fixtures import BACKENDS, server_fixture
from tests.server import Server

server = server_fixture(BACKENDS, prefix="bad-hashes")

V2 = "/api/v2/trees"
MALFORMED = ("zz", "ZZZZZZZZ", "abcdefgh", "0123abc", "a" * 65, "12345678+")
UNKNOWN = ("0123abcd", "0123ABCD", "f" * 64, "F" * 64)
WHY = {"zz": "only hex digits allowed", "ZZZZZZZZ": "only hex digits allowed",
       "abcdefgh": "only hex digits allowed", "12345678+": "only hex digits allowed",
       "0123abc": "expected 8 to 64 hex characters, got 7",
       "a" * 65: "expected 8 to 64 hex characters, got 65"}

Route = Callable[[httpx.Client, str, str], httpx.Response]


def _q(spec: str) -> str:
    return quote(spec, safe="")


def head(http: httpx.Client, ref: str = "main") -> str:
    r = http.get(f"{V2}/{_q(ref)}")
    assert r.status_code == 200, r.text
    return str(r.json()["reference"]["hash"])


@pytest.fixture(scope="module")
def made(server: Server, http: httpx.Client) -> dict[str, str]:
    """ns.t on main, and a branch 'side' to assign and delete."""
    assert http.post("/iceberg/v1/namespaces", json={"namespace": ["ns"]}).status_code == 200
    r = http.post("/iceberg/v1/namespaces/ns/tables", json=sb.create_table("t"))
    assert r.status_code == 200, r.text
    main = head(http)
    r = http.post(V2, params={"name": "side", "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": main})
    assert r.status_code == 200, r.text
    return {"main": main}


def _post(path: str, body: Callable[[str], dict[str, Any]]) -> Route:
    def send(http: httpx.Client, at: str, h: str) -> httpx.Response:
        return http.post(path.format(at=_q(f"main@{at}")), json=body(h))
    return send


KEYS = [{"elements": ["ns", "t"]}]
# Each route, sending hash ``h`` where it takes one (``at``: main's head).
ROUTES: dict[str, Route] = {
    "revert": _post(V2 + "/{at}/history/revert", lambda h: {"commits": [h], "dryRun": True}),
    "transplant": _post(V2 + "/{at}/history/transplant",
                        lambda h: {"hashesToTransplant": [h], "dryRun": True}),
    "merge fromHash": _post(V2 + "/{at}/history/merge",
                            lambda h: {"fromRefName": "main", "fromHash": h, "dryRun": True}),
    "restore @hash": _post(V2 + "/{at}/history/restore",
                           lambda h: {"source": f"@{h}", "keys": KEYS, "dryRun": True}),
    "restore name@hash": _post(V2 + "/{at}/history/restore",
                               lambda h: {"source": f"main@{h}", "keys": KEYS, "dryRun": True}),
    "create reference": lambda http, at, h: http.post(
        V2, params={"name": "nope", "type": "BRANCH"},
        json={"type": "BRANCH", "name": "main", "hash": h}),
    "assign hash": lambda http, at, h: http.put(
        f"{V2}/{_q('side@' + head(http, 'side'))}", json={"type": "BRANCH", "name": "main",
                                                          "hash": h}),
    "assign expected": lambda http, at, h: http.put(
        f"{V2}/{_q('side@' + h)}", json={"type": "BRANCH", "name": "main", "hash": at}),
    "delete expected": lambda http, at, h: http.delete(f"{V2}/{_q('side@' + h)}"),
    "commit expected": lambda http, at, h: http.post(
        f"{V2}/{_q('main@' + h)}/history/commit",
        json={"operations": [{"type": "UNCHANGED", "key": {"elements": ["ns", "t"]}}]}),
    "merge expected": lambda http, at, h: http.post(
        f"{V2}/{_q('main@' + h)}/history/merge", json={"fromRefName": "side", "dryRun": True}),
    "get @hash": lambda http, at, h: http.get(f"{V2}/{_q('@' + h)}"),
    "get name@hash": lambda http, at, h: http.get(f"{V2}/{_q('main@' + h)}"),
    "log @hash": lambda http, at, h: http.get(f"{V2}/{_q('@' + h)}/history"),
    "entries @hash": lambda http, at, h: http.get(f"{V2}/{_q('@' + h)}/entries"),
    "diff @hash": lambda http, at, h: http.get(f"{V2}/{_q('@' + h)}/diff/main"),
    "iceberg @hash": lambda http, at, h: http.get(f"/iceberg/v1/{_q('@' + h)}/namespaces"),
}


def _message(r: httpx.Response) -> str:
    body = r.json()
    return str(body["error"]["message"] if "error" in body else body["message"])


def _code(r: httpx.Response) -> str:
    body = r.json()
    return str(body["error"]["type"] if "error" in body else body["errorCode"])


@pytest.mark.parametrize("bad", MALFORMED)
def test_a_malformed_hash_is_one_400_everywhere(http: httpx.Client, made: dict[str, str],
                                                bad: str) -> None:
    shape = re.compile(rf"invalid commit hash {re.escape(repr(bad))} in '([^']+)': "
                       rf"{re.escape(WHY[bad])}")
    for name, send in ROUTES.items():
        r = send(http, made["main"], bad)
        assert r.status_code == 400, (name, r.text)
        assert _code(r) in ("BAD_REQUEST", "BadRequestException"), (name, r.text)
        assert shape.fullmatch(_message(r)), (name, r.text)
    assert head(http) == made["main"]  # nothing changed


@pytest.mark.parametrize("unknown", UNKNOWN)
def test_an_unknown_hash_is_one_404_everywhere(http: httpx.Client, made: dict[str, str],
                                               unknown: str) -> None:
    low = unknown.lower()
    said = f"commit {low} does not exist" if len(low) == 64 else \
        f"no commit hash starts with {low}"
    for name, send in ROUTES.items():
        r = send(http, made["main"], unknown)
        assert r.status_code == 404, (name, r.text)
        assert _code(r) in ("CONTENT_NOT_FOUND", "NotFoundException"), (name, r.text)
        assert _message(r) == said, (name, r.text)
    assert head(http) == made["main"]


def test_a_known_hash_in_capitals_is_that_commit(http: httpx.Client,
                                                 made: dict[str, str]) -> None:
    main = made["main"]
    for h in (main.upper(), main[:12].upper()):
        r = ROUTES["revert"](http, main, h)
        assert r.status_code == 200, r.text
        assert r.json()["message"].startswith(f"revert {main[:12]}"), r.text
        for name in ("transplant", "restore @hash", "get @hash", "log @hash"):
            r = ROUTES[name](http, main, h)
            assert r.status_code == 200, (name, r.text)
    assert head(http) == main
