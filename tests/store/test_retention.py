"""Retention policies in the store: the list, and which commits a read may
still name (issue 35). Both backends (store_url: SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from core.commits import RefType
from core.errors import HistoryExpiredError, InvalidInputError
from core.retention import Policy, parse_duration, policy
from store import Store
from tests.store.helpers import MINUTE, Clock, put_new, table, with_ns


def _commits(store: Store, clock: Clock, branch: str, n: int, prefix: str) -> list[str]:
    out = []
    for i in range(n):
        clock.tick()
        out.append(put_new(store, branch, (f"ns.{prefix}{i}", table(f"{prefix}{i}"))).hash)
    return out


def test_durations_globs_and_counts_are_checked() -> None:
    assert parse_duration("P30D") == 30 * 86_400
    assert parse_duration("PT2S") == 2 and parse_duration("PT1.5S") == 1.5
    assert parse_duration("P1DT2H30M") == 86_400 + 2 * 3600 + 30 * 60
    assert parse_duration("P2W") == 14 * 86_400
    for bad in ("30d", "P", "PT", "P1Y", "P1M", "P1DT", "-P1D", "P1W2D", ""):
        with pytest.raises(InvalidInputError, match="Invalid duration"):
            parse_duration(bad)
    with pytest.raises(InvalidInputError, match="not closed"):
        policy("etl/[ab", "P1D")
    with pytest.raises(InvalidInputError, match="no spaces"):
        policy("etl *", "P1D")
    with pytest.raises(InvalidInputError, match="keepCommits"):
        policy("main", keep_commits=0)
    assert policy("etl/*", keep_commits=3).matches("etl/a/b")


def test_the_list_is_replaced_whole_and_read_in_order(store: Store) -> None:
    assert store.retention.policies() == []
    items = [Policy("main", "P90D", 10), Policy("etl/*", "P7D"), Policy("*", None, 5)]
    store.retention.replace(items)
    assert store.retention.policies() == items
    with pytest.raises(InvalidInputError, match="listed twice"):
        store.retention.replace([Policy("main", "P1D"), Policy("main", "P2D")])
    assert store.retention.policies() == items  # a refused list changed nothing
    store.retention.replace([])
    assert store.retention.policies() == []


def test_without_policies_every_commit_reads(timed: tuple[Store, Clock]) -> None:
    store, clock = timed
    with_ns(store, "main", "ns")
    first = _commits(store, clock, "main", 3, "t")[0]
    clock.tick(10**12)
    assert store.resolve(f"@{first}").hash == first
    assert store.resolve("main~3").hash


def test_a_branch_keeps_what_its_policy_says_and_others_keep_theirs(
        timed: tuple[Store, Clock]) -> None:
    store, clock = timed
    with_ns(store, "main", "ns")
    early = _commits(store, clock, "main", 3, "a")        # minutes 1-3
    store.create_reference("keep", source="main")          # keep: made on early[-1]
    late = _commits(store, clock, "main", 3, "b")          # minutes 4-6
    store.create_reference("v1", RefType.TAG, f"main@{late[0]}")
    store.retention.replace([Policy("main", "PT150S")])    # 2.5 minutes
    clock.tick(MINUTE // 2)                                # now: minute 6.5
    # Within the window (made at or after minute 4): readable.
    assert store.resolve("main~1").hash == late[1]
    assert store.resolve(f"main@{late[1]}").hash == late[1]
    # Past it on main, but the branch keep (no policy: all of its history) holds it.
    assert store.resolve(f"@{early[1]}").hash == early[1]
    assert store.resolve("keep~1").hash == early[1]
    # The tag retains its own commit, not the ones before it.
    assert store.resolve("v1").hash == late[0]
    assert store.resolve(f"@{late[0]}").hash == late[0]
    # main~3 is early[-1] (keep's head): retained by keep.
    assert store.resolve("main~3").hash == early[-1]
    # Past every reference: refused, naming the policy and the cutoff.
    with_ns(store, "keep", "other")                        # keep moves on, off main's chain
    store.retention.replace([Policy("main", "PT150S"), Policy("keep", keep_commits=1)])
    with pytest.raises(HistoryExpiredError) as e:
        store.resolve("main~4")
    msg = str(e.value)
    assert f"Commit {early[1][:12]}" in msg and "retention of 'main'" in msg, msg
    assert "policy 'main' (keep PT150S)" in msg and "2027-01-15T" in msg, msg
    # keep now retains only its head: its old commits went with main's.
    with pytest.raises(HistoryExpiredError, match="retention of 'keep'"):
        store.resolve("keep~1")
    # The head itself always reads, whatever the policy.
    store.retention.replace([Policy("*")])
    assert store.resolve("main").hash == store.get_reference("main").hash


def test_the_newest_commits_count_when_they_reach_further_back(
        timed: tuple[Store, Clock]) -> None:
    store, clock = timed
    with_ns(store, "main", "ns")
    made = _commits(store, clock, "main", 5, "c")
    clock.tick(10 * MINUTE)
    # One second of time keeps nothing but the head; four commits keep four.
    store.retention.replace([Policy("ma*", "PT1S", 4)])
    assert store.resolve("main~3").hash == made[1]
    with pytest.raises(HistoryExpiredError, match="keep the newest 4 commits"):
        store.resolve("main~4")
    # An instant before the cutoff is refused like a hash (made[0] is at 08:01).
    assert store.resolve("main*2027-01-15T08:02:30Z").hash == made[1]
    with pytest.raises(HistoryExpiredError):
        store.resolve("main*2027-01-15T08:01:30Z")
