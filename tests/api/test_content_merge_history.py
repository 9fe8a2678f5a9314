"""Content merges whose merge base is itself a combined snapshot: a table's
history is a graph (a combined snapshot's parents are the target's snapshot
it sits on and the source's it brought in), and a side continues the base's
history when the base's snapshot is reachable through either, at any depth.
The sequence the model test (test_content_merge_model.py) found, step by
step over HTTP with PyIceberg writing and reading; and a rollback past the
base still refused."""

from __future__ import annotations

from collections import Counter
from typing import Any

from tests.api.test_content_merge import branches, detail, merge
from tests.api.test_pyiceberg import SCHEMA, rows


def test_a_base_brought_in_by_a_merge_of_a_merge_continues(server, store, http,
                                                           ns: str) -> None:
    key = f"{ns}.t"
    main = server.catalog()
    main.create_table(key, SCHEMA).append(rows(1))
    a, b = branches(server, store, ns, "a", "b")
    cats = {"main": main, "a": a, "b": b}
    names = {"main": "main", "a": f"a_{ns}", "b": f"b_{ns}"}
    model = {n: Counter([0]) for n in cats}
    start = 100

    def append(on: str) -> None:
        nonlocal start
        cats[on].load_table(key).append(rows(3, start=start))
        model[on].update(range(start, start + 3))
        start += 100

    def merged(src: str, dst: str) -> dict[str, Any]:
        r = merge(http, names[src], into=names[dst])
        assert r.status_code == 200 and r.json()["wasApplied"], (src, dst, r.text)
        model[dst] |= model[src]
        return detail(r.json(), key)

    append("a")
    append("b")
    merged("a", "main")
    merged("b", "main")   # a combined snapshot on main, bringing in b's
    append("a")
    append("b")
    merged("main", "a")   # a's combines main's combined snapshot
    merged("a", "main")   # main takes a's value as it is
    # The base (b's first append) is reached only through main's combined
    # snapshot brought in by a's combined snapshot: it continues.
    d = merged("b", "main")
    assert d["outcome"] == "MERGED", d
    # The target added a's two appends since the base; b's first append came
    # with the base (combined snapshots are not counted again).
    assert d["combined"]["files"] == {"source": 1, "target": 2}, d
    assert d["combined"]["rows"] == {"source": 3, "target": 6}, d
    for n in ("main", "a", "b"):
        got = Counter(cats[n].load_table(key).scan().to_arrow().column("id").to_pylist())
        assert got == model[n], n

    # A rollback past the base is still refused: main's table back to before
    # b's second append came in, then b merged again (its base: that append).
    t = main.load_table(key)
    before_b = t.metadata.snapshot_by_id(t.metadata.current_snapshot_id).parent_snapshot_id
    t.manage_snapshots().rollback_to_snapshot(before_b).commit()
    append("b")
    r = merge(http, names["b"], returnConflictAsResult=True)
    assert r.status_code == 200, r.text
    d = detail(r.json(), key)
    assert d["outcome"] == "CONFLICT", d
    assert "the target's table history does not continue the merge base's" \
        in d["conflict"]["message"], d
