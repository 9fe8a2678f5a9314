"""Reads that must not grow with the catalog (issue 28): a listing at a
depth seeks past each child's subtree (index nodes read grow with the
page, not with what lies below it), and a log page reads and decodes no
operations unless asked for them."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.commits import CommitMeta, Put
from core.content import ContentType, IcebergTable, Namespace
from core.keys import ContentKey
from store import Store
from store.commit_records import DECODED

NAMESPACES, TABLES = 24, 1000


@pytest.fixture(scope="module")
def deep(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """24 namespaces of 1,000 tables each (24,024 keys), as a bulk load
    writes them: 8,000 puts a commit."""
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('deep') / 'deep.db'}")
    store.commit("main", [Put(ContentKey.of(f"ns{i:02}"), Namespace())
                          for i in range(NAMESPACES)], CommitMeta("namespaces"))
    puts = [Put(ContentKey.of(f"ns{i:02}", f"t{j:04}"),
                IcebergTable(metadata_location=f"s3://w/{i}/{j}.json"))
            for i in range(NAMESPACES) for j in range(TABLES)]
    for at in range(0, len(puts), 8000):
        store.commit("main", puts[at:at + 8000], CommitMeta("bulk"))
    yield store
    store.close()


def _node_reads(store: Store) -> int:
    return store.reader.nodes.hits + store.reader.nodes.misses


def test_a_namespace_listing_reads_nodes_by_the_page_not_by_the_keys_below(
        deep: Store) -> None:
    page = 5
    before = _node_reads(deep)
    got = deep.entries("main", None, depth=1, types=[ContentType.NAMESPACE], page_size=page)
    reads = _node_reads(deep) - before
    assert [str(e.key) for e in got.items] == [f"ns{i:02}" for i in range(page)]
    # The same range walked key by key reads every node under those five
    # namespaces (about 5,000 keys); seeking past each subtree reads a few
    # root-to-leaf paths per namespace.
    before = _node_reads(deep)
    walked = sum(1 for _ in zip(range(page * (TABLES + 1)), deep.states.items(
        deep.reader.state(deep.reader.commit(deep.resolve("main").hash)), "ns00"),
        strict=False))
    full = _node_reads(deep) - before
    assert walked == page * (TABLES + 1)
    assert reads * 5 < full, (reads, full)
    assert reads <= page * 12, reads
    # Every namespace, a page at a time, none twice; tables of one namespace.
    names, token = [], None
    while True:
        p = deep.entries("main", None, depth=1, types=[ContentType.NAMESPACE],
                         page_token=token, page_size=7)
        names += [str(e.key) for e in p.items]
        if not (token := p.next_token):
            break
    assert names == [f"ns{i:02}" for i in range(NAMESPACES)]
    tables = deep.entries("main", ContentKey.of("ns03"), depth=1, page_size=1000)
    assert len(tables.items) == TABLES and tables.next_token is None
    two = deep.entries("main", None, depth=2, page_size=3, page_token=None)
    assert [str(e.key) for e in two.items] == ["ns00", "ns00.t0000", "ns00.t0001"]


def test_a_log_page_decodes_no_operations(deep: Store) -> None:
    deep.reader.clear_caches()
    lists = DECODED["lists"]
    page = deep.log("main", page_size=10, operations=False)
    assert [c.message for c in page.items][:3] == ["bulk", "bulk", "bulk"]
    assert all(c.operations == () for c in page.items)
    assert DECODED["lists"] == lists  # not one operation list read or decoded
    full = deep.log("main", page_size=2, operations=True)
    assert [len(c.operations) for c in full.items] == [8000, 8000]
    assert DECODED["lists"] == lists + 2  # the page's, and only when asked for
    # A log filtered by key (answered from the change index) reads light too.
    lists = DECODED["lists"]
    deep.reader.clear_caches()
    by_key = deep.log("main", key=ContentKey.of("ns00", "t0001"), page_size=5,
                      operations=False)
    assert [c.message for c in by_key.items] == ["bulk"]
    assert DECODED["lists"] == lists


def test_references_page_by_name_and_prefix(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'refs.db'}")
    for i in range(30):
        store.create_reference(f"{'team' if i % 2 else 'etl'}/b{i:02}")
    names, token = [], None
    while True:
        p = store.list_references(token, 4)
        names += [r.name for r in p.items]
        if not (token := p.next_token):
            break
    assert names == sorted(names) and len(names) == 31  # main too
    team = store.list_references(None, 100, "team/")
    assert [r.name for r in team.items] == [f"team/b{i:02}" for i in range(1, 30, 2)]
    assert store.list_references(None, 100, "zzz").items == []
    store.close()
