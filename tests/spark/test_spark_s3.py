"""Spark (Iceberg 1.10's official runtime and AWS bundle) on a warehouse in
an S3 that checks every signature (moto with IAM on): Spark holds no storage
keys at all and reaches the files only through the catalog, once by its
signatures (remote signing) and once by the credentials it vends. The two
cases issue 25 could not test with the PyPI-built jars, which have no AWS SDK."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
import pytest

from catalog.access import create_key
from store import Store
from tests.http import http_client, http_request
from tests.s3 import BUCKET, VEND_ROLE, SecuredS3
from tests.server import Server, serving
from tests.spark.conftest import module_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MODES = ("remote-signing", "vended-credentials")


@dataclass
class World:
    server: Server
    s3: SecuredS3
    spark: SparkSession
    key: str  # etl's

    def http(self) -> httpx.Client:
        """As etl, with a token from the catalog."""
        key_id, _, secret = self.key.partition(":")
        r = http_request("POST", f"{self.server.base}/iceberg/v1/oauth/tokens", data={
            "grant_type": "client_credentials", "client_id": key_id, "client_secret": secret})
        assert r.status_code == 200, r.text
        return http_client(base_url=self.server.base, timeout=30, headers={
            "Authorization": f"Bearer {r.json()['access_token']}"})


@pytest.fixture(scope="module")
def world(spark_jvm: SparkSession, tmp_path_factory: pytest.TempPathFactory,
          ) -> Iterator[World]:
    from spark import add_catalog
    from spark.jars import spark_jars

    if not any("iceberg-aws-bundle" in p.name for p in spark_jars().paths):
        pytest.skip("the official AWS bundle is not among the jars (no Maven here)")
    s3 = SecuredS3.start()
    tmp = tmp_path_factory.mktemp("spark-s3")
    url = f"sqlite:///{tmp / 'sapwood.db'}"
    store = Store(url)
    store.auth.create_principal("etl")
    for privilege in ("read", "write"):
        store.auth.add_grant("etl", privilege, "*", ())
    key = create_key(store, "etl")
    store.close()
    env = {**s3.server_env(), "SAPWOOD_AUTH": "1", "SAPWOOD_VEND_ROLE_ARN": VEND_ROLE,
           # botocore's default checksums are not verified by moto's signature check.
           "AWS_REQUEST_CHECKSUM_CALCULATION": "when_required",
           "AWS_RESPONSE_CHECKSUM_VALIDATION": "when_required"}
    try:
        with serving(url, tmp, extra_env=env, warehouse=f"s3://{BUCKET}/wh") as server:
            spark = module_session(spark_jvm, server.base, catalog="remote_signing",
                                   credential=key)
            for mode in MODES:
                name = add_catalog(spark, mode.replace("-", "_"), server.base, ref="main",
                                   credential=key)
                # The Iceberg REST spec's header: which delegation the client takes.
                spark.conf.set(f"spark.sql.catalog.{name}.header.X-Iceberg-Access-Delegation",
                               mode)
            yield World(server, s3, spark, key)
    finally:
        s3.stop()


@pytest.mark.parametrize("mode", MODES)
def test_spark_appends_and_reads_an_s3_warehouse_through_the_catalog(world: World,
                                                                     mode: str) -> None:
    cat = mode.replace("-", "_")
    ns = f"s3_{cat}"
    spark = world.spark
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {cat}.{ns}")
    spark.sql(f"CREATE TABLE {cat}.{ns}.t (id BIGINT, name STRING) USING iceberg")
    spark.sql(f"INSERT INTO {cat}.{ns}.t VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"INSERT INTO {cat}.{ns}.t VALUES (3, 'c')")
    got = sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.t").collect())
    assert got == [(1, "a"), (2, "b"), (3, "c")]
    # The files are in the bucket, under the table's location, written by Spark.
    keys = world.s3.keys(f"wh/{ns}/")
    data = [k for k in keys if "/data/" in k and k.endswith(".parquet")]
    assert len(data) >= 2, keys
    assert any(k.endswith(".avro") for k in keys), keys  # manifests, written by Spark
    # What told Spark how: the access line names the delegation the catalog granted.
    log = world.server.log.read_text()
    kind = "sign granted write" if mode == "remote-signing" else "vend granted write"
    assert kind in log, log[-3000:]


@pytest.mark.parametrize("mode", MODES)
def test_deletion_vectors_are_written_and_read_through_the_catalog(world: World,
                                                                   mode: str) -> None:
    """Format v3: Spark's merge-on-read DELETE writes a Puffin deletion
    vector into the bucket through the same signatures or credentials as
    any data file, and reads it back (catalog.iceberg_v3)."""
    cat = mode.replace("-", "_")
    ns = f"s3_{cat}"
    spark = world.spark
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {cat}.{ns}")
    spark.sql(f"CREATE TABLE {cat}.{ns}.dv (id BIGINT) USING iceberg TBLPROPERTIES "
              "('format-version'='3', 'write.delete.mode'='merge-on-read')")
    spark.sql(f"INSERT INTO {cat}.{ns}.dv SELECT id FROM range(0, 10)")
    spark.sql(f"DELETE FROM {cat}.{ns}.dv WHERE id = 3")
    got = sorted(r[0] for r in spark.sql(f"SELECT id FROM {cat}.{ns}.dv").collect())
    assert got == [i for i in range(10) if i != 3]
    puffins = [k for k in world.s3.keys(f"wh/{ns}/dv") if k.endswith(".puffin")]
    assert puffins, world.s3.keys(f"wh/{ns}/")
    # The vector is referenced like any file: the catalog signs no DELETE of it.
    r = world.http().post(f"/iceberg/v1/namespaces/{ns}/tables/dv/sign", json={
        "method": "DELETE", "region": "us-east-1", "headers": {},
        "uri": f"{world.s3.endpoint}/{BUCKET}/{puffins[0]}"})
    assert r.status_code == 403, r.text
    assert "is referenced by history that is retained" in r.json()["error"]["message"]


def test_s3fileio_deletes_by_the_body_it_showed_and_never_overwrites(world: World) -> None:
    """Iceberg's S3FileIO through the catalog's signatures (issue 43): the
    DeleteObjects it sends with its body is signed with that body's hash and
    Content-MD5, which S3 checks, and deletes what it names; a file it
    writes is signed with If-None-Match: *, which its client applies, so
    writing over one that exists is refused by S3 and changes nothing."""
    spark = world.spark
    spark.sql("CREATE NAMESPACE IF NOT EXISTS remote_signing.s3_io")
    spark.sql("CREATE TABLE remote_signing.s3_io.t (id BIGINT) USING iceberg")
    jvm = spark._jvm  # type: ignore[attr-defined]
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog(  # type: ignore[attr-defined]
        "remote_signing").icebergCatalog()
    table = catalog.loadTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse("s3_io.t"))
    io, location = table.io(), table.location()
    strays = [f"{location}/data/stray-{i}.bin" for i in range(2)]
    for path in strays:
        out = io.newOutputFile(path).create()
        out.write(bytearray(b"first"))
        out.close()
    key = strays[0].removeprefix(f"s3://{BUCKET}/")
    before = world.s3.keys(key)
    out = io.newOutputFile(strays[0]).createOrOverwrite()
    out.write(bytearray(b"second"))
    with pytest.raises(Exception, match=r"412|PreconditionFailed"):
        out.close()
    assert world.s3.keys(key) == before
    assert world.s3.client().get_object(Bucket=BUCKET, Key=key)["Body"].read() == b"first"
    paths = jvm.java.util.ArrayList()
    for path in strays:
        paths.add(path)
    io.deleteFiles(paths)
    assert not world.s3.keys(f"{location.removeprefix(f's3://{BUCKET}/')}/data/stray-")
    log = world.server.log.read_text()
    assert f"sign granted delete: POST s3://{BUCKET}/" in log, log[-3000:]


def test_spark_signs_at_the_spec_path_without_the_deprecated_signer_settings(
        world: World) -> None:
    """Iceberg 1.12's S3 signer takes the spec's deprecated ``signer.uri`` /
    ``signer.endpoint`` when a table answer has them (and warns), else signs
    at the spec's own path, ``v1/{prefix}/namespaces/{ns}/tables/{t}/sign``
    under the catalog's URI. The catalog sends only PyIceberg's (and Iceberg
    1.10/1.11's) ``s3.signer.*``, so Spark signs there."""
    spark, ns = world.spark, "s3_spec_path"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS remote_signing.{ns}")
    spark.sql(f"CREATE TABLE remote_signing.{ns}.t (id BIGINT) USING iceberg")
    spark.sql(f"INSERT INTO remote_signing.{ns}.t VALUES (1), (2)")
    assert sorted(r[0] for r in spark.sql(f"SELECT id FROM remote_signing.{ns}.t").collect()) \
        == [1, 2]
    r = world.http().get(f"/iceberg/v1/namespaces/{ns}/tables/t",
                         headers={"X-Iceberg-Access-Delegation": "remote-signing"})
    config = r.json()["config"]
    assert "signer.uri" not in config and "signer.endpoint" not in config, config
    assert config["s3.signer.endpoint"].endswith(f"namespaces/{ns}/tables/t/sign"), config
    # Spark's writes and reads of it were signed by the catalog's sign route.
    log = world.server.log.read_text()
    for line in (f"sign granted write: PUT s3://{BUCKET}/wh/{ns}/",
                 f"sign granted read: GET s3://{BUCKET}/wh/{ns}/"):
        assert line in log, log[-3000:]
