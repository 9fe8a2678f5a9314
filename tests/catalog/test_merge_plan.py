"""A merge through the catalog (catalog.merge.merging) resolves its source
once (issue 45): what lands is what its dry run worked out, even when the
source branch moves in between (the BeforeLanding hook moves it, so the
outcome is forced, not left to timing). On SQLite and PostgreSQL."""

from __future__ import annotations

from catalog.merge.merging import merge
from catalog.services import CatalogServices
from core.commits import MergeResult
from core.content import Namespace
from tests.catalog.test_merging import NS, props, request, setup


def test_the_source_moving_before_the_landing_is_not_merged(
        services: CatalogServices) -> None:
    setup(services)
    seen = services.catalog.store.get_reference("b").hash

    def move_source(preview: MergeResult) -> None:
        props(services, "b", late="1")

    outcome = merge(services.catalog, request(), before_landing=move_source)
    assert outcome.attempts == 1 and outcome.result.applied
    assert outcome.result.source_hash == seen
    now = services.catalog.store.content("main", NS)
    assert isinstance(now, Namespace)
    assert now.properties["from_b"] == "1" and "late" not in now.properties
