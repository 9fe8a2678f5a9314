"""A reference or commit the caller may not read answers exactly as one
that does not exist (issue 34, item 7), on every route of the application
that takes one, generated from its route table (as
tests/api/test_auth_routes.py is), on SQLite and PostgreSQL.

Each route is asked twice per spelling, once naming something hidden from
the caller (branch ``secret``, a commit only ``secret`` holds, its 8-hex
prefix, a prefix two hidden commits share ...) and once the same spelling
of something that does not exist: status, headers that point somewhere and
body must be the same but for the name typed. Wherever the route reads a
reference: the Iceberg prefix in both spellings (``/iceberg/v1/{p}/…`` and
``/iceberg/{p}/v1/…``), a table or view name carrying its own reference
(``orders@secret``), the versioning API's path segments, query parameters,
the bodies that name a source or commits, and the web UI's pages and forms.
Asked as ``reader`` (reads ``sales`` of ``main``) and as ``mover`` (does
everything on ``etl/*``, so that each route's own rule lets it through to
the reference its body or second segment names).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi.routing import APIRoute

from api.auth.policy import RULES
from api.ui.client import COOKIE
from tests.api.auth_setup import People
from tests.api.hidden_setup import Hidden, build, set_up
from tests.api.test_auth_routes import routes
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server

UNKNOWN = "f" * 64  # no commit's hash (checked below)
U8 = UNKNOWN[:8]
INSTANT = "2026-01-01T00:00:00Z"
CALLERS = ("reader", "mover")
# The branch each caller's requests use where they do not name the hidden
# or missing one.
HOME = {"reader": "main", "mover": "etl/work"}

server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1"}, prepare=set_up,
                        ready=lambda srv: setattr(srv, "hidden", build(srv)),
                        prefix="hidden")


# -- what a route takes, from the route table -------------------------------------------
# Path parameters that name a reference (the UI's ``name`` is a branch to
# delete) or a commit; every other one gets a sample value.
REF_PARAMS = {"ref", "from_ref", "to_ref", "name"}
HASH_PARAMS = {"hash"}
SAMPLE = {"namespace": "sales", "table": "orders", "view": "v_orders", "key": "sales.orders",
          "grant_id": "1", "pattern": "main", "id": "0" * 32,
          "rest": "no-such-page"}  # the UI's catch-all (api.ui.nav)
# Query parameters and form fields that name a reference or a commit, per
# route (the UI reads some from the raw query, which the table does not list).
QUERY_REFS = {"list_events": ("ref",), "ui_as_of": ("ref",), "ui_diff": ("from", "to"),
              "ui_merge_preview": ("from", "into"), "ui_restore_preview": ("source", "branch"),
              "ui_revert_preview": ("branch",),
              # The reference a commit's page was reached from; the switcher's choice.
              "ui_commit": ("ref",), "ui_switch": ("ref",)}
QUERY_HASHES = {"ui_revert_preview": ("commit",)}
FORM_REFS = {"ui_create_reference": ("source",), "ui_merge": ("from", "into"),
             "ui_restore": ("source", "branch"), "ui_revert": ("branch",)}
FORM_HASHES = {"ui_revert": ("commit",)}
# Query parameters named like a reference that are not one.
NOT_REFS = {("create_reference", "name"),  # the reference to create
            ("add_view_representation", "from"), ("add_view_representation", "to")}  # dialects
REFISH = {"ref", "from", "to", "into", "source", "branch", "commit", "name"}
# Versioning-API writes address ``branch@expectedHash``.
AT_HEAD = {"assign_reference", "delete_reference", "commit", "merge", "transplant",
           "restore_keys", "revert_commits"}


def body_ref(text: str) -> dict[str, Any]:
    """A reference as ReferenceBody spells it (create and assign)."""
    if text.startswith("@"):
        return {"type": "DETACHED", "hash": text[1:]}
    name, _, h = text.partition("@")
    return {"type": "BRANCH", "name": name, **({"hash": h} if h else {})}


def merge_from(text: str) -> dict[str, Any]:
    name, _, h = text.partition("@")
    return {"fromRefName": name, **({"fromHash": h} if h else {}), "dryRun": True}


# Request bodies that name a reference or commits, per route.
BODY_REFS: dict[str, Callable[[str], dict[str, Any]]] = {
    "create_reference": body_ref,
    "assign_reference": body_ref,
    "merge": merge_from,
    "restore_keys": lambda text: {"source": text, "dryRun": True,
                                  "keys": [{"elements": ["sales", "orders"]}]},
}
BODY_HASHES: dict[str, Callable[[str], dict[str, Any]]] = {
    "transplant": lambda h: {"hashesToTransplant": [h], "dryRun": True},
    "revert_commits": lambda h: {"commits": [h], "dryRun": True},
}
# Body fields that name a reference or a commit wherever they appear (the
# tables above must cover each route that has one).
BODY_FIELDS = {"from_ref_name", "from_hash", "hashes_to_transplant", "commits", "hash"}


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    params: dict[str, str]
    json: Any = None
    data: dict[str, str] | None = None


@dataclass(frozen=True)
class Slot:
    """One place a route reads a reference (or, ``hashes``, a commit) from."""

    route: str
    method: str
    where: str
    hashes: bool
    make: Callable[[str, Context], Request]


@dataclass(frozen=True)
class Context:
    caller: str
    heads: dict[str, str]

    @property
    def home(self) -> str:
        return HOME[self.caller]

    def at_head(self, name: str) -> str:
        return f"{name}@{self.heads[name]}"


def fill(path: str, values: dict[str, str]) -> str:
    return re.sub(r"{(\w+)(?::path)?}", lambda m: values[m.group(1)], path)


def defaults(r: APIRoute, ctx: Context) -> dict[str, str]:
    ref = ctx.at_head(ctx.home) if r.name in AT_HEAD else ctx.home
    values = {**SAMPLE, "hash": ctx.heads[ctx.home]}
    values.update({p: quote(ref, safe="") for p in REF_PARAMS})
    return values


def query_defaults(r: APIRoute, ctx: Context) -> dict[str, str]:
    out = {"name": "etl/made-here", "type": "BRANCH"} if r.name == "create_reference" else {}
    if r.name.startswith("ui_"):
        out |= {"key": "sales.orders", "source": ctx.home, "branch": ctx.home,
                "from": ctx.home, "into": ctx.home, "to": ctx.home, "ref": ctx.home,
                "commit": ctx.heads[ctx.home], "hash": ctx.heads[ctx.home], "at": "",
                "name": "etl/made-here", "type": "BRANCH"}
    return out


def request_for(r: APIRoute, method: str, ctx: Context, *, path: dict[str, str] | None = None,
                query: dict[str, str] | None = None, body: Any = None,
                prefix: tuple[str, str] | None = None) -> Request:
    """The route's request with the sample values, and the slot's value put in."""
    url = fill(r.path, {**defaults(r, ctx), **(path or {})})
    if url.startswith("/iceberg/v1/"):
        rest = url[len("/iceberg/v1"):]
        spelled, p = prefix or ("prefix", quote(ctx.home, safe="") if ctx.caller != "reader"
                                else "")
        if p:
            url = f"/iceberg/v1/{p}{rest}" if spelled == "prefix" else f"/iceberg/{p}/v1{rest}"
    params = {**query_defaults(r, ctx), **(query or {})}
    if r.name.startswith("ui_") and method == "POST":
        return Request(method, url, {}, data={**params, "hash": ctx.heads[ctx.home],
                                              **(body or {})})
    if method in ("POST", "PUT"):
        return Request(method, url, params if not r.name.startswith("ui_") else {},
                       json=body if body is not None else {})
    return Request(method, url, params)


def slots() -> list[Slot]:
    out: list[Slot] = []
    for r in routes():
        rule = RULES[r.name]
        is_ui = r.name.startswith("ui_")
        if rule.privilege is None and not is_ui:
            continue  # public: config, tokens, probes
        for method in sorted(r.methods):
            def add(where: str, hashes: bool, make: Callable[[str, Context], Request],
                    r: APIRoute = r, method: str = method) -> None:
                out.append(Slot(r.name, method, where, hashes, make))

            if r.path.startswith("/iceberg/v1/") and rule.ref == "iceberg":
                for spelled in ("prefix", "base"):
                    add(spelled, False, lambda t, c, r=r, m=method, s=spelled: request_for(
                        r, m, c, prefix=(s, quote(t, safe=""))))
                for name in ("table", "view"):
                    if "{" + name + "}" in r.path:
                        add(f"{name}@ref", False, lambda t, c, r=r, m=method, n=name:
                            request_for(r, m, c, path={n: quote(f"{SAMPLE[n]}@{t}", safe="")}))
            params = {p.name for p in r.dependant.path_params}
            unknown = params - REF_PARAMS - HASH_PARAMS - set(SAMPLE)
            assert not unknown, f"{r.name}: which path parameters name a reference? {unknown}"
            for p in sorted(params & (REF_PARAMS | HASH_PARAMS)):
                add(p, p in HASH_PARAMS, lambda t, c, r=r, m=method, p=p: request_for(
                    r, m, c, path={p: quote(t, safe="")}))
            names = {q.alias for q in r.dependant.query_params} & REFISH
            listed = set(QUERY_REFS.get(r.name, ())) | set(QUERY_HASHES.get(r.name, ()))
            missing = {q for q in names if (r.name, q) not in NOT_REFS} - listed
            assert not missing, f"{r.name}: query parameters {missing} are not covered"
            forms = FORM_REFS if method == "POST" else QUERY_REFS
            form_hashes = FORM_HASHES if method == "POST" else QUERY_HASHES
            for table, hashes in ((forms, False), (form_hashes, True)):
                for q in table.get(r.name, ()):
                    add(f"?{q}", hashes, lambda t, c, r=r, m=method, q=q: request_for(
                        r, m, c, **({"body": {q: t}} if m == "POST" else {"query": {q: t}})))
            fields = {f for p in r.dependant.body_params
                      for f in getattr(p.field_info.annotation, "model_fields", {})}
            if fields & BODY_FIELDS:
                assert r.name in BODY_REFS or r.name in BODY_HASHES, \
                    f"{r.name}: which body fields name a reference? {fields}"
            for table, hashes in ((BODY_REFS, False), (BODY_HASHES, True)):
                if r.name in table:
                    add("body", hashes, lambda t, c, r=r, m=method, f=table[r.name]:
                        request_for(r, m, c, body=f(t)))
    return out


SLOTS = slots()


# (what, hidden spelling, missing spelling, swaps that turn the one's answer
# into the other's)
Kind = tuple[str, str, str, list[tuple[str, str]]]


def kinds(hidden: Hidden, ctx: Context, hashes: bool) -> list[Kind]:
    """The spellings a slot is asked with, in pairs."""
    h, h8, twin = hidden.commit, hidden.commit[:8], common(hidden.twins)
    if hashes:
        return [("hash", h, UNKNOWN, [(h, UNKNOWN)]), ("prefix", h8, U8, [(h8, U8)]),
                ("shared prefix", twin, U8, [(twin, U8)])]
    name = [("secret", "nosuchbr")]
    return [
        ("name", "secret", "nosuchbr", name),
        ("name@hash", f"secret@{h}", f"nosuchbr@{h}", name),
        ("@hash", f"@{h}", f"@{UNKNOWN}", [(h, UNKNOWN)]),
        ("@prefix", f"@{h8}", f"@{U8}", [(h8, U8)]),
        ("@shared prefix", f"@{twin}", f"@{U8}", [(twin, U8)]),
        ("readable@hash", f"{ctx.home}@{h}", f"{ctx.home}@{UNKNOWN}", [(h, UNKNOWN)]),
        ("name*instant", f"secret*{INSTANT}", f"nosuchbr*{INSTANT}", name),
        ("name~1", "secret~1", "nosuchbr~1", name),
    ]


def common(pair: tuple[str, str]) -> str:
    n = 0
    while pair[0][n] == pair[1][n]:
        n += 1
    return pair[0][:n]


def client(server: Server, who: str) -> httpx.Client:
    people: People = server.people  # type: ignore[attr-defined]
    key = people.keys[who]
    return http_client(base_url=server.base, headers=people.headers(who),
                       cookies={COOKIE: key}, timeout=60, follow_redirects=False)


def send(http: httpx.Client, req: Request) -> httpx.Response:
    return http.request(req.method, req.path, params=req.params, json=req.json, data=req.data)


def shown(r: httpx.Response, swaps: list[tuple[str, str]]) -> tuple[int, str, str]:
    """Status, where it points and body, with the hidden spelling swapped
    for the missing one."""
    text, location = r.text, r.headers.get("location", "")
    for a, b in swaps:
        text, location = text.replace(a, b), location.replace(a, b)
        # The same, as a URL carries it.
        text, location = (text.replace(quote(a, safe=""), quote(b, safe="")),
                          location.replace(quote(a, safe=""), quote(b, safe="")))
    return r.status_code, location, text


def test_the_samples_are_what_they_say(server: Server) -> None:
    hidden: Hidden = server.hidden  # type: ignore[attr-defined]
    admin = client(server, "admin")
    for spec in (f"@{UNKNOWN}", f"@{U8}", "nosuchbr"):
        assert admin.get(f"/api/v2/trees/{quote(spec, safe='')}").status_code == 404, spec
    assert admin.get(f"/api/v2/trees/%40{common(hidden.twins)}").json()["errorCode"] == \
        "BAD_REQUEST"  # ambiguous: two commits share it
    refs = [r["name"] for r in admin.get("/api/v2/trees").json()["references"]]
    for who in CALLERS:
        assert not any(r.startswith("secret") for r in
                       (x["name"] for x in client(server, who).get("/api/v2/trees").json()[
                           "references"])), who
    assert {"secret", "secret/a", "secret/b", "main", "etl/work"} <= set(refs)
    assert len({s.route for s in SLOTS}) >= 70 and len(SLOTS) >= 120


@pytest.mark.parametrize("slot", SLOTS, ids=[f"{s.route}-{s.method}-{s.where}" for s in SLOTS])
def test_hidden_answers_as_missing(server: Server, slot: Slot) -> None:
    hidden: Hidden = server.hidden  # type: ignore[attr-defined]
    differ = []
    for who in CALLERS:
        http = client(server, who)
        ctx = Context(who, hidden.branches)
        for what, secret, missing, swaps in kinds(hidden, ctx, slot.hashes):
            a = send(http, slot.make(secret, ctx))
            b = send(http, slot.make(missing, ctx))
            assert a.status_code < 500 and b.status_code < 500, (a.text, b.text)
            got, want = shown(a, swaps), shown(b, [])
            if got != want:
                differ.append(f"{who} {what}: {secret!r} -> {a.status_code} {a.text[:300]!r}"
                              f"\n    {missing!r} -> {b.status_code} {b.text[:300]!r}")
    assert not differ, "\n".join(differ)


def test_a_prefix_names_only_the_commits_the_caller_sees(server: Server) -> None:
    """A commit on main and one on a hidden branch share a prefix: for
    admin it is ambiguous, for reader it names the one it sees, as though
    the other did not exist."""
    hidden: Hidden = server.hidden  # type: ignore[attr-defined]
    visible, _ = hidden.mixed
    p = common(hidden.mixed)
    r = client(server, "admin").get(f"/api/v2/trees/%40{p}")
    assert r.status_code == 400 and "more than one commit" in r.json()["message"], r.text
    reader = client(server, "reader")
    r = reader.get(f"/api/v2/trees/%40{p}")
    assert r.status_code == 200 and r.json()["reference"]["hash"] == visible, r.text
    for path in (f"/api/v2/trees/%40{p}/entries", f"/iceberg/v1/%40{p}/namespaces/sales",
                 f"/iceberg/%40{p}/v1/namespaces", f"/iceberg/v1/main%40{p}/namespaces"):
        a, b = reader.get(path), reader.get(path.replace(p, visible))
        assert a.status_code == 200 and a.json() == b.json(), (path, a.text, b.text)


def test_what_the_caller_sees_is_still_refused_by_name(server: Server) -> None:
    """Hiding is for what the caller may not read at all: on a reference it
    reads, a write it may not make and a namespace it may not read are 403
    naming the privilege, for a namespace that exists or not."""
    reader = client(server, "reader")
    r = reader.post("/iceberg/v1/namespaces", json={"namespace": ["sales", "x"]})
    assert r.status_code == 403, r.text
    assert r.json()["error"]["message"] == ("Principal 'reader' lacks the 'write' privilege "
                                            "on reference 'main'")
    for ns in ("hr", "hr_nope"):
        r = reader.get(f"/iceberg/v1/namespaces/{ns}")
        assert r.status_code == 403, r.text
        assert r.json()["error"]["message"] == ("Principal 'reader' lacks the 'read' privilege "
                                                f"on reference 'main' in namespace {ns}")
    r = reader.get("/api/v2/trees/main/history")  # the whole log needs read on all of main
    assert r.status_code == 403 and r.json()["errorCode"] == "FORBIDDEN", r.text
