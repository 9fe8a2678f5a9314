"""Which commits a read may still name, found through the cutoff index
(issue 43, defect 11): the references that could retain a commit are
looked up, not walked. The answers are the rules' (store.retention's cutoff
of every reference and of every branch deleted within gc's grace, tried one
by one: ``_walk`` below) for every commit of a catalog with branches under
every kind of policy, tags, forks, a merge, a reset and deleted branches,
while the policies change and references come and go; a check examines a
handful of references out of thousands; a refusal names only the reference
the reader named; a catalog written before the index gets it filled.
SQLite and PostgreSQL (store_url)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import text

from core.commits import CommitMeta, RefType
from core.errors import HistoryExpiredError
from core.retention import Policy, parse_duration, policy_of
from store import Store
from store.retention import grace_setting
from tests.store.helpers import MINUTE, Clock, put_new, table, with_ns

DAY = 24 * 60 * MINUTE


def _walk(store: Store, h: str) -> bool:
    """The rules, over every reference and every branch deleted within
    gc's grace period (what a check answered before the index)."""
    r = store.retention
    items = r.policies()
    if not items:
        return True
    now = r.clock()
    me = r.changes.ancestry([h])[h]
    return any(r.retained_by(h, r.cutoff(head, items, now), me)
               for head in r.candidates(grace_setting()))


def _checked(store: Store, h: str) -> bool:
    try:
        store.retention.check(h)
    except HistoryExpiredError:
        return False
    return True


def _all_commits(store: Store) -> list[str]:
    with store.db.read() as conn:
        return [h for (h,) in conn.execute(text("SELECT hash FROM commits ORDER BY hash"))]


def _classes(store: Store) -> dict[str, tuple[int, int, int | None]]:
    """Each reference's (head depth, newest commits kept, keep in µs) as
    the policies and its head say."""
    items = store.retention.policies()
    out: dict[str, tuple[int, int, int | None]] = {}
    for head in store.retention.heads():
        p = policy_of(items, head.name) if head.type is RefType.BRANCH else None
        depth = store.changes.ancestry([head.hash])[head.hash].depth
        if head.type is RefType.TAG:
            out[head.name] = (depth, 1, None)
        elif p is None:
            out[head.name] = (depth, 2**62, None)
        else:
            keep = int(parse_duration(p.keep) * 1_000_000) if p.keep else None
            out[head.name] = (depth, p.keep_commits or 1, keep)
    return out


def _same_as_the_walk(store: Store) -> tuple[int, int]:
    """Every commit's answer, against the walk's, and the index as the
    policies and heads say; (retained, expired)."""
    with store.db.read() as conn:
        stored = {r.name: (r.head_depth, r.keep_commits, r.keep_us) for r in conn.execute(
            text("SELECT name, head_depth, keep_commits, keep_us FROM refs"))}
    assert stored == _classes(store)
    answers = {h: _checked(store, h) for h in _all_commits(store)}
    assert answers == {h: _walk(store, h) for h in answers}
    kept = sum(answers.values())
    return kept, len(answers) - kept


def _commits(store: Store, clock: Clock, branch: str, n: int, tag: str) -> list[str]:
    out = []
    for i in range(n):
        clock.tick()
        out.append(put_new(store, branch, (f"ns.{tag}{i}", table(f"{tag}{i}"))).hash)
    return out


POLICY_LISTS: list[list[Policy]] = [
    [Policy("main", "PT5M")],
    [Policy("etl/*", keep_commits=2), Policy("main", "PT5M", 3)],
    [Policy("*")],  # only heads
    [Policy("keep", keep_commits=1), Policy("*", "PT30M")],
    [Policy("etl/a", "PT4M", 1), Policy("etl/*", "PT1M"), Policy("gone", keep_commits=2)],
    [],
]


def test_a_check_answers_as_the_walk_over_every_reference(
        timed: tuple[Store, Clock]) -> None:
    store, clock = timed
    with_ns(store, "main", "ns")
    main = _commits(store, clock, "main", 12, "m")
    store.create_reference("etl/a", source=f"main@{main[3]}")
    _commits(store, clock, "etl/a", 4, "a")
    store.create_reference("keep", source=f"main@{main[1]}")
    _commits(store, clock, "keep", 5, "k")
    store.create_reference("v1", RefType.TAG, f"main@{main[6]}")
    store.create_reference("etl/b", source="main")
    _commits(store, clock, "etl/b", 3, "b")
    store.merge("etl/b", "main")
    store.create_reference("gone", source=f"main@{main[8]}")
    gone = _commits(store, clock, "gone", 2, "g")
    store.delete_reference("gone", gone[-1])  # within gc's grace: retains its history
    store.create_reference("old", source=f"main@{main[2]}")
    old = _commits(store, clock, "old", 2, "o")
    store.delete_reference("old", old[-1])
    store.create_reference("reset", source="main")
    _commits(store, clock, "reset", 2, "r")
    head = store.get_reference("reset").hash
    store.assign_reference("reset", head, f"main@{main[5]}")  # back to an older commit
    clock.tick(2 * MINUTE)
    for items in POLICY_LISTS:
        store.retention.replace(items)
        kept, expired = _same_as_the_walk(store)
        assert kept and (expired or not items), items
    # References made and deleted under a list, and time passing.
    store.retention.replace(POLICY_LISTS[1])
    store.create_reference("etl/late", source=f"main@{main[4]}")
    _commits(store, clock, "etl/late", 3, "l")
    store.create_reference("gone", source="main")  # made again: the old one retains nothing
    _same_as_the_walk(store)
    clock.tick(3 * DAY)
    head = store.get_reference("etl/late").hash
    store.delete_reference("etl/late", head)
    _same_as_the_walk(store)
    clock.tick(8 * DAY)  # past gc's grace for every deletion
    for items in POLICY_LISTS:
        store.retention.replace(items)
        _same_as_the_walk(store)


