"""What a commit costs the storage: one request per metadata file the
catalog writes (issue 48).

The server's S3 is moto reached through a loopback proxy (tests/proxy.py,
dropping nothing) that records every request the catalog sends; the
clients reach moto directly, so what the proxy sees is the catalog's alone.
A table commit through PyIceberg, a view replace through the REST API and
a restore (one of the catalog's own writes) each write their metadata file
with one PUT carrying ``If-None-Match: *`` (S3's exclusive create, which
moto honours) and send no HEAD or LIST before it; an append's reads of the
files it adds are GETs, with no HEAD or LIST either, and a file read from S3
is one ranged GET that fetches no more than the size limit (a larger file
refused naming the limit). Two writers creating one file name at once: the
second's PUT is refused by the store and it gets the catalog's "exists
already" 400; the first writer's file stays as it wrote it. What a commit
costs the database is tests/api/test_database_requests.py."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.types import LongType, NestedField

from catalog.metadata.files import MetadataFiles
from catalog.metadata.locations import Locations
from catalog.metadata.reading import MetadataReader
from catalog.metadata.s3_direct import USER_AGENT
from core.errors import BadRequestError
from tests.api import spark_bodies as sb
from tests.fixtures import BACKENDS, database_url
from tests.http import http_client
from tests.proxy import LossyProxy
from tests.s3 import BUCKET, LocalS3
from tests.server import Server, serving

Request = tuple[str, str, dict[str, str]]
READ_LIMIT = 200_000  # the module's server's SAPWOOD_MAX_METADATA_BYTES


def upstream(s3: LocalS3) -> str:
    return s3.endpoint.removeprefix("http://")


@dataclass
class World:
    server: Server
    proxy: LossyProxy  # between the catalog and moto
    prefix: str        # the warehouse's folder in the bucket
    url: str           # the catalog's database, and the server's settings:
    env: dict[str, str]  # another server on the same catalog starts with them

    def during(self, act: Any) -> list[Request]:
        """The storage requests the catalog sent while ``act`` ran."""
        before = len(self.proxy.received)
        act()
        return list(self.proxy.received[before:])


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, s3: LocalS3,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    base = tmp_path_factory.mktemp("requests")
    url = database_url(request, request.param, base, "req")
    with LossyProxy(upstream(s3), rule=lambda m, p: False) as proxy:
        env = {**s3.env, "AWS_ENDPOINT_URL": proxy.base,
               "SAPWOOD_MAX_METADATA_BYTES": str(READ_LIMIT)}
        with serving(url, base, extra_env=env, warehouse=s3.warehouse(base.name),
                     client_props=s3.client_props) as server:
            yield World(server, proxy, f"/{BUCKET}/{base.name}/", url, env)


def metadata_puts(requests: list[Request]) -> list[Request]:
    return [r for r in requests if r[0] == "PUT" and r[1].endswith(".metadata.json")]


def lookups(requests: list[Request]) -> list[Request]:
    """HEADs, and GETs of a bucket (a LIST) rather than of an object."""
    return [r for r in requests if r[0] == "HEAD" or (
        r[0] == "GET" and ("list-type=" in r[1] or "prefix=" in r[1]
                           or r[1].split("?")[0].rstrip("/") == f"/{BUCKET}"))]


def assert_one_exclusive_put(requests: list[Request], where: str) -> None:
    assert not lookups(requests), [r[:2] for r in requests]
    puts = metadata_puts(requests)
    assert len(puts) == 1, [r[:2] for r in requests]
    assert puts[0][1].startswith(where), puts[0][1]
    assert puts[0][2].get("if-none-match") == "*", puts[0][2]


def test_a_table_commit_is_one_exclusive_put(world: World) -> None:
    catalog = world.server.catalog()
    ns = f"t{uuid.uuid4().hex[:8]}"
    catalog.create_namespace(ns)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    table = catalog.create_table(f"{ns}.t", schema)
    # A commit that changes a property: the metadata file and nothing else.
    sent = world.during(lambda: table.transaction().set_properties(a="b").commit_transaction())
    assert_one_exclusive_put(sent, world.prefix)
    assert len(sent) == 1, [r[:2] for r in sent]
    # An append: the catalog also reads the new snapshot's manifest list
    # and manifest (it checks them), but looks nothing up before its write.
    sent = world.during(lambda: table.append(pa.table({"id": [1]}, schema=schema)))
    assert_one_exclusive_put(sent, world.prefix)
    # Each sent directly, not through s3fs (catalog.metadata.s3_direct).
    assert len(sent) == 3 and all(r[2].get("user-agent") == USER_AGENT for r in sent), \
        [(r[:2], r[2].get("user-agent")) for r in sent]
    assert catalog.load_table(f"{ns}.t").scan().to_arrow().num_rows == 1


def avro_gets(requests: list[Request]) -> list[str]:
    return sorted(r[1].split("?")[0].rsplit("/", 1)[-1] for r in requests
                  if r[0] == "GET" and r[1].split("?")[0].endswith(".avro"))


def name_of(path: str) -> str:
    return path.split("?")[0].rsplit("/", 1)[-1]


def while_held(proxy: LossyProxy, hold: Callable[[str, str], bool], act: Callable[[], None],
               arrived: Callable[[list[str]], bool]) -> list[Request]:
    """``act`` run while the storage requests ``hold`` picks wait at the
    proxy: once one is held, up to 10 s for ``arrived`` to hold of the
    Avro files read since (it fails otherwise); then released. The
    requests sent meanwhile; ``act``'s own failure fails too."""
    proxy.holding.clear()
    proxy.release.clear()
    proxy.hold = hold
    before = len(proxy.received)
    failed: list[BaseException] = []

    def run() -> None:
        try:
            act()
        except BaseException as e:  # shown by the assertion below
            failed.append(e)

    worker = threading.Thread(target=run)
    worker.start()
    try:
        assert proxy.holding.wait(30), "the held request was never sent"
        seen: list[str] = []
        for _ in range(100):  # up to 10 s while it is held
            seen = avro_gets(proxy.received[before:])
            if arrived(seen):
                break
            threading.Event().wait(0.1)
        assert arrived(seen), seen
    finally:
        proxy.hold = None
        proxy.release.set()
        worker.join(60)
    assert not failed, failed
    return list(proxy.received[before:])


