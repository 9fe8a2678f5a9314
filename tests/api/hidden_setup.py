"""The catalog of issue 34's probe, for the tests of what a caller may not
read: who holds what, and what is there.

* ``admin`` holds every privilege; ``reader`` reads namespace ``sales`` of
  ``main``; ``nsw`` reads and writes namespace ``sales`` of ``etl/work``;
  ``mover`` reads ``sales`` of ``main`` and does everything on ``etl/*``
  (so that a request's own rule lets it through to the references its body
  or second path segment names); ``peer`` reads ``sales`` of ``etl/work``
  and writes only ``ops`` there.
* ``main`` holds ``sales.orders``, ``hr.salaries`` and views over each;
  ``etl/work`` and ``secret`` branch from it. ``secret`` has commits of its
  own (``Hidden.commit``), and so have ``secret/a`` and ``secret/b``, whose
  heads share their first 8 hex characters (``Hidden.twins``); a commit on
  ``main`` shares its first 8 with one on ``secret/c`` (``Hidden.mixed``).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import httpx

from core.commits import CommitMeta, RefType
from store import Store
from store.writes import commit_digest
from tests.api import spark_bodies as sb
from tests.api.auth_setup import People, with_principals
from tests.http import http_client
from tests.server import Server

V1 = "/iceberg/v1"
EVERYTHING = ("read", "write", "create-reference", "delete-reference", "merge-into",
              "manage-grants", "impersonate")
GRANTS: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "admin": [(p, "*", ()) for p in EVERYTHING],
    "reader": [("read", "main", ("sales",))],
    "nsw": [("read", "etl/work", ("sales",)), ("write", "etl/work", ("sales",))],
    "mover": [("read", "main", ("sales",)),
              *[(p, "etl/*", ()) for p in EVERYTHING if p != "manage-grants"]],
    "peer": [("read", "etl/work", ("sales",)), ("write", "etl/work", ("ops",))],
}


@dataclass
class Hidden:
    """What the probe's catalog holds that the tests name."""

    commit: str = ""  # the head of 'secret': a commit only 'secret' holds
    parent: str = ""  # its parent, only on 'secret' too
    twins: tuple[str, str] = ("", "")  # heads of secret/a and secret/b
    mixed: tuple[str, str] = ("", "")  # a commit on main, and one on secret/c
    branches: dict[str, str] = field(default_factory=dict)  # heads by name


def set_up(url: str) -> People:
    return with_principals(url, GRANTS)


def build(server: Server) -> Hidden:
    people: People = server.people  # type: ignore[attr-defined]
    admin = http_client(base_url=server.base, headers=people.headers("admin"), timeout=30)

    def ok(r: httpx.Response) -> httpx.Response:
        assert r.status_code == 200, r.text
        return r

    for ns in ("sales", "hr"):
        ok(admin.post(f"{V1}/namespaces", json={"namespace": [ns]}))
    ok(admin.post(f"{V1}/namespaces/sales/tables", json=sb.create_table("orders")))
    ok(admin.post(f"{V1}/namespaces/hr/tables", json=sb.create_table("salaries")))
    ok(admin.post(f"{V1}/namespaces/sales/views",
                  json=sb.create_view("v_orders", "SELECT id, name FROM sales.orders")))
    ok(admin.post(f"{V1}/namespaces/hr/views",
                  json=sb.create_view("v_salaries", "SELECT id, name FROM hr.salaries")))
    for branch in ("etl/work", "secret"):
        ok(admin.post("/api/v2/trees", params={"name": branch, "type": "BRANCH"},
                      json={"type": "BRANCH", "name": "main"}))
    for ns in ("s_one", "s_two"):
        ok(admin.post("/iceberg/v1/secret/namespaces", json={"namespace": [ns]}))
    hidden = Hidden()
    hidden.commit = ok(admin.get("/api/v2/trees/secret")).json()["reference"]["hash"]
    hidden.parent = ok(admin.get("/api/v2/trees/secret~1")).json()["reference"]["hash"]
    store = Store(server.database_url)
    try:
        for name in ("secret/a", "secret/b"):
            store.create_reference(name, RefType.BRANCH, "secret", "admin")
        hidden.twins = twin_commits(server.database_url, ("secret/a", "secret/b"))
        store.create_reference("secret/c", RefType.BRANCH, "main", "admin")
        hidden.mixed = twin_commits(server.database_url, ("main", "secret/c"))
        hidden.branches = {r.name: r.hash for r in store.list_references(None, 1000).items}
    finally:
        store.close()
    return hidden


def twin_commits(url: str, branches: tuple[str, str]) -> tuple[str, str]:
    """One new commit on each of two branches with the same head, whose
    hashes share their first 8 hex characters (a commit's hash covers its
    message: a birthday search over messages finds two in about 2^16
    tries). Each is an empty commit."""
    now = time.time_ns() // 1000
    fixed = Store(url, clock=lambda: now)
    try:
        head = fixed.get_reference(branches[0]).hash
        assert fixed.get_reference(branches[1]).hash == head
        # One commit as the two will be but for the message, on a branch
        # made for it and deleted: what the hash covers besides the message.
        fixed.create_reference("twin-probe", RefType.BRANCH, f"@{head}", "admin")
        probe = fixed.reader.commit(fixed.commit("twin-probe", [], CommitMeta("probe"),
                                                 principal="admin").hash)
        fixed.delete_reference("twin-probe", probe.hash)

        def digest(message: str) -> str:
            return commit_digest(probe.parents, probe.root[0] if probe.root else None,
                                 probe.depth, probe.created_us, probe.author, probe.committer,
                                 message, [], [])

        assert digest("probe") == probe.hash
        seen: dict[str, str] = {}
        for i in itertools.count():
            message = f"twin {i}"
            first = seen.setdefault(digest(message)[:8], message)
            if first != message:
                break
        made = tuple(fixed.commit(b, [], CommitMeta(m), expected_hash=head,
                                  principal="admin").hash
                     for b, m in zip(branches, (first, message), strict=True))
    finally:
        fixed.close()
    assert made[0][:8] == made[1][:8] and made[0] != made[1], made
    return made[0], made[1]