def _counting(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The references a check tries (each costs a chain test)."""
    tried: list[str] = []
    real: Callable[..., bool] = store.retention.retained_by

    def retained_by(h: str, cut: Any, me: Any = None) -> bool:
        tried.append(cut.ref.name)
        return real(h, cut, me)

    monkeypatch.setattr(store.retention, "retained_by", retained_by)
    return tried


def test_a_check_tries_a_few_references_out_of_thousands(
        timed: tuple[Store, Clock], monkeypatch: pytest.MonkeyPatch) -> None:
    store, clock = timed
    with_ns(store, "main", "ns")
    main = _commits(store, clock, "main", 10, "m")
    # Tags and branches without a policy whose heads lie before the expired
    # commit, and branches whose policy keeps less than its age.
    for i in range(400):
        store.create_reference(f"t/{i:04}", RefType.TAG, f"main@{main[i % 4]}")
        store.create_reference(f"all/{i:04}", source=f"main@{main[i % 4]}")
        store.create_reference(f"ci/{i:04}", source="main")
    store.create_reference("keep", source="main")
    clock.tick(DAY)
    _commits(store, clock, "keep", 2, "k")
    store.retention.replace([Policy("ci/*", "PT1H"), Policy("*", "PT2H", 3)])
    tried = _counting(store, monkeypatch)
    with pytest.raises(HistoryExpiredError):
        store.resolve("main~4")  # main[5]: past main's newest 3 and 2 hours
    assert len(tried) <= 5, tried[:20]
    tried.clear()
    with pytest.raises(HistoryExpiredError):
        store.resolve(f"@{main[6]}")
    assert len(tried) <= 5, tried[:20]
    # A commit a policy-less branch retains: found as quickly.
    store.retention.replace([Policy("ci/*", "PT1H"), Policy("[!a]*", "PT2H", 3)])
    tried.clear()
    assert store.resolve(f"main@{main[2]}").hash == main[2]
    assert len(tried) <= 5, tried[:20]


def test_a_refusal_names_only_the_reference_the_reader_named(
        timed: tuple[Store, Clock]) -> None:
    store, clock = timed
    with_ns(store, "main", "ns")
    store.create_reference("etl/secret", source="main")
    made = _commits(store, clock, "etl/secret", 5, "s")
    store.create_reference("etl/open", source="main")
    clock.tick(DAY)
    store.retention.replace([Policy("etl/*", "PT1H")])
    with pytest.raises(HistoryExpiredError) as e:
        store.resolve(f"@{made[1]}")
    msg = str(e.value)
    assert "etl/secret" not in msg and "past every reference's retention" in msg, msg
    with pytest.raises(HistoryExpiredError) as e:
        store.resolve(f"etl/open@{made[1]}")
    assert "etl/secret" not in str(e.value), str(e.value)
    with pytest.raises(HistoryExpiredError, match="retention of 'etl/secret'"):
        store.resolve("etl/secret~2")


def test_a_catalog_written_before_the_index_gets_it_filled(store_url: str) -> None:
    from tests.store.test_migrations import drop_cutoff_index

    clock = Clock()
    s = Store(store_url, clock=clock)
    try:
        with_ns(s, "main", "ns")
        main = _commits(s, clock, "main", 6, "m")
        s.create_reference("etl/a", source=f"main@{main[1]}")
        _commits(s, clock, "etl/a", 3, "a")
        s.create_reference("v1", RefType.TAG, f"main@{main[2]}")
        s.create_reference("gone", source=f"main@{main[3]}")
        gone = _commits(s, clock, "gone", 2, "g")
        s.delete_reference("gone", gone[-1])
        s.commit("main", [], CommitMeta("empty"))
        s.retention.replace([Policy("etl/*", keep_commits=1), Policy("main", "PT2M")])
        with s.db.write() as conn:  # back to revision 0010
            conn.execute(text("DROP TABLE imported_commits"))  # 0013's
            conn.execute(text("ALTER TABLE idempotency DROP COLUMN headers"))  # 0012's
            drop_cutoff_index(conn)
            conn.execute(text("UPDATE alembic_version SET version_num = '0010'"))
    finally:
        s.close()
    s = Store(store_url, clock=clock)
    try:
        with s.db.read() as conn:
            assert conn.execute(text("SELECT name FROM deleted_refs")).scalars().all() == [
                "gone"]
        kept, expired = _same_as_the_walk(s)
        assert kept and expired
        assert _checked(s, gone[0])  # the deleted branch still retains its history
    finally:
        s.close()
