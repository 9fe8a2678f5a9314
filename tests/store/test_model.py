"""The store against a plain-dict model: random puts, updates and deletes on
two branches with merges, then every commit read back by a cold process must
show exactly the model's keys and values at that commit (this exercises the
delta chains, their materialization and cold chain loading)."""

import random

import pytest

from core.commits import CommitMeta, Delete, MergeBehavior, Put
from core.keys import ContentKey
from store import Store
from store.fsck import fsck
from store.state import DEPTH_LIMIT
from tests.store.helpers import K, table, with_ns

KEYS = [K(f"ns.k{i:02d}") for i in range(90)]  # > DELTA_LIMIT distinct keys


def _step(store: Store, rnd: random.Random, branch: str,
          model: dict[ContentKey, str], j: int) -> str:
    ops = []
    for key in rnd.sample(KEYS, rnd.choice((1, 1, 1, 2, 5))):
        if key in model and rnd.random() < 0.25:
            ops.append(Delete(key, expected=store.content(branch, key)))
            del model[key]
        elif key in model:
            cur = store.content(branch, key)
            ops.append(Put(key, cur.model_copy(update={"metadata_location": f"{branch}{j}"}),
                           expected=cur))
            model[key] = f"{branch}{j}"
        else:
            ops.append(Put(key, table(f"{branch}{j}")))
            model[key] = f"{branch}{j}"
    return store.commit(branch, ops, CommitMeta(f"{branch} {j}")).hash


@pytest.mark.parametrize("seed", [1, 2])
def test_every_commit_reads_back_as_the_model_says(store: Store, seed: int):
    rnd = random.Random(seed)
    with_ns(store, "main", "ns")
    models: dict[str, dict[ContentKey, str]] = {"main": {}}
    base: dict[ContentKey, str] = {}  # main as dev last saw it
    snapshots: dict[str, dict[ContentKey, str]] = {}
    for j in range(3 * DEPTH_LIMIT):
        if j == DEPTH_LIMIT // 2:
            store.create_reference("dev")
            models["dev"] = dict(models["main"])
            base = dict(models["main"])
        branch = "dev" if "dev" in models and rnd.random() < 0.4 else "main"
        h = _step(store, rnd, branch, models[branch], j)
        snapshots[h] = dict(models[branch])
        if "dev" in models and j % 40 == 39:  # bring main's changes to dev
            res = store.merge("main", "dev", default_mode=MergeBehavior.FORCE)
            main, dev = models["main"], models["dev"]
            for key in base.keys() | main.keys():
                if main.get(key) != base.get(key):  # main changed it: FORCE takes it
                    if key in main:
                        dev[key] = main[key]
                    else:
                        dev.pop(key, None)
            base = dict(main)
            if res.result_hash:
                snapshots[res.result_hash] = dict(dev)

    cold = Store(store.db.url)
    try:
        for h, expected in rnd.sample(sorted(snapshots.items()), 60):
            got = {e.key: e.content.metadata_location  # type: ignore[union-attr]
                   for e in cold.entries(f"@{h}", K("ns"), with_content=True).items}
            assert got == expected, h
            cold.reader.clear_caches()
    finally:
        cold.close()
    assert fsck(store).problems == []

