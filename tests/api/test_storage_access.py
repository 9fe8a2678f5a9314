"""Storage access the catalog delegates, scoped by the grants (issue 25).

An S3-compatible server that checks every signature (tests.s3.SecuredS3:
moto with IAM on) holds the warehouse; only the catalog has keys for it.
Clients hold none: PyIceberg and DuckDB reach the files through the
catalog's signatures or the credentials it vends, and get only what their
principal may do with the table on that ref."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog

from catalog.access import create_key
from store import Store
from tests.http import http_client, http_request
from tests.proxy import LossyProxy
from tests.s3 import BUCKET, VEND_ROLE, SecuredS3
from tests.server import Server, serving

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False)])
GRANTS: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "admin": [(p, "*", ()) for p in ("read", "write", "create-reference", "delete-reference",
                                     "manage-grants")],
    "etl": [("read", "*", ("sales",)), ("write", "*", ("sales",))],
    "etl2": [("read", "*", ("sales",)), ("write", "*", ("sales",))],
    "reader": [("read", "*", ("sales",))],
    "analyst": [("read", "*", ("reports",))],
    # Writes sales on main, and reads no other reference.
    "mainonly": [("read", "main", ("sales",)), ("write", "main", ("sales",))],
}


@dataclass
class World:
    server: Server
    s3: SecuredS3
    sts: LossyProxy  # between the catalog and STS: what the catalog asked for
    keys: dict[str, str]
    table_location: str = ""

    def http(self, who: str) -> httpx.Client:
        key_id, _, secret = self.keys[who].partition(":")
        r = http_request("POST", f"{self.server.base}/iceberg/v1/oauth/tokens", data={
            "grant_type": "client_credentials", "client_id": key_id, "client_secret": secret})
        assert r.status_code == 200, r.text
        return http_client(base_url=self.server.base, timeout=30, headers={
            "Authorization": f"Bearer {r.json()['access_token']}"})

    def catalog(self, who: str, mode: str | None = None) -> RestCatalog:
        """PyIceberg as ``who``, holding no storage credentials at all."""
        props = {"credential": self.keys[who],
                 # The fsspec FileIO: the one PyIceberg's signer works with.
                 "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO"}
        if mode is not None:
            props["header.X-Iceberg-Access-Delegation"] = mode
        return RestCatalog(f"as-{who}", uri=self.server.uri(), **props)

    def sign(self, who: str, method: str, key: str, table: str = "t",
             bucket: str = BUCKET, **params: str) -> httpx.Response:
        return self.http(who).post(
            f"/iceberg/v1/namespaces/sales/tables/{table}/sign", params=params,
            json={"method": method, "region": "us-east-1",
                  "uri": f"{self.s3.endpoint}/{bucket}/{key}", "headers": {}})


@contextmanager
def secured_world(tmp: Path, grants: dict[str, list[tuple[str, str, tuple[str, ...]]]],
                  url: str | None = None) -> Iterator[World]:
    """A server on a warehouse in SecuredS3 (its catalog at ``url``, else a
    SQLite file), with a principal and its key for each of ``grants``, and
    namespaces sales, hr (with hr.salaries) and reports."""
    s3 = SecuredS3.start()
    url = url or f"sqlite:///{tmp / 'sapwood.db'}"
    store = Store(url)
    keys = {}
    for name, granted in grants.items():
        store.auth.create_principal(name)
        for privilege, refs, ns in granted:
            store.auth.add_grant(name, privilege, refs, ns)
        keys[name] = create_key(store, name)
    store.close()
    host, port = s3.endpoint.removeprefix("http://").split(":")
    try:
        with LossyProxy(f"{host}:{port}", rule=lambda m, p: False) as sts:
            env = {**s3.server_env(), "SAPWOOD_AUTH": "1", "SAPWOOD_VEND_ROLE_ARN": VEND_ROLE,
                   "AWS_ENDPOINT_URL_STS": sts.base,
                   # A deleted branch retains nothing (store.retention), and
                   # gc's write window is its default (an hour).
                   "SAPWOOD_GC_GRACE_S": "0",
                   # botocore's default checksums are not verified by moto's signature check.
                   "AWS_REQUEST_CHECKSUM_CALCULATION": "when_required",
                   "AWS_RESPONSE_CHECKSUM_VALIDATION": "when_required"}
            with serving(url, tmp, extra_env=env, warehouse=f"s3://{BUCKET}/wh") as server:
                w = World(server, s3, sts, keys)
                admin = w.catalog("admin")
                for ns in ("sales", "hr", "reports"):
                    admin.create_namespace(ns)
                admin.create_table("hr.salaries", SCHEMA)
                yield w
    finally:
        s3.stop()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with secured_world(tmp_path_factory.mktemp("delegation"), GRANTS) as w:
        yield w


def _signed(w: World, who: str, method: str, uri: str, table: str = "t",
            body: bytes = b"", headers: dict[str, str] | None = None) -> httpx.Response:
    """The request made with the catalog's signature (403 if refused)."""
    r = w.http(who).post(f"/iceberg/v1/namespaces/sales/tables/{table}/sign", json={
        "method": method, "region": "us-east-1", "uri": uri,
        "headers": {k: [v] for k, v in (headers or {}).items()},
        "body": body.decode() if body else None})
    if r.status_code != 200:
        return r
    sent = {**(headers or {}), **{k: v[0] for k, v in r.json()["headers"].items()}}
    return http_request(method, uri, content=body, headers=sent)


