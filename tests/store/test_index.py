"""The key index, driven through real commits and checked against a dict."""

import itertools
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from core.commits import CommitMeta, Delete, Put
from store import Store
from store.nodes import FANOUT_BITS
from store.objects import PACK_OBJECTS
from store.schema import COMMITS
from store.state import DELTA_LIMIT, DEPTH_LIMIT
from tests.store.helpers import K, table, with_ns

ops = st.lists(st.tuples(st.integers(0, 300), st.none() | st.integers(0, 10**6)),
               min_size=1, max_size=80)


def _nodes_in_pack(store: Store, commit_hash: str) -> int:
    with store.db.read() as conn:
        pack = conn.execute(select(COMMITS.c.pack).where(COMMITS.c.hash == commit_hash)).scalar()
    return sum(1 for obj in bytes(pack or b"").decode().split("\x1c") if obj[:1] == "n")


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(ops, min_size=1, max_size=4))
def test_commits_match_a_dict_and_shape_is_history_independent(tmp_path_factory, batches):
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('ix') / 'ix.db'}")
    try:
        with_ns(store, "main", "ns")
        model: dict[str, object] = {}
        states = [(store.get_reference("main").hash, {})]
        for batch in batches:
            changes: dict[str, int | None] = {}
            for k, v in batch:
                changes[f"ns.k{k:04d}"] = v
            operations = []
            for key, v in changes.items():
                if v is None:
                    if key in model:
                        operations.append(Delete(K(key)))
                        del model[key]
                elif key in model:
                    new = model[key].model_copy(update={"metadata_location": str(v)})
                    operations.append(Put(K(key), new, expected=model[key]))
                    model[key] = new
                else:
                    operations.append(Put(K(key), table(str(v))))
                    model[key] = None
            res = store.commit("main", operations, CommitMeta("batch"))
            for key, cid in res.assigned_ids.items():
                model[str(key)] = store.content("main", key)
                assert model[str(key)].id == cid
            store.reader.clear_caches()  # read everything back from the database
            got = {str(e.key): e.content for e in store.entries("main", namespace=K("ns"),
                                                                  with_content=True).items}
            assert got == model
            states.append((res.hash, dict(model)))
        for (ha, ma), (hb, mb) in itertools.pairwise(states):
            expected = sorted(k for k in ma.keys() | mb.keys() if ma.get(k) != mb.get(k))
            assert [str(d.key) for d in store.diff(f"@{ha}", f"@{hb}").items] == expected
    finally:
        store.close()


def test_equal_maps_have_equal_roots_whatever_the_order(store: Store):
    with_ns(store, "main", "ns")
    store.commit("main", [Put(K(f"ns.t{i:03d}"), table(str(i))) for i in range(300)])
    store.create_reference("other")
    values = {i: store.content("main", K(f"ns.t{i:03d}")) for i in range(300)}

    def rename(branch: str, ids: list[int]) -> None:
        store.commit(branch, [op for i in ids for op in (
            Delete(K(f"ns.t{i:03d}")), Put(K(f"ns.u{i:03d}"), values[i]))])

    rename("main", list(range(300)))
    for chunk in (range(200, 300), range(0, 100), range(100, 200)):
        rename("other", list(reversed(chunk)))
    a = store.reader.commit(store.get_reference("main").hash).root
    b = store.reader.commit(store.get_reference("other").hash).root
    assert a[0] == b[0]
    assert a[1] != b[1]  # stored in different packs, still the same identity
    assert store.diff("main", "other").items == []


