from core.commits import DEFAULT_BRANCH, NO_ANCESTOR, RefType
from store import Store
from tests.store.helpers import put_new, table, with_ns


def test_fresh_store_has_main_at_the_empty_commit(store: Store):
    main = store.get_reference(DEFAULT_BRANCH)
    assert main.type is RefType.BRANCH
    assert main.hash == NO_ANCESTOR
    assert store.log("main").items == []
    assert store.entries("main").items == []


def test_reopening_keeps_state_and_does_not_remigrate(store_url: str):
    s = Store(store_url)
    with_ns(s, "main", "a")
    head = s.get_reference("main").hash
    s.close()
    s2 = Store(store_url)
    assert s2.get_reference("main").hash == head
    assert [r.name for r in s2.list_references().items] == ["main"]
    put_new(s2, "main", ("a.t", table("m")))
    assert len(s2.log("main").items) == 2
    s2.close()
