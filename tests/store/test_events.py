"""The change feed's outbox (store.events): one event per landed change,
written in its transaction, read in an order that only grows and has no
hole a later event could fill — also with writers racing on PostgreSQL."""

from __future__ import annotations

import threading

import pytest

from core.commits import CommitMeta, Delete, Put, RefType
from core.conflicts import CommitConflictError
from store import Store
from tests.store.helpers import K, put_new, table, with_ns


def _all(store: Store, page: int = 3) -> list:
    out, after, more = [], 0, True
    while more:
        events, more = store.events.page(after, page)
        out += events
        if events:
            after = events[-1].seq
    return out


def test_one_event_per_change_and_none_for_a_refused_one(store: Store) -> None:
    with_ns(store, "main", "ns")
    put_new(store, "main", ("ns.t", table("m1")))
    store.create_reference("dev")
    put_new(store, "dev", ("ns.u", table("d1")), msg="on dev")
    t = store.content("main", K("ns.t"))
    with pytest.raises(CommitConflictError):  # refused by the commit rules: no event
        store.commit("main", [Put(K("ns.t"), table("x"))], CommitMeta("clash"))
    store.merge("dev", "main")
    store.commit("main", [Delete(K("ns.t"), expected=t)], CommitMeta("drop t"))
    head = store.get_reference("main").hash
    store.create_reference("v1", RefType.TAG, "main")
    store.assign_reference("dev", store.get_reference("dev").hash, "main")
    store.delete_reference("v1", head)
    events = _all(store)
    assert [e.kind for e in events] == [
        "reference.created", "commit", "commit", "reference.created", "commit", "merge",
        "commit", "reference.created", "reference.assigned", "reference.deleted"]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    on_dev = events[4]
    assert on_dev.ref == "dev" and on_dev.data["commits"][0]["message"] == "on dev"
    (op,) = on_dev.data["commits"][0]["operations"]
    assert op["key"] == ["ns", "u"] and op["op"] == "PUT" and op["type"] == "ICEBERG_TABLE"
    assert op["id"] == store.content("dev", K("ns.u")).id
    dropped = events[6].data["commits"][0]["operations"]
    assert dropped == [{"key": ["ns", "t"], "op": "DELETE"}]
    # The reflog and the feed agree one for one.
    moves = [(r.ref, r.old_hash, r.new_hash) for name in ("main", "dev", "v1")
             for r in store.reflog(name, 100)]
    assert sorted(moves, key=str) == sorted(
        [(e.ref, e.old_hash, e.new_hash) for e in events], key=str)
    # Filters, and paging from a cursor.
    commits, more = store.events.page(0, 100, kinds=["commit"], refs=["main"])
    assert [e.kind for e in commits] == ["commit"] * 3 and not more
    assert store.events.page(events[-1].seq, 10) == ([], False)
    assert store.events.last() == events[-1].seq


def test_retention_keeps_the_newest(store: Store) -> None:
    with_ns(store, "main", "ns")
    last = store.events.last()
    assert store.events.purge(10**18) == last - 1
    assert [e.seq for e in _all(store)] == [last]
    put_new(store, "main", ("ns.t", table("m1")))
    assert [e.seq for e in _all(store)] == [last, last + 1]  # numbering goes on


def test_racing_writers_never_show_a_later_event_first(store_url: str) -> None:
    """Writers on four branches while a reader follows the feed: every event
    is read once, in increasing order, and the pages read while they ran
    equal the feed read afterwards."""
    stores = [Store(store_url) for _ in range(5)]
    try:
        with_ns(stores[0], "main", "ns")
        for i in range(4):
            stores[0].create_reference(f"b{i}")
        stop = threading.Event()
        errors: list[BaseException] = []

        def write(i: int) -> None:
            try:
                for n in range(25):
                    put_new(stores[i], f"b{i}", (f"ns.t{i}_{n}", table(f"{i}/{n}")))
            except BaseException as e:
                errors.append(e)

        seen: list[int] = []

        def follow() -> None:
            after = 0
            while True:
                # Read before asking: a page read after the writers stopped
                # is the last one (an empty page read before it is not).
                done = stop.is_set()
                events, _ = stores[4].events.page(after, 7)
                seen.extend(e.seq for e in events)
                if events:
                    after = events[-1].seq
                elif done:
                    return

        threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
        reader = threading.Thread(target=follow)
        reader.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        reader.join(timeout=60)
        assert not errors, errors
        final = [e.seq for e in _all(stores[0], 50)]
        assert seen == final == list(range(1, len(final) + 1))
        assert len(final) == 1 + 1 + 4 + 100  # main, namespaces, branches, commits
    finally:
        for s in stores:
            s.close()


def test_gc_removes_events_past_their_retention(store: Store) -> None:
    from store.gc import collect

    with_ns(store, "main", "ns")
    put_new(store, "main", ("ns.t", table("m1")))
    last = store.events.last()
    assert collect(store, grace_s=0, event_retention_s=3600).expired_events == 0
    report = collect(store, grace_s=0, now_us=10**18, event_retention_s=3600)
    assert report.expired_events == last - 1 and "events past their retention" in str(report)
    assert [e.seq for e in store.events.page(0, 10)[0]] == [last]


def test_a_window_counts_stored_events_and_names_their_references(store: Store) -> None:
    """A page's stretch of the feed (``window``) is a number of stored
    events, wherever retention left the numbering; ``refs_between`` names
    each reference in it once."""
    with_ns(store, "main", "ns")
    store.create_reference("dev")
    for i in range(3):
        put_new(store, "dev" if i % 2 else "main", (f"ns.t{i}", table(f"m{i}")))
    last = store.events.last()
    assert last == 6
    assert store.events.window(0, 4) == (4, True)
    assert store.events.window(4, 2) == (6, False)
    assert store.events.window(4, 5) == (6, False)
    assert store.events.window(last, 5) == (last, False)
    assert sorted(store.events.refs_between(0, last)) == ["dev", "main"]
    assert store.events.refs_between(0, last, kinds=["reference.created"],
                                     refs=["dev"]) == ["dev"]
    assert store.events.refs_between(4, 4) == []
    # Only the events up to the window's end are read, with the filters.
    events, more = store.events.page(0, 10, refs=["main"], until=4)
    assert [e.seq for e in events] == [1, 2, 4] and not more
    # Retention removes the oldest: a stretch still holds that many events.
    store.events.purge(10**18)
    assert store.events.window(0, 4) == (last, False)
