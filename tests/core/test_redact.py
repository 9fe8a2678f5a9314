"""core.redact: the depth of redaction (issue 34, item 4). An origin whose
way passes an object the reader may not read stops at the first such
object, named as the SQL that reads it names it; analyses recorded before
the way was (no ``via``) are redacted no less; refresh records leave out
what hidden views read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core import redact
from core.sql.analysis import TABLE, VIEW, Key, Relation, analyze
from core.sql.stored import stored


def sales_only(key: tuple[str, ...]) -> bool:
    return key[0] == "sales"


def _relations() -> dict[Key, Relation]:
    """hr.payroll ← hr.v_inner ← sales.v_nested ← sales.v_outer, each view
    analysed over the ones before it as the catalog does."""
    rels: dict[Key, Relation] = {
        ("hr", "payroll"): Relation(("hr", "payroll"), "p", TABLE,
                                    (("id", "bigint"), ("secret_salary_amt", "double"))),
        ("sales", "t"): Relation(("sales", "t"), "t", TABLE, (("id", "bigint"), ("v", "text")))}

    def resolve(keys: Sequence[Key]) -> Mapping[Key, Relation]:
        return {k: rels[k] for k in keys if k in rels}

    for key, sql in ((("hr", "v_inner"), "SELECT id, secret_salary_amt AS pay FROM hr.payroll"),
                     (("sales", "v_nested"), "SELECT * FROM hr.v_inner"),
                     (("sales", "v_outer"), "SELECT n.pay, t.v FROM sales.v_nested n "
                                            "JOIN sales.t t ON n.id = t.id")):
        a = analyze(sql, "spark", (key[0],), resolve)
        assert a.error is None and not a.problems, a
        rels[key] = Relation(key, key[1], VIEW, tuple((n, "text") for n, _ in a.columns),
                             stored(a).lineage())
    return rels


def _analysis(sql: str) -> dict[str, object]:
    rels = _relations()
    a = analyze(sql, "spark", ("sales",), lambda keys: {k: rels[k] for k in keys if k in rels})
    return stored(a).model_dump(by_alias=True, exclude_none=True)


def test_the_way_is_recorded_from_the_name_the_sql_reads() -> None:
    a = _analysis("SELECT pay, v FROM sales.v_outer")
    (pay,) = [f for f in a["fieldOrigins"] if f["name"] == "pay"]  # type: ignore[attr-defined]
    assert pay["origins"] == [{"table": ["hr", "payroll"], "column": "secret_salary_amt",
                               "via": [["sales", "v_outer"], ["sales", "v_nested"],
                                       ["hr", "v_inner"]]}]


def test_an_origin_stops_at_the_first_hidden_object_on_its_way() -> None:
    a = _analysis("SELECT pay, v FROM sales.v_outer")
    assert redact.lineage(a, sales_only) == [
        {"name": "pay", "derived": False,
         "origins": [{"table": ["hr", "v_inner"], "redacted": True}]},
        {"name": "v", "derived": False, "origins": [{"table": ["sales", "t"], "column": "v"}]}]
    # Whoever reads everything gets each base column, once.
    assert redact.lineage(a, None)[0]["origins"] == [
        {"table": ["hr", "payroll"], "column": "secret_salary_amt"}]
    # Readable views on the way, a hidden table at the end: its name only.
    assert redact.lineage(a, lambda k: k != ("hr", "payroll"))[0]["origins"] == [
        {"table": ["hr", "payroll"], "redacted": True}]


def test_a_hidden_object_is_named_once_and_base_columns_once() -> None:
    deps = [{"key": ["hr", "v_inner"], "type": "ICEBERG_VIEW"},
            {"key": ["sales", "v2"], "type": "ICEBERG_VIEW"}]
    origins = [{"table": ["hr", "payroll"], "column": "a", "via": [["hr", "v_inner"]]},
               {"table": ["hr", "payroll"], "column": "b", "via": [["hr", "v_inner"]]},
               {"table": ["sales", "t"], "column": "v", "via": [["hr", "v_inner"]]},
               {"table": ["sales", "t"], "column": "v", "via": [["sales", "v2"]]}]
    assert redact.column_origins(origins, deps, sales_only) == [
        {"table": ["hr", "v_inner"], "redacted": True},
        {"table": ["sales", "t"], "column": "v"}]
    assert redact.column_origins(origins, deps, None) == [
        {"table": ["hr", "payroll"], "column": "a"}, {"table": ["hr", "payroll"], "column": "b"},
        {"table": ["sales", "t"], "column": "v"}]


def test_origins_recorded_without_their_way_are_redacted_no_less() -> None:
    """Before the way was recorded an origin named only the base table: one
    the SQL does not read itself came through a view it reads, so each
    hidden view the SQL reads stands for it."""
    deps = [{"key": ["hr", "v_inner"], "type": "ICEBERG_VIEW"},
            {"key": ["sales", "t"], "type": "ICEBERG_TABLE"}]
    origins = [{"table": ["hr", "payroll"], "column": "secret_salary_amt"},
               {"table": ["sales", "t"], "column": "v"},
               {"table": ["sales", "u"], "column": "w"}]
    assert redact.column_origins(origins, deps, sales_only) == [
        {"table": ["hr", "v_inner"], "redacted": True},
        {"table": ["sales", "t"], "column": "v"}]
    # With only readable views read, a hidden base keeps its name, as before.
    visible = [{"key": ["sales", "v2"], "type": "ICEBERG_VIEW"}]
    assert redact.column_origins(origins[:1], visible, sales_only) == [
        {"table": ["hr", "payroll"], "redacted": True}]


def test_refresh_records_leave_out_what_hidden_views_read() -> None:
    record = {"refresh-id": 1, "base-tables": {
        "hr.payroll": {"identifier": "hr.payroll", "snapshot-reference": 7},
        "hr.salaries": {"identifier": "hr.salaries", "snapshot-reference": 8},
        "sales.t": {"identifier": "sales.t", "snapshot-reference": 9}},
        "base-views": {"hr.v_inner": 1, "sales.v2": 3}}
    through_hidden = [{"key": ["hr", "v_inner"], "type": "ICEBERG_VIEW"},
                      {"key": ["hr", "salaries"], "type": "ICEBERG_TABLE"}]
    (shown,) = redact.refreshes([record], sales_only, through_hidden)
    assert shown["base-tables"] == {"hr.salaries": {"identifier": "hr.salaries",
                                                    "redacted": True}}
    assert shown["base-views"] == {}
    # Through readable views only: the readable bases; a hidden one the SQL
    # does not name is left out, one it names is named.
    (shown,) = redact.refreshes([{**record, "base-views": {"sales.v2": 3}}], sales_only,
                                [{"key": ["sales", "v2"], "type": "ICEBERG_VIEW"},
                                 {"key": ["hr", "salaries"], "type": "ICEBERG_TABLE"}])
    assert shown["base-tables"] == {
        "hr.salaries": {"identifier": "hr.salaries", "redacted": True},
        "sales.t": record["base-tables"]["sales.t"]}  # type: ignore[index]
    assert shown["base-views"] == {"sales.v2": 3}
    assert redact.refreshes([record], None, through_hidden) == [record]
