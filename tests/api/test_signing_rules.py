"""A signature is bound to the request it was made for (issue 43, defects
1 to 3): the body the catalog saw, a key nothing stores yet, and only the
headers and query parameters a table's reads and writes use, each once.

On an S3 that checks every signature, the payload hash and Content-MD5
against the body and that every x-amz-* header is signed, as AWS does
(tests.moto_secured); clients hold no storage keys, only the catalog's
signatures. The catalog on SQLite and PostgreSQL (what history retains is
the store's answer)."""

from __future__ import annotations

import base64
import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

import httpx
import pyarrow as pa
import pytest

from tests.api.test_storage_access import SCHEMA, World, secured_world
from tests.fixtures import BACKENDS, database_url
from tests.http import http_request
from tests.s3 import BUCKET

GRANTS: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "admin": [(p, "*", ()) for p in ("read", "write", "create-reference", "delete-reference",
                                     "manage-grants")],
    # Writes sales on every branch; reads nothing of hr.
    "etl": [("read", "*", ("sales",)), ("write", "*", ("sales",))],
    # A writer limited to the work branches w/*.
    "wonly": [("read", "w/*", ("sales",)), ("write", "w/*", ("sales",))],
}


@dataclass
class Scene:
    w: World
    location: str  # sales.t's, as a key prefix in the bucket
    metadata: str  # main's current metadata.json (key)
    kept: str  # a data file main no longer reads and branch `keep` holds (key)
    current: str  # main's current data file (key)
    foreign: str  # hr.salaries' data file (key)

    @property
    def bucket_uri(self) -> str:
        return f"{self.w.s3.endpoint}/{BUCKET}"

    def uri(self, key: str) -> str:
        return f"{self.bucket_uri}/{key}"

    def sign(self, who: str, method: str, uri: str, body: bytes | None = None,
             headers: dict[str, list[str]] | None = None, ref: str | None = None,
             ) -> httpx.Response:
        prefix = f"/iceberg/{quote(ref, safe='')}" if ref else "/iceberg"
        return self.w.http(who).post(f"{prefix}/v1/namespaces/sales/tables/t/sign", json={
            "method": method, "region": "us-east-1", "uri": uri, "headers": headers or {},
            "body": body.decode() if body is not None else None})

    def stored(self) -> dict[str, str]:
        """Every object in the warehouse and its ETag."""
        return self.w.s3.keys("wh/")

    def stray(self, who: str = "etl") -> str:
        """A new file under the table's location, written through a signature."""
        key = f"{self.location}/data/stray-{uuid.uuid4().hex}.parquet"
        r = self.sign(who, "PUT", self.uri(key), b"stray")
        assert r.status_code == 200, r.text
        assert send("PUT", self.uri(key), r, b"stray").status_code == 200
        return key


def send(method: str, uri: str, signed: httpx.Response, body: bytes = b"",
         extra: dict[str, str] | None = None) -> httpx.Response:
    """The request made with the headers a signing answer gave."""
    headers = {k: v[0] for k, v in signed.json()["headers"].items()}
    return http_request(method, uri, content=body, headers={**headers, **(extra or {})})


def md5(body: bytes) -> str:
    return base64.b64encode(hashlib.md5(body).digest()).decode()


def deleting(*keys: str) -> bytes:
    return ("<Delete>" + "".join(f"<Object><Key>{k}</Key></Object>" for k in keys)
            + "</Delete>").encode()


@pytest.fixture(scope="module", params=BACKENDS)
def scene(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          ) -> Iterator[Scene]:
    tmp = tmp_path_factory.mktemp("signing-rules")
    with secured_world(tmp, GRANTS, database_url(request, request.param, tmp)) as w:
        admin = w.http("admin")
        etl = w.catalog("etl", "remote-signing")
        t = etl.create_table("sales.t", SCHEMA)
        t.append(pa.table({"id": [1]}, schema=SCHEMA))
        location = t.metadata.location.removeprefix(f"s3://{BUCKET}/")
        kept = next(k for k in w.s3.keys(f"{location}/data/"))
        head = admin.get("/api/v2/trees/main").json()["reference"]["hash"]
        for name in ("keep", "w/x"):
            r = admin.post("/api/v2/trees", params={"name": name, "type": "BRANCH"},
                           json={"type": "BRANCH", "name": "main", "hash": head})
            assert r.status_code == 200, r.text
        t.overwrite(pa.table({"id": [2]}, schema=SCHEMA))
        t = etl.load_table("sales.t")
        current = next(k for k in w.s3.keys(f"{location}/data/") if k != kept)
        metadata = t.metadata_location.removeprefix(f"s3://{BUCKET}/")
        w.catalog("admin").load_table("hr.salaries").append(
            pa.table({"id": [7]}, schema=SCHEMA))
        foreign = next(k for k in w.s3.keys("wh/hr/") if "/data/" in k)
        yield Scene(w, location, metadata, kept, current, foreign)


