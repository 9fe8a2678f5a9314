import pytest

from core.content import ContentType, Namespace
from core.errors import ContentNotFoundError, InvalidInputError
from core.instants import to_micros
from store import Store
from tests.store.helpers import K, put_new, table, update, view


@pytest.fixture
def filled(store: Store) -> Store:
    put_new(store, "main", ("a", Namespace()), ("a.b", Namespace()), ("c", Namespace()),
            msg="namespaces", author="admin")
    put_new(store, "main", *[(f"a.t{i}", table(f"t{i}")) for i in range(5)], msg="tables",
            author="alice")
    put_new(store, "main", ("a.b.v", view("v")), ("c.x", table("x")), msg="more", author="bob")
    return store


def _all(fetch):
    out, token = [], None
    while True:
        page = fetch(token)
        out += page.items
        if not (token := page.next_token):
            return out


def test_entries_filter_by_namespace_depth_type_and_page(filled: Store):
    names = [str(e.key) for e in filled.entries("main").items]
    assert names == ["a", "a.b", "a.b.v", "a.t0", "a.t1", "a.t2", "a.t3", "a.t4", "c", "c.x"]
    below_a = [str(e.key) for e in filled.entries("main", namespace=K("a")).items]
    assert below_a == ["a.b", "a.b.v", "a.t0", "a.t1", "a.t2", "a.t3", "a.t4"]
    direct = filled.entries("main", namespace=K("a"), depth=1,
                            types=[ContentType.ICEBERG_TABLE])
    assert [str(e.key) for e in direct.items] == [f"a.t{i}" for i in range(5)]
    paged = _all(lambda tok: filled.entries("main", namespace=K("a"), page_token=tok,
                                            page_size=2))
    assert [str(e.key) for e in paged] == below_a
    with_content = filled.entries("main", namespace=K("c"), with_content=True).items
    assert with_content[0].content.metadata_location == "x"
    with pytest.raises(InvalidInputError, match="page size"):
        filled.entries("main", page_size=0)
    with pytest.raises(InvalidInputError, match="page token"):
        filled.entries("main", page_token="%%%")


def test_contents_of_many_keys_and_missing_ones(filled: Store):
    got = filled.contents("main", [K("a.t1"), K("a.b.v"), K("nope")])
    assert set(got) == {K("a.t1"), K("a.b.v")}
    with pytest.raises(ContentNotFoundError, match=r"'a\.zz'"):
        filled.content("main", K("a.zz"))


def test_log_pages_and_filters(filled: Store):
    for i in range(3):
        update(filled, "main", "a.t0", metadata_location=f"t0-{i}")
    log = _all(lambda tok: filled.log("main", page_token=tok, page_size=2))
    assert [c.message for c in log] == ["update a.t0"] * 3 + ["more", "tables", "namespaces"]
    assert [c.message for c in filled.log("main", author="bob").items] == ["more"]
    by_key = filled.log("main", key=K("a.t0")).items
    assert [c.message for c in by_key] == ["update a.t0"] * 3 + ["tables"]
    mid = log[3].created_at
    since = filled.log("main", since_us=to_micros(mid)).items
    assert [c.message for c in since][-1] == "more"
    until = filled.log("main", until_us=to_micros(mid)).items
    assert [c.message for c in until] == ["more", "tables", "namespaces"]


def test_diff_between_refs_pages(filled: Store):
    filled.create_reference("dev")
    update(filled, "dev", "a.t1", metadata_location="changed")
    put_new(filled, "dev", ("c.new", table("n")))
    from core.commits import Delete

    filled.commit("dev", [Delete(K("a.t3"))])
    diff = _all(lambda tok: filled.diff("main", "dev", page_token=tok, page_size=1))
    assert [(str(d.key), d.before is not None, d.after is not None) for d in diff] == [
        ("a.t1", True, True), ("a.t3", True, False), ("c.new", False, True)]
    assert diff[0].after.metadata_location == "changed"
    assert filled.diff("dev", "dev").items == []
