import pytest

from core.commits import Delete, KeyOutcome, MergeBehavior, MergeConflictError, Put
from core.conflicts import ConflictType
from store import Store
from tests.store.helpers import K, put_new, table, update, view, with_ns


@pytest.fixture
def base(store: Store) -> Store:
    """main: ns, ns.t (table), ns.v (view); branch dev forked from there."""
    with_ns(store, "main", "ns")
    put_new(store, "main", ("ns.t", table("t0")), ("ns.v", view("v0")), msg="seed")
    store.create_reference("dev")
    return store


def _outcomes(result) -> dict[str, KeyOutcome]:
    return {str(d.key): d.outcome for d in result.details}


def test_fast_forward_like_merge_makes_a_two_parent_commit(base: Store):
    update(base, "dev", "ns.t", metadata_location="t1")
    put_new(base, "dev", ("ns.new", table("n0")))
    dev_head = base.get_reference("dev").hash
    main_before = base.get_reference("main").hash

    res = base.merge("dev", "main")

    assert res.applied and res.common_ancestor == main_before
    assert _outcomes(res) == {"ns.new": KeyOutcome.APPLIED, "ns.t": KeyOutcome.APPLIED}
    merge_commit = base.log("main", page_size=1).items[0]
    assert merge_commit.parents == (main_before, dev_head)
    assert base.diff("main", "dev").items == []
    assert base.content("main", K("ns.t")).metadata_location == "t1"


def test_true_three_way_merge_keeps_both_sides(base: Store):
    update(base, "dev", "ns.t", metadata_location="t-dev")
    update(base, "main", "ns.v", metadata_location="v-main")
    put_new(base, "main", ("ns.m", table("m0")))

    res = base.merge("dev", "main")

    assert _outcomes(res) == {"ns.t": KeyOutcome.APPLIED}
    assert base.content("main", K("ns.t")).metadata_location == "t-dev"
    assert base.content("main", K("ns.v")).metadata_location == "v-main"
    assert base.content("main", K("ns.m")).metadata_location == "m0"
    # A second merge of the same branch has nothing left to do.
    again = base.merge("dev", "main")
    assert not again.applied and again.details == []


def test_same_change_on_both_sides_is_not_a_conflict(base: Store):
    t = base.content("main", K("ns.t"))
    new = t.model_copy(update={"metadata_location": "same"})
    base.commit("dev", [Put(K("ns.t"), new, expected=t)])
    base.commit("main", [Put(K("ns.t"), new, expected=t)])
    res = base.merge("dev", "main")
    assert _outcomes(res) == {"ns.t": KeyOutcome.UNCHANGED}


def _conflict(base: Store, **kw):
    with pytest.raises(MergeConflictError) as ei:
        base.merge("dev", "main", **kw)
    return ei.value


def test_conflict_value_differs_when_both_update(base: Store):
    update(base, "dev", "ns.t", metadata_location="a")
    update(base, "main", "ns.t", metadata_location="b")
    head = base.get_reference("main").hash
    err = _conflict(base)
    assert [(str(c.key), c.type) for c in err.conflicts] == [("ns.t", ConflictType.VALUE_DIFFERS)]
    assert "ns.t" in err.message and "VALUE_DIFFERS" in err.message
    assert base.get_reference("main").hash == head  # nothing written


def test_conflict_key_exists_when_both_add(base: Store):
    put_new(base, "dev", ("ns.x", table("dev")))
    put_new(base, "main", ("ns.x", table("main")))
    assert [c.type for c in _conflict(base).conflicts] == [ConflictType.KEY_EXISTS]


def test_drop_vs_update_conflicts_both_ways(base: Store):
    # source drops, target updates
    base.commit("dev", [Delete(K("ns.t"))])
    update(base, "main", "ns.t", metadata_location="kept")
    assert [c.type for c in _conflict(base).conflicts] == [ConflictType.VALUE_DIFFERS]
    # source updates, target drops
    update(base, "dev", "ns.v", metadata_location="dev-v")
    base.commit("main", [Delete(K("ns.v"))])
    types = {str(c.key): c.type for c in _conflict(base).conflicts}
    assert types == {"ns.t": ConflictType.VALUE_DIFFERS,
                     "ns.v": ConflictType.KEY_DOES_NOT_EXIST}


def test_drop_and_recreate_vs_update_is_content_id_differs(base: Store):
    update(base, "dev", "ns.t", metadata_location="updated-old-object")
    base.commit("main", [Delete(K("ns.t"))])
    put_new(base, "main", ("ns.t", table("recreated")))
    old_id = base.content("dev", K("ns.t")).id
    assert base.content("main", K("ns.t")).id != old_id
    assert [c.type for c in _conflict(base).conflicts] == [ConflictType.CONTENT_ID_DIFFERS]


def test_payload_differs_when_types_differ(base: Store):
    put_new(base, "dev", ("ns.x", table("t")))
    put_new(base, "main", ("ns.x", view("v")))
    assert [c.type for c in _conflict(base).conflicts] == [ConflictType.KEY_EXISTS]
    base.merge("dev", "main", key_modes={K("ns.x"): MergeBehavior.DROP})
    # both have ns.x now with different types and ids; change both again
    update(base, "dev", "ns.x", metadata_location="t2")
    cur = base.content("main", K("ns.x"))
    base.commit("main", [Delete(K("ns.x"))])
    base.commit("main", [Put(K("ns.x"), table("t3"))])
    assert cur.type == "ICEBERG_VIEW"
    assert [c.type for c in _conflict(base).conflicts] == [ConflictType.CONTENT_ID_DIFFERS]


