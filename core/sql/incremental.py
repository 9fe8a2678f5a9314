"""Whether a materialized view can be refreshed from the rows appended to its
base table alone, and the SQL that does it (sqlglot).

Two shapes qualify, over exactly one base table:
- a filter/projection (``SELECT exprs FROM t WHERE p``): the appended rows
  run through the same SQL are appended to the storage;
- a re-aggregable ``GROUP BY`` whose outputs are its keys and ``sum``,
  ``count``, ``min``, ``max`` (no DISTINCT, no HAVING): the appended rows are
  aggregated the same way, then merged with the stored groups (sum and count
  add up, min and max take the smaller and larger).
Anything else (joins, subqueries, CTEs, set operations, windows, DISTINCT,
LIMIT, ORDER BY, non-deterministic functions, ``avg``) is refreshed in full;
the answer says why. Whether the base table only had appends is the
caller's to check (it reads the snapshots).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlglot import exp
from sqlglot.errors import SqlglotError

from core.sql.analysis import known_dialect
from core.sql.budget import OverBudget, parse_within_budget

# The names the engine gives the appended rows and the stored rows.
DELTA = "__sapwood_delta"
STORED = "__sapwood_stored"
DELTA_RESULT = "__sapwood_delta_result"

_MERGE = {exp.Sum: "sum", exp.Count: "sum", exp.Min: "min", exp.Max: "max"}
_VOLATILE = (exp.Rand, exp.CurrentTimestamp, exp.CurrentDate, exp.CurrentTime, exp.Uuid)


@dataclass(frozen=True, slots=True)
class IncrementalPlan:
    """``shape`` None: full refresh, ``why`` says what prevents an incremental one."""

    shape: Literal["append", "aggregate"] | None
    why: str = ""
    delta_sql: str = ""      # the view's SQL over DELTA
    merge_sql: str = ""      # aggregate: STORED and DELTA_RESULT merged


def full(why: str) -> IncrementalPlan:
    return IncrementalPlan(None, why)


def plan_incremental(sql: str, dialect: str, columns: list[str]) -> IncrementalPlan:
    """``columns``: the view's output column names, in order."""
    if not known_dialect(dialect):
        return full(f"sqlglot does not know the SQL dialect {dialect!r}")
    try:
        tree = parse_within_budget(sql, dialect)
    except OverBudget as e:
        return full(e.reason)
    except SqlglotError as e:
        return full(f"cannot parse the SQL: {str(e).splitlines()[0][:200]}")
    if not isinstance(tree, exp.Select):
        return full("not a single SELECT (a set operation or another statement)")
    def arg(name: str) -> exp.Expression | None:
        # sqlglot spells some argument names with a trailing underscore.
        return tree.args.get(name) or tree.args.get(f"{name}_")

    source = arg("from")
    for node, why in ((arg("with"), "a WITH clause"),
                      (arg("joins"), "a join"),
                      (arg("having"), "a HAVING clause"),
                      (arg("distinct"), "SELECT DISTINCT"),
                      (arg("limit"), "a LIMIT"),
                      (arg("order"), "an ORDER BY"),
                      (arg("laterals"), "a LATERAL VIEW")):
        if node:
            return full(f"the view has {why}")
    tables = list(tree.find_all(exp.Table))
    if len(tables) != 1 or not isinstance(source, exp.From) or source.this is not tables[0]:
        return full("the view does not read exactly one table directly")
    if any(isinstance(s, exp.Subquery | exp.Select) and s is not tree
           for s in tree.find_all(exp.Subquery, exp.Select)):
        return full("the view has a subquery")
    if tree.find(exp.Window):
        return full("the view has a window function")
    if tree.find(*_VOLATILE):
        return full("the view calls a non-deterministic function")
    if len(tree.expressions) != len(columns) or any(isinstance(e, exp.Star)
                                                     for e in tree.expressions):
        return full("the view's outputs are not one expression per column")
    delta = tree.copy()
    table = delta.find(exp.Table)
    alias = table.alias or table.name  # type: ignore[union-attr]
    table.replace(exp.to_table(DELTA).as_(alias))  # type: ignore[union-attr]
    delta_sql = delta.sql(dialect=dialect)
    group = arg("group")
    aggregates = [e for e in tree.expressions if e.find(exp.AggFunc)]
    if not group and not aggregates:
        return IncrementalPlan("append", delta_sql=delta_sql)
    keys = {k.sql(dialect=dialect) for k in (group.expressions if group else [])}
    merged: list[exp.Expr] = []
    key_columns: list[exp.Expr] = []
    # The appended rows are not aggregated on their own: each becomes a row
    # of partial values (sum/min/max: the value; count: 1 or 0) and one
    # GROUP BY over stored groups and those rows merges them: one shuffle.
    partial: list[exp.Expr] = []
    for name, out in zip(columns, tree.expressions, strict=True):
        inner = out.unalias() if isinstance(out, exp.Alias) else out
        col = exp.column(name, quoted=True)
        if inner.sql(dialect=dialect) in keys:
            merged.append(col.copy())
            key_columns.append(col.copy())
            partial.append(exp.alias_(inner.copy(), name, quoted=True))
            continue
        kind = _MERGE.get(type(inner)) if isinstance(inner, exp.AggFunc) else None
        if kind is None or inner.args.get("distinct") or isinstance(inner.this, exp.Distinct) \
                or any(isinstance(a, exp.AggFunc) for a in inner.this.find_all(exp.AggFunc)):
            return full(f"output {name} is not a group key or sum/count/min/max "
                        "of the rows")
        fn = {"sum": exp.Sum, "min": exp.Min, "max": exp.Max}[kind]
        merged.append(exp.alias_(fn(this=col.copy()), name, quoted=True))
        partial.append(exp.alias_(_partial(inner), name, quoted=True))
    union = exp.union(exp.select("*").from_(STORED), exp.select("*").from_(DELTA_RESULT),
                      distinct=False)
    merge = exp.select(*merged).from_(union.subquery("__sapwood_both"))
    if key_columns:
        merge = merge.group_by(*key_columns)
    rows = delta.copy()
    rows.set("expressions", partial)
    rows.set("group", None)
    rows.set("group_", None)
    return IncrementalPlan("aggregate", delta_sql=rows.sql(dialect=dialect),
                           merge_sql=merge.sql(dialect=dialect))


def _partial(agg: exp.Expr) -> exp.Expr:
    """One row's contribution to an aggregate the merge then sums or bounds."""
    arg = agg.this
    if isinstance(agg, exp.Count):
        if arg is None or isinstance(arg, exp.Star | exp.Literal):
            return exp.Literal.number(1)
        return exp.If(this=exp.Is(this=arg.copy(), expression=exp.Null()),
                      true=exp.Literal.number(0), false=exp.Literal.number(1))
    assert isinstance(arg, exp.Expr)  # sum/min/max of a value
    return arg.copy()
