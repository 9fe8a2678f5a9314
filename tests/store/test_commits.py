import pytest

from core.commits import CommitMeta, Delete, Put, RefType, Unchanged
from core.conflicts import CommitConflictError, ConflictType
from core.content import Namespace
from core.errors import InvalidOperationError, ReadOnlyReferenceError, ReferenceNotFoundError
from store import Store
from tests.store.helpers import K, put_new, table, update, view, with_ns


def _conflicts(fn) -> list[tuple[str | None, ConflictType]]:
    with pytest.raises(CommitConflictError) as ei:
        fn()
    return [(str(c.key) if c.key else None, c.type) for c in ei.value.conflicts]


def test_new_content_gets_a_store_assigned_id_and_meta(store: Store):
    with_ns(store, "main", "ns")
    res = store.commit("main", [Put(K("ns.t"), table("m"))],
                       CommitMeta("create table ns.t", author="alice", properties={"a": "b"}),
                       principal="svc")
    t = store.content("main", K("ns.t"))
    assert t.id == res.assigned_ids[K("ns.t")]
    c = store.log("main", page_size=1).items[0]
    assert (c.hash, c.message, c.author, c.committer, c.properties) == (
        res.hash, "create table ns.t", "alice", "svc", {"a": "b"})
    assert c.created_at == res.created_at
    assert [(op.kind, str(op.key)) for op in c.operations] == [("PUT", "ns.t")]


def test_created_at_never_goes_below_the_parent(store_url: str):
    clock = iter([5_000_000, 3_000_000, 1_000_000])
    s = Store(store_url, clock=lambda: next(clock, 1))
    with_ns(s, "main", "a")
    put_new(s, "main", ("a.t", table("x")))
    times = [c.created_at for c in s.log("main").items]
    assert times[0] > times[1]
    s.close()


def test_put_conflicts_by_type(store: Store):
    with_ns(store, "main", "ns")
    put_new(store, "main", ("ns.t", table("m")))
    t = store.content("main", K("ns.t"))
    assert _conflicts(lambda: put_new(store, "main", ("ns.t", table("again")))) == [
        ("ns.t", ConflictType.KEY_EXISTS)]
    assert _conflicts(lambda: store.commit("main", [Put(K("ns.u"), t.model_copy(
        update={"metadata_location": "x"}), expected=t)])) == [
        ("ns.u", ConflictType.KEY_DOES_NOT_EXIST)]
    other = t.model_copy(update={"id": "00000000-0000-0000-0000-000000000000"})
    assert _conflicts(lambda: store.commit("main", [Put(K("ns.t"), other, expected=t)])) == [
        ("ns.t", ConflictType.CONTENT_ID_DIFFERS)]
    as_view = view("v").model_copy(update={"id": t.id})
    assert _conflicts(lambda: store.commit("main", [Put(K("ns.t"), as_view, expected=t)])) == [
        ("ns.t", ConflictType.PAYLOAD_DIFFERS)]
    stale = t.model_copy(update={"metadata_location": "stale"})
    assert _conflicts(lambda: store.commit("main", [Put(
        K("ns.t"), t.model_copy(update={"metadata_location": "n"}), expected=stale)])) == [
        ("ns.t", ConflictType.VALUE_DIFFERS)]
    assert _conflicts(lambda: store.commit("main", [Delete(K("ns.nope"))])) == [
        ("ns.nope", ConflictType.KEY_DOES_NOT_EXIST)]
    with pytest.raises(InvalidOperationError, match="expected content"):
        store.commit("main", [Put(K("ns.t"), t.model_copy(update={"metadata_location": "n"}))])


def test_namespace_rules(store: Store):
    assert _conflicts(lambda: put_new(store, "main", ("a.b.t", table("x")))) == [
        ("a.b.t", ConflictType.NAMESPACE_ABSENT)]
    # Namespaces may be created in the same commit that uses them.
    put_new(store, "main", ("a", Namespace()), ("a.b", Namespace()), ("a.b.t", table("x")))
    put_new(store, "main", ("a.tbl", table("y")))
    assert _conflicts(lambda: put_new(store, "main", ("a.tbl.inner", table("z")))) == [
        ("a.tbl.inner", ConflictType.NAMESPACE_ABSENT)]
    assert _conflicts(lambda: store.commit("main", [Delete(K("a.b"))])) == [
        ("a.b", ConflictType.NAMESPACE_NOT_EMPTY)]
    store.commit("main", [Delete(K("a.b.t")), Delete(K("a.b"))])
    assert K("a.b") not in store.contents("main", [K("a.b")])