def test_namespace_absent_when_target_dropped_the_namespace(base: Store):
    with_ns(base, "dev", "fresh")
    put_new(base, "dev", ("fresh.t", table("f")))
    base.commit("main", [Delete(K("ns.t")), Delete(K("ns.v")), Delete(K("ns"))])
    put_new(base, "dev", ("ns.added", table("a")))
    err = _conflict(base)
    assert {(str(c.key), c.type) for c in err.conflicts} == {
        ("ns.added", ConflictType.NAMESPACE_ABSENT)}


def test_namespace_not_empty_when_source_drops_a_namespace_target_filled(base: Store):
    base.commit("dev", [Delete(K("ns.t")), Delete(K("ns.v")), Delete(K("ns"))])
    put_new(base, "main", ("ns.late", table("l")))
    err = _conflict(base)
    assert [(str(c.key), c.type) for c in err.conflicts] == [
        ("ns", ConflictType.NAMESPACE_NOT_EMPTY)]


def test_force_and_drop_per_key_with_a_default(base: Store):
    update(base, "dev", "ns.t", metadata_location="dev-t")
    update(base, "main", "ns.t", metadata_location="main-t")
    update(base, "dev", "ns.v", metadata_location="dev-v")
    update(base, "main", "ns.v", metadata_location="main-v")
    put_new(base, "dev", ("ns.clean", table("c")))

    res = base.merge("dev", "main", key_modes={K("ns.t"): MergeBehavior.FORCE,
                                                K("ns.v"): MergeBehavior.DROP})
    assert _outcomes(res) == {"ns.clean": KeyOutcome.APPLIED, "ns.t": KeyOutcome.FORCED,
                              "ns.v": KeyOutcome.DROPPED}
    forced = next(d for d in res.details if str(d.key) == "ns.t")
    assert forced.conflict is not None and forced.conflict.type is ConflictType.VALUE_DIFFERS
    assert base.content("main", K("ns.t")).metadata_location == "dev-t"
    assert base.content("main", K("ns.v")).metadata_location == "main-v"
    assert base.content("main", K("ns.clean")).metadata_location == "c"


def test_default_mode_drop_skips_everything_but_records_the_merge(base: Store):
    update(base, "dev", "ns.t", metadata_location="dev-t")
    res = base.merge("dev", "main", default_mode=MergeBehavior.DROP)
    assert _outcomes(res) == {"ns.t": KeyOutcome.DROPPED} and res.applied
    assert base.content("main", K("ns.t")).metadata_location == "t0"
    # The dropped change is part of main's history now: nothing left to merge.
    assert base.merge("dev", "main").details == []


def test_dry_run_changes_nothing(base: Store):
    update(base, "dev", "ns.t", metadata_location="dev-t")
    head = base.get_reference("main").hash
    reflog = base.reflog("main")
    res = base.merge("dev", "main", dry_run=True)
    assert res.dry_run and not res.applied and res.result_hash is None
    assert _outcomes(res) == {"ns.t": KeyOutcome.APPLIED}
    assert base.get_reference("main").hash == head
    assert base.reflog("main") == reflog
    # and a conflicting dry run reports without writing
    update(base, "main", "ns.t", metadata_location="main-t")
    head = base.get_reference("main").hash
    res = base.merge("dev", "main", dry_run=True, raise_on_conflict=False)
    assert [c.type for c in res.conflicts] == [ConflictType.VALUE_DIFFERS]
    assert base.get_reference("main").hash == head


def test_merge_into_a_tag_or_detached_ref_is_refused(base: Store):
    from core.commits import RefType
    from core.errors import ReadOnlyReferenceError

    base.create_reference("v1", RefType.TAG)
    update(base, "dev", "ns.t", metadata_location="x")
    with pytest.raises(ReadOnlyReferenceError, match="tag"):
        base.merge("dev", "v1")
    with pytest.raises(ReadOnlyReferenceError, match="read-only"):
        base.merge("dev", "main~1")


def test_transplant_replays_chosen_commits(base: Store):
    a = update(base, "dev", "ns.t", metadata_location="t1").hash
    put_new(base, "dev", ("ns.skip", table("s")))
    b = put_new(base, "dev", ("ns.b", table("b"))).hash
    head = base.get_reference("main").hash

    res = base.transplant([a, b], onto="main", principal="carol")

    assert len(res.created_commits) == 2 and res.result_hash == res.created_commits[-1]
    log = base.log("main", page_size=3).items
    assert [c.message for c in log[:2]] == ["put", "update ns.t"]
    assert log[1].parents == (head,) and log[0].committer == "carol"
    assert base.content("main", K("ns.t")).metadata_location == "t1"
    assert base.content("main", K("ns.b")).metadata_location == "b"
    assert K("ns.skip") not in base.contents("main", [K("ns.skip")])


def test_transplant_conflict_is_atomic(base: Store):
    a = update(base, "dev", "ns.v", metadata_location="v1").hash
    b = update(base, "dev", "ns.t", metadata_location="t1").hash
    update(base, "main", "ns.t", metadata_location="main-t")
    head = base.get_reference("main").hash
    with pytest.raises(MergeConflictError) as ei:
        base.transplant([a, b], onto="main")
    assert [(str(c.key), c.type) for c in ei.value.conflicts] == [
        ("ns.t", ConflictType.VALUE_DIFFERS)]
    assert base.get_reference("main").hash == head
    assert base.content("main", K("ns.v")).metadata_location == "v0"