def test_a_delete_objects_signature_holds_only_for_its_body(scene: Scene) -> None:
    """Defect 1: the headers signed for a harmless DeleteObjects body, sent
    with another body, delete nothing: the catalog signed the body's own
    SHA-256 and Content-MD5, and S3 checks both."""
    s = scene
    harmless = s.stray()
    body = deleting(harmless)
    signed = s.sign("etl", "POST", f"{s.bucket_uri}?delete", body)
    assert signed.status_code == 200, signed.text
    before = s.stored()
    answers = []
    for target in (s.kept, s.current, s.foreign):
        other = deleting(target)
        # As signed, and with the other body's own Content-MD5 in its place.
        for extra in ({}, {"Content-MD5": md5(other)}):
            answers.append(send("POST", f"{s.bucket_uri}?delete", signed, other, extra))
    assert s.stored() == before  # nothing deleted, nothing changed
    assert all(r.status_code in (400, 403) for r in answers), [r.text for r in answers]
    answer = {k.lower(): v[0] for k, v in signed.json()["headers"].items()}
    assert answer["x-amz-content-sha256"] == hashlib.sha256(body).hexdigest()
    assert answer["content-md5"] == md5(body)
    # The body it was signed for deletes what it names.
    assert send("POST", f"{s.bucket_uri}?delete", signed, body).status_code == 200
    assert harmless not in s.stored()

    # A client's claim about the body is not what is signed: refused.
    stray = s.stray()
    body = deleting(stray)
    for claim, why in [({"x-amz-content-sha256": ["UNSIGNED-PAYLOAD"]}, "x-amz-content-sha256"),
                       ({"x-amz-content-sha256": ["0" * 64]}, "x-amz-content-sha256"),
                       ({"Content-MD5": [md5(b"other")]}, "content-md5")]:
        r = s.sign("etl", "POST", f"{s.bucket_uri}?delete", body, claim)
        assert r.status_code == 403 and why in r.json()["error"]["message"], (claim, r.text)
    # Its own true hash is no claim: signed as the catalog computes it.
    true = {"x-amz-content-sha256": [hashlib.sha256(body).hexdigest()],
            "Content-MD5": [md5(body)]}
    ok = s.sign("etl", "POST", f"{s.bucket_uri}?delete", body, true)
    assert ok.status_code == 200, ok.text
    # Every key of a body passes the rules a single DELETE's key does.
    for keys, why in [([f"{s.location}/data\\..\\x"], "not normalised"),
                      ([stray, f"{s.location}/./x"], "not normalised"),
                      ([stray, s.current], "is referenced by history"),
                      ([s.foreign], "not under the table's location")]:
        r = s.sign("etl", "POST", f"{s.bucket_uri}?delete", deleting(*keys))
        assert r.status_code == 403 and why in r.text, (keys, r.text)
    entity = (b'<!DOCTYPE d [<!ENTITY k "' + s.current.encode() + b'">]><Delete><Object>'
              b"<Key>&k;</Key></Object></Delete>")
    r = s.sign("etl", "POST", f"{s.bucket_uri}?delete", entity)
    assert r.status_code == 403 and "DOCTYPE" in r.text, r.text
    assert s.sign("etl", "POST", f"{s.bucket_uri}?delete").status_code == 403  # no body


