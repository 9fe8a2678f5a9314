"""Export and import: a catalog with branches, a merge, a transplant, a
deleted branch, grants and a bulk commit, exported and imported into a new
catalog on either backend, has the same references, hashes, reflog, grants
and contents; fsck passes on the copy; a non-empty target and a foreign
file are refused."""

from __future__ import annotations

import io

import pytest
from sqlalchemy import text

from core.auth import Privilege
from core.errors import InvalidInputError
from store import Store
from store.dump import export_rows, import_rows, write_dump
from store.fsck import fsck
from tests.fixtures import database_url
from tests.store.helpers import put_new, table, update, view, with_ns


def _catalog(store: Store) -> None:
    with_ns(store, "main", "ns")
    put_new(store, "main", *[(f"ns.t{i}", table(f"t{i}")) for i in range(40)])
    store.create_reference("dev")
    for i in range(5):
        update(store, "dev", f"ns.t{i}", metadata_location=f"dev{i}")
    put_new(store, "dev", ("ns.v", view("v1")), author="ana")
    store.merge("dev", "main")
    store.create_reference("side")
    put_new(store, "side", ("ns.s", table("s")))
    store.transplant([store.get_reference("side").hash], "main")
    store.delete_reference("side", store.get_reference("side").hash)
    store.auth.add_grant("ana", Privilege.READ.value, "main")


def _state(store: Store) -> dict[str, object]:
    with store.db.read() as conn:
        reflog = conn.execute(text("SELECT ref, old_hash, new_hash, reason FROM reflog "
                                   "ORDER BY id")).all()
        commits = {h for (h,) in conn.execute(text("SELECT hash FROM commits"))}
    return {"refs": {r.name: r.hash for r in store.list_references().items},
            "reflog": [tuple(r) for r in reflog], "commits": commits,
            "entries": {str(e.key): e.content.model_dump_json()  # type: ignore[union-attr]
                        for e in store.entries("main", None, page_size=1000,
                                               with_content=True).items},
            "log": [c.hash for c in store.log("main", key=None).items]}


@pytest.mark.parametrize("target", ["sqlite", pytest.param("postgres",
                                                           marks=pytest.mark.postgres)])
def test_export_import_gives_the_same_catalog(store: Store, target: str, tmp_path,
                                              request) -> None:  # type: ignore[no-untyped-def]
    _catalog(store)
    dump = list(export_rows(store.db))
    # Into a new catalog on each backend, from each backend.
    url = database_url(request, target, tmp_path / "copy", "dump")
    copy = Store(url)
    try:
        counts = import_rows(copy.db, dump)
        assert counts["commits"] == len(_state(store)["commits"])
        assert _state(copy) == _state(store)
        assert fsck(copy).ok, fsck(copy).problems
        with copy.db.read() as conn:
            assert conn.execute(text("SELECT grantee FROM grants")).scalars().all() \
                == ["ana"]
        # The copy keeps working: a new commit and a new reflog entry.
        put_new(copy, "main", ("ns.after", table("after")))
        # Importing again into a catalog that has commits is refused.
        with pytest.raises(InvalidInputError, match="not empty"):
            import_rows(copy.db, dump)
    finally:
        copy.close()


def test_a_foreign_file_is_refused(store: Store) -> None:
    with pytest.raises(InvalidInputError, match="not a Sapwood export"):
        import_rows(store.db, ['{"hello": 1}'])
    buf = io.StringIO()
    write_dump(store.db, buf)
    lines = buf.getvalue().splitlines()
    lines[0] = lines[0].replace('"schema": "', '"schema": "0001-')
    with pytest.raises(InvalidInputError, match="schema revision"):
        import_rows(store.db, lines)
