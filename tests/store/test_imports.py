"""The store's import path (store.imports; issue 47), on SQLite and
PostgreSQL: commits land with the parents, times, authors and contents they
are given — a merge with both parents, a time at or before the first
parent's moved to it plus 1 µs — a batch whole or not at all, with the
imported_commits rows that map the source's hashes; a reference moved
through its chain answers ``name*T`` with the commit of its chain made at or
before T, as the source did; a new catalog's main takes the source's
creation time; and gc, fsck, logs, audits by content and retention treat the
history like any written by commits."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from core.commits import NO_ANCESTOR, CommitMeta, Put, RefType
from core.content import Content, Namespace
from core.errors import (
    HistoryExpiredError,
    InvalidInputError,
    NoSuchRefAtInstantError,
    ReferenceConflictError,
)
from core.instants import format_instant, from_micros, to_micros
from core.keys import ContentKey
from core.retention import Policy
from store import Store
from store import gc as gc_mod
from store.fsck import fsck
from store.imports import GivenCommit, HistoryImport, Move
from store.locations import Claim, LocationTakenError
from tests.store.helpers import Clock, K, table, with_ns

T0 = 1_700_000_000_000_000  # 2023-11-14T22:13:20Z, long before the clock's now


def _given(source: str, parents: tuple[str, ...], at_us: int,
           *changes: tuple[str, Content | None], author: str | None = "alice",
           claims: tuple[Claim, ...] = ()) -> GivenCommit:
    return GivenCommit(source, parents, CommitMeta(f"commit {source}", author, "nessie",
                                                   {"source": source}),
                       at_us, tuple((K(k), v) for k, v in changes), claims)


def _at(store: Store, spec: str) -> str:
    return store.resolve(spec).hash


def _when(us: int) -> str:
    return format_instant(from_micros(us))


@pytest.fixture
def imported(store: Store) -> tuple[Store, dict[str, str]]:
    """main: n1 -> t1 -> t2 -> merge(t2, d1) -> t3; dev: n1 -> d1; at given
    times, main's reflog moved through its chain at them."""
    imp = HistoryImport(store)
    out: dict[str, str] = {}
    out["n1"] = imp.add(_given("n1", (NO_ANCESTOR,), T0 + 10,
                               ("db", Namespace(id="ns-1")))).hash
    out["t1"] = imp.add(_given("t1", (out["n1"],), T0 + 20,
                               ("db.t", table("file:///w/db/t/m1.json").with_id("t-1")))).hash
    out["d1"] = imp.add(_given("d1", (out["n1"],), T0 + 25,
                               ("db.u", table("file:///w/db/u/m1.json").with_id("u-1")),
                               author="dave")).hash
    imp.flush()  # a batch ends; the next ones stand on it
    out["t2"] = imp.add(_given("t2", (out["t1"],), T0 + 30,
                               ("db.t", table("file:///w/db/t/m2.json", 7).with_id("t-1")))).hash
    out["m"] = imp.add(_given("m", (out["t2"], out["d1"]), T0 + 40,
                              ("db.u", table("file:///w/db/u/m1.json").with_id("u-1")),
                              author=None)).hash
    out["t3"] = imp.add(_given("t3", (out["m"],), T0 + 50, ("db.t", None))).hash
    assert imp.flush() == 3
    chain = ["n1", "t1", "t2", "m", "t3"]
    moves = [Move(prev, out[c], T0 + t, "merge" if c == "m" else "commit")
             for prev, c, t in zip([NO_ANCESTOR, *[out[x] for x in chain[:-1]]], chain,
                                   [10, 20, 30, 40, 50], strict=True)]
    assert imp.backdate_creation("main", T0)
    imp.move("main", RefType.BRANCH, NO_ANCESTOR, moves, T0 + 1_000_000)
    imp.move("dev", RefType.BRANCH, None, [Move(None, NO_ANCESTOR, T0, "create"),
                                           Move(NO_ANCESTOR, out["n1"], T0 + 10, "commit"),
                                           Move(out["n1"], out["d1"], T0 + 25, "commit")],
             T0 + 1_000_000)
    return store, out


def test_commits_land_with_their_parents_times_authors_and_contents(
        imported: tuple[Store, dict[str, str]]) -> None:
    store, made = imported
    log = store.log("main").items
    assert [c.hash for c in log] == [made[h] for h in ("t3", "m", "t2", "t1", "n1")]
    assert [to_micros(c.created_at) for c in log] == [T0 + 50, T0 + 40, T0 + 30, T0 + 20,
                                                     T0 + 10]
    merge = log[1]
    assert merge.parents == (made["t2"], made["d1"])
    assert merge.author == "nessie"  # no author: the committer, as for any commit
    assert log[2].author == "alice" and log[2].committer == "nessie"
    assert log[2].properties == {"source": "t2"}
    assert store.content(f"@{made['t2']}", K("db.t")).snapshot_id == 7  # type: ignore[union-attr]
    assert K("db.t") not in store.contents("main", [K("db.t")])
    assert store.content("main", K("db.u")).id == "u-1"
    assert HistoryImport(store).mapped() == made
    assert HistoryImport(store).foreign_commits() == 0
    # The change index knows them: a content's lineage over the merge, an author.
    assert [c.hash for c in store.lineage("main", "u-1")] == [made["m"], made["d1"]]
    assert [c.hash for c in store.log("main", author="alice").items] == [
        made["t3"], made["t2"], made["t1"], made["n1"]]
    assert fsck(store).ok


