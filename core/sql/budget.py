"""How much SQL the catalog analyses: a size, depth and time budget.

A view's SQL is analysed where it is written, inside the request; sqlglot's
passes recurse over the expression tree, so a 10,000-way ``UNION ALL`` or
500 nested subqueries would run for many seconds and then fail deep in the
interpreter. Before any pass runs, the text is measured (its length), parsed
(a linear pass; the parser's own recursion error is caught) and the tree is
measured without recursion (its depth, its number of nodes, its CTEs). SQL
over any limit is not analysed: a view is stored *unanalysed* with the
reason (the engine that sent it has validated it), and where the analysis is
required (a materialized view, a transpile) the request is refused naming
the limit. A deadline bounds the passes that follow on ordinary-looking SQL.

The limits are chosen so that the largest SQL they admit is analysed in well
under a second on one core (docs/limits.md gives the measurements).
"""

from __future__ import annotations

import time

from sqlglot import exp, parse_one

# Characters of SQL text analysed (a larger text is stored, not analysed).
MAX_SQL_CHARS = 256 * 1024
# Levels of the parsed expression tree: a chain of N set operations or of N
# binary operators is N levels; each nested subquery is about three.
MAX_TREE_DEPTH = 192
# Nodes of the parsed expression tree.
MAX_TREE_NODES = 20_000
# Columns that ``*`` may expand to: every star counted against the width of
# every relation the SQL reads (an upper bound, known before qualifying).
MAX_STAR_COLUMNS = 20_000
# Common table expressions in one statement (they are traced one through
# another, so a chain of them costs depth too).
MAX_CTES = 128
# CPU seconds one analysis may take before the passes left are skipped. The
# thread's own CPU time, not the wall clock: the limit is on the work a
# statement costs, so a busy machine (other requests, other processes) never
# turns a view it would analyse in 50 ms into "not analysed".
TIME_BUDGET_S = 0.75


class OverBudget(Exception):
    """The SQL is over one of the limits above; the message names it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_within_budget(sql: str, dialect: str) -> exp.Expr:
    """The parsed statement, if the SQL is within the size and depth
    limits; else OverBudget. Parse errors are sqlglot's, as they are."""
    if len(sql) > MAX_SQL_CHARS:
        raise OverBudget(f"the SQL is {len(sql):,} characters long; SQL longer than "
                         f"{MAX_SQL_CHARS:,} characters is not analysed")
    try:
        tree = parse_one(sql, read=dialect)
    except RecursionError:
        raise OverBudget("the SQL is nested too deeply for the parser; SQL nested deeper "
                         f"than {MAX_TREE_DEPTH} levels is not analysed") from None
    measure(tree)
    return tree


def measure(tree: exp.Expr) -> None:
    """OverBudget when the tree is deeper, larger or has more CTEs than the
    limits (walked with a stack of its own: no recursion)."""
    depth = nodes = ctes = 0
    stack: list[tuple[exp.Expr, int]] = [(tree, 1)]
    while stack:
        node, level = stack.pop()
        nodes += 1
        if level > depth:
            depth = level
            if depth > MAX_TREE_DEPTH:
                raise OverBudget(f"the SQL is nested more than {MAX_TREE_DEPTH} levels deep "
                                 "(set operations, operators or subqueries); SQL nested "
                                 f"deeper than {MAX_TREE_DEPTH} levels is not analysed")
        if nodes > MAX_TREE_NODES:
            raise OverBudget(f"the SQL has more than {MAX_TREE_NODES:,} syntax nodes; larger "
                             "SQL is not analysed")
        if isinstance(node, exp.CTE):
            ctes += 1
            if ctes > MAX_CTES:
                raise OverBudget(f"the SQL has more than {MAX_CTES} common table expressions; "
                                 "SQL with more is not analysed")
        for value in node.args.values():
            if isinstance(value, exp.Expr):
                stack.append((value, level + 1))
            elif isinstance(value, list):
                stack.extend((v, level + 1) for v in value if isinstance(v, exp.Expr))


def check_stars(tree: exp.Expr, widths: list[int]) -> None:
    """OverBudget when expanding the tree's stars could make more columns
    than MAX_STAR_COLUMNS (``widths``: the relations it reads)."""
    stars = sum(1 for _ in tree.find_all(exp.Star))
    if stars and stars * max(1, sum(widths)) > MAX_STAR_COLUMNS:
        raise OverBudget(f"the SQL's {stars} '*' over tables of {sum(widths)} columns could "
                         f"expand to more than {MAX_STAR_COLUMNS:,} columns; such SQL is not "
                         "analysed")


class Deadline:
    """The CPU time an analysis may take; ``check`` between its passes, in the
    thread that made it (a request's analyses run in its one worker thread)."""

    def __init__(self, budget_s: float = TIME_BUDGET_S) -> None:
        self.budget_s = budget_s
        self.end = time.thread_time() + budget_s

    def check(self, step: str) -> None:
        if time.thread_time() > self.end:
            raise OverBudget(f"analysis took more than {self.budget_s:g} s of CPU time "
                             f"(stopped before {step}); such SQL is not analysed")
