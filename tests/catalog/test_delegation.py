"""What the catalog signs (catalog.delegation): which S3 requests are a
table's reads and writes, and that its SigV4 signatures are botocore's."""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import time

import pytest

from catalog.delegation.s3_requests import Access, parse, under
from catalog.delegation.vending import session_policy
from catalog.metadata.sigv4 import Signer
from core.errors import ForbiddenError, InvalidInputError

EP = "127.0.0.1:9000"
LOC = "s3://wh/sales/t_1"


@pytest.mark.parametrize(("method", "uri", "access", "key"), [
    ("GET", "http://127.0.0.1:9000/wh/sales/t_1/data/a.parquet", Access.READ,
     "sales/t_1/data/a.parquet"),
    ("HEAD", "http://127.0.0.1:9000/wh/sales/t_1/metadata/x%3D1.avro", Access.READ,
     "sales/t_1/metadata/x=1.avro"),
    ("PUT", "http://127.0.0.1:9000/wh/sales/t_1/data/b.parquet", Access.WRITE,
     "sales/t_1/data/b.parquet"),
    ("POST", "http://127.0.0.1:9000/wh/sales/t_1/data/c.parquet?uploads", Access.WRITE,
     "sales/t_1/data/c.parquet"),
    ("PUT", "http://127.0.0.1:9000/wh/sales/t_1/data/c.parquet?partNumber=1&uploadId=u",
     Access.WRITE, "sales/t_1/data/c.parquet"),
    ("GET", "http://127.0.0.1:9000/wh?list-type=2&prefix=sales%2Ft_1%2Fdata%2F", Access.READ,
     "sales/t_1/data/"),
])
def test_a_tables_requests(method: str, uri: str, access: Access, key: str) -> None:
    r = parse(method, uri, EP)
    assert (r.access, r.bucket, r.key) == (access, "wh", key)
    assert under(LOC, r.bucket, r.key.rstrip("/"))


@pytest.mark.parametrize(("method", "uri", "why"), [
    ("GET", "http://127.0.0.1:9000/wh/sales/t_1/../../hr/s/a.parquet", "normalised"),
    ("GET", "http://127.0.0.1:9000/wh/sales/t_1/%2E%2E/x", "normalised"),
    ("GET", "http://evil.example/wh/sales/t_1/a", "endpoint"),
    ("GET", "http://127.0.0.1:9000/wh/sales/t_1/a?acl", "subresource"),
    ("PUT", "http://127.0.0.1:9000/wh?policy", "bucket"),
    ("GET", "http://127.0.0.1:9000/wh?versions", "bucket"),
    ("PATCH", "http://127.0.0.1:9000/wh/sales/t_1/a", "PATCH"),
    ("GET", "file:///etc/passwd", "http"),
])
def test_anything_else_is_refused_naming_why(method: str, uri: str, why: str) -> None:
    with pytest.raises(ForbiddenError, match=why):
        parse(method, uri, EP)


def test_under_is_by_path_segment_and_bucket() -> None:
    assert under(LOC, "wh", "sales/t_1/data/a")
    assert not under(LOC, "wh", "sales/t_10/data/a")  # a sibling with a longer name
    assert not under(LOC, "other", "sales/t_1/data/a")
    assert not under(LOC, "wh", "sales/t")