def test_a_put_never_overwrites(scene: Scene) -> None:
    """Defect 2: a PUT is signed only for a key no retained commit
    references, and with If-None-Match: *, so S3 refuses it where an
    object exists when it arrives."""
    s = scene
    before = s.stored()
    # A writer limited to w/* cannot overwrite main's current metadata.json,
    # which its own branch holds too; nor can etl a file `keep` retains.
    refusals = []
    for who, ref, key in [("wonly", "w/x", s.metadata), ("etl", None, s.kept),
                          ("etl", "w/x", s.current)]:
        r = s.sign(who, "PUT", s.uri(key), ref=ref)
        if r.status_code == 200:  # what the signature would let through
            send("PUT", s.uri(key), r, b"overwritten")
        refusals.append(r)
        for method, query in [("POST", "?uploads"), ("POST", "?uploadId=u1")]:
            refusals.append(s.sign(who, method, s.uri(key) + query, ref=ref))
    assert s.stored() == before
    for r in refusals:
        assert r.status_code == 403, r.text
        assert "is referenced by history that is retained" in r.text, r.text
        assert "is never written again" in r.text

    # A key nothing references is signed, and only to create it: the same
    # signature's PUT over an object there then is refused by S3 (412).
    fresh = f"{s.location}/data/new-{uuid.uuid4().hex}.parquet"
    first = s.sign("etl", "PUT", s.uri(fresh))
    assert first.json()["headers"]["If-None-Match"] == ["*"]
    assert send("PUT", s.uri(fresh), first, b"one").status_code == 200
    etag = s.stored()[fresh]
    again = s.sign("etl", "PUT", s.uri(fresh))
    assert again.status_code == 200, again.text  # nothing retained references it
    r = send("PUT", s.uri(fresh), again, b"two")
    assert r.status_code == 412, r.text
    # Without the header the signature does not hold.
    r = send("PUT", s.uri(fresh), again, b"two", {"If-None-Match": "x"})
    assert r.status_code == 403 and "SignatureDoesNotMatch" in r.text, r.text
    assert s.stored()[fresh] == etag

    # A multipart upload completes only where nothing is stored.
    start = s.sign("etl", "POST", s.uri(fresh) + "?uploads")
    assert "If-None-Match" not in start.json()["headers"]  # S3 takes it on completion only
    made = send("POST", s.uri(fresh) + "?uploads", start)
    assert made.status_code == 200, made.text
    upload = made.text.split("<UploadId>")[1].split("</UploadId>")[0]
    part_uri = s.uri(fresh) + f"?partNumber=1&uploadId={quote(upload, safe='')}"
    part = send("PUT", part_uri, s.sign("etl", "PUT", part_uri), b"three")
    assert part.status_code == 200, part.text
    done = (f'<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>'
            f'{part.headers["etag"]}</ETag></Part></CompleteMultipartUpload>').encode()
    complete_uri = s.uri(fresh) + f"?uploadId={quote(upload, safe='')}"
    complete = s.sign("etl", "POST", complete_uri, done)
    assert complete.json()["headers"]["If-None-Match"] == ["*"]
    r = send("POST", complete_uri, complete, done)
    assert r.status_code == 412, r.text
    assert s.stored()[fresh] == etag

    # PyIceberg applies the header the catalog adds: its overwrite is refused.
    t = s.w.catalog("etl", "remote-signing").load_table("sales.t")
    with pytest.raises(OSError), t.io.new_output(f"s3://{BUCKET}/{fresh}").create(
            overwrite=True) as f:
        f.write(b"four")
    assert s.stored()[fresh] == etag
    assert s.w.s3.client().get_object(Bucket=BUCKET, Key=fresh)["Body"].read() == b"one"


