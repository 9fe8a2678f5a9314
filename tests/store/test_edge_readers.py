"""``Store.readers``: the views that read any of many keys, at a commit, in a
few queries however many keys are asked (a merge, a restore or a drop of
many keys asks once per level of views, not once per key). The same answer
as asking ``dependents`` key by key, past a query's chunk of keys, on SQLite
and PostgreSQL."""

from __future__ import annotations

from core.commits import CommitMeta, Delete, Put
from core.content import IcebergView, Namespace
from core.keys import ContentKey
from core.sql.stored import DialectAnalysis, StoredDependency
from store import Store
from store.edges import _CHUNK


def _view(location: str, *reads: ContentKey) -> IcebergView:
    return IcebergView(metadata_location=location, version_id=1, analysis=[DialectAnalysis(
        dialect="spark", status="ok", dependencies=[
            StoredDependency(key=list(k.elements), content_id="x", type="ICEBERG_TABLE")
            for k in reads])])


def test_readers_of_many_keys_match_dependents_key_by_key(store: Store) -> None:
    ns = ContentKey(["n"])
    bases = [ContentKey(["n", f"t{i:04}"]) for i in range(_CHUNK + 20)]
    late, early = bases[-1], bases[3]  # one past the first chunk, one in it
    store.commit("main", [Put(ns, Namespace()),
                          Put(ContentKey(["n", "v_late"]), _view("file:///m/1.json", late)),
                          Put(ContentKey(["n", "v_both"]),
                              _view("file:///m/2.json", early, late))], CommitMeta("views"))
    then = store.get_reference("main").hash
    # A view replaced by a version that reads nothing no longer reads them.
    v_late, v_both = ContentKey(["n", "v_late"]), ContentKey(["n", "v_both"])
    now = store.contents("main", [v_late, v_both])
    store.commit("main", [Put(v_late, _view("file:///m/3.json").model_copy(
        update={"id": now[v_late].id}), expected=now[v_late])], CommitMeta("replace"))
    store.commit("main", [Delete(v_both, expected=now[v_both])], CommitMeta("drop"))
    for at, want in ((f"@{then}", {"v_late", "v_both"}), ("main", set())):
        found = store.readers(at, bases)
        assert {k.name for k in found} == want, at
        one_by_one = {k for b in bases for k in store.dependents(at, b)[1]}
        assert set(found) == one_by_one, at
    assert store.readers(f"@{then}", [early]) == store.contents(f"@{then}", [v_both])
    assert store.readers("main", []) == {}