def test_signatures_are_botocores(monkeypatch: pytest.MonkeyPatch) -> None:
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret/x+y")
    now = time.gmtime()
    signer = Signer(clock=lambda: now)
    monkeypatch.setattr("botocore.auth.get_current_datetime",
                        lambda: datetime.datetime(*now[:6]))
    for method, uri, given in [
        ("GET", "https://b.s3.us-east-1.amazonaws.com/wh/t/a%3D1.parquet",
         {"x-amz-meta-q": ["v  w"], "User-Agent": ["x"]}),
        ("POST", "https://b.s3.us-east-1.amazonaws.com/wh/t/m.avro?uploads", {}),
        ("GET", "https://s3.us-east-1.amazonaws.com/b?list-type=2&prefix=wh%2Ft%2F", {}),
        ("PUT", "https://b.s3.us-east-1.amazonaws.com/wh/t/a%20b?partNumber=2&uploadId=xyz",
         {"Content-MD5": ["abc=="]}),
    ]:
        headers = {k.lower(): v[0] for k, v in given.items()
                   if k.lower().startswith("x-amz-") or k.lower() == "content-md5"}
        headers["x-amz-meta-sapwood-writer"] = "etl"
        request = AWSRequest(method=method, url=uri, headers=headers)
        request.context["payload_signing_enabled"] = False
        S3SigV4Auth(Credentials("AKIDEXAMPLE", "secret/x+y"), "s3", "us-east-1").add_auth(request)
        # The payload hash, for a body the catalog is not shown, is the
        # client's to state (botocore's own choice for a body-less GET is the
        # empty body's hash): given as botocore chose.
        low = {k.lower(): v[0] for k, v in given.items()}
        low["x-amz-content-sha256"] = request.headers["X-Amz-Content-SHA256"]
        signed = {k: v for k, v in low.items() if k != "user-agent"}
        signed["x-amz-meta-sapwood-writer"] = "etl"
        ours = signer.sign(method, uri, signed, low, "us-east-1")
        assert ours["Authorization"] == [request.headers["Authorization"]], uri
        assert "User-Agent" not in ours  # only what signing adds or changes


def test_session_policies_reach_one_prefix_and_write_only_for_writers() -> None:
    read = session_policy("s3://wh/sales/t_1", Access.READ)
    actions = {a for s in read["Statement"] for a in s["Action"]}
    assert actions == {"s3:GetObject", "s3:GetObjectVersion", "s3:ListBucket"}
    assert read["Statement"][0]["Resource"] == ["arn:aws:s3:::wh/sales/t_1/*"]
    assert read["Statement"][1]["Condition"] == {
        "StringLike": {"s3:prefix": ["sales/t_1", "sales/t_1/*"]}}
    write = session_policy("s3://wh/sales/t_1", Access.WRITE)
    assert "s3:PutObject" in {a for s in write["Statement"] for a in s["Action"]}
    with pytest.raises(InvalidInputError, match="wildcard"):
        session_policy("s3://wh/sales/t*", Access.READ)


def test_what_is_offered_and_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    from catalog.delegation.service import LOCAL_NOTE, StorageAccess
    from catalog.delegation.settings import DelegationSettings

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    local = StorageAccess(DelegationSettings(), "file:///tmp/wh")
    assert local.chosen("vended-credentials,remote-signing") is None
    assert local.note() == LOCAL_NOTE
    signing_only = StorageAccess(DelegationSettings(), "s3://b/wh")
    assert signing_only.modes == ("remote-signing",)
    assert signing_only.chosen("vended-credentials") is None  # no role: nothing to vend
    assert signing_only.chosen("vended-credentials, remote-signing") == "remote-signing"
    both = StorageAccess(DelegationSettings(role_arn="arn:aws:iam::1:role/r"), "s3://b/wh")
    assert both.chosen("remote-signing,vended-credentials") == "remote-signing"  # its order
    assert both.chosen(None) is None
    always = StorageAccess(DelegationSettings(always="remote-signing"), "s3://b/wh")
    assert always.chosen(None) == always.chosen("") == "remote-signing"
    monkeypatch.setenv("SAPWOOD_ACCESS_DELEGATION", "everything")
    with pytest.raises(InvalidInputError, match="SAPWOOD_ACCESS_DELEGATION"):
        DelegationSettings.from_env()
    monkeypatch.setenv("SAPWOOD_ACCESS_DELEGATION", "vended-credentials")
    monkeypatch.setenv("SAPWOOD_VEND_DURATION_S", "60")
    with pytest.raises(InvalidInputError, match="between 900"):
        DelegationSettings.from_env()


