"""A merge's dry run and its landing share one plan (store.merging.MergePlan,
issue 45): the source's name is resolved once, and a landing at the head
the dry run saw takes the dry run's work instead of planning again; a
target that moved in between is planned anew. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from core.commits import KeyOutcome
from store import Store
from store.merging import MergePlan
from tests.store.helpers import K, put_new, table, update, view, with_ns


@pytest.fixture
def base(store: Store) -> Store:
    """main: ns, ns.t, ns.v; dev forked there changes ns.t and adds ns.new."""
    with_ns(store, "main", "ns")
    put_new(store, "main", ("ns.t", table("t0")), ("ns.v", view("v0")), msg="seed")
    store.create_reference("dev")
    update(store, "dev", "ns.t", metadata_location="t-dev")
    put_new(store, "dev", ("ns.new", table("n0")))
    return store


def _outcomes(result) -> dict[str, KeyOutcome]:
    return {str(d.key): d.outcome for d in result.details}


def test_a_landing_at_the_dry_runs_head_takes_its_plan(base: Store) -> None:
    plan = MergePlan()
    preview = base.merge("dev", "main", dry_run=True, plan=plan)
    assert plan.reused == 0 and plan.head_hash == preview.expected_target_hash
    landed = base.merge("dev", "main", expected_hash=preview.expected_target_hash, plan=plan)
    assert plan.reused == 1
    assert landed.applied and _outcomes(landed) == _outcomes(preview) == {
        "ns.new": KeyOutcome.APPLIED, "ns.t": KeyOutcome.APPLIED}
    assert base.content("main", K("ns.t")).metadata_location == "t-dev"
    assert base.content("main", K("ns.new")) is not None


def test_a_target_that_moved_is_planned_anew(base: Store) -> None:
    plan = MergePlan()
    preview = base.merge("dev", "main", dry_run=True, plan=plan)
    update(base, "main", "ns.v", metadata_location="v-main")  # the target moves
    landed = base.merge("dev", "main", plan=plan)
    assert plan.reused == 0 and plan.head_hash != preview.expected_target_hash
    assert landed.applied and landed.expected_target_hash == plan.head_hash
    # What the target did in between stays, and the merge is still whole.
    assert base.content("main", K("ns.v")).metadata_location == "v-main"
    assert base.content("main", K("ns.t")).metadata_location == "t-dev"


def test_the_landing_merges_the_source_the_dry_run_resolved(base: Store) -> None:
    plan = MergePlan()
    preview = base.merge("dev", "main", dry_run=True, plan=plan)
    update(base, "dev", "ns.t", metadata_location="t-late")  # the source moves
    landed = base.merge("dev", "main", plan=plan)
    assert landed.applied and landed.source_hash == preview.source_hash
    assert base.content("main", K("ns.t")).metadata_location == "t-dev"
