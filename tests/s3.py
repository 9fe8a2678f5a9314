"""A local S3-compatible server for the suite (moto's server mode, from
PyPI), with the settings a Sapwood server and a PyIceberg client need."""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.server import free_port

BUCKET = "sapwood-warehouse"


@dataclass
class LocalS3:
    endpoint: str
    server: object = None
    env: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def start() -> LocalS3:
        from moto.server import ThreadedMotoServer

        port = free_port()
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
        endpoint = f"http://127.0.0.1:{port}"
        env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint}
        s3 = LocalS3(endpoint, server, env)
        s3.client().create_bucket(Bucket=BUCKET)
        return s3

    def client(self):  # type: ignore[no-untyped-def]
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    def warehouse(self, name: str) -> str:
        return f"s3://{BUCKET}/{name}"

    def keys(self, prefix: str) -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(
            Bucket=BUCKET, Prefix=prefix)
        return [o["Key"] for page in pages for o in page.get("Contents", [])]

    def age(self, prefix: str, seconds: float) -> None:
        """Make the objects below ``prefix`` look ``seconds`` older (the
        server runs in this process): what time passing does to them."""
        from datetime import timedelta

        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        bucket = s3_backends[DEFAULT_ACCOUNT_ID]["global"].buckets[BUCKET]
        for key in bucket.keys.values():
            if key.name.startswith(prefix):
                key.last_modified -= timedelta(seconds=seconds)

    @property
    def client_props(self) -> dict[str, str]:
        """What a PyIceberg client needs to read and write the bucket (its
        fsspec FileIO: moto refuses the checksums PyArrow's S3 uploads send)."""
        return {"s3.endpoint": self.endpoint, "s3.access-key-id": "testing",
                "s3.secret-access-key": "testing", "s3.region": "us-east-1",
                "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO"}

    def stop(self) -> None:
        self.server.stop()  # type: ignore[attr-defined]
