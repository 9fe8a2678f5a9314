"""A store bound to one caller (``Store.seeing``): a hash prefix names only
the commits the caller sees, as if no other commit existed, for every read
and write it resolves; the store it was made from, and its caches and
connections, are unchanged. The caller's view reaches the store as this
argument (the API binds each request to it: api.deps.services_of), not as
state of the process or of a context. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from core.commits import CommitMeta
from core.errors import AmbiguousHashError, CommitNotFoundError
from store import Store
from tests.store.helpers import put_new, table, with_ns


def _two_sharing_a_prefix(store: Store) -> tuple[str, str, str]:
    """(prefix, a commit on main, one on ``side``) whose hashes share their
    first three hex characters (4096 prefixes: a clash comes quickly)."""
    with_ns(store, "main", "ns")
    store.create_reference("side")
    seen: dict[str, dict[str, str]] = {}
    for i in range(100_000):
        branch = "main" if i % 2 else "side"
        h = put_new(store, branch, (f"ns.t{i}", table(str(i)))).hash
        found = seen.setdefault(h[:3], {})
        found.setdefault(branch, h)
        if len(found) == 2:
            return h[:3], found["main"], found["side"]
    raise AssertionError("no two commits share a prefix")


def test_a_prefix_names_only_the_commits_the_caller_sees(store: Store) -> None:
    prefix, on_main, on_side = _two_sharing_a_prefix(store)
    with pytest.raises(AmbiguousHashError, match=prefix):
        store.full_hash(prefix)
    mains = set(c.hash for c in store.log("main").items)

    def reads_main(h: str) -> bool:
        return h in mains

    scoped = store.seeing(reads_main)
    assert scoped.full_hash(prefix) == on_main
    assert store.seeing(lambda h: h == on_side).full_hash(prefix) == on_side
    with pytest.raises(CommitNotFoundError, match=prefix):
        store.seeing(lambda h: False).full_hash(prefix)
    # The store it was made from still counts every commit.
    with pytest.raises(AmbiguousHashError):
        store.full_hash(prefix)
    # Reads and writes that resolve a prefix resolve it the caller's way.
    assert scoped.log(page_token=None, spec=f"@{on_main[:12]}").items[0].hash == on_main
    head = store.get_reference("main").hash
    landed = scoped.commit("main", [], CommitMeta("empty, on the head it names"),
                           expected_hash=head[:12])
    # Seen by everyone: one store underneath.
    assert store.get_reference("main").hash == landed.hash
    assert scoped.get_reference("main").hash == landed.hash


def test_a_bound_store_writes_through_the_same_connections(store: Store) -> None:
    with_ns(store, "main", "ns")
    scoped = store.seeing(lambda h: True)
    landed = put_new(scoped, "main", ("ns.t", table("x")))
    assert store.get_reference("main").hash == landed.hash
    assert [e.key for e in store.entries("main").items][-1].elements == ("ns", "t")
    assert scoped.db is store.db and scoped.reader is store.reader and scoped.writer is store.writer
    assert store.sees is None and scoped.sees is not None