@pytest.mark.parametrize(("uri", "name"), [
    ("http://127.0.0.1:9000/wh?list-type=2&prefix=hr%2F&prefix=sales%2Ft_1%2F", "prefix"),
    ("http://127.0.0.1:9000/wh/sales/t_1/a?partNumber=1&uploadId=u&uploadId=v", "uploadId"),
    ("http://127.0.0.1:9000/wh/sales/t_1/a?uploads&uploads=", "uploads"),
])
def test_a_query_parameter_is_signed_once(uri: str, name: str) -> None:
    """The signature covers every copy of a parameter while a check reads
    one (issue 43): refused, naming it."""
    method = "GET" if "list-type" in uri else "PUT" if "partNumber" in uri else "POST"
    with pytest.raises(ForbiddenError, match=f"'{name}' is given more than once"):
        parse(method, uri, EP)


def test_only_allow_listed_headers_are_signed_and_a_body_by_its_own_hash() -> None:
    from catalog.delegation.sign_headers import to_sign

    put = parse("PUT", "http://127.0.0.1:9000/wh/sales/t_1/data/a.parquet", EP)
    h = to_sign(put, {"User-Agent": ["x"], "x-amz-checksum-crc32": ["AAAAAA=="]}, None, "etl")
    assert h.signed == {"x-amz-checksum-crc32": "AAAAAA==", "if-none-match": "*",
                        "x-amz-meta-sapwood-writer": "etl"}  # user-agent passes unsigned
    for headers, why in [({"x-amz-acl": ["public-read"]}, "'x-amz-acl' is not signed"),
                         ({"x-amz-copy-source": ["/wh/hr/s/a"]}, "tables never copy"),
                         ({"x-amz-date": ["20250101T000000Z"]}, "signing sets it"),
                         ({"range": ["1"], "Range": ["2"]}, "given more than once"),
                         ({"x-amz-content-sha256": ["STREAMING-AWS4-HMAC-SHA256-PAYLOAD"]},
                          "chunk by chunk")]:
        with pytest.raises(ForbiddenError, match=why):
            to_sign(put, headers, None, "etl")
    delete = parse("POST", "http://127.0.0.1:9000/wh?delete", EP)
    body = "<Delete><Object><Key>sales/t_1/a</Key></Object></Delete>"
    h = to_sign(delete, {}, body, None)
    assert h.signed["x-amz-content-sha256"] == hashlib.sha256(body.encode()).hexdigest()
    assert h.signed["content-md5"] == base64.b64encode(hashlib.md5(body.encode()).digest()).decode()
    with pytest.raises(ForbiddenError, match="not the body's SHA-256"):
        to_sign(delete, {"X-Amz-Content-SHA256": ["UNSIGNED-PAYLOAD"]}, body, None)
    with pytest.raises(ForbiddenError, match="only with its body"):
        to_sign(delete, {}, None, None)
    get = parse("GET", "http://127.0.0.1:9000/wh/sales/t_1/data/a.parquet", EP)
    assert "if-none-match" not in to_sign(get, {}, None, None).signed


def test_session_policies_deny_what_signing_refuses() -> None:
    """ACLs, tags, object locks and copies, which IAM can express (issue 43)."""
    write = session_policy("s3://wh/sales/t_1", Access.WRITE)
    denies = [s for s in write["Statement"] if s["Effect"] == "Deny"]
    assert {"s3:PutObjectAcl", "s3:PutObjectVersionAcl", "s3:PutObjectTagging",
            "s3:DeleteObjectVersion"} <= {a for s in denies for a in s["Action"]}
    assert {"Effect": "Deny", "Action": ["s3:PutObject"], "Resource": ["*"],
            "Condition": {"Null": {"s3:x-amz-copy-source": "false"}},
            "Sid": "NoCopies"} in denies
    assert len(json.dumps(write)) < 2048  # STS's limit on a session policy's text
    read = session_policy("s3://wh/sales/t_1", Access.READ)
    assert all(s["Effect"] == "Allow" for s in read["Statement"])  # grants no write to deny