def test_an_append_reads_its_manifest_list_and_manifest_at_once(world: World) -> None:
    """The new manifest's header is read alongside the manifest list (its
    name follows from the list's: PyIceberg's and Iceberg Java's
    <uuid>-m0.avro beside snap-<id>-<attempt>-<uuid>.avro), not after it:
    with the list's GET held at the proxy, the manifest's GET arrives. Each
    file is still read once, and nothing else is read."""
    catalog = world.server.catalog()
    ns = f"c{uuid.uuid4().hex[:8]}"
    catalog.create_namespace(ns)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    table = catalog.create_table(f"{ns}.t", schema)
    sent = while_held(
        world.proxy, lambda m, p: m == "GET" and name_of(p).startswith("snap-"),
        lambda: table.append(pa.table({"id": [1]}, schema=schema)),
        lambda seen: any(name.endswith("-m0.avro") for name in seen))
    names = avro_gets(sent)
    assert len(names) == 2 and names[0].endswith("-m0.avro") and \
        names[1].startswith("snap-"), [r[:2] for r in sent]
    assert not lookups(sent), [r[:2] for r in sent]
    # The next append (its parent's list known here): the same two reads.
    sent = world.during(lambda: table.append(pa.table({"id": [2]}, schema=schema)))
    names = avro_gets(sent)
    assert len(names) == 2 and names[0].endswith("-m0.avro") and \
        names[1].startswith("snap-"), [r[:2] for r in sent]
    assert catalog.load_table(f"{ns}.t").scan().to_arrow().num_rows == 2