def test_only_allow_listed_headers_and_parameters_are_signed_each_once(scene: Scene) -> None:
    """Defect 3: a copy reads another object (a writer with no read on hr
    copied hr.salaries' file into its table), an ACL makes a file public, a
    parameter given twice is checked once but signed twice: refused, each
    naming what."""
    s = scene
    copy = f"{s.location}/data/copy-{uuid.uuid4().hex}.parquet"
    target = s.uri(copy)
    for headers, why in [
        ({"x-amz-copy-source": [f"/{BUCKET}/{s.foreign}"]}, "'x-amz-copy-source'"),
        ({"X-Amz-Acl": ["public-read"]}, "'X-Amz-Acl'"),
        ({"x-amz-grant-read": ["uri=http://acs.amazonaws.com/groups/global/AllUsers"]},
         "'x-amz-grant-read'"),
        ({"x-amz-meta-sapwood-writer": ["admin"]}, "'x-amz-meta-sapwood-writer'"),
        ({"x-amz-storage-class": ["GLACIER"]}, "'x-amz-storage-class'"),
        ({"X-Custom": ["1"]}, "'X-Custom'"),
        ({"x-amz-checksum-crc32": ["AAAAAA=="], "X-Amz-Checksum-Crc32": ["AAAAAQ=="]},
         "given more than once"),
        ({"x-amz-checksum-crc32": ["AAAAAA==", "AAAAAQ=="]}, "given more than once"),
        ({"If-None-Match": ["\"abc\""]}, "if-none-match"),
    ]:
        r = s.sign("etl", "PUT", target, headers=headers)
        assert r.status_code == 403, (headers, r.text)
        assert why in r.json()["error"]["message"], (headers, r.text)
    # A listing whose prefix is given twice (the check read the last, S3 the first).
    twice = (f"{s.bucket_uri}?list-type=2&prefix={quote('wh/hr/', safe='')}"
             f"&prefix={quote(s.location + '/', safe='')}")
    r = s.sign("etl", "GET", twice)
    assert r.status_code == 403 and "'prefix' is given more than once" in r.text, r.text
    r = s.sign("etl", "GET", s.uri(s.current) + "?partNumber=1&partNumber=2")
    assert r.status_code == 403 and "'partNumber' is given more than once" in r.text, r.text
    assert copy not in s.stored()

    # What the clients send is signed (S3 checks every x-amz-* header is).
    get = s.sign("etl", "GET", s.uri(s.current), headers={
        "Range": ["bytes=0-3"], "x-amz-checksum-mode": ["ENABLED"], "User-Agent": ["t"],
        "amz-sdk-invocation-id": ["1"], "amz-sdk-request": ["attempt=1; max=6"]})
    assert get.status_code == 200, get.text
    r = send("GET", s.uri(s.current), get, extra={"Range": "bytes=0-3",
                                                  "x-amz-checksum-mode": "ENABLED"})
    assert r.status_code == 206 and r.content == b"PAR1", r.text
    # An x-amz-* header added after signing is refused by S3 itself.
    r = send("GET", s.uri(s.current), get, extra={"Range": "bytes=0-3",
                                                  "x-amz-checksum-mode": "ENABLED",
                                                  "x-amz-request-payer": "requester"})
    assert r.status_code == 403, r.text


def test_vended_credentials_carry_the_rules_a_session_policy_can(scene: Scene) -> None:
    """Defect 3's rules for vended credentials: the session policy the
    catalog sends STS denies ACLs and copies (moto applies no session
    policy: the document is what is checked)."""
    from tests.api.test_storage_access import _sts_policies

    s = scene
    s.w.catalog("etl").load_table("sales.t")  # PyIceberg asks for vended credentials
    policies = [p for p in _sts_policies(s.w) if s.location in str(p)]
    writes = [p for p in policies if any("s3:PutObject" in st["Action"]
                                         for st in p["Statement"] if st["Effect"] == "Allow")]
    assert writes, policies
    for p in writes:
        denied = {a for st in p["Statement"] if st["Effect"] == "Deny" for a in st["Action"]}
        assert {"s3:PutObjectAcl", "s3:PutObjectVersionAcl"} <= denied, p
        copy = [st for st in p["Statement"] if st["Effect"] == "Deny"
                and st.get("Condition") == {"Null": {"s3:x-amz-copy-source": "false"}}]
        assert copy and copy[0]["Action"] == ["s3:PutObject"], p


def test_a_signing_request_carries_no_properties(scene: Scene) -> None:
    """A RemoteSignRequest's ``properties`` are what a client passes through
    from a table answer's ``remote-signing-config`` (Iceberg 1.12). This
    catalog gives none, so a request with some is 400 naming them and is
    not signed; an empty map is as none."""
    def sign(properties: dict[str, str]) -> httpx.Response:
        return scene.w.http("etl").post("/iceberg/v1/namespaces/sales/tables/t/sign", json={
            "method": "GET", "region": "us-east-1", "uri": scene.uri(scene.current),
            "headers": {}, "properties": properties})

    r = sign({"tenant": "other"})
    assert r.status_code == 400, r.text
    assert "properties ['tenant']" in r.json()["error"]["message"], r.text
    ok = sign({})
    assert ok.status_code == 200, ok.text
    assert send("GET", scene.uri(scene.current), ok).status_code == 200
