"""``loadTable?snapshots=refs`` as Iceberg's reference catalog answers it
(catalog.metadata.referenced_snapshots), driven by PyIceberg's own
``snapshot-loading-mode=refs``: the snapshots no branch or tag names are
left out with their part of the snapshot log, and a client loading that way
still appends correctly."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from tests.fixtures import server_fixture

server = server_fixture()

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


def rows(*ids: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64())})


def appended_three_times(server, name: str):  # type: ignore[no-untyped-def]
    """A table appended to three times, its first snapshot tagged."""
    t = server.catalog().create_table(("refs_ns", name), SCHEMA)
    for i in range(3):
        t.append(rows(i))
    first = t.snapshots()[0].snapshot_id
    t.manage_snapshots().create_tag(first, "audited").commit()
    return t.refresh()


@pytest.fixture(scope="module")
def history(server):  # type: ignore[no-untyped-def]
    server.catalog().create_namespace("refs_ns")
    return appended_three_times(server, "t")


def load(http, mode: str):  # type: ignore[no-untyped-def]
    r = http.get("/iceberg/v1/namespaces/refs_ns/tables/t", params={"snapshots": mode})
    assert r.status_code == 200, r.text
    return r


def test_only_the_named_snapshots_and_the_log_after_the_last_one_left_out(http, history):
    ids = [s.snapshot_id for s in history.snapshots()]
    full = load(http, "all").json()["metadata"]
    assert [s["snapshot-id"] for s in full["snapshots"]] == ids
    assert [e["snapshot-id"] for e in full["snapshot-log"]] == ids
    refs = load(http, "refs").json()["metadata"]
    # The tagged first and main's current one; the second is no ref's.
    assert [s["snapshot-id"] for s in refs["snapshots"]] == [ids[0], ids[2]]
    # The log's entry for the second is gone, and with it everything
    # before it: the first's entry would otherwise say it was current until
    # the third was.
    assert [e["snapshot-id"] for e in refs["snapshot-log"]] == [ids[2]]
    assert refs["metadata-log"] == full["metadata-log"]
    assert refs["refs"] == full["refs"]


def test_the_two_answers_have_their_own_etags(http, history):
    all_tag, refs_tag = load(http, "all").headers["ETag"], load(http, "refs").headers["ETag"]
    assert all_tag != refs_tag
    # Each kept: the same answer again has the same tag.
    assert load(http, "refs").headers["ETag"] == refs_tag
    r = http.get("/iceberg/v1/namespaces/refs_ns/tables/t", params={"snapshots": "refs"},
                 headers={"If-None-Match": refs_tag})
    assert r.status_code == 304, r.text


def test_a_client_loading_refs_only_appends_and_reads_every_row(server, history):
    before = appended_three_times(server, "written")
    cat = server.catalog(**{"snapshot-loading-mode": "refs"})
    t = cat.load_table(("refs_ns", "written"))
    assert len(t.snapshots()) == 2
    t.append(rows(3))
    everything = server.catalog().load_table(("refs_ns", "written"))
    assert sorted(everything.scan().to_arrow()["id"].to_pylist()) == [0, 1, 2, 3]
    # Nothing of the history was lost by the commit of a client that did not see it.
    assert len(everything.snapshots()) == 4
    assert everything.refs()["audited"].snapshot_id == before.snapshots()[0].snapshot_id


def test_every_snapshot_named_answers_as_all(http, server):
    cat = server.catalog()
    cat.create_namespace("refs_one")
    cat.create_table(("refs_one", "t"), SCHEMA).append(rows(1))
    one = [http.get("/iceberg/v1/namespaces/refs_one/tables/t", params={"snapshots": m})
           for m in ("all", "refs")]
    assert one[0].content == one[1].content
    assert one[0].headers["ETag"] == one[1].headers["ETag"]
