"""The pure rules of strict invalidation: the mode's inheritance, and which
views a change breaks (only what the change itself adds, transitively)."""

from __future__ import annotations

from core.sql.analysis import TABLE, Relation
from core.sql.invalidation import MODE_PROPERTY, describe, invalidated, mode, refusals
from core.sql.stored import DialectAnalysis, StoredDependency

PROPS = {("a",): {MODE_PROPERTY: "strict"}, ("a", "b", "c"): {MODE_PROPERTY: "lenient"},
         ("x",): {MODE_PROPERTY: "STRICT"}, ("y",): {MODE_PROPERTY: "stritc"}}


def view(*deps: tuple[tuple[str, ...], str, str, dict[str, str] | None]) -> DialectAnalysis:
    return DialectAnalysis(dialect="spark", status="ok", dependencies=[
        StoredDependency(key=list(k), content_id=cid, type=t, columns=cols)
        for k, cid, t, cols in deps])


def test_mode_is_inherited_from_the_nearest_ancestor() -> None:
    assert mode(("a",), PROPS.get) == "strict"
    assert mode(("a", "b"), PROPS.get) == "strict"
    assert mode(("a", "b", "c", "d"), PROPS.get) == "lenient"
    assert mode(("x",), PROPS.get) == "strict"
    assert mode(("y",), PROPS.get) == "lenient"  # an unknown value never refuses
    assert mode(("z",), PROPS.get) == "lenient"


def test_only_what_the_change_adds_breaks_a_view_transitively() -> None:
    t = Relation(("n", "t"), "T", TABLE, (("id", "long"), ("name", "string")))
    views = {
        ("n", "v"): view((("n", "t"), "T", "ICEBERG_TABLE", {"id": "long"})),
        ("a", "w"): view((("n", "v"), "V", "ICEBERG_VIEW", None)),
        ("n", "old"): view((("n", "t"), "OLD", "ICEBERG_TABLE", {"id": "long"})),
        ("n", "ok"): view((("n", "t"), "T", "ICEBERG_TABLE", {"name": "string"})),
    }
    dropped = invalidated(views, {("n", "t"): t}, {("n", "t"): None})
    assert dropped == {("n", "v"): ["table n.t dropped"],
                       ("a", "w"): ["view n.v it reads would become invalid"],
                       ("n", "ok"): ["table n.t dropped"]}
    narrowed = Relation(("n", "t"), "T", TABLE, (("name", "string"),))
    assert set(invalidated(views, {("n", "t"): t}, {("n", "t"): narrowed})) == {
        ("n", "v"), ("a", "w")}
    strict = refusals(dropped, PROPS.get)
    assert describe(strict) == "a.w (view n.v it reads would become invalid)"