def test_a_parent_list_this_process_never_read_is_read_at_once(world: World, s3: LocalS3,
                                                                tmp_path: Path) -> None:
    """A server restarted, or another of its processes, has not read the
    parent snapshot's manifest list (what the parent named needs no check):
    it reads it alongside the new list, not after it. With the new list's
    GET held at the proxy, the parent's list's GET arrives; the append lands."""
    catalog = world.server.catalog()
    ns = f"p{uuid.uuid4().hex[:8]}"
    catalog.create_namespace(ns)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    catalog.create_table(f"{ns}.t", schema).append(pa.table({"id": [1]}, schema=schema))
    with serving(world.url, tmp_path, extra_env=world.env, client_props=s3.client_props,
                 warehouse=world.server.warehouse) as other:
        table = other.catalog().load_table(f"{ns}.t")
        snapshot = table.current_snapshot()
        assert snapshot is not None
        parents = name_of(snapshot.manifest_list)
        sent = while_held(
            world.proxy,
            lambda m, p: m == "GET" and name_of(p).startswith("snap-") and name_of(p) != parents,
            lambda: table.append(pa.table({"id": [2]}, schema=schema)),
            lambda seen: parents in seen)
        # Each file read once: the new list, its manifest, the parent's list.
        names = avro_gets(sent)
        assert len(names) == 3 and parents in names, names
        assert other.catalog().load_table(f"{ns}.t").scan().to_arrow().num_rows == 2


def test_a_view_replace_is_one_exclusive_put(world: World) -> None:
    ns = f"v{uuid.uuid4().hex[:8]}"
    with http_client(base_url=world.server.base, timeout=30) as http:
        v1 = "/iceberg/v1"
        assert http.post(f"{v1}/namespaces", json={"namespace": [ns]}).status_code == 200
        made = http.post(f"{v1}/namespaces/{ns}/views",
                         json=sb.create_view("v", "SELECT 1 AS id"))
        assert made.status_code == 200, made.text
        view_uuid = made.json()["metadata"]["view-uuid"]
        answers: list[Any] = []
        sent = world.during(lambda: answers.append(http.post(
            f"{v1}/namespaces/{ns}/views/v", json=sb.replace_view(view_uuid, "SELECT 2 AS id"))))
        assert answers[0].status_code == 200, answers[0].text
        assert sb.current_sql(answers[0].json()["metadata"]) == "SELECT 2 AS id"
    assert_one_exclusive_put(sent, world.prefix)
    assert len(sent) == 1, [r[:2] for r in sent]


def test_a_restore_writes_its_file_with_one_exclusive_put(world: World) -> None:
    """The catalog's own writes go the same way: a restore of a table's
    earlier state (its snapshot, schema, spec and order) writes a new
    metadata file for it."""
    ns = f"r{uuid.uuid4().hex[:8]}"
    with http_client(base_url=world.server.base, timeout=30) as http:
        v1 = "/iceberg/v1"
        assert http.post(f"{v1}/namespaces", json={"namespace": [ns]}).status_code == 200
        assert http.post(f"{v1}/namespaces/{ns}/tables",
                         json=sb.create_table("t")).status_code == 200
        changed = http.post(f"{v1}/namespaces/{ns}/tables/t", json={
            "requirements": [], "updates": [{"action": "set-properties",
                                             "updates": {"a": "b"}}]})
        assert changed.status_code == 200, changed.text
        head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
        answers: list[Any] = []
        sent = world.during(lambda: answers.append(http.post(
            f"/api/v2/trees/main@{head}/history/restore",
            json={"source": "main~1", "keys": [{"elements": [ns, "t"]}]})))
        assert answers[0].status_code == 200, answers[0].text
        now = http.get(f"{v1}/namespaces/{ns}/tables/t").json()["metadata-location"]
    assert_one_exclusive_put(sent, world.prefix)
    assert len(sent) == 1, [r[:2] for r in sent]
    assert now == f"s3:/{sent[0][1]}"  # the table is at the file written