def test_lookup_and_commit_touch_a_logarithmic_number_of_nodes(store: Store):
    with_ns(store, "main", "ns")
    n = 3000
    for start in range(0, n, 500):
        store.commit("main", [Put(K(f"ns.t{i:05d}"), table(str(i)))
                              for i in range(start, start + 500)], CommitMeta("bulk"))
    root = store.reader.commit(store.get_reference("main").hash).root
    depth = store.reader.load_node(root).level + 1
    assert depth <= 2 + math.log(n, 2 ** FANOUT_BITS)

    store.reader.clear_caches()
    assert store.index.get(root, K("ns.t01234").internal) is not None
    # one pack per level of the path, each of at most PACK_OBJECTS objects
    assert len(store.reader.nodes) <= depth * PACK_OBJECTS

    # A small commit keeps its change in its own delta and writes no node; the
    # commit that spills the delta rewrites the paths of all its keys once.
    written = []
    for i in range(DELTA_LIMIT + 1):
        k = K(f"ns.t{i * 37:05d}")
        cur = store.content("main", k)
        res = store.commit("main", [Put(k, cur.model_copy(
            update={"metadata_location": "changed"}), expected=cur)])
        written.append(_nodes_in_pack(store, res.hash))
    assert written[:-1] == [0] * DELTA_LIMIT
    assert 1 <= written[-1] <= (DELTA_LIMIT + 1) * depth
    rec = store.reader.commit(res.hash)
    assert rec.depth == 0 and store.reader.state(rec).delta == {}


def test_state_is_rebuilt_cold_from_the_commits_since_the_root(store: Store):
    """The delta is not stored: a cold reader folds the operations of the
    commits since the last materialization, and a run of commits on one key
    still materializes after DEPTH_LIMIT commits."""
    with_ns(store, "main", "ns")
    store.commit("main", [Put(K(f"ns.t{i:03d}"), table(str(i))) for i in range(100)])
    hashes = []
    for j in range(DEPTH_LIMIT + 5):
        k = K(f"ns.t{j % 3:03d}")
        cur = store.content("main", k)
        hashes.append(store.commit("main", [Put(k, cur.model_copy(
            update={"metadata_location": f"v{j}"}), expected=cur)]).hash)
    k = K("ns.t099")
    store.commit("main", [Delete(k, expected=store.content("main", k))])
    hashes.append(store.get_reference("main").hash)
    depths = [store.reader.commit(h).depth for h in hashes]
    assert depths[:DEPTH_LIMIT] == list(range(1, DEPTH_LIMIT + 1))
    assert depths[DEPTH_LIMIT] == 0  # a run on few keys still materializes
    assert depths[-1] == 5

    cold = Store(store.db.url)
    try:
        for j, h in enumerate(hashes[:-1]):
            got = cold.content(f"@{h}", K(f"ns.t{j % 3:03d}"))
            assert got.metadata_location == f"v{j}"
        assert K("ns.t099") not in cold.contents(f"@{hashes[-1]}", [K("ns.t099")])
        assert cold.content(f"@{hashes[-1]}", K("ns.t098")).metadata_location == "98"
        # one query loads the chain: every commit back to the root is cached after it
        cold.reader.clear_caches()
        cold.reader.state(cold.reader.commit(hashes[-1]))
        assert all(h in cold.reader.commits for h in hashes[DEPTH_LIMIT:])
    finally:
        cold.close()


def test_diff_descends_only_where_hashes_differ(store: Store):
    with_ns(store, "main", "ns")
    store.commit("main", [Put(K(f"ns.t{i:05d}"), table(str(i))) for i in range(8000)])
    a = store.get_reference("main").hash
    store.create_reference("dev")
    for i in (5, 700, 7999):
        cur = store.content("dev", K(f"ns.t{i:05d}"))
        store.commit("dev", [Put(K(f"ns.t{i:05d}"), cur.model_copy(
            update={"metadata_location": "x"}), expected=cur)])
    store.reader.clear_caches()
    d = store.diff(f"@{a}", "dev")
    decoded = len(store.reader.nodes)
    assert [str(e.key) for e in d.items] == ["ns.t00005", "ns.t00700", "ns.t07999"]
    root = store.reader.commit(a).root
    depth = store.reader.load_node(root).level + 1
    # At most one pack per node on the changed paths of both trees; a full
    # walk would decode every node of the 8,000-key tree.
    changed_paths = 2 * 3 * depth
    assert decoded <= changed_paths * PACK_OBJECTS
    all_nodes = 0
    todo = [root]
    while todo:
        n = store.reader.load_node(todo.pop())
        all_nodes += 1
        todo += [k for k in n.kids if k is not None]
    assert decoded < all_nodes / 2