def _put(w: World, who: str, key: str, table: str = "t") -> None:
    r = _signed(w, who, "PUT", f"{w.s3.endpoint}/{BUCKET}/{key}", table, b"stray")
    assert r.status_code == 200, r.text


def _delete_objects(keys: list[str]) -> bytes:
    return ("<Delete>" + "".join(f"<Object><Key>{k}</Key></Object>" for k in keys)
            + "</Delete>").encode()


def _files(w: World, table: str) -> list[str]:
    """The table's files in the bucket (keys)."""
    return [k for k in w.s3.keys("wh/") if re.match(rf"wh/sales/{table}_[0-9a-f]+/", k)]


def test_remote_signing_lets_writers_write_and_readers_read(world: World) -> None:
    w = world
    etl = w.catalog("etl", "remote-signing")
    t = etl.create_table("sales.t", SCHEMA)
    assert t.io.properties["s3.signer"] == "S3V4RestSigner"
    assert "s3.access-key-id" not in t.io.properties  # nothing to use but the signer
    t.append(pa.table({"id": [1, 2, 3]}, schema=SCHEMA))
    assert etl.load_table("sales.t").scan().to_arrow()["id"].to_pylist() == [1, 2, 3]
    reader = w.catalog("reader", "remote-signing")
    assert sorted(reader.load_table("sales.t").scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    # Written through the catalog's signatures, marked with their writer.
    data = [k for k in _files(w, "t") if "/data/" in k]
    assert data and w.s3.client().head_object(Bucket=BUCKET, Key=data[0])["Metadata"] == {
        "sapwood-writer": "etl"}
    before = w.s3.keys()
    from pyiceberg.exceptions import SignError

    with pytest.raises(SignError, match="403"):
        reader.load_table("sales.t").append(pa.table({"id": [9]}, schema=SCHEMA))
    assert w.s3.keys() == before  # the refused write left nothing
    # Without the catalog, the bucket is closed to a client.
    assert http_request("GET", f"{w.s3.endpoint}/{BUCKET}/{data[0]}").status_code == 403


def test_signing_refuses_what_the_table_does_not_hold(world: World) -> None:
    w = world
    if not _files(w, "t"):
        test_remote_signing_lets_writers_write_and_readers_read(w)
    before = w.s3.keys()
    hr = next(k for k in before if k.startswith("wh/hr/"))
    own = next(k for k in _files(w, "t") if "/data/" in k)
    table_dir = own.split("/data/")[0]
    cases = [
        (("GET", hr), "not under the table's location"),
        (("GET", own.replace(BUCKET, "x"), "t", "other-bucket"), "not under the table's location"),
        (("GET", f"{table_dir}/../../hr/{hr.split('/', 2)[2]}"), "not normalised"),
        (("PUT", f"{table_dir}/data/new.parquet"), "may not write"),
        (("GET", f"{BUCKET}?policy"), "not signed"),
    ]
    for args, why in cases:
        r = w.sign("reader", *args)
        assert r.status_code == 403, (args, r.text)
        assert why in r.json()["error"]["message"], (args, r.text)
    # A file the table's current version references is deleted by no one.
    for who in ("etl", "etl2"):
        r = w.sign(who, "DELETE", own)
        assert r.status_code == 403 and "retained by branch 'main'" in r.text, r.text
    # One nothing references: by its writer only, while it is young.
    stray = f"{table_dir}/data/stray-{uuid.uuid4().hex}.parquet"
    _put(w, "etl", stray)
    before = w.s3.keys()
    r = w.sign("etl2", "DELETE", stray)
    assert r.status_code == 403 and "was not written by principal 'etl2'" in r.text, r.text
    ok = w.sign("etl", "DELETE", stray)
    assert ok.status_code == 200 and ok.headers["cache-control"] == "no-cache"
    assert w.s3.keys() == before  # signing did nothing itself
    # Every decision is counted and logged.
    metrics = http_request("GET", f"{w.server.base}/metrics").text
    assert re.search(r'sapwood_storage_access_total\{kind="sign",outcome="refused",'
                     r'reason="refused"\} [1-9]', metrics), metrics
    assert re.search(r'sapwood_storage_access_total\{kind="sign",outcome="granted",'
                     r'reason="read"\} [1-9]', metrics)
    log = w.server.log.read_text()
    assert "sign refused refused: Signing refused: principal 'reader' may not write" in log
    assert re.search(r"POST /iceberg/v1/namespaces/\{namespace\}/tables/\{table\}/sign 200 "
                     r"\S+ etl /iceberg/v1/namespaces/sales/tables/t/sign main sign granted delete",
                     log)


def _sts_policies(w: World) -> list[dict[str, Any]]:
    out = []
    for (_, _, _), body in zip(w.sts.received, w.sts.bodies, strict=True):
        form = parse_qs(body.decode())
        if form.get("Action") == ["AssumeRole"]:
            out.append(json.loads(form["Policy"][0]))
    return out


def test_vended_credentials_for_pyiceberg_and_duckdb(world: World) -> None:
    w = world
    w.catalog("etl").create_table("sales.v", SCHEMA).append(
        pa.table({"id": [4, 5]}, schema=SCHEMA))  # PyIceberg asks for vended credentials
    reader = w.catalog("reader").load_table("sales.v")
    assert reader.io.properties["s3.session-token"]
    assert sorted(reader.scan().to_arrow()["id"].to_pylist()) == [4, 5]
    # Through DuckDB's iceberg extension, which asks for them by default.
    rows = _duckdb_count(w, "reader", "sales.v")
    assert rows == 2
    # What the catalog asked STS for: the table's prefix only; writes for etl only.
    location = reader.metadata.location.removeprefix(f"s3://{BUCKET}/")
    policies = _sts_policies(w)
    by_writes = {any("s3:PutObject" in s["Action"] for s in p["Statement"]): p
                 for p in policies if location in json.dumps(p)}
    assert set(by_writes) == {True, False}
    read_only = by_writes[False]
    for statement in read_only["Statement"]:
        assert set(statement["Action"]) <= {"s3:GetObject", "s3:GetObjectVersion",
                                            "s3:ListBucket"}
        assert all(r in (f"arn:aws:s3:::{BUCKET}", f"arn:aws:s3:::{BUCKET}/{location}/*")
                   for r in statement["Resource"])
    assert "hr" not in json.dumps(read_only)
    # The credentials are real (moto does not apply session policies, so only
    # the policy above says what they may not do).
    creds = reader.io.properties
    data = next(k for k in _files(w, "v") if "/data/" in k)
    direct = w.s3.client(creds["s3.access-key-id"], creds["s3.secret-access-key"],
                         creds["s3.session-token"])
    assert direct.get_object(Bucket=BUCKET, Key=data)["ContentLength"] > 0
    # The spec's credentials route; kept per principal and table until near expiry.
    answer = w.http("reader").get("/iceberg/v1/namespaces/sales/tables/v/credentials")
    assert answer.status_code == 200, answer.text
    (cred,) = answer.json()["storage-credentials"]
    assert cred["prefix"] == reader.metadata.location
    assert cred["config"]["s3.access-key-id"] == creds["s3.access-key-id"]
    assert len(_sts_policies(w)) == len(policies)


def _duckdb_count(w: World, who: str, table: str) -> int:
    import duckdb

    from tests.duckdb_ext import duckdb_extensions

    con = duckdb.connect(config={"extension_directory": duckdb_extensions()})
    con.execute("LOAD iceberg")
    con.execute("LOAD httpfs")
    key_id, _, secret = w.keys[who].partition(":")
    con.execute(f"CREATE SECRET cat (TYPE iceberg, CLIENT_ID '{key_id}', CLIENT_SECRET "
                f"'{secret}', OAUTH2_SERVER_URI '{w.server.base}/iceberg/v1/oauth/tokens')")
    con.execute(f"ATTACH '' AS cat (TYPE iceberg, ENDPOINT '{w.server.base}/iceberg', "
                "SECRET cat)")
    return int(con.execute(f"SELECT count(*) FROM cat.{table}").fetchall()[0][0])


def _view(w: World, name: str, sql: str, security: str | None) -> None:
    props = {"sapwood.security": security} if security else {}
    w.catalog("admin").create_view(f"reports.{name}", pa.schema([("id", pa.int64())]),
                                   _view_version(sql), properties=props)


def _view_version(sql: str) -> Any:
    from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

    return ViewVersion(version_id=1, schema_id=0, timestamp_ms=0, summary={},
                       default_namespace=["reports"], representations=[
                           SQLViewRepresentation(type="sql", sql=sql, dialect="spark")])


def test_a_definer_view_opens_what_it_reads_and_nothing_else(world: World) -> None:
    w = world
    if not _files(w, "t"):
        test_remote_signing_lets_writers_write_and_readers_read(w)
    _view(w, "v", "SELECT id FROM sales.t", "definer")
    _view(w, "inv", "SELECT id FROM sales.t", None)
    _view(w, "other", "SELECT id FROM hr.salaries", "definer")
    analyst = w.http("analyst")
    load = "/iceberg/v1/namespaces/sales/tables/t"
    ok = analyst.get(load, params={"referenced-by": "reports\x1fv"})
    assert ok.status_code == 200, ok.text
    data = next(k for k in _files(w, "t") if "/data/" in k)
    assert w.sign("analyst", "GET", data, **{"referenced-by": "reports\x1fv"}).status_code == 200
    # Read only, through a view: no writes signed.
    put = w.sign("analyst", "PUT", data.rsplit("/", 1)[0] + "/x.parquet",
                 **{"referenced-by": "reports\x1fv"})
    assert put.status_code == 403 and "may not write" in put.text
    for params, why in [({}, "lacks the 'read' privilege"),
                        ({"referenced-by": "reports\x1finv"}, "runs with its reader's rights"),
                        ({"referenced-by": "reports\x1fother"}, "does not read sales.t"),
                        ({"referenced-by": "hr\x1fsalaries"}, "lacks the 'read' privilege")]:
        r = analyst.get(load, params=params)
        assert r.status_code == 403 and why in r.text, (params, r.text)
        assert w.sign("analyst", "GET", data, **params).status_code == 403
    # The mode is checked when set: a typo opens nothing.
    bad = w.http("admin").post("/iceberg/v1/namespaces/reports/views", json={
        "name": "typo", "schema": {"type": "struct", "fields": [], "schema-id": 0},
        "view-version": {"version-id": 1, "schema-id": 0, "timestamp-ms": 0, "summary": {},
                         "default-namespace": ["reports"], "representations": [
                             {"type": "sql", "sql": "SELECT 1", "dialect": "spark"}]},
        "properties": {"sapwood.security": "definr"}})
    assert bad.status_code == 400 and "sapwood.security" in bad.text


def test_a_local_warehouse_says_there_is_nothing_to_delegate(tmp_path: Path) -> None:
    with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path) as server:
        http = http_client(base_url=server.base, timeout=30)
        note = http.get("/iceberg/v1/config").json()["defaults"]["sapwood.access-delegation"]
        assert note.startswith("unavailable")
        server.catalog().create_namespace("ns")
        server.catalog().create_table("ns.t", SCHEMA)
        plain = http.get("/iceberg/v1/namespaces/ns/tables/t")
        assert plain.json()["config"] == {}
        asked = http.get("/iceberg/v1/namespaces/ns/tables/t",
                         headers={"X-Iceberg-Access-Delegation": "vended-credentials"})
        assert asked.json()["config"] == {"sapwood.access-delegation": note}
        assert asked.headers["etag"] != plain.headers["etag"]
        assert "storage-credentials" not in asked.json()
        sign = http.post("/iceberg/v1/namespaces/ns/tables/t/sign", json={
            "method": "GET", "region": "us-east-1", "uri": "http://x/y/z", "headers": {}})
        assert sign.status_code == 403 and "not on S3" in sign.text
        creds = http.get("/iceberg/v1/namespaces/ns/tables/t/credentials")
        assert creds.status_code == 400 and "not on S3" in creds.text