def test_a_file_read_from_s3_is_one_get_within_the_limit(world: World, s3: LocalS3) -> None:
    """Register reads the file it names: one ranged GET, never more than the
    limit fetched, a file over it refused naming the limit, and an empty
    one (S3 answers its range 416) refused as metadata that is not valid."""
    ns = f"g{uuid.uuid4().hex[:8]}"
    key = world.prefix.removeprefix(f"/{BUCKET}/") + f"{ns}/"
    s3.client().put_object(Bucket=BUCKET, Key=key + "big.metadata.json",
                           Body=b" " * (READ_LIMIT + 1))
    s3.client().put_object(Bucket=BUCKET, Key=key + "empty.metadata.json", Body=b"")
    with http_client(base_url=world.server.base, timeout=30) as http:
        v1 = "/iceberg/v1"
        assert http.post(f"{v1}/namespaces", json={"namespace": [ns]}).status_code == 200

        def register(name: str) -> tuple[Any, list[Request]]:
            answers: list[Any] = []
            sent = world.during(lambda: answers.append(http.post(
                f"{v1}/namespaces/{ns}/register", json={
                    "name": name,
                    "metadata-location": f"s3://{BUCKET}/{key}{name}.metadata.json"})))
            return answers[0], sent

        for name, message in (
                ("big", f"is larger than the limit of {READ_LIMIT} bytes "
                        "(SAPWOOD_MAX_METADATA_BYTES)"),
                ("empty", "Invalid table metadata in")):
            answer, sent = register(name)
            assert answer.status_code == 400, answer.text
            assert message in answer.json()["error"]["message"], answer.text
            assert [r[0] for r in sent] == ["GET"], [r[:2] for r in sent]
            assert sent[0][2]["range"] == f"bytes=0-{READ_LIMIT}", sent[0][2]


# -- two writers, one file name -----------------------------------------------------
@pytest.fixture
def s3_through(s3: LocalS3, monkeypatch: pytest.MonkeyPatch) -> Iterator[LossyProxy]:
    """This process's own S3 client pointed at moto through a proxy that
    holds the first PUT it sees until the test releases it."""
    import s3fs

    first: list[str] = []

    def first_put(method: str, path: str) -> bool:
        if method == "PUT" and not first:
            first.append(path)
            return True
        return False

    with LossyProxy(upstream(s3), rule=lambda m, p: False, hold=first_put) as proxy:
        for k, v in {**s3.env, "AWS_ENDPOINT_URL": proxy.base}.items():
            monkeypatch.setenv(k, v)
        s3fs.S3FileSystem.clear_instance_cache()  # none made before, for another endpoint
        try:
            yield proxy
        finally:
            proxy.release.set()
            s3fs.S3FileSystem.clear_instance_cache()


def test_the_second_writer_of_one_name_is_refused(s3: LocalS3, s3_through: LossyProxy,
                                                  tmp_path: Path) -> None:
    warehouse = s3.warehouse(f"race{uuid.uuid4().hex[:8]}")
    files = MetadataFiles(MetadataReader(Locations(warehouse, False), 10_000_000, 30))
    loc = f"{warehouse}/ns/t/metadata/00001-{uuid.uuid4()}.metadata.json"
    schema = Schema(NestedField(1, "n", LongType(), required=False))

    def meta(owner: str) -> Any:
        return new_table_metadata(schema, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER,
                                  f"{warehouse}/ns/t", {"owner": owner})

    outcome: list[BaseException | None] = []

    def slow_writer() -> None:
        try:
            files.write_table(meta("slow"), loc)
            outcome.append(None)
        except BaseException as e:  # handed to the test's thread
            outcome.append(e)

    slow = threading.Thread(target=slow_writer)
    slow.start()
    # The slow writer's PUT is on its way (held at the proxy) when the fast
    # one creates the same name.
    assert s3_through.holding.wait(30)
    files.write_table(meta("fast"), loc)
    s3_through.release.set()
    slow.join(60)
    assert len(outcome) == 1 and isinstance(outcome[0], BadRequestError), outcome
    assert str(outcome[0]) == (f"Metadata file {loc} exists already: files are never "
                               "overwritten")
    key = loc.removeprefix(f"s3://{BUCKET}/")
    body = s3.client().get_object(Bucket=BUCKET, Key=key)["Body"].read()
    assert b'"owner":"fast"' in body.replace(b" ", b"")
