"""The change index against plain walks: random histories (branches off
branches, creates, updates, renames, drops and re-creates, several authors,
merges and transplants, one branch never merged anywhere), then lineage,
filtered logs and ``~n`` / ``*T`` resolution, answered from the index, must
equal what a walk over the commits themselves finds."""

from __future__ import annotations

import random

import pytest

from core.commits import CommitMeta, Delete, MergeBehavior, Operation, OpKind, Put
from core.errors import CommitNotFoundError
from core.instants import format_instant, from_micros
from core.keys import ContentKey
from store import Store
from store.commit_records import CommitRecord
from tests.store.helpers import K, table, view, with_ns

KEYS = [K(f"ns.t{i}") for i in range(10)]
AUTHORS = ["alice", "bob", "carol"]
SOLO = "solo"  # never a merge or transplant source: its commits stay its own
NEW_BRANCHES = {6: "b1", 12: SOLO, 20: "b2", 30: "b3"}  # step -> branch created


def _author(rnd: random.Random) -> str | None:
    return rnd.choice([*AUTHORS, None])


def _change(store: Store, rnd: random.Random, branch: str, j: int) -> None:
    have = store.contents(branch, KEYS)
    free = [k for k in KEYS if k not in have]
    ops: list[Operation] = []
    for _ in range(rnd.choice((1, 1, 1, 2))):
        kinds = (["new"] if free else []) + (["update", "update", "drop"] if have else []) \
            + (["rename"] if have and free else [])
        kind = rnd.choice(kinds)
        if kind == "new":  # a new content id, maybe under a key dropped before
            key = free.pop(rnd.randrange(len(free)))
            value = table(f"{branch}{j}") if rnd.random() < 0.7 else view(f"{branch}{j}")
            ops.append(Put(key, value))
            continue
        old = rnd.choice(sorted(have, key=str))
        cur = have.pop(old)
        if kind == "update":
            ops.append(Put(old, cur.model_copy(update={"metadata_location": f"{branch}{j}"}),
                           expected=cur))
        elif kind == "drop":
            ops.append(Delete(old, expected=cur))
        else:  # rename: same content id, new key
            new = free.pop(rnd.randrange(len(free)))
            ops += [Delete(old, expected=cur), Put(new, cur)]
    store.commit(branch, ops, CommitMeta(f"{branch} {j}", author=_author(rnd)))


def _reachable(store: Store, head: str) -> dict[str, CommitRecord]:
    seen: dict[str, CommitRecord] = {}
    todo = [head]
    while todo:
        h = todo.pop()
        if h not in seen:
            seen[h] = rec = store.reader.commit(h)
            todo += rec.parents
    return seen


def _chain(store: Store, head: str) -> list[CommitRecord]:
    """First-parent chain, head first, the root last."""
    out = [store.reader.commit(head)]
    while out[-1].parents:
        out.append(store.reader.commit(out[-1].parents[0]))
    return out


def _transplant(store: Store, rnd: random.Random, source: str, onto: str) -> None:
    there = _reachable(store, store.get_reference(onto).hash)
    picked = [r.hash for r in _chain(store, store.get_reference(source).hash)[:3]
              if r.hash not in there]
    if picked:
        picked = picked[:rnd.randint(1, len(picked))]
        store.transplant(picked[::-1], onto, raise_on_conflict=False)


def _grow(store: Store, rnd: random.Random, steps: int) -> list[str]:
    with_ns(store, "main", "ns")
    branches = ["main"]
    for j in range(steps):
        if j in NEW_BRANCHES:
            store.create_reference(NEW_BRANCHES[j], source=rnd.choice(branches))
            branches.append(NEW_BRANCHES[j])
        branch = rnd.choice(branches)
        sources = [b for b in branches if b not in (branch, SOLO)]
        r = rnd.random()
        if r < 0.2 and sources:
            mode = rnd.choice((MergeBehavior.NORMAL, MergeBehavior.FORCE))
            source = rnd.choice(sources)
            store.merge(source, branch, default_mode=mode, raise_on_conflict=False,
                        meta=CommitMeta(f"merge {source} into {branch}", author=_author(rnd)))
        elif r < 0.3 and sources:
            _transplant(store, rnd, rnd.choice(sources), branch)
        else:
            _change(store, rnd, branch, j)
    return branches


def _all_log(store: Store, spec: str, size: int, **filters: object) -> list[str]:
    out: list[str] = []
    token: str | None = None
    while True:
        page = store.log(spec, page_token=token, page_size=size, **filters)  # type: ignore[arg-type]
        out += [c.hash for c in page.items]
        if not (token := page.next_token):
            return out


