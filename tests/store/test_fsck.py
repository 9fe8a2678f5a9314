"""fsck: a store built by every kind of write is clean; each kind of damage,
made by hand in the tables, is reported as what it is."""

from sqlalchemy import text

from core.commits import MergeBehavior, RefType
from store import Store
from store.fsck import fsck
from tests.store.helpers import put_new, table, update, view, with_ns


def _busy_store(store: Store) -> None:
    with_ns(store, "main", "ns", "ns.deep")
    put_new(store, "main", *[(f"ns.t{i:03d}", table(f"t{i}")) for i in range(120)], msg="bulk")
    store.create_reference("dev")
    for i in range(70):  # enough to materialize the index on the way
        update(store, "dev", f"ns.t{i % 7:03d}", metadata_location=f"dev{i}")
    put_new(store, "dev", ("ns.deep.v", view("v1")))
    update(store, "main", "ns.t100", metadata_location="main-side")
    store.merge("dev", "main", default_mode=MergeBehavior.NORMAL)
    store.create_reference("v1", RefType.TAG, "main")
    store.create_reference("gone")
    put_new(store, "gone", ("ns.only_on_gone", table("g")))
    store.delete_reference("gone", store.get_reference("gone").hash)


def test_a_busy_store_is_clean(store: Store):
    _busy_store(store)
    report = fsck(store)
    assert report.problems == []
    assert report.ok
    assert report.refs == 3  # main, dev, v1
    assert report.unreachable_commits == 1  # the deleted branch's commit
    assert report.nodes > 1
    assert report.contents >= 123  # 2 namespaces + 120 tables + the view, and older values


def _corrupt(store: Store, sql: str, **params: object) -> None:
    with store.db.write() as conn:
        assert conn.execute(text(sql), params).rowcount >= 1


def _kinds(store: Store) -> set[str]:
    return {p.kind for p in fsck(store).problems}


def test_a_changed_commit_no_longer_matches_its_hash(store: Store):
    _busy_store(store)
    _corrupt(store, "UPDATE commits SET message = 'rewritten' WHERE message = 'bulk'")
    assert _kinds(store) == {"bad-commit-hash"}


def test_a_ref_to_a_missing_commit(store: Store):
    _busy_store(store)
    _corrupt(store, "UPDATE refs SET head = :h WHERE name = 'dev'", h="ab" * 32)
    problems = fsck(store).problems
    assert [(p.kind, p.where) for p in problems] == [("missing-commit", "ref dev")]


def test_a_broken_depth_chain(store: Store):
    _busy_store(store)
    _corrupt(store, "UPDATE commits SET depth = depth + 1 "
                    "WHERE hash = (SELECT head FROM refs WHERE name = 'dev')")
    assert "bad-depth" in _kinds(store)


def test_lost_packs(store: Store):
    _busy_store(store)
    _corrupt(store, "DELETE FROM packs")  # the bulk commit's spilled nodes and values
    assert _kinds(store) >= {"missing-node"}
    store2 = Store(store.db.url)
    try:
        _corrupt(store2, "UPDATE commits SET pack = NULL WHERE message = 'update ns.t003'")
        assert "missing-content" in _kinds(store2)
    finally:
        store2.close()


def test_damaged_content_bytes(store: Store):
    with_ns(store, "main", "ns")
    put_new(store, "main", ("ns.t", table("original")))
    _corrupt(store, "UPDATE commits SET pack = :p WHERE message = 'put'",
             p=_rewrite_pack(store, b"original", b"tampered"))
    assert _kinds(store) == {"bad-content-hash"}


def _rewrite_pack(store: Store, old: bytes, new: bytes) -> bytes:
    with store.db.read() as conn:
        pack = bytes(conn.execute(text("SELECT pack FROM commits WHERE message = 'put'"))
                     .scalar_one())
    assert old in pack
    return pack.replace(old, new)


def test_change_index_rows_missing_wrong_or_extra(store: Store):
    _busy_store(store)
    _corrupt(store, "DELETE FROM changes WHERE term LIKE 'k:%' AND kind = 'P' AND hash IN "
                    "(SELECT hash FROM commits WHERE message = 'bulk')")
    assert _kinds(store) == {"missing-change"}
    _corrupt(store, "INSERT INTO changes VALUES ('i:nothing', 1, :h, 1, 0, 'P')",
             h=store.get_reference("main").hash)
    assert _kinds(store) == {"missing-change", "unexpected-change"}
    _corrupt(store, "UPDATE ancestry SET jump_depth = jump_depth + 1 WHERE hash = :h",
             h=store.get_reference("dev").hash)
    problems = fsck(store).problems
    assert {p.kind for p in problems} == {"missing-change", "unexpected-change", "bad-ancestry"}
    assert any(p.kind == "bad-ancestry" and p.where == store.get_reference("dev").hash[:12]
               for p in problems)


def test_parallel_finds_what_the_serial_check_finds(store: Store):
    """``parallel``: the change index checked by a second process gives the
    same report, clean or damaged, as one process does."""
    _busy_store(store)
    clean_serial, clean_parallel = fsck(store), fsck(store, parallel=True)
    assert clean_parallel.ok and clean_serial.ok
    assert (clean_parallel.commits, clean_parallel.nodes, clean_parallel.contents,
            clean_parallel.index_rows) == (clean_serial.commits, clean_serial.nodes,
                                           clean_serial.contents, clean_serial.index_rows)
    _corrupt(store, "UPDATE ancestry SET jump_depth = jump_depth + 1 WHERE hash = :h",
             h=store.get_reference("dev").hash)
    _corrupt(store, "UPDATE commits SET message = 'rewritten' WHERE message = 'bulk'")
    damaged = fsck(store, parallel=True).problems
    assert sorted(map(str, damaged)) == sorted(map(str, fsck(store).problems))
    assert {p.kind for p in damaged} == {"bad-ancestry", "bad-commit-hash"}


def test_a_small_memory_budget_finds_nothing_that_is_not_there(store: Store):
    """Caches far smaller than a batch of values: a value its cache let go
    of while the batch's packs were unpacked is still checked, not reported
    missing (it was, with a 256 MB budget halved by --parallel at 10^6 keys)."""
    _busy_store(store)
    small = fsck(store, memory_budget=1_000_000)
    assert small.ok, small.problems
    assert small.contents == fsck(store).contents


def test_damaged_buckets_are_compared_in_groups_within_the_row_bound() -> None:
    """A damaged index is compared a group of buckets per pass over the
    commits: as few passes as the bound on gathered rows allows, a bucket
    larger than the bound alone."""
    from store import fsck_changes as fc

    want, have = fc._Digests(), fc._Digests()
    for b, n in ((1, 10), (2, 20), (3, fc._DAMAGE_ROWS), (4, fc._DAMAGE_ROWS // 2),
                 (5, fc._DAMAGE_ROWS // 2)):
        want.count[b], have.count[b] = n, n - 1
    groups = list(fc._groups([1, 2, 3, 4, 5], want, have))
    assert groups == [{1, 2}, {3}, {4}, {5}]
    assert list(fc._groups([1, 2], want, have)) == [{1, 2}]
    assert list(fc._groups([], want, have)) == []