def test_name_at_an_instant_answers_the_chain_commit_made_then(
        imported: tuple[Store, dict[str, str]]) -> None:
    store, made = imported
    assert _at(store, f"main*{_when(T0)}") == NO_ANCESTOR
    assert _at(store, f"main*{_when(T0 + 19)}") == made["n1"]
    assert _at(store, f"main*{_when(T0 + 20)}") == made["t1"]
    assert _at(store, f"main*{_when(T0 + 39)}") == made["t2"]
    assert _at(store, f"main*{_when(T0 + 45)}") == made["m"]
    assert _at(store, f"main*{_when(T0 + 2_000_000)}") == made["t3"]
    assert _at(store, f"dev*{_when(T0 + 30)}") == made["d1"]
    assert _at(store, f"dev*{_when(T0 + 24)}") == made["n1"]
    with pytest.raises(NoSuchRefAtInstantError):
        store.resolve(f"main*{_when(T0 - 1)}")
    # The chain's own instants agree (a walk down first parents).
    assert _at(store, f"@{made['t3']}*{_when(T0 + 39)}") == made["t2"]
    # One change-feed event per reference moved, not one per commit.
    with store.db.read() as conn:
        kinds = conn.execute(text("SELECT kind, ref FROM events ORDER BY id")).all()
    assert [tuple(k) for k in kinds][-2:] == [("reference.assigned", "main"),
                                              ("reference.created", "dev")]


def test_a_time_at_or_before_the_first_parent_moves_to_it_plus_one(store: Store) -> None:
    imp = HistoryImport(store)
    a = imp.add(_given("a", (NO_ANCESTOR,), T0 + 100))
    b = imp.add(_given("b", (a.hash,), T0 + 100))
    c = imp.add(_given("c", (b.hash,), T0 + 50))
    imp.flush()
    assert (a.created_us, b.created_us, c.created_us) == (T0 + 100, T0 + 101, T0 + 102)
    assert [to_micros(x.created_at) for x in store.log(f"@{c.hash}").items] == [
        T0 + 102, T0 + 101, T0 + 100]


def test_a_batch_lands_whole_or_not_at_all(store: Store) -> None:
    with_ns(store, "main", "db")
    store.commit("main", [Put(K("db.t"), table("file:///w/db/t/m1.json"))], CommitMeta("t"),
                 claims=[Claim(K("db.t"), "file:///w/db/t")])
    before = HistoryImport(store).foreign_commits()
    imp = HistoryImport(store)
    imp.add(_given("ok", (NO_ANCESTOR,), T0 + 1))
    imp.add(_given("clash", (NO_ANCESTOR,), T0 + 2,
                   ("db.other", table("file:///w/db/t/x.json").with_id("o-1")),
                   claims=(Claim(K("db.other"), "file:///w/db/t/inside"),)))
    with pytest.raises(LocationTakenError):
        imp.flush()
    imp.discard()
    assert HistoryImport(store).mapped() == {}
    assert HistoryImport(store).foreign_commits() == before
    with store.db.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM commits WHERE created_us BETWEEN :s "
                                 "AND :t"), {"s": T0, "t": T0 + 10}).scalar() == 0


def test_moves_are_checked_before_anything_is_written(
        imported: tuple[Store, dict[str, str]]) -> None:
    store, made = imported
    imp = HistoryImport(store)
    with pytest.raises(InvalidInputError, match="do not follow on"):
        imp.move("x", RefType.TAG, None, [Move(None, made["t1"], T0 + 20, "create"),
                                          Move(made["t2"], made["m"], T0 + 40, "commit")],
                 T0)
    with pytest.raises(InvalidInputError, match="do not follow on"):
        imp.move("x", RefType.TAG, None, [Move(None, made["t1"], T0 + 20, "create"),
                                          Move(made["t1"], made["t2"], T0 + 10, "commit")],
                 T0)
    with pytest.raises(ReferenceConflictError):
        imp.move("main", RefType.BRANCH, made["t1"], [Move(made["t1"], made["t2"], T0, "x")], T0)
    assert not imp.backdate_creation("main", 0)  # main has moved: its reflog stays
    assert [r.name for r in store.list_references().items] == ["dev", "main"]


def test_gc_and_retention_treat_imported_history_like_any_other(store_url: str) -> None:
    clock = Clock(step=1)
    store = Store(store_url, clock=clock)
    try:
        imp = HistoryImport(store)
        old = T0
        prev = NO_ANCESTOR
        made = []
        moves = []
        for i in range(6):
            rec = imp.add(_given(f"c{i}", (prev,), old + i * 1_000_000,
                                 ("db", Namespace(id="ns", properties={"i": str(i)}))))
            moves.append(Move(prev, rec.hash, rec.created_us, "commit"))
            made.append(rec.hash)
            prev = rec.hash
        # An imported commit no reference reaches: gc's to remove.
        stray = imp.add(_given("stray", (made[2],), old + 10_000_000,
                               ("db", Namespace(id="ns", properties={"stray": "1"}))))
        imp.flush()
        imp.move("main", RefType.BRANCH, NO_ANCESTOR, moves, clock())
        assert gc_mod.collect(store, grace_s=0).removed_commits == 1
        assert stray.hash not in set(HistoryImport(store).mapped().values())
        assert set(HistoryImport(store).mapped()) == {f"c{i}" for i in range(6)}
        assert fsck(store).ok
        # A policy keeping main's 2 newest commits: older imported ones expire.
        store.retention.replace([Policy("main", keep_commits=2)])
        assert store.resolve(f"main*{_when(old + 5_000_000)}").hash == made[5]
        assert store.resolve(f"@{made[4]}").hash == made[4]
        with pytest.raises(HistoryExpiredError):
            store.resolve(f"main*{_when(old + 2_500_000)}")
        with pytest.raises(HistoryExpiredError):
            store.resolve(f"@{made[1]}")
        assert ContentKey.of("db") in store.contents("main", [ContentKey.of("db")])
    finally:
        store.close()
