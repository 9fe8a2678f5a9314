"""A local S3-compatible server for the suite (moto's server mode, from
PyPI), with the settings a Sapwood server and a PyIceberg client need."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tests.http import http_request
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


# -- an S3 that checks credentials (storage delegation) ----------------------------------
ACCOUNT = "123456789012"
VEND_ROLE = f"arn:aws:iam::{ACCOUNT}:role/sapwood-vend"
# What moto answers before it starts checking credentials: the set-up below.
_FREE_ACTIONS = 6


@dataclass
class SecuredS3:
    """moto in a process of its own that checks every request's signature
    against its IAM users (REST_NOTES: INITIAL_NO_AUTH_ACTION_COUNT): the
    warehouse's bucket, one IAM user whose keys are the catalog's (and only
    the catalog's), and a role to vend credentials for. Unsigned requests
    and unknown keys are refused, so a client that holds no credentials
    reaches the bucket only through the catalog."""

    endpoint: str
    proc: object
    key_id: str = ""
    secret: str = ""

    @staticmethod
    def start() -> SecuredS3:
        import os
        import subprocess
        import sys
        import time

        import boto3

        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.moto_secured", "-H", "127.0.0.1", "-p", str(port)],
            env={**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": str(_FREE_ACTIONS)},
            cwd=Path(__file__).resolve().parent.parent,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        endpoint = f"http://127.0.0.1:{port}"
        s3 = SecuredS3(endpoint, proc)
        setup = {"endpoint_url": endpoint, "region_name": "us-east-1",
                 "aws_access_key_id": "setup", "aws_secret_access_key": "setup"}
        deadline = time.monotonic() + 30
        while True:
            try:
                import urllib.request

                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1)
                break
            except OSError:
                if time.monotonic() > deadline:
                    proc.kill()
                    raise RuntimeError("moto did not start") from None
                time.sleep(0.1)
        iam = boto3.client("iam", **setup)
        boto3.client("s3", **setup).create_bucket(Bucket=BUCKET)
        iam.create_user(UserName="warehouse")
        iam.put_user_policy(UserName="warehouse", PolicyName="all", PolicyDocument=(
            '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", '
            '"Action": ["s3:*", "sts:AssumeRole"], "Resource": "*"}]}'))
        key = iam.create_access_key(UserName="warehouse")["AccessKey"]
        iam.create_role(RoleName="sapwood-vend", AssumeRolePolicyDocument=(
            '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": '
            f'{{"AWS": "arn:aws:iam::{ACCOUNT}:user/warehouse"}}, '
            '"Action": "sts:AssumeRole"}]}'))
        iam.put_role_policy(RoleName="sapwood-vend", PolicyName="all", PolicyDocument=(
            '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", '
            '"Action": "s3:*", "Resource": "*"}]}'))
        s3.key_id, s3.secret = key["AccessKeyId"], key["SecretAccessKey"]
        return s3

    def client(self, key_id: str | None = None, secret: str | None = None,
               token: str | None = None):  # type: ignore[no-untyped-def]
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id=key_id or self.key_id,
                            aws_secret_access_key=secret or self.secret,
                            aws_session_token=token)

    def server_env(self) -> dict[str, str]:
        """The catalog's own settings: the warehouse user's keys."""
        return {"AWS_ACCESS_KEY_ID": self.key_id, "AWS_SECRET_ACCESS_KEY": self.secret,
                "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": self.endpoint}

    def keys(self, prefix: str = "") -> dict[str, str]:
        """Every object below ``prefix`` and its ETag (what changed, if anything)."""
        pages = self.client().get_paginator("list_objects_v2").paginate(
            Bucket=BUCKET, Prefix=prefix)
        return {o["Key"]: o["ETag"] for page in pages for o in page.get("Contents", [])}

    def age(self, prefix: str, seconds: float) -> int:
        """Make the objects below ``prefix`` look ``seconds`` older (a hook of
        tests.moto_secured): how many there were."""
        r = http_request("POST", f"{self.endpoint}/_sapwood/age",
                         params={"prefix": prefix, "seconds": str(seconds)})
        r.raise_for_status()
        return int(r.text)

    def stop(self) -> None:
        self.proc.kill()  # type: ignore[attr-defined]
        self.proc.wait()  # type: ignore[attr-defined]
