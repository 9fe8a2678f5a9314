"""Table functions (UNNEST, Spark's explode in a lateral view) are no
catalog objects: their columns are derived from the values they are given."""

from core.sql.analysis import TABLE, Lineage, Origin, Relation, analyze

T = Relation(("d", "t"), "id-t", TABLE, (("id", "long"), ("tags", "array<string>")))


def resolve(keys):  # type: ignore[no-untyped-def]
    return {k: T for k in keys if k == T.key}


def test_unnest_in_trino() -> None:
    a = analyze("SELECT x FROM t CROSS JOIN UNNEST(ARRAY[id * 1000]) AS u(x)", "trino",
                ("d",), resolve)
    assert a.error is None and not a.problems
    assert a.columns == (("x", Lineage((Origin(("d", "t"), "id"),), True)),)
    assert [d.key for d in a.dependencies] == [("d", "t")]


def test_lateral_view_explode_in_spark() -> None:
    a = analyze("SELECT id, tag FROM t LATERAL VIEW explode(tags) e AS tag", "spark",
                ("d",), resolve)
    assert a.error is None and not a.problems, a
    assert dict(a.columns)["id"] == Lineage((Origin(("d", "t"), "id"),), False)
    assert dict(a.columns)["tag"].origins == (Origin(("d", "t"), "tags"),)
