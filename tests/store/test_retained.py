"""What gc's mark keeps under retention policies (store.mark, store.retained):
exactly the table and view versions the retained commits' states hold —
never a version only expired history held, never less than a retained
commit needs, across index materializations. Both backends."""

from __future__ import annotations

from core.commits import CommitMeta, Put, RefType
from core.content import IcebergTable
from core.errors import NotFoundError
from core.retention import Policy
from store import Store
from store.gc import collect, live_contents
from tests.store.helpers import MINUTE, Clock, K, table, with_ns


def put_new(store: Store, branch: str, *pairs: tuple[str, IcebergTable]) -> None:
    """Each key set to the value: a new table, or a new version of it."""
    ops = []
    for key, value in pairs:
        try:
            cur = store.content(branch, K(key))
        except NotFoundError:
            cur = None
        ops.append(Put(K(key), value.model_copy(update={"id": cur.id}) if cur else value,
                       expected=cur))
    store.commit(branch, ops, CommitMeta("put"))


def _tables(store: Store) -> set[str]:
    return {c.metadata_location for c in live_contents(store, grace_s=0)
            if isinstance(c, IcebergTable)}


def test_only_what_retained_states_hold(timed: tuple[Store, Clock]) -> None:
    store, clock = timed
    with_ns(store, "main", "ns")
    clock.tick()
    put_new(store, "main", ("ns.t", table("A")))
    store.create_reference("keep", source="main")  # keep: t = A
    for name in ("B", "C"):
        clock.tick()
        put_new(store, "main", ("ns.t", table(name)))
    clock.tick()
    put_new(store, "main", ("ns.u", table("U")))
    assert _tables(store) == {"A", "B", "C", "U"}  # no policy: every version
    store.retention.replace([Policy("main", keep_commits=1)])
    # main's head holds t = C and u = U; keep (no policy) holds t = A. B only
    # in expired history.
    assert _tables(store) == {"A", "C", "U"}
    report = collect(store, grace_s=0, dry_run=True)
    assert report.expired == {"main": 2}  # the commits that put B and C
    assert report.retained_commits < report.live_commits
    assert "history expired: 2 commits of main" in str(report)


def test_every_retained_state_whole_across_index_materializations(
        timed: tuple[Store, Clock]) -> None:
    store, clock = timed
    with_ns(store, "main", "ns")
    for i in range(150):  # past DEPTH_LIMIT twice: the index is rewritten
        clock.tick(MINUTE // 60)
        put_new(store, "main", ("ns.t", table(f"t{i}")), (f"ns.k{i % 7}", table(f"k{i}")))
    store.retention.replace([Policy("main", keep_commits=3)])
    kept = _tables(store)
    # Everything each retained commit's state holds (read as a reader would).
    needed = {c.metadata_location for n in range(3)
              for c in store.contents(f"main~{n}", [K("ns.t"), *(K(f"ns.k{s}")
                                                              for s in range(7))]).values()}
    assert needed <= kept
    assert {f"t{i}" for i in (147, 148, 149)} <= kept
    # A state is its index root plus a delta of at most 64 commits: besides
    # what the states hold, at most the versions the roots recorded when the
    # index was last written out; nothing older than that (DEPTH_LIMIT).
    assert not {f"t{i}" for i in range(150 - 3 - 64)} & kept, sorted(kept)


def test_a_tag_keeps_its_own_state_and_deleted_branches_keep_theirs_for_the_grace(
        timed: tuple[Store, Clock]) -> None:
    store, clock = timed
    with_ns(store, "main", "ns")
    clock.tick()
    put_new(store, "main", ("ns.t", table("T1")))
    store.create_reference("v1", RefType.TAG, "main")
    clock.tick()
    put_new(store, "main", ("ns.t", table("T2")))
    store.create_reference("gone", source="main")
    clock.tick()
    put_new(store, "gone", ("ns.g", table("G")))
    clock.tick()
    put_new(store, "main", ("ns.t", table("T3")))
    store.delete_reference("gone", store.get_reference("gone").hash)
    clock.tick()
    store.retention.replace([Policy("*", keep_commits=1)])
    # The tag holds T1, main's head T3; the deleted branch is within the
    # grace (an hour here): its head holds T2 and G, and it reads.
    kept = {c.metadata_location for c in live_contents(store, grace_s=3600)
            if isinstance(c, IcebergTable)}
    assert kept == {"T1", "T2", "T3", "G"}
    assert _tables(store) == {"T1", "T3"}  # no grace: it has gone
