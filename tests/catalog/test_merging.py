"""Merges worked out by the catalog layer (catalog.merge.merging), called directly:
the retry decision reads the conflicts' typed ``retryable`` flag. The target
is moved between working a merge out and landing it (the BeforeLanding
hook), so each outcome is forced, not left to timing."""

from __future__ import annotations

from catalog.kernel import Who
from catalog.merge.merging import ATTEMPTS, MergeRequest, merge
from catalog.services import CatalogServices
from core.commits import CommitMeta, KeyOutcome, MergeResult, Put
from core.content import Namespace
from core.keys import ContentKey
from core.refs import parse_ref

NS = ContentKey(["ns"])


def setup(s: CatalogServices) -> None:
    """``ns`` on main; branch ``b`` sets property ``from_b``; main then sets ``from_main``:
    both sides changed the namespace, in ways a content merge combines."""
    s.namespaces.create(parse_ref("main"), NS, {"owner": "x"}, Who("setup"))
    s.catalog.store.create_reference("b")
    props(s, "b", from_b="1")
    props(s, "main", from_main="1")


def props(s: CatalogServices, branch: str, **values: str) -> None:
    store = s.catalog.store
    cur = store.content(branch, NS)
    assert isinstance(cur, Namespace)
    store.commit(branch, [Put(NS, Namespace(id=cur.id, properties={**cur.properties,
                                                                     **values}),
                              expected=cur)], CommitMeta(f"set {values}"))


def request() -> MergeRequest:
    return MergeRequest("b", "main", meta=CommitMeta("merge b"), principal="tester")


def test_a_target_that_keeps_moving_abandons_the_merge(services: CatalogServices) -> None:
    setup(services)
    moves = []

    def move(_: MergeResult) -> None:  # the target moves each time, before it lands
        moves.append(1)
        props(services, "main", moved=str(len(moves)))

    outcome = merge(services.catalog, request(), before_landing=move)
    assert outcome.attempts == ATTEMPTS and len(moves) == ATTEMPTS
    result = outcome.result
    assert not result.applied
    (d,) = [d for d in result.details if d.key == NS]
    assert d.outcome is KeyOutcome.CONFLICT and d.conflict is not None
    assert d.conflict.retryable and "abandoned" in d.conflict.message
    assert d.conflict_details is not None
    assert d.conflict_details["reason"] == "target-moved"
    assert d.conflict_details["attempts"] == ATTEMPTS
    now = services.catalog.store.content("main", NS)
    assert isinstance(now, Namespace)
    assert "from_b" not in now.properties and now.properties["moved"] == str(ATTEMPTS)


def test_a_target_that_moved_once_is_worked_out_again(services: CatalogServices) -> None:
    setup(services)

    def move_once(_: MergeResult) -> None:
        if not getattr(move_once, "done", False):
            move_once.done = True  # type: ignore[attr-defined]
            props(services, "main", moved="once")

    outcome = merge(services.catalog, request(), before_landing=move_once)
    assert outcome.attempts == 2 and outcome.result.applied
    (d,) = [d for d in outcome.result.details if d.key == NS]
    assert d.outcome is KeyOutcome.MERGED
    now = services.catalog.store.content("main", NS)
    assert isinstance(now, Namespace)
    assert {"from_b": "1", "from_main": "1", "moved": "once"}.items() <= now.properties.items()


def test_contents_that_cannot_be_combined_are_not_tried_again(
        services: CatalogServices) -> None:
    setup(services)
    props(services, "b", owner="b")
    props(services, "main", owner="main")  # the same property, two values
    calls = []
    outcome = merge(services.catalog, request(), before_landing=lambda r: calls.append(r))
    assert outcome.attempts == 1 and not calls  # refused at the dry run: nothing to land
    (c,) = outcome.result.conflicts
    assert c.key == NS and not c.retryable
    assert outcome.invalidated == []