def _ref_log(chain: list[CommitRecord], key: ContentKey | None = None,
             author: str | None = None, since: int | None = None,
             until: int | None = None) -> list[str]:
    return [r.hash for r in chain if r.parents
            and (key is None or any(op.key == key for op in r.operations))
            and (author is None or r.author == author)
            and (since is None or r.created_us >= since)
            and (until is None or r.created_us <= until)]


def _check_spec(store: Store, rnd: random.Random, spec: str, head: str,
                ids: list[str]) -> None:
    reach = _reachable(store, head)
    for cid in ids:
        want = sorted(h for h, r in reach.items() for op in r.operations
                      if op.kind is OpKind.PUT and op.entry is not None
                      and op.entry.content_id == cid)
        got = [c.hash for c in store.lineage(spec, cid)]
        assert sorted(got) == sorted(set(want)), (spec, cid)
        times = [reach[h].created_us for h in got]
        assert times == sorted(times, reverse=True), (spec, cid)

    chain = _chain(store, head)
    times = sorted(r.created_us for r in chain)
    size = rnd.choice((1, 3, 100))
    assert _all_log(store, spec, size) == _ref_log(chain), spec
    for key in [*KEYS, K("ns")]:
        assert _all_log(store, spec, size, key=key) == _ref_log(chain, key=key), (spec, key)
    for who in AUTHORS:
        assert _all_log(store, spec, size, author=who) == _ref_log(chain, author=who), \
            (spec, who)
    for _ in range(3):
        since, until = sorted(rnd.sample(times, 2)) if len(times) > 1 else (times[0],) * 2
        since += rnd.choice((-1, 0, 1))
        until += rnd.choice((-1, 0, 1))
        key, who = rnd.choice(KEYS), rnd.choice(AUTHORS)
        for f in ({"since_us": since, "until_us": until}, {"since_us": since},
                  {"until_us": until}, {"key": key, "since_us": since, "until_us": until},
                  {"author": who, "until_us": until}, {"key": key, "author": who}):
            want = _ref_log(chain, f.get("key"), f.get("author"),  # type: ignore[arg-type]
                            f.get("since_us"), f.get("until_us"))  # type: ignore[arg-type]
            assert _all_log(store, spec, size, **f) == want, (spec, f)


def _check_resolve(store: Store, rnd: random.Random, name: str, head: str) -> None:
    chain = _chain(store, head)
    depth = len(chain) - 1
    for n in {0, 1, depth // 2, rnd.randint(0, depth), depth, depth + 1}:
        for spec in (f"{name}~{n}", f"@{head}~{n}"):
            if n > depth:
                with pytest.raises(CommitNotFoundError):
                    store.resolve(spec)
            else:
                assert store.resolve(spec).hash == chain[n].hash, spec
    picks = rnd.sample(chain, min(4, len(chain)))
    instants = [chain[-1].created_us - 1, chain[0].created_us + 1] + \
        [r.created_us + d for r in picks for d in (-1, 0, 1)]
    for t in instants:
        want = next((r.hash for r in chain if r.created_us <= t), None)
        at = format_instant(from_micros(t))
        # ``name*T`` is the reflog's head at T; after a hash or ``~0`` it walks the chain.
        for spec in (f"@{head}*{at}", f"{name}~0*{at}"):
            if want is None:
                with pytest.raises(CommitNotFoundError):
                    store.resolve(spec)
            else:
                assert store.resolve(spec).hash == want, spec


@pytest.mark.parametrize("seed", [3, 17, 2026])
def test_change_index_answers_as_the_walks_do(store: Store, seed: int,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(seed)
    branches = _grow(store, rnd, 60)
    heads = {b: store.get_reference(b).hash for b in branches}
    every: dict[str, CommitRecord] = {}
    for h in heads.values():
        every.update(_reachable(store, h))
    ids = sorted({op.entry.content_id for r in every.values() for op in r.operations
                  if op.kind is OpKind.PUT and op.entry is not None})
    solo_only = set(_reachable(store, heads[SOLO])) - set().union(
        *(_reachable(store, h) for b, h in heads.items() if b != SOLO))
    assert solo_only, "the unmerged branch should have commits of its own"
    assert any(len(r.parents) > 1 for r in every.values()), "no merge was written"
    older = rnd.sample(sorted(every), 4)

    cold = Store(store.db.url)  # nothing cached: every answer from the tables
    try:
        for s in (store, cold):
            if s is cold:  # posting lists read in many small batches
                monkeypatch.setattr("store.changes._BATCH", 2)
            for name, h in heads.items():
                _check_spec(s, rnd, name, h, ids)
                _check_resolve(s, rnd, name, h)
            for h in older:
                _check_spec(s, rnd, f"@{h}", h, ids)
    finally:
        cold.close()
