"""The catalog's view of retention (catalog.maintenance.retention), called
directly on SQLite and PostgreSQL: a replaced list is checked whole, and what
each reference retains is said as the API, the CLI and the UI show it."""

from __future__ import annotations

import pytest

from catalog.maintenance import retention
from catalog.maintenance.retention import Retains
from core.commits import RefType
from core.errors import InvalidInputError
from core.retention import Policy
from store import Store
from tests.store.helpers import MINUTE, Clock, with_ns


@pytest.fixture
def clock() -> Clock:
    return Clock(step=1)  # never two commits at one instant


def test_a_list_is_checked_whole_before_it_replaces_the_old(store: Store) -> None:
    kept = retention.replace(store, [Policy("main", "P30D", 10), Policy("etl/*", "PT1H")])
    assert kept == retention.get(store) == [Policy("main", "P30D", 10), Policy("etl/*", "PT1H")]
    # The second policy is bad: the first is not written either.
    for bad, named in (([Policy("x", "P1D"), Policy("y", "1 day")], "Invalid duration"),
                       ([Policy("x"), Policy("y z")], "Invalid refs glob 'y z'"),
                       ([Policy("x"), Policy("y", keep_commits=-1)], "Invalid keepCommits -1")):
        with pytest.raises(InvalidInputError, match=named):
            retention.replace(store, bad)
        assert retention.get(store) == kept


def test_what_each_reference_retains(timed: tuple[Store, Clock]) -> None:
    store, clock = timed
    for i in range(4):
        with_ns(store, "main", f"a{i}")
        clock.now += MINUTE
    for name in ("short", "bare", "free"):
        store.create_reference(name, source="main")
    store.create_reference("v1", RefType.TAG, "main")
    retention.replace(store, [Policy("main", "PT90S", 2), Policy("short", keep_commits=100),
                              Policy("bare"), Policy("v*", keep_commits=1)])
    clock.now += 10 * MINUTE
    shown = {r.name: r for r in retention.cutoffs(store, store.list_references().items)}
    # main: 90 seconds keep nothing but the head; two commits reach back to main~1.
    main = shown["main"]
    assert main.retains is Retains.SINCE and main.policy == Policy("main", "PT90S", 2)
    assert main.cutoff == store.log("main").items[1].created_at
    # More commits than the chain holds: all of it, under its policy.
    assert (shown["short"].retains, shown["short"].cutoff) == (Retains.ALL, None)
    assert shown["short"].policy == Policy("short", keep_commits=100)
    # Neither field: its head. No policy: all. A tag: its commit, whatever the globs.
    assert (shown["bare"].retains, shown["bare"].policy) == (Retains.HEAD, Policy("bare"))
    assert (shown["free"].retains, shown["free"].policy) == (Retains.ALL, None)
    assert (shown["v1"].retains, shown["v1"].policy, shown["v1"].type) == \
        (Retains.HEAD, None, RefType.TAG)
    assert retention.cutoffs(store, []) == []
