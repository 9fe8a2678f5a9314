"""Which versions of one table history retains (store.held): what signing a
DELETE asks (catalog.maintenance.liveness, issue 35). Both backends."""

from __future__ import annotations

from core.commits import RefType
from core.retention import Policy
from store import Store
from store.held import HeldVersions, Holding
from tests.store.helpers import MINUTE, Clock, K, put_new, table, update, with_ns

WEEK = 7 * 24 * 3600.0



def _held(versions: HeldVersions, cid: str, grace_s: float = WEEK) -> dict[str, set[str]]:
    """Per reference, the metadata locations of the versions it retains."""
    out: dict[str, set[str]] = {}
    for h in versions.of(cid, grace_s):
        loc = versions.store.reader.load_contents([h.entry])[h.entry.value_hash]
        out.setdefault(h.ref, set()).add(loc.metadata_location)  # type: ignore[attr-defined]
    return out


def test_each_reference_holds_what_its_retention_keeps(timed: tuple[Store, Clock]) -> None:
    store, clock = timed
    with_ns(store, "main", "ns")
    clock.tick()
    put_new(store, "main", ("ns.t", table("A")))
    cid = store.content("main", K("ns.t")).id
    assert cid is not None
    clock.tick()
    update(store, "main", "ns.t", metadata_location="B")
    store.create_reference("keep", source="main")                # keep: at B
    clock.tick()
    put_new(store, "main", ("ns.other", table("O")))             # E: not the table
    e_time = clock.now
    clock.tick()
    update(store, "main", "ns.t", metadata_location="C")
    c_time = clock.now
    clock.tick()
    update(store, "main", "ns.t", metadata_location="D")
    store.create_reference("v1", RefType.TAG, "keep")
    versions = HeldVersions(store)
    # No policy: history is retained whole (each version named once, for
    # the first reference, by name, that reaches it).
    assert _held(versions, cid) == {"main": {"C", "D"}, "keep": {"A", "B"}}
    # main keeps its head only: D, not the versions before it.
    store.retention.replace([Policy("main", keep_commits=1)])
    assert _held(versions, cid) == {"main": {"D"}, "keep": {"A", "B"}, "v1": {"B"}}
    # Back to C, which put the table itself: nothing older.
    clock.tick()
    store.retention.replace([Policy("main", f"PT{(clock.now - c_time) // 1_000_000}S")])
    assert _held(versions, cid)["main"] == {"C", "D"}
    # Back to E, which did not: the version E holds (B) too.
    store.retention.replace([Policy("main", f"PT{(clock.now - e_time) // 1_000_000}S")])
    assert _held(versions, cid)["main"] == {"B", "C", "D"}
    # A branch deleted within the grace period still holds its own.
    store.retention.replace([Policy("*", keep_commits=1)])
    store.delete_reference("keep", store.get_reference("keep").hash)
    clock.tick()
    found = versions.of(cid, WEEK)
    assert {(h.ref, h.holding) for h in found} == {
        ("main", Holding.BRANCH), ("keep", Holding.DELETED), ("v1", Holding.TAG)}
    assert _held(versions, cid, grace_s=1) == {"main": {"D"}, "v1": {"B"}}


def test_without_policies_merged_history_is_held(timed: tuple[Store, Clock]) -> None:
    store, clock = timed
    with_ns(store, "main", "ns")
    put_new(store, "main", ("ns.t", table("A")))
    cid = store.content("main", K("ns.t")).id
    assert cid is not None
    store.create_reference("side", source="main")
    clock.tick()
    update(store, "side", "ns.t", metadata_location="S1")
    clock.tick()
    update(store, "side", "ns.t", metadata_location="S2")
    clock.tick()
    put_new(store, "main", ("ns.u", table("U")))             # main moves on: a real merge
    store.merge("side", "main")
    store.delete_reference("side", store.get_reference("side").hash)
    clock.tick(10 * MINUTE)
    versions = HeldVersions(store)
    # S1 is reached only through the merge's second parent.
    assert _held(versions, cid, grace_s=1) == {"main": {"A", "S1", "S2"}}
    # Within the grace period the reflog's old head of side reaches them too.
    held = versions.of(cid, WEEK)
    assert {h.holding for h in held if h.ref == "side"} == {Holding.EARLIER}


def test_locations_holding_a_file(store: Store) -> None:
    store.locations.record([("s3://b/wh/t", "x"), ("s3a://b/wh/u", "y"), ("s3://b/wh/tt", "z")])
    assert store.locations.holding(["s3://b/wh/t/data/f.parquet"]) == {"x"}
    assert store.locations.holding(["s3a://b/wh/u/f", "s3://b/wh/t"]) == {"x", "y"}
    assert store.locations.holding(["s3://b/other/f"]) == set()


def test_a_head_reset_away_is_held_for_the_grace_period(timed: tuple[Store, Clock]) -> None:
    store, clock = timed
    with_ns(store, "main", "ns")
    first = put_new(store, "main", ("ns.t", table("A"))).hash
    cid = store.content("main", K("ns.t")).id
    assert cid is not None
    clock.tick()
    update(store, "main", "ns.t", metadata_location="B")
    clock.tick()
    update(store, "main", "ns.t", metadata_location="C")
    store.assign_reference("main", store.get_reference("main").hash, f"@{first}")
    clock.tick(10 * MINUTE)
    versions = HeldVersions(store)
    assert _held(versions, cid, grace_s=WEEK) == {"main": {"A", "B", "C"}}
    # A is the head's; B and C only the old head's (the reflog names it).
    assert sorted(h.holding.value for h in versions.of(cid, WEEK)) == [
        "branch", "earlier head", "earlier head"]
    assert _held(versions, cid, grace_s=60) == {"main": {"A"}}
