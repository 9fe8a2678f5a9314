"""Nessie's ``filter`` parameter — a CEL expression — on the commit log and on
entries (issue 43, defect 12: it was ignored, and every commit came back as
if it matched). Compiled and evaluated with cel-python (``celpy``), the
Common Expression Language's Python implementation; never answered
unfiltered.

Compiling checks, before anything is read, that the filter is at most
``MAX_LENGTH`` characters and ``MAX_DEPTH`` levels deep (cel-python's
evaluator recurses once per level), parses, and names only what is
provided (core.cel_check: anything else is a 400 naming it). A filter is
compiled once per process (``compile_filter`` is cached).

Evaluating (``Evaluation``, one per request) builds only the fields the
filter reads and remembers its answer per distinct value of them (a filter
on ``commit.author`` runs once per author, not once per commit). It must
answer ``true`` or ``false``: anything else, or an evaluation error (a
missing map key, a type mismatch), is a 400 naming the problem and the
commit or key it met. Each evaluation counts against the request's
``BUDGET``; ``fill`` stops a page early when it is spent, with a token past
what was looked at, so a request's CPU is bounded (the feed's hidden
stretches are paged alike).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

import celpy
from celpy import celtypes as T
from celpy.celparser import CELParseError
from celpy.evaluation import Activation, CELEvalError, Evaluator
from lark import Token, Tree

from core.cel_check import FUNCTIONS, PASS, Check, Node
from core.cel_values import (
    ENTRIES,
    HISTORY,
    Needs,
    Shape,
    commit_projection,
    commit_values,
    entry_projection,
    entry_values,
)
from core.commits import Commit, Entry, Page
from core.errors import bad_request

MAX_LENGTH = 1000
MAX_DEPTH = 300
# Evaluations per request (an operation counts an eighth: a macro over a
# commit's operations runs its body once per operation).
BUDGET = 500
MAX_CHUNK = 1000
KINDS: dict[str, dict[str, Shape]] = {"history": HISTORY, "entries": ENTRIES}
X = TypeVar("X")
# Names the filter reads its constants by (a user's names are checked
# before these exist, so none can be one).
_CONSTANT = "_sapwood_constant_"
_CONSTANT_PARTS = PASS | {"literal", "exprlist", "list_lit"}


class _Runner(celpy.InterpretedRunner):
    """cel-python's interpreter with its base activation built once (building
    it per evaluation was most of an evaluation's time); each evaluation
    clones it, so runs in several threads do not meet. A call on constants
    (``timestamp('2024-05-31T08:23:15Z')``) is evaluated once, here, and
    the filter reads its value as a name (parsing the instant again for
    every commit tripled a time filter's cost)."""

    def __init__(self, environment: celpy.Environment, ast: Node) -> None:
        super().__init__(environment, ast)
        self._base: Activation = self.new_activation()
        for i, node in enumerate(_constant_calls(ast)):
            try:
                value = Evaluator(ast=node, activation=self._base).evaluate()
            except CELEvalError:
                continue  # an error only if it is reached (``c ? int('x') : …``): left as is
            name = f"{_CONSTANT}{i}"
            self._base.identifiers.load_values({name: value})
            node.children = [Tree("ident", [Token("IDENT", name)])]

    def evaluate(self, context: Any) -> Any:
        return Evaluator(ast=self.ast, activation=self._base).evaluate(context)


@dataclass(frozen=True)
class CompiledFilter:
    text: str
    kind: str
    needs: Needs
    runner: _Runner


@lru_cache(maxsize=256)
def compile_filter(text: str, kind: str) -> CompiledFilter:
    """``text`` compiled for the ``kind`` of listing ("history", "entries"):
    a 400 naming what is wrong or not provided."""
    if len(text) > MAX_LENGTH:
        raise bad_request(f"The filter has {len(text)} characters; at most {MAX_LENGTH} are "
                          "taken")
    env = celpy.Environment()  # one per compile: its parser keeps the text it parses
    try:
        ast = env.compile(text)
    except CELParseError as e:
        raise bad_request(f"The filter does not parse: {_short(str(e.args[0]))}") from None
    except RecursionError:
        raise bad_request(f"The filter is nested too deeply (at most {MAX_DEPTH} levels)") \
            from None
    if _depth(ast) > MAX_DEPTH:
        raise bad_request(f"The filter is nested too deeply (at most {MAX_DEPTH} levels)")
    needs = Needs()
    Check(KINDS[kind], needs).top(ast)
    return CompiledFilter(text, kind, needs, _Runner(env, ast))


def _constant_calls(tree: Node) -> list[Node]:
    """The ``primary`` nodes that call a function on literals only."""
    found = []
    for node in tree.iter_subtrees():
        kids = node.children
        if node.data == "primary" and len(kids) == 1 and isinstance(kids[0], Tree) and \
                kids[0].data == "ident_arg" and str(kids[0].children[0]) in FUNCTIONS and \
                all(n.data in _CONSTANT_PARTS for n in kids[0].iter_subtrees()
                    if n is not kids[0]):
            found.append(node)
    return found


def _depth(tree: Node) -> int:
    """The tree's depth, walked without recursion."""
    deepest, todo = 0, [(tree, 1)]
    while todo:
        node, d = todo.pop()
        deepest = max(deepest, d)
        todo.extend((c, d + 1) for c in node.children if isinstance(c, Tree))
    return deepest


def _short(text: str) -> str:
    return text if len(text) <= 300 else text[:300] + "…"


_OPERATORS = {"relation_lt": "<", "relation_le": "<=", "relation_gt": ">", "relation_ge": ">=",
              "relation_eq": "==", "relation_ne": "!=", "relation_in": "in",
              "addition_add": "+", "addition_sub": "-", "multiplication_mul": "*",
              "multiplication_div": "/", "multiplication_mod": "%"}


def _eval_error(e: CELEvalError) -> str:
    """cel-python's message, with its operator tokens and type classes
    written as CEL writes them, and the missing key when there is one."""
    text = str(e.args[0]) if e.args else "evaluation error"
    text = re.sub(r"Token\('RULE', '(\w+)'\)", lambda m: _OPERATORS.get(m[1], m[1]), text)
    text = re.sub(r"<class 'celpy\.celtypes\.(\w+?)Type'>", lambda m: m[1].lower(), text)
    if text == "no such key" and len(e.args) > 2 and e.args[2]:
        text += f" {str(e.args[2][0])!r}"
    return _short(text)


class Evaluation:
    """One request's use of a compiled filter: answers remembered per
    distinct value of what it reads, evaluations counted against
    ``budget``."""

    def __init__(self, compiled: CompiledFilter, budget: int = BUDGET) -> None:
        self.compiled = compiled
        self.left = budget
        self._memo: dict[Hashable, bool] = {}

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def commit(self, c: Commit) -> bool:
        needs = self.compiled.needs
        seen = commit_projection(c, needs)
        if seen is not None and seen in self._memo:
            return self._memo[seen]
        cost = 1 + (len(c.operations) // 8 if "operations" in needs.variables else 0)
        answer = self._run(commit_values(c, needs), f"commit {c.hash[:12]}", cost)
        if seen is not None:
            self._memo[seen] = answer
        return answer

    def entry(self, e: Entry) -> bool:
        seen = entry_projection(e, self.compiled.needs)
        if seen not in self._memo:
            self._memo[seen] = self._run(entry_values(e, self.compiled.needs),
                                         f"key '{e.key}'", 1)
        return self._memo[seen]

    def _run(self, values: dict[str, Any], what: str, cost: int) -> bool:
        self.left -= cost
        try:
            found = self.compiled.runner.evaluate(values)
        except CELEvalError as e:
            raise bad_request(f"The filter failed on {what}: {_eval_error(e)}") from None
        except Exception as e:  # cel-python's own failure on this input: still the filter's
            raise bad_request(f"The filter failed on {what}: {type(e).__name__}: "
                              f"{_short(str(e))}") from None
        if not isinstance(found, T.BoolType):
            raise bad_request(f"The filter must answer true or false; it gave "
                              f"{type(found).__name__.removesuffix('Type').lower()} "
                              f"{_short(str(found))!r} on {what}")
        return bool(found)


def fill(fetch: Callable[[str | None, int], Page[X]], cursor: str | None, size: int,
         keep: Callable[[X], bool], resume: Callable[[X], str], spent: Callable[[], bool],
         stop: Callable[[X], bool] | None = None) -> tuple[list[X], str | None]:
    """A page of up to ``size`` items ``keep`` accepts, walking the
    listing ``fetch(cursor, n)`` pages from ``cursor`` (chunks from ``size``
    doubling to ``MAX_CHUNK``), and the cursor after what was looked at
    (None: nothing follows). It stops early, with that cursor, once
    ``spent()``; an item ``stop`` accepts ends the listing (a log's
    retention cutoff: nothing past it is looked at). ``resume(item)`` is the
    cursor that starts at ``item``."""
    out: list[X] = []
    chunk = size
    while True:
        page = fetch(cursor, chunk)
        for i, item in enumerate(page.items):
            if stop is not None and stop(item):
                return out, None
            if keep(item):
                out.append(item)
            if len(out) >= size or spent():
                rest = page.items[i + 1:]
                return out, resume(rest[0]) if rest else page.next_token
        if page.next_token is None:
            return out, None
        cursor = page.next_token
        chunk = min(chunk * 2, MAX_CHUNK)
