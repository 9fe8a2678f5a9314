"""The view corpus (tests/core/sql_corpus/, expectations written by hand):
every view's dependencies, unresolved names and per-column origins as the
analyser finds them, views created in order so later ones read earlier ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.sql.analysis import TABLE, VIEW, Analysis, Key, Relation, analyze

CORPUS = Path(__file__).parent / "sql_corpus"


def _load() -> tuple[dict[Key, Relation], list[dict[str, Any]]]:
    schema = json.loads((CORPUS / "schema.json").read_text())
    tables = {tuple(name.split(".")): Relation(tuple(name.split(".")), f"id:{name}", TABLE,
                                               tuple(cols.items()))
              for name, cols in schema["tables"].items()}
    return tables, json.loads((CORPUS / "views.json").read_text())


TABLES, VIEWS = _load() if (CORPUS / "views.json").exists() else ({}, [])


def _analyse_all() -> dict[str, Analysis]:
    known: dict[Key, Relation] = dict(TABLES)
    out: dict[str, Analysis] = {}
    for case in VIEWS:
        key = tuple(case["key"].split("."))
        a = analyze(case["sql"], "spark", tuple(case["default_namespace"]),
                    lambda keys: {k: known[k] for k in keys if k in known})
        out[case["key"]] = a
        if a.columns:
            known[key] = Relation(key, f"id:{case['key']}", VIEW,
                                  tuple((n, "string") for n, _ in a.columns), dict(a.columns))
    return out


RESULTS = _analyse_all()


def test_the_corpus_is_large_enough() -> None:
    assert len(VIEWS) >= 40
    assert sum(1 for c in VIEWS if c.get("spark")) >= 10


@pytest.mark.parametrize("case", VIEWS, ids=[c["key"] for c in VIEWS])
def test_view_matches_its_hand_written_expectation(case: dict[str, Any]) -> None:
    a = RESULTS[case["key"]]
    assert a.error is None, a.error
    assert sorted(".".join(d.key) for d in a.dependencies) == sorted(case["dependencies"])
    assert sorted(a.unresolved) == sorted(case["unresolved"])
    if case["unresolved"]:
        return
    assert not a.problems, a.problems
    # The base columns, each once: one reached two ways (a union of two
    # views over the same table) is two origins that differ in ``via``.
    got = {name: {"origins": sorted({o.dotted() for o in lin.origins}),
                  "derived": lin.derived} for name, lin in a.columns}
    # The way starts at a view this SQL reads; without one, at a table it reads.
    kinds = {d.key: d.kind for d in a.dependencies}
    for _, lin in a.columns:
        for o in lin.origins:
            assert kinds.get(o.via[0]) == "view" if o.via else kinds.get(o.table) == "table", o
    assert list(got) == list(case["columns"]), "output columns differ"
    for name, want in case["columns"].items():
        assert got[name] == {"origins": sorted(want["origins"]),
                             "derived": want["derived"]}, name
