"""The analysis budget (core.sql.budget): each limit stops analysis with a
reason that names it, before any pass that could run long or recurse."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from core.sql import budget
from core.sql.analysis import TABLE, Key, Relation, analyze
from core.sql.budget import Deadline, OverBudget, parse_within_budget
from core.sql.transpile import transpile

WIDE = tuple((f"c{i}", "bigint") for i in range(50))


def tables(keys: Sequence[Key]) -> dict[Key, Relation]:
    return {k: Relation(k, f"id-{k[-1]}", TABLE, WIDE) for k in keys if k[-1].startswith("t")}


def reason(sql: str) -> str:
    a = analyze(sql, "spark", ("ns",), tables)
    assert a.error is not None and a.error.startswith("not analysed: "), a
    return a.error


def test_each_limit_names_itself() -> None:
    assert "characters long" in reason("SELECT '" + "x" * budget.MAX_SQL_CHARS + "' AS x")
    deep = " UNION ALL ".join(["SELECT c1 FROM ns.t1"] * (budget.MAX_TREE_DEPTH + 1))
    assert f"more than {budget.MAX_TREE_DEPTH} levels" in reason(deep)
    wide = "SELECT " + ", ".join(f"c{i % 50} AS x{i}" for i in range(8000)) + " FROM ns.t1"
    assert "syntax nodes" in reason(wide)
    ctes = ", ".join(["c0 AS (SELECT c1 FROM ns.t1)"] + [
        f"c{i} AS (SELECT c1 FROM c{i - 1})" for i in range(1, budget.MAX_CTES + 1)])
    assert "common table expressions" in reason(f"WITH {ctes} SELECT c1 FROM c{budget.MAX_CTES}")
    stars = " UNION ALL ".join(["SELECT * FROM ns.t1"] * 60)  # 60 * 50 columns fit
    # (the star limit is what is tested here: a busy machine must not trip the
    # time budget, tested on its own below)
    assert analyze(stars, "spark", ("ns",), tables, deadline=Deadline(60)).error is None
    stars = "SELECT " + ", ".join(["*"] * 401) + " FROM ns.t1"  # 401 * 50 do not
    assert "could expand" in reason(stars)


def test_the_parsers_own_recursion_is_caught() -> None:
    sql = "SELECT " + "(" * 5000 + "1" + ")" * 5000 + " AS x"
    with pytest.raises(OverBudget, match="nested too deeply"):
        parse_within_budget(sql, "spark")
    assert "nested too deeply" in reason(sql)


def test_a_spent_deadline_stops_before_the_next_pass() -> None:
    a = analyze("SELECT c1 FROM ns.t1", "spark", ("ns",), tables, deadline=Deadline(0))
    assert a.error is not None and "took more than 0 s of CPU time" in a.error, a
    assert analyze("SELECT c1 FROM ns.t1", "spark", ("ns",), tables).error is None


def test_ctes_that_read_several_earlier_ones_are_traced_once_each() -> None:
    # Each CTE reads the two before it: 2^60 paths, 60 CTEs to trace.
    ctes = ", ".join(["c0 AS (SELECT c1, c2 FROM ns.t1)", "c1 AS (SELECT c1, c2 FROM c0)"] + [
        f"c{i} AS (SELECT a.c1, b.c2 FROM c{i - 1} a JOIN c{i - 2} b ON a.c1 = b.c1)"
        for i in range(2, 60)])
    a = analyze(f"WITH {ctes} SELECT c1, c2 FROM c59", "spark", ("ns",), tables)
    assert a.error is None and not a.problems, a
    assert [(name, [o.column for o in lin.origins]) for name, lin in a.columns] == [
        ("c1", ["c1"]), ("c2", ["c2"])]


def test_transpile_keeps_to_the_budget() -> None:
    deep = " UNION ALL ".join(["SELECT 1 AS x"] * 1000)
    with pytest.raises(ValueError, match="levels deep"):
        transpile(deep, "spark", "trino")
    with pytest.raises(ValueError, match="nested too deeply"):
        transpile("SELECT " + "(" * 5000 + "1" + ")" * 5000, "spark", "trino")
    assert transpile("SELECT concat(a, b) FROM t", "spark", "duckdb") == "SELECT a || b FROM t"
