"""Page tokens reveal nothing (issue 43, defect 10), on SQLite and
PostgreSQL, against the catalog of tests/api/hidden_setup.py with many more
references and namespaces the reader may not see.

* Walking every paged listing of both APIs page by page as ``reader``
  (reads ``sales`` of ``main`` only) — references, retention cutoffs,
  entries, the log, a diff, the view audit, Iceberg's namespaces, tables
  and views — no token, decoded any way (base64 of any alphabet, hex, the
  raw text), no answer and no error names a hidden reference or key; each
  page holds what the caller may see and only the last says no more.
* A token opens only for the caller and the query that got it (another
  principal, another ``prefix``, an altered token: 400 naming
  ``pageToken``); a references token is good for the cutoffs listing (the
  UI pages both together).
* Nessie's spellings ``max-records`` and ``page-token`` page as
  ``maxRecords`` and ``pageToken`` do; both spellings with different values
  is a 400 naming both.
* A read past retention (410) names no reference the reader may not read.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from core.commits import CommitMeta, Put
from core.content import IcebergTable, IcebergView, Namespace
from core.keys import ContentKey
from store import Store
from tests.api.auth_setup import People
from tests.api.hidden_setup import Hidden, build, set_up
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server

HIDDEN_REFS = [f"vault/r{i:02}" for i in range(12)] + ["zz-secret-ref", "aa-secret-ref"]
HIDDEN_NAMESPACES = [f"classified_{i:02}" for i in range(6)] + ["zz_classified"]


def _more(server: Server) -> None:
    """The probe's catalog, then hidden references on both sides of
    ``main`` and hidden namespaces on both sides of ``sales``, hidden tables
    and views between ``sales``' own."""
    server.hidden = build(server)  # type: ignore[attr-defined]
    s = Store(server.database_url)
    try:
        ops: list[Any] = []
        for ns in HIDDEN_NAMESPACES:
            ops += [Put(ContentKey.of(ns), Namespace()),
                    Put(ContentKey.of(ns, "secret_table"),
                        IcebergTable(metadata_location=f"file:///w/{ns}.json"))]
        ops += [Put(ContentKey.of("sales", f"orders_{i}"),
                    IcebergTable(metadata_location=f"file:///w/o{i}.json")) for i in range(3)]
        ops += [Put(ContentKey.of("sales", f"view_{i}"),
                    IcebergView(metadata_location=f"file:///w/v{i}.json", version_id=1))
                for i in range(3)]
        s.commit("main", ops, CommitMeta("more"), principal="admin")
        for name in HIDDEN_REFS:
            s.create_reference(name, source="secret")
    finally:
        s.close()


server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1"}, prepare=set_up, ready=_more,
                        prefix="tokens")


def _hidden_words(server: Server) -> list[str]:
    """What the reader may not learn of: every reference but main, every
    key outside sales (names long enough not to turn up by chance in
    random bytes)."""
    hidden: Hidden = server.hidden  # type: ignore[attr-defined]
    refs = [n for n in hidden.branches if n != "main"] + HIDDEN_REFS
    return sorted({*refs, *HIDDEN_NAMESPACES, "salaries", "v_salaries", "secret_table",
                   "s_one", "s_two", "secret"})


def _decodings(token: str) -> Iterator[str]:
    """A token as text every way one might decode it."""
    yield token
    tries: list[tuple[Callable[[str], bytes], str]] = [(bytes.fromhex, "")]
    for pad in ("", "=", "==", "==="):
        tries += [(d, pad) for d in (base64.urlsafe_b64decode, base64.b64decode,
                                     base64.b32decode, base64.b85decode)]
    for decode, pad in tries:
        try:
            raw = decode(token + pad)
        except (ValueError, binascii.Error):
            continue
        yield raw.decode("latin-1")