def test_deletes_are_signed_only_for_files_no_retained_commit_references(world: World) -> None:
    """An engine's maintenance (Iceberg's expire_snapshots, remove_orphan_files)
    deletes through the catalog's signatures: it may delete what gc itself
    could, and nothing any reference's retained history needs (issue 35)."""
    w = world
    admin = w.http("admin")
    etl = w.catalog("etl", "remote-signing")
    t = etl.create_table("sales.kept", SCHEMA)
    t.append(pa.table({"id": [1]}, schema=SCHEMA))
    a_commit = admin.get("/api/v2/trees/main").json()["reference"]["hash"]
    a_files = set(_files(w, "kept"))
    t = etl.load_table("sales.kept")
    t.overwrite(pa.table({"id": [2]}, schema=SCHEMA))
    # main's current version stops listing A's snapshot (the table's own
    # expiry): A's files are referenced only by main's history now.
    t = etl.load_table("sales.kept")
    t.maintenance.expire_snapshots().by_ids(
        [s.snapshot_id for s in t.metadata.snapshots
         if s.snapshot_id != t.metadata.current_snapshot_id]).commit()
    assert len(etl.load_table("sales.kept").metadata.snapshots) == 1
    a_data = next(k for k in a_files if "/data/" in k)
    a_manifest = next(k for k in a_files if k.endswith("-m0.avro"))
    a_list = next(k for k in a_files if "/snap-" in k)
    head_data = next(k for k in set(_files(w, "kept")) - a_files if "/data/" in k)
    uri = f"{w.s3.endpoint}/{BUCKET}"

    def delete(who: str, key: str) -> httpx.Response:
        return w.sign(who, "DELETE", key, "kept")

    def bulk(who: str, keys: list[str]) -> httpx.Response:
        return w.http(who).post("/iceberg/v1/namespaces/sales/tables/kept/sign", json={
            "method": "POST", "region": "us-east-1", "uri": f"{uri}?delete",
            "headers": {}, "body": _delete_objects(keys).decode()})

    def refused(r: httpx.Response, *why: str) -> None:
        assert r.status_code == 403, r.text
        for part in why:
            assert part in r.json()["error"]["message"], r.text

    try:
        # No policy: history is retained whole, so what it references stays.
        refused(delete("etl", a_data), "is referenced by history that is retained",
                "retained by branch 'main', holds a version of sales.kept that references it")
        refused(bulk("etl", [a_manifest, a_list]), "retained by branch 'main'")
        # `keep` holds A; main keeps only its head from now on.
        r = admin.post("/api/v2/trees", params={"name": "keep", "type": "BRANCH"},
                       json={"type": "BRANCH", "name": "main", "hash": a_commit})
        assert r.status_code == 200, r.text
        r = admin.put("/api/v2/retention",
                      json={"policies": [{"refs": "main", "keepCommits": 1}]})
        assert r.status_code == 200, r.text
        for who in ("etl", "etl2"):
            refused(delete(who, a_data), f"commit {a_commit[:12]}, retained by branch 'keep'")
            refused(bulk(who, [head_data.replace("/data/", "/data/x"), a_list]),
                    f"s3://{BUCKET}/{a_list} is referenced", "retained by branch 'keep'")
        # Who may not read `keep` learns nothing of it.
        hidden = delete("mainonly", a_data)
        refused(hidden, "a retained commit of another reference")
        assert "keep" not in hidden.text and a_commit[:12] not in hidden.text
        # The head's files, whoever asks.
        refused(delete("etl", head_data), "retained by branch 'main'")
        refused(bulk("mainonly", [head_data]), "retained by branch 'main'")
        assert (w.s3.client().head_object(Bucket=BUCKET, Key=a_data)["ContentLength"])

        # Once `keep` is gone, only expired history references A's files.
        r = admin.delete(f"/api/v2/trees/keep@{a_commit}")
        assert r.status_code == 200, r.text
        # Young files: by their writer only (a commit in flight may need them).
        refused(delete("etl2", a_data), "was not written by principal 'etl2'",
                "gc's write window")
        refused(bulk("etl2", [a_manifest]), "was not written by principal 'etl2'")
        assert _signed(w, "etl", "DELETE", f"{uri}/{a_data}", "kept").status_code == 204
        assert a_data not in w.s3.keys("wh/sales/")
        body = _delete_objects([a_manifest])
        md5 = {"content-md5": base64.b64encode(hashlib.md5(body).digest()).decode()}
        assert bulk("etl", [a_manifest]).status_code == 200
        assert _signed(w, "etl", "POST", f"{uri}?delete", "kept", body, md5).status_code == 200
        assert a_manifest not in w.s3.keys("wh/sales/")
        # Past the write window, anyone who may write the table may delete them.
        assert w.s3.age(a_list, 2 * 3600) == 1
        assert delete("etl2", a_list).status_code == 200
        assert bulk("mainonly", [a_list]).status_code == 200
        # main's head still holds its own files.
        w.s3.age(head_data, 2 * 3600)
        refused(delete("etl2", head_data), "retained by branch 'main'")
        assert head_data in w.s3.keys("wh/sales/")
        assert etl.load_table("sales.kept").scan().to_arrow()["id"].to_pylist() == [2]
    finally:
        assert admin.put("/api/v2/retention", json={"policies": []}).status_code == 200


def test_a_table_made_again_where_a_dropped_one_lived_deletes_none_of_its_history(
        world: World) -> None:
    """A table dropped and made again at its old location (allowed once it is
    gone from every head): the old table's files there are still history's."""
    w = world
    etl = w.catalog("etl", "remote-signing")
    where = f"s3://{BUCKET}/wh/sales/reused"
    etl.create_table("sales.old", SCHEMA, location=where).append(
        pa.table({"id": [1]}, schema=SCHEMA))
    old_data = next(k for k in w.s3.keys("wh/sales/reused/") if "/data/" in k)
    etl.drop_table("sales.old")
    etl.create_table("sales.new", SCHEMA, location=where)
    r = w.sign("etl", "DELETE", old_data, "new")
    assert r.status_code == 403, r.text
    assert "retained by branch 'main', holds a version of sales.old" in r.text, r.text
