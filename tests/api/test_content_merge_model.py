"""Content merges against a model: random interleavings of appends on two
branches and main, with merges of either branch into main at any point
(again and again, and main merged back into a branch), always leave main
holding the multiset union of every row appended on a branch that was merged
(PyIceberg writes and scans through the server)."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.test_pyiceberg import SCHEMA
from tests.api.test_versioning_http import V2, head

_RUNS = itertools.count()
Step = tuple[str, str]  # ("append", branch) | ("merge", "a->main") …
STEPS = st.lists(st.one_of(
    st.tuples(st.just("append"), st.sampled_from(["a", "b", "main"])),
    st.tuples(st.just("merge"), st.sampled_from(["a->main", "b->main", "main->a"]))),
    min_size=3, max_size=12)


def _rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids]})


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=STEPS)
def test_appends_and_merges_give_the_multiset_union(server, store, http, ns: str,
                                                    steps: list[Step]) -> None:
    run = f"m{next(_RUNS)}"
    table = f"{ns}.{run}"
    main = server.catalog()
    main.create_table(table, SCHEMA).append(_rows([0]))
    names = {"main": "main"}
    for b in ("a", "b"):
        names[b] = f"{b}_{ns}_{run}"
        store.create_reference(names[b], source="main")
    cats = {b: server.catalog(n) if b != "main" else main for b, n in names.items()}
    # The rows each branch holds, as a model.
    model: dict[str, Counter[int]] = {b: Counter([0]) for b in names}
    next_id = 1
    for kind, arg in steps:
        if kind == "append":
            # Some ids repeat on purpose: a multiset, not a set.
            ids = [next_id, next_id, next_id + 1]
            next_id += 2
            cats[arg].load_table(table).append(_rows(ids))
            model[arg].update(ids)
            continue
        src, dst = arg.split("->")
        r = http.post(f"{V2}/trees/{names[dst]}@{head(http, names[dst])}/history/merge",
                      json={"fromRefName": names[src]})
        assert r.status_code == 200, r.text
        answer: dict[str, Any] = r.json()
        assert answer["wasSuccessful"], answer
        # Each append's ids are its own, so the union of two branches' rows
        # is the larger count of each id.
        model[dst] = model[dst] | model[src]
    for b, cat in cats.items():
        got = Counter(cat.load_table(table).scan().to_arrow().column("id").to_pylist())
        assert got == model[b], (b, steps)

