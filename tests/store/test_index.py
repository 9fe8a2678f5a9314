"""The key index against a dict model, on the real object store (SQLite)."""

import hashlib
import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from core.commits import CommitMeta, IndexEntry, Put
from core.content import ContentType
from store import Store
from store.index import FANOUT_BITS, Ref
from store.schema import OBJECTS
from tests.store.helpers import K, table, with_ns


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory):
    s = Store(f"sqlite:///{tmp_path_factory.mktemp('ix') / 'ix.db'}")
    yield s
    s.close()


def _persist(store: Store, root: Ref) -> str | None:
    h, rows = store.index.finalize(root)
    if rows:
        with store.db.write() as conn:
            conn.execute(store.db.insert_ignore(OBJECTS),
                         [{"hash": r[0], "kind": "n", "data": r[1]} for r in rows])
    store.reader.clear_caches()  # read everything back from the database
    return h


def _entry(n: int) -> IndexEntry:
    return IndexEntry(ContentType.ICEBERG_TABLE, f"id{n}", hashlib.sha256(b"%d" % n).hexdigest())


ops = st.lists(st.tuples(st.integers(0, 300), st.none() | st.integers(0, 10**6)),
               min_size=1, max_size=120)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(ops, min_size=1, max_size=4))
def test_edits_match_a_dict_and_shape_is_history_independent(sqlite_store, batches):
    ix = sqlite_store.index
    model: dict[str, IndexEntry] = {}
    root: Ref = None
    roots = [(None, {})]
    for batch in batches:
        for k, v in batch:
            key = f"k{k:04d}"
            if v is None:
                model.pop(key, None)
                root = ix.delete(root, key)
            else:
                model[key] = _entry(v)
                root = ix.put(root, key, _entry(v))
        root = _persist(sqlite_store, root)
        roots.append((root, dict(model)))
        assert dict(ix.items(root)) == model
    # Same map, built in one go in another order: the very same root.
    rebuilt = ix.mutate(None, dict(reversed(list(model.items()))))
    assert _persist(sqlite_store, rebuilt) == root
    for (ra, ma), (rb, mb) in itertools.pairwise(roots):
        expected = sorted((k, ma.get(k), mb.get(k)) for k in ma.keys() | mb.keys()
                          if ma.get(k) != mb.get(k))
        assert ix.diff(ra, rb) == expected
        got = ix.get_many(rb, [*mb, "absent"])
        assert {k: v for k, v in got.items() if v} == mb


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
    assert len(store.reader.nodes) <= depth

    with store.db.read() as conn:
        before = conn.execute(select(func.count()).select_from(OBJECTS)).scalar_one()
    cur = store.content("main", K("ns.t00042"))
    store.commit("main", [Put(K("ns.t00042"), cur.model_copy(
        update={"metadata_location": "changed"}), expected=cur)])
    with store.db.read() as conn:
        after = conn.execute(select(func.count()).select_from(OBJECTS)).scalar_one()
    assert after - before <= depth + 1  # the rewritten path plus one content value


def test_diff_descends_only_where_hashes_differ(store: Store):
    with_ns(store, "main", "ns")
    store.commit("main", [Put(K(f"ns.t{i:05d}"), table(str(i))) for i in range(2000)])
    a = store.get_reference("main").hash
    store.create_reference("dev")
    for i in (5, 700, 1999):
        cur = store.content("dev", K(f"ns.t{i:05d}"))
        store.commit("dev", [Put(cur_key := K(f"ns.t{i:05d}"), cur.model_copy(
            update={"metadata_location": "x"}), expected=cur)])
        assert cur_key
    store.reader.clear_caches()
    d = store.diff(f"@{a}", "dev")
    assert [str(e.key) for e in d.items] == ["ns.t00005", "ns.t00700", "ns.t01999"]
    root = store.reader.commit(a).root
    depth = store.reader.load_node(root).level + 1
    # two trees, at most one path per changed key in each
    assert len(store.reader.nodes) <= 2 * 3 * depth