class Walker:
    """Pages through listings as one caller, keeping every token and answer."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.tokens: list[str] = []
        self.texts: list[str] = []

    def get(self, path: str, **params: Any) -> httpx.Response:
        r = self.http.get(path, params=params)
        self.texts.append(r.text)
        return r

    def walk(self, path: str, items: str, size: str = "maxRecords", token: str = "pageToken",
             answered: str = "token", **params: Any) -> list[Any]:
        """Every item, one a page; each page holds one unless it is the last."""
        out: list[Any] = []
        at: str | None = None
        for _ in range(200):
            r = self.get(path, **{size: 1, **params, **({token: at} if at else {})})
            assert r.status_code == 200, r.text
            body = r.json()
            at = body.get(answered)
            out += body[items]
            if at is None:
                return out
            self.tokens.append(at)
            assert len(body[items]) == 1, body  # never an empty page with more to come
        raise AssertionError(f"{path}: more than 200 pages")


def _people(server: Server) -> People:
    return server.people  # type: ignore[no-any-return,attr-defined]


def _client(server: Server, who: str) -> httpx.Client:
    return http_client(base_url=server.base, timeout=30, headers=_people(server).headers(who))


def test_walking_every_listing_as_a_reader_names_nothing_hidden(server: Server) -> None:
    with _client(server, "reader") as http:
        w = Walker(http)
        names = [r["name"] for r in w.walk("/api/v2/trees", "references")]
        assert names == ["main"]
        assert [r["name"] for r in w.walk("/api/v2/trees", "references", size="max-records",
                                          token="page-token")] == ["main"]
        assert [r["name"] for r in w.walk("/api/v2/retention/cutoffs", "references")] == [
            "main"]
        keys = [tuple(e["name"]["elements"]) for e in w.walk("/api/v2/trees/main/entries",
                                                             "entries")]
        assert keys and all(k[0] == "sales" for k in keys), keys
        assert ("sales", "orders_1") in keys and ("sales", "view_2") in keys
        top = w.walk("/api/v2/trees/main/entries", "entries", depth=1)
        assert [e["name"]["elements"] for e in top] == [["sales"]]
        assert w.walk("/api/v2/trees/main/views/sales.v_orders/history", "versions")
        v1 = "/iceberg/v1"
        assert w.walk(f"{v1}/namespaces", "namespaces", size="pageSize",
                      answered="next-page-token") == [["sales"]]
        tables = w.walk(f"{v1}/namespaces/sales/tables", "identifiers", size="pageSize",
                        answered="next-page-token")
        assert [t["name"] for t in tables] == ["orders", "orders_0", "orders_1", "orders_2"]
        assert len(w.walk(f"{v1}/namespaces/sales/views", "identifiers", size="pageSize",
                          answered="next-page-token")) == 4
        # Java's first request sends an empty token: pages all the same.
        first = w.get(f"{v1}/namespaces/sales/tables", pageToken="", pageSize=2).json()
        assert len(first["identifiers"]) == 2 and first["next-page-token"]
        w.tokens.append(first["next-page-token"])
        # Tokens misused: answers are errors, which name nothing hidden either.
        assert w.tokens
        for token in w.tokens[:3]:
            bad = w.get("/api/v2/trees", pageToken=token[:-2] + ("AA" if token[-2:] != "AA"
                                                                  else "BB"))
            assert bad.status_code == 400 and "pageToken" in bad.text, bad.text
    # The log and diffs need read on the whole reference: mover's etl/work.
    with _client(server, "mover") as http:
        m = Walker(http)
        assert len(m.walk("/api/v2/trees/etl%2Fwork/history", "logEntries")) >= 3
        assert m.walk("/api/v2/trees/etl%2Fwork~3/diff/etl%2Fwork", "diffs")
        assert [r["name"] for r in m.walk("/api/v2/trees", "references")] == [
            "etl/work", "main"]
    words = _hidden_words(server)
    # mover reads all of etl/work, where hr.salaries is too.
    movers = [x for x in words if not x.startswith("etl") and "salaries" not in x]
    for walker, hidden in ((w, words), (m, movers)):
        assert walker.tokens
        for token in walker.tokens:
            for text in _decodings(token):
                found = [x for x in hidden if x in text]
                assert not found, (token, found)
        for text in walker.texts:
            found = [x for x in hidden if x in text]
            assert not found, (text[:300], found)


def _first_token(http: httpx.Client, path: str, **params: Any) -> str:
    r = http.get(path, params={"maxRecords": 1, **params})
    assert r.status_code == 200, r.text
    token = r.json()["token"]
    assert token, r.json()
    return str(token)


def test_a_token_holds_only_for_its_caller_and_its_query(server: Server) -> None:
    with _client(server, "admin") as admin, _client(server, "mover") as mover:
        token = _first_token(admin, "/api/v2/trees")
        nxt = admin.get("/api/v2/trees", params={"maxRecords": 1, "pageToken": token})
        assert nxt.status_code == 200 and len(nxt.json()["references"]) == 1
        # The cutoffs listing pages the same references: its tokens go both ways.
        same = admin.get("/api/v2/retention/cutoffs", params={"maxRecords": 1,
                                                                "pageToken": token})
        assert same.status_code == 200, same.text
        assert same.json()["references"][0]["name"] == nxt.json()["references"][0]["name"]
        # Another caller, another prefix, another listing: refused, naming it.
        for client, path, params in (
                (mover, "/api/v2/trees", {}),
                (admin, "/api/v2/trees", {"prefix": "secret"}),
                (admin, "/api/v2/trees/main/entries", {}),
                (admin, "/api/v2/trees/main/history", {})):
            r = client.get(path, params={"pageToken": token, **params})
            assert r.status_code == 400, (path, r.text)
            assert "pageToken" in r.text and "caller and the query" in r.text, r.text
        r = admin.get("/api/v2/trees", params={"page-token": token, "prefix": "x"})
        assert r.status_code == 400 and "page-token" in r.text, r.text
        log = _first_token(admin, "/api/v2/trees/main/history", author="admin")
        r = admin.get("/api/v2/trees/main/history", params={"pageToken": log})
        assert r.status_code == 400, r.text
        ns = admin.get("/iceberg/v1/namespaces", params={"pageSize": 1}).json()
        r = admin.get("/iceberg/v1/secret/namespaces",
                      params={"pageSize": 1, "pageToken": ns["next-page-token"]})
        assert r.status_code == 400 and "pageToken" in r.text, r.text


@pytest.mark.parametrize("path,items", [
    ("/api/v2/trees", "references"),
    ("/api/v2/retention/cutoffs", "references"),
    ("/api/v2/trees/main/entries", "entries"),
    ("/api/v2/trees/main/history", "logEntries"),
    ("/api/v2/trees/main~3/diff/main", "diffs"),
    ("/api/v2/trees/main/views/sales.v_orders/history", "versions"),
])
def test_nessies_spellings_page_as_ours(server: Server, path: str, items: str) -> None:
    with _client(server, "admin") as admin:
        ours = admin.get(path, params={"maxRecords": 1})
        theirs = admin.get(path, params={"max-records": 1})
        assert ours.status_code == theirs.status_code == 200, theirs.text
        assert len(theirs.json()[items]) == 1
        assert theirs.json()[items] == ours.json()[items]
        token = theirs.json()["token"]
        if token is not None:
            second = admin.get(path, params={"max-records": 1, "page-token": token})
            assert second.status_code == 200, second.text
            assert second.json()[items] and second.json()[items] != theirs.json()[items]
            both = admin.get(path, params={"pageToken": token, "page-token": token,
                                           "max-records": 1, "maxRecords": 1})
            assert both.status_code == 200, both.text
        clash = admin.get(path, params={"maxRecords": 1, "max-records": 2})
        assert clash.status_code == 400, clash.text
        assert "'maxRecords' and 'max-records'" in clash.json()["message"], clash.text
        clash = admin.get(path, params={"pageToken": "a", "page-token": "b"})
        assert clash.status_code == 400, clash.text
        assert "'pageToken' and 'page-token'" in clash.json()["message"], clash.text
        bad = admin.get(path, params={"max-records": 0})
        assert bad.status_code == 400 and "max-records" in bad.text, bad.text


def test_a_read_past_retention_names_no_hidden_reference(server: Server) -> None:
    with _client(server, "admin") as admin, _client(server, "reader") as reader:
        for i in range(3):  # main~2 is then no reference's head
            assert admin.post("/iceberg/v1/namespaces",
                              json={"namespace": [f"ret_{i}"]}).status_code == 200
        old = admin.get("/api/v2/trees/main~2").json()["reference"]["hash"]
        # A branch the reader may not see whose chain holds it, named to
        # sort before main.
        head = admin.get("/api/v2/trees/main").json()["reference"]["hash"]
        assert admin.post("/api/v2/trees", params={"name": "aa-secret-fork"}, json={
            "type": "BRANCH", "name": "main", "hash": head}).status_code == 200
        assert admin.put("/api/v2/retention", json={"policies": [
            {"refs": "*", "keepCommits": 1}]}).status_code == 200
        try:
            texts = []
            for path in (f"/api/v2/trees/@{old}/entries", f"/iceberg/v1/@{old}/namespaces",
                         f"/api/v2/trees/main@{old}/entries", "/api/v2/trees/main~2/entries",
                         "/iceberg/v1/main~2/namespaces/sales"):
                r = reader.get(path)
                assert r.status_code == 410, (path, r.text)
                texts.append(r.text)
            assert "retention of 'main'" in texts[-1], texts[-1]
            words = [*_hidden_words(server), "aa-secret-fork"]
            for text in texts:
                found = [x for x in words if re.search(f"'{re.escape(x)}'", text)]
                assert not found, (text, found)
            body = json.loads(texts[0])
            assert "past every reference's retention" in body["message"], body
        finally:
            assert admin.put("/api/v2/retention", json={"policies": []}).status_code == 200


def test_the_event_feed_takes_nessies_page_size_too(server: Server) -> None:
    with _client(server, "admin") as admin:
        ours = admin.get("/api/v2/events", params={"maxRecords": 2})
        theirs = admin.get("/api/v2/events", params={"max-records": 2})
        assert ours.status_code == theirs.status_code == 200, theirs.text
        assert len(theirs.json()["events"]) == 2 and theirs.json()["hasMore"]
        assert theirs.json()["events"] == ours.json()["events"]
        clash = admin.get("/api/v2/events", params={"maxRecords": 2, "max-records": 3})
        assert clash.status_code == 400, clash.text
        assert "'maxRecords' and 'max-records'" in clash.text, clash.text
