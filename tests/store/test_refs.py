import time
from datetime import UTC, datetime, timedelta

import pytest

from core.commits import NO_ANCESTOR, RefType
from core.errors import (
    AmbiguousHashError,
    CommitNotFoundError,
    InvalidHashError,
    InvalidRefError,
    NoSuchRefAtInstantError,
    ProtectedReferenceError,
    ReferenceAlreadyExistsError,
    ReferenceConflictError,
    ReferenceNotFoundError,
)
from core.instants import format_instant
from store import Store
from tests.store.helpers import K, put_new, table, update, with_ns


def _tick() -> datetime:
    """An instant strictly between what happened before and what comes next."""
    time.sleep(0.003)
    t = datetime.now(UTC)
    time.sleep(0.003)
    return t


def test_create_assign_delete_with_reflog(store: Store):
    with_ns(store, "main", "ns")
    main = store.get_reference("main")
    dev = store.create_reference("dev", principal="bob")
    assert (dev.type, dev.hash) == (RefType.BRANCH, main.hash)
    with pytest.raises(ReferenceAlreadyExistsError, match="'dev'"):
        store.create_reference("dev")
    tag = store.create_reference("v1", RefType.TAG, source=f"main@{main.hash[:10]}")
    assert tag.hash == main.hash
    put_new(store, "dev", ("ns.t", table("x")))
    dev_head = store.get_reference("dev").hash
    with pytest.raises(ReferenceConflictError) as ei:
        store.assign_reference("v1", expected_hash=dev_head, target="dev")
    assert ei.value.actual == main.hash
    store.assign_reference("v1", expected_hash=main.hash, target="dev", principal="bob")
    assert store.get_reference("v1").hash == dev_head
    with pytest.raises(ReferenceConflictError):
        store.delete_reference("dev", expected_hash=main.hash)
    store.delete_reference("dev", expected_hash=dev_head, principal="bob")
    with pytest.raises(ReferenceNotFoundError):
        store.get_reference("dev")
    log = store.reflog("dev")
    assert [(e.reason, e.principal) for e in log] == [("delete", "bob"), ("commit", None),
                                                      ("create", "bob")]
    assert log[0].new_hash is None and log[0].old_hash == dev_head
    assert [r.name for r in store.list_references().items] == ["main", "v1"]


def test_main_cannot_be_deleted(store: Store):
    with pytest.raises(ProtectedReferenceError, match="main"):
        store.delete_reference("main", expected_hash=NO_ANCESTOR)
    assert store.get_reference("main").hash == NO_ANCESTOR


def test_bad_names_and_unknown_sources_create_nothing(store: Store):
    for bad in ("", "1x", "a..b", "x/", "a b"):
        with pytest.raises(InvalidRefError):
            store.create_reference(bad)
    with pytest.raises(CommitNotFoundError):
        store.create_reference("x", source="@" + "ab" * 32)
    assert [r.name for r in store.list_references().items] == ["main"]
    assert store.reflog("x") == []


def test_list_references_pages(store: Store):
    for i in range(5):
        store.create_reference(f"b{i}")
    names, token = [], None
    while True:
        page = store.list_references(page_token=token, page_size=2)
        names += [r.name for r in page.items]
        token = page.next_token
        if not token:
            break
    assert names == ["b0", "b1", "b2", "b3", "b4", "main"]


def test_instant_resolves_through_the_reflog(store: Store):
    before_dev = _tick()
    with_ns(store, "main", "ns")
    store.create_reference("dev")
    t0 = _tick()
    h1 = put_new(store, "dev", ("ns.t", table("one"))).hash
    t1 = _tick()
    h2 = update(store, "dev", "ns.t", metadata_location="two").hash
    t2 = _tick()
    assert store.resolve(f"dev*{format_instant(t1)}").hash == h1
    assert store.resolve(f"dev*{format_instant(t2)}").hash == h2
    ms = int(t1.timestamp() * 1000)
    assert store.resolve(f"dev*{ms}").hash == h1
    assert store.content(f"dev*{format_instant(t1)}", K("ns.t")).metadata_location == "one"
    assert store.contents(f"dev*{format_instant(t0)}", [K("ns.t")]) == {}
    with pytest.raises(NoSuchRefAtInstantError, match="no such ref 'dev' at"):
        store.resolve(f"dev*{format_instant(before_dev)}")
    # A reset (assign) is a head change too.
    store.assign_reference("dev", h2, f"dev@{h1}")
    t3 = _tick()
    assert store.resolve(f"dev*{format_instant(t3)}").hash == h1
    # A deleted ref can still be read as of when it existed.
    store.delete_reference("dev", h1)
    assert store.resolve(f"dev*{format_instant(t2)}").hash == h2
    with pytest.raises(NoSuchRefAtInstantError, match="deleted"):
        store.resolve(f"dev*{format_instant(_tick())}")


def test_relative_parts_and_hash_prefixes(store: Store):
    with_ns(store, "main", "ns")
    hashes = [put_new(store, "main", (f"ns.t{i}", table(str(i)))).hash for i in range(4)]
    assert store.resolve("main").hash == hashes[-1]
    assert store.resolve("main~2").hash == hashes[1]
    assert store.resolve("main~1~1").hash == hashes[1]
    assert store.resolve("main^1").hash == hashes[2]
    assert store.resolve(f"@{hashes[0][:8]}").hash == hashes[0]
    assert store.resolve(f"main@{hashes[2]}~1").hash == hashes[1]
    assert not store.resolve(f"@{hashes[0]}").writable
    assert store.resolve("main").writable
    with pytest.raises(CommitNotFoundError, match="fewer than 50 ancestors"):
        store.resolve("main~50")
    with pytest.raises(CommitNotFoundError, match="no parent #2"):
        store.resolve("main^2")
    with pytest.raises(CommitNotFoundError, match="no commit hash starts with"):
        store.resolve("@ffffffff0")
    with pytest.raises(InvalidHashError):
        store.resolve("main@xyz")
    # *T after a hash walks first parents by commit time.
    t = store.log("main").items[1].created_at
    assert store.resolve(f"main*{format_instant(t + timedelta(microseconds=1))}~0").hash \
        == hashes[-2]
    assert store.resolve(f"@{hashes[-1]}*{format_instant(t)}").hash == hashes[-2]


def test_ambiguous_hash_prefix(store: Store):
    with_ns(store, "main", "ns")
    seen: dict[str, str] = {}
    i = 0
    while True:  # 4096 prefixes of 3 hex chars: a clash comes quickly
        h = put_new(store, "main", (f"ns.t{i}", table(str(i)))).hash
        i += 1
        if h[:3] in seen:
            break
        seen[h[:3]] = h
    prefix = h[:3]
    # The grammar never lets a prefix this short through; the store's own
    # lookup still has to tell "two matches" from one.
    with pytest.raises(AmbiguousHashError, match=prefix):
        store.full_hash(prefix)
    assert store.full_hash(h[:12]) == h
    with pytest.raises(InvalidHashError, match="8 to 64"):
        store.resolve(f"@{prefix}")
