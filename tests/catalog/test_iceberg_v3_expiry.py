"""Retention's snapshot expiry (catalog.maintenance.expiry) of a format v3
table, through the catalog layer on SQLite and PostgreSQL: the file it
writes is v3 as the spec says, row lineage and the fields PyIceberg does
not model kept."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from urllib.parse import urlparse

from catalog.commands import Registration
from catalog.kernel import Who
from catalog.maintenance.expiry import MAX_AGE, expire_branch
from catalog.services import CatalogServices
from catalog.targets import target
from core.keys import ContentKey
from core.refs import parse_ref
from core.retention import Policy
from tests.api import spark_bodies as sb

MAIN = parse_ref("main")
NS = ContentKey(["ns"])
T0 = 1_700_000_000_000


def test_expiry_writes_a_v3_table_as_v3(services: CatalogServices) -> None:
    services.namespaces.create(MAIN, NS, {}, Who("tester"))
    location = f"{services.catalog.locations.warehouse}/elsewhere/{uuid.uuid4().hex}"
    keys = [{"key-id": "k1", "encrypted-key-metadata": "AAEC"}]
    snaps = []
    for sid, parent, first, added in ((1, None, 0, 5), (2, 1, 5, 7)):
        sb.write_manifest_list(location, sid)
        snaps.append({"snapshot-id": sid, "sequence-number": sid, "timestamp-ms": T0 + sid,
                      "manifest-list": sb.manifest_list(location, sid), "schema-id": 0,
                      "summary": {"operation": "append"}, "first-row-id": first,
                      "added-rows": added, "key-id": "k1",
                      **({"parent-snapshot-id": parent} if parent else {})})
    doc = {"format-version": 3, "table-uuid": str(uuid.uuid4()), "location": location,
           "last-sequence-number": 2, "last-updated-ms": T0 + 2, "last-column-id": 1,
           "current-schema-id": 0, "next-row-id": 12, "encryption-keys": keys,
           "schemas": [{"type": "struct", "schema-id": 0, "fields": [
               {"id": 1, "name": "id", "type": "long", "required": False}]}],
           "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}],
           "last-partition-id": 999, "default-sort-order-id": 0,
           "sort-orders": [{"order-id": 0, "fields": []}], "properties": {MAX_AGE: "1"},
           "current-snapshot-id": 2, "refs": {"main": {"snapshot-id": 2, "type": "branch"}},
           "snapshots": snaps}
    path = Path(urlparse(f"{location}/metadata/00000-x.metadata.json").path)
    path.write_text(json.dumps(doc))
    services.tables.register(MAIN, NS, Registration("t", path.as_uri()), Who("tester"))

    out = expire_branch(services.catalog, "main", Policy("main", "PT1S"), T0 + 10_000, False)
    assert out.snapshots == {"ns.t": 1} and out.commit is not None
    meta = json.loads(services.tables.load(target(MAIN, NS, "t")).metadata)
    assert meta["format-version"] == 3 and meta["next-row-id"] == 12
    (kept,) = meta["snapshots"]
    assert (kept["snapshot-id"], kept["first-row-id"], kept["added-rows"]) == (2, 5, 7)
    assert kept["key-id"] == "k1" and meta["encryption-keys"] == keys
    assert meta["properties"]["gc.enabled"] == "false"