def test_rename_keeps_the_content_id(store: Store):
    with_ns(store, "main", "ns", "other")
    put_new(store, "main", ("ns.v", view("v1")))
    v = store.content("main", K("ns.v"))
    store.commit("main", [Delete(K("ns.v")), Put(K("other.v2"), v)], CommitMeta("rename"))
    assert store.content("main", K("other.v2")).id == v.id
    # An id that is not being renamed cannot appear under a new key.
    assert _conflicts(lambda: store.commit("main", [Put(K("ns.w"), v)])) == [
        ("ns.w", ConflictType.KEY_DOES_NOT_EXIST)]


def test_stale_expected_hash_succeeds_when_its_keys_did_not_change(store: Store):
    with_ns(store, "main", "ns")
    put_new(store, "main", ("ns.a", table("a")), ("ns.b", table("b")))
    seen = store.get_reference("main").hash
    update(store, "main", "ns.a", metadata_location="a2")  # someone else moves main
    put_new(store, "main", ("ns.c", table("c")))
    b = store.content(f"main@{seen}", K("ns.b"))
    ok = store.commit("main", [Put(K("ns.b"), b.model_copy(update={"metadata_location": "b2"}),
                                   expected=b)], expected_hash=seen)
    assert store.get_reference("main").hash == ok.hash
    a = store.content(f"main@{seen}", K("ns.a"))
    assert _conflicts(lambda: store.commit(
        "main", [Put(K("ns.a"), a.model_copy(update={"metadata_location": "a3"}), expected=a)],
        expected_hash=seen)) == [("ns.a", ConflictType.VALUE_DIFFERS)]
    # Unchanged takes part in that check without writing anything.
    assert _conflicts(lambda: store.commit("main", [Unchanged(K("ns.a"))],
                                           expected_hash=seen)) == [
        ("ns.a", ConflictType.VALUE_DIFFERS)]


def test_expected_hash_from_another_history_is_unexpected(store: Store):
    with_ns(store, "main", "ns")
    store.create_reference("dev")
    side = put_new(store, "dev", ("ns.x", table("x"))).hash
    with pytest.raises(CommitConflictError) as ei:
        store.commit("main", [Put(K("ns.z"), table("z"))], expected_hash=side)
    assert ei.value.conflicts[0].type is ConflictType.UNEXPECTED_HASH
    assert side in ei.value.message


def test_writes_need_a_plain_branch(store: Store):
    with_ns(store, "main", "ns")
    store.create_reference("v1", RefType.TAG)
    head = store.get_reference("main").hash
    for ref in ("v1", f"main@{head}", "main~1", "main*2030-01-01T00:00:00Z", f"@{head}"):
        with pytest.raises(ReadOnlyReferenceError):
            put_new(store, ref, ("ns.t", table("x")))
    with pytest.raises(ReferenceNotFoundError, match="'nope'"):
        put_new(store, "nope", ("ns.t", table("x")))
    assert store.get_reference("main").hash == head


def test_duplicate_keys_in_one_commit_are_refused(store: Store):
    with_ns(store, "main", "ns")
    with pytest.raises(InvalidOperationError, match=r"ns\.t"):
        store.commit("main", [Put(K("ns.t"), table("a")), Delete(K("ns.t"))])


def test_a_refused_commit_leaves_no_trace(store: Store):
    with_ns(store, "main", "ns")
    head = store.get_reference("main").hash
    log = store.reflog("main")
    with pytest.raises(CommitConflictError):
        store.commit("main", [Put(K("ns.ok"), table("ok")), Put(K("zz.bad"), table("bad"))])
    assert store.get_reference("main").hash == head
    assert store.reflog("main") == log
    assert store.contents("main", [K("ns.ok")]) == {}
