"""Idempotency keys in the store: a key is recorded with its answer in the
transaction of the commit (or reference change) it made, and only then; a
second write with the key lands nothing; expired keys are purged."""

from __future__ import annotations

import time

import pytest

from core.commits import CommitMeta, CommitResult, Put, RefType
from core.conflicts import CommitConflictError
from core.content import Namespace
from store import Store
from store.idempotency import Answer, KeyTakenError, Once
from tests.store.helpers import K, with_ns


def once(key: str = "k1", expires_in_s: float = 60) -> Once:
    def answer(result: object) -> Answer:
        hash_ = result.hash if isinstance(result, CommitResult) else str(result)
        return Answer(200, "application/json", hash_.encode())

    return Once("alice", key, "digest", int((time.time() + expires_in_s) * 1e6), answer)


def _now() -> int:
    return time.time_ns() // 1000


def test_a_commit_records_its_key_and_answer_in_its_transaction(store: Store) -> None:
    with_ns(store, "main", "ns")
    o = once()
    res = store.commit("main", [Put(K("ns.a"), Namespace())], CommitMeta("a"), once=o)
    kept = store.keys.find("alice", "k1", _now())
    assert kept is not None and kept.commit == res.hash
    assert kept.answer == Answer(200, "application/json", res.hash.encode()) == o.recorded
    assert store.keys.find("bob", "k1", _now()) is None  # a key is a principal's


def test_a_second_write_with_the_key_lands_nothing(store: Store) -> None:
    with_ns(store, "main", "ns")
    store.commit("main", [Put(K("ns.a"), Namespace())], CommitMeta("a"), once=once())
    head = store.get_reference("main").hash
    with pytest.raises(KeyTakenError):
        store.commit("main", [Put(K("ns.b"), Namespace())], CommitMeta("b"), once=once())
    assert store.get_reference("main").hash == head
    assert K("ns.b") not in store.lookup("main", [K("ns.b")])[1]
    with pytest.raises(KeyTakenError):
        store.create_reference("work", RefType.BRANCH, "main", once=once())
    assert [r.name for r in store.list_references().items] == ["main"]


def test_a_refused_commit_records_no_key(store: Store) -> None:
    with_ns(store, "main", "ns")
    o = once()
    with pytest.raises(CommitConflictError):
        store.commit("main", [Put(K("ns"), Namespace())], CommitMeta("again"), once=o)
    assert store.keys.find("alice", "k1", _now()) is None and o.recorded is None


def test_reference_changes_record_their_key(store: Store) -> None:
    made = store.create_reference("work", RefType.BRANCH, "main", once=once("c"))
    kept = store.keys.find("alice", "c", _now())
    assert kept is not None and kept.answer.body == str(made).encode()
    store.delete_reference("work", made.hash, once=once("d"))
    assert store.keys.find("alice", "d", _now()) is not None


def test_expired_keys_are_gone_and_purged(store: Store) -> None:
    with_ns(store, "main", "ns")
    store.commit("main", [Put(K("ns.a"), Namespace())], CommitMeta("a"),
                 once=once("old", expires_in_s=-1))
    assert store.keys.find("alice", "old", _now()) is None
    # An expired key may be used again: it is a new request.
    store.commit("main", [Put(K("ns.b"), Namespace())], CommitMeta("b"),
                 once=once("old", expires_in_s=60))
    assert store.keys.find("alice", "old", _now()) is not None
    store.commit("main", [Put(K("ns.c"), Namespace())], CommitMeta("c"),
                 once=once("gone", expires_in_s=-1))
    assert store.keys.purge(_now()) == 1
    assert store.keys.count() == 1


def test_gc_removes_expired_keys(store: Store) -> None:
    from store.gc import collect

    with_ns(store, "main", "ns")
    store.commit("main", [Put(K("ns.a"), Namespace())], CommitMeta("a"),
                 once=once("old", expires_in_s=-1))
    store.commit("main", [Put(K("ns.b"), Namespace())], CommitMeta("b"), once=once("live"))
    assert collect(store, grace_s=0, dry_run=True).expired_keys == 0  # a dry run keeps them
    assert store.keys.count() == 2
    assert collect(store, grace_s=0).expired_keys == 1
    assert store.keys.find("alice", "live", _now()) is not None and store.keys.count() == 1
