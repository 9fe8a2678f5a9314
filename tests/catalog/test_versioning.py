"""The versioning API's door to the store (catalog.versioning) and the
services bound to one caller (CatalogServices.seeing), called directly on
SQLite and PostgreSQL: what the routes of /api/v2 and the guard get, typed
(core values, never a store record), and a bound catalog whose every
service resolves a hash prefix among the commits the caller sees."""

from __future__ import annotations

import pytest

from catalog.kernel import Who
from catalog.services import CatalogServices
from core.commits import Commit, CommitMeta, Delete, Reference, RefType
from core.errors import AmbiguousHashError
from core.keys import ContentKey
from core.refs import parse_ref

NS = ContentKey(["ns"])


def test_references_history_and_contents_through_the_door(services: CatalogServices) -> None:
    v = services.versioning
    services.namespaces.create(parse_ref("main"), NS, {"owner": "x"}, Who("alice"))
    main = v.reference("main")
    dev = v.create_reference("dev", RefType.BRANCH, "main", "alice")
    assert dev == Reference("dev", RefType.BRANCH, main.hash)
    assert [r.name for r in v.references(None, 10).items] == ["dev", "main"]
    assert [r.name for r in v.references(None, 10, visible=lambda n: n != "dev").items] == \
        ["main"]
    assert [r.name for r in v.all_references()] == ["dev", "main"]
    landed = v.commit("dev", [Delete(NS)], CommitMeta("drop ns"), dev.hash, "alice")
    heads = v.head_commits([landed.hash, "0" * 64])
    assert list(heads) == [landed.hash]
    head = heads[landed.hash]
    assert isinstance(head, Commit) and head.message == "drop ns" and head.operations == ()
    assert [c.message for c in v.log("dev").items][:1] == ["drop ns"]
    assert v.is_ancestor(main.hash, landed.hash) and not v.is_ancestor(landed.hash, main.hash)
    assert [d.key for d in v.diff("main", "dev").items] == [NS]
    assert list(v.contents("main", [NS])) == [NS] and v.contents("dev", [NS]) == {}
    assert [e.key for e in v.entries(f"@{main.hash}").items] == [NS]
    assert v.resolve(f"dev@{landed.hash[:10]}").hash == landed.hash
    moved = v.assign_reference("dev", landed.hash, f"@{main.hash}", "alice")
    assert moved.hash == main.hash
    assert v.delete_reference("dev", main.hash, "alice").name == "dev"
    assert [r.name for r in v.all_references()] == ["main"]
    assert v.cutoff_of("main") is None  # no retention policy: all of it retained


def test_services_bound_to_a_caller_resolve_its_prefixes(services: CatalogServices) -> None:
    store = services.catalog.store
    services.namespaces.create(parse_ref("main"), NS, {"owner": "x"}, Who("alice"))
    store.create_reference("side")
    # Two commits, one on each branch, whose hashes share 3 hex characters.
    seen: dict[str, dict[str, str]] = {}
    for i in range(100_000):
        branch = "main" if i % 2 else "side"
        head = store.get_reference(branch).hash
        h = store.commit(branch, [], CommitMeta(f"empty {i}"), expected_hash=head).hash
        found = seen.setdefault(h[:3], {})
        found.setdefault(branch, h)
        if len(found) == 2:
            break
    prefix, on_main = h[:3], found["main"]
    with pytest.raises(AmbiguousHashError):
        services.versioning.store.full_hash(prefix)
    bound = services.seeing(lambda c: c == on_main)
    # Every service built over the bound catalog resolves the caller's way ...
    assert bound.catalog is not services.catalog
    assert all(c is bound.catalog for c in (
        bound.versioning.catalog, bound.namespaces.catalog, bound.tables.catalog,
        bound.views.catalog, bound.mviews.catalog))
    assert bound.catalog.store.full_hash(prefix) == on_main
    assert bound.versioning.store.full_hash(prefix) == on_main
    assert bound.namespaces.load(parse_ref(f"@{on_main}"), NS) == {"owner": "x"}
    # ... and what no hash reaches is the very same.
    assert (bound.storage, bound.webhooks, bound.access, bound.health, bound.maintenance) == \
        (services.storage, services.webhooks, services.access, services.health,
         services.maintenance)
    assert bound.catalog.files is services.catalog.files
    # The unbound services count every commit still.
    with pytest.raises(AmbiguousHashError):
        services.catalog.store.full_hash(prefix)
