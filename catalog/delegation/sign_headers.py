"""Which headers of an S3 request the catalog signs (docs/security.md).

Only an allow-list is accepted, each header once: the ones Spark's
S3FileIO (Iceberg 1.10, AWS SDK 2.33) and PyIceberg's signer (botocore,
over http and https) were seen to send. Those S3 reads as part of the
request's meaning and that only check it — payload hashes, checksums,
``content-md5`` — are signed; those that change nothing S3 keeps for
anyone but the request itself (``user-agent``, ``range``, ``expect`` …)
pass unsigned, as they did before; anything else (``x-amz-acl``,
``x-amz-copy-source``, ``x-amz-meta-*``, ``x-amz-storage-class`` …) is
refused naming it.

What the signature is bound to is the catalog's to say, not the client's:
a request that carries a body (the spec's ``RemoteSignRequest.body``;
Iceberg's client sends it for DeleteObjects) is signed with the body's own
SHA-256, and a DeleteObjects with its Content-MD5, so S3 refuses the same
headers sent with another body; a client that claims another hash
(``UNSIGNED-PAYLOAD`` included) is refused. An object a request stores is
signed with ``If-None-Match: *`` where S3 takes it (PutObject,
CompleteMultipartUpload), so a key that exists when the write arrives is
not overwritten, and with its writer's mark.

A value the client sent is never changed, only refused: Iceberg's Java
client (``S3V4RestSignerClient.reconstructHeaders``) keeps its own value
over the answer's, and PyIceberg's (``S3V4RestSigner``) adds the answer's
beside its own, so either way a changed value would break the signature.
A header the catalog adds is one the client did not send, and both apply
it (tests/api/test_signing_rules.py, tests/spark/test_spark_s3.py).
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass

from catalog.delegation.s3_requests import S3Request, refuse
from catalog.metadata.sigv4 import UNSIGNED_PAYLOAD

# Stored with every object a signed request creates: who wrote it, so that
# only its writer's deletes are signed (docs/security.md).
WRITER_HEADER = "x-amz-meta-sapwood-writer"

# Signed when given. Each only checks the request (its body, its checksum)
# or asks for a checksum back; none changes an object but the request's own.
_SIGNED = frozenset({
    "content-md5", "x-amz-content-sha256",
    "x-amz-checksum-crc32", "x-amz-checksum-crc32c", "x-amz-checksum-crc64nvme",
    "x-amz-checksum-sha1", "x-amz-checksum-sha256", "x-amz-sdk-checksum-algorithm",
    "x-amz-checksum-mode",  # GET: botocore asks for the stored checksum
    "x-amz-te",  # GET: the Java SDK asks for an appended MD5
    # A streamed upload with a trailing checksum (botocore over https).
    "x-amz-trailer", "x-amz-decoded-content-length",
})
# Passed unsigned, as a client's HTTP library may change them after signing:
# none gives the request power over another object.
_UNSIGNED = frozenset({
    "user-agent", "amz-sdk-invocation-id", "amz-sdk-request", "content-length",
    "content-type", "expect", "range", "if-match", "if-none-match", "transfer-encoding",
    "content-encoding",
})
# What a client may claim as the hash of a body it does not show.
_UNSHOWN = frozenset({UNSIGNED_PAYLOAD, "STREAMING-UNSIGNED-PAYLOAD-TRAILER"})
_HEX64 = re.compile("[0-9a-f]{64}")
_WHY = {
    "x-amz-copy-source": "a copy reads another object, and tables never copy",
    "x-amz-date": "signing sets it", "x-amz-security-token": "signing sets it",
    "authorization": "signing sets it", WRITER_HEADER: "signing sets it",
}


@dataclass(frozen=True, slots=True)
class Headers:
    given: dict[str, str]  # the client's, names lower-cased
    signed: dict[str, str]  # what the signature covers besides host, date and token


def to_sign(s3: S3Request, headers: dict[str, list[str]], body: str | None,
            writer: str | None) -> Headers:
    """The headers that sign ``s3`` (``writer``: the mark of an object it
    stores); ForbiddenError naming a header or body that is refused."""
    given: dict[str, str] = {}
    for name, values in headers.items():
        low = name.lower()
        if low in given or len(values) != 1:
            raise refuse(f"the header {name[:100]!r} is given more than once")
        if low not in _SIGNED and low not in _UNSIGNED:
            why = _WHY.get(low, "it is not among the headers a table's reads and writes use")
            raise refuse(f"the header {name[:100]!r} is not signed ({why})")
        given[low] = values[0]
    signed = {k: v for k, v in given.items() if k in _SIGNED}
    claimed = given.get("x-amz-content-sha256")
    if body is not None:
        raw = body.encode()
        digest = hashlib.sha256(raw).hexdigest()
        if claimed is not None and claimed.lower() != digest:
            raise refuse(f"x-amz-content-sha256 {claimed[:80]!r} is not the body's SHA-256 "
                         "(the catalog hashes a body it signs)")
        signed["x-amz-content-sha256"] = digest
        if "content-md5" in given or s3.op == "DeleteObjects":
            md5 = base64.b64encode(hashlib.md5(raw).digest()).decode()
            if given.get("content-md5", md5) != md5:
                raise refuse("content-md5 is not the body's MD5 (the catalog hashes a body "
                             "it signs)")
            signed["content-md5"] = md5  # DeleteObjects: S3 needs one
    elif s3.op == "DeleteObjects":
        raise refuse("a DeleteObjects request is signed only with its body (the keys)")
    elif claimed is not None and claimed not in _UNSHOWN and not _HEX64.fullmatch(claimed):
        raise refuse(f"x-amz-content-sha256 {claimed[:80]!r} is not signed (a payload signed "
                     "chunk by chunk needs the signing key)")
    if s3.no_overwrite:
        if given.get("if-none-match", "*") != "*":
            raise refuse("if-none-match on a write is signed only as '*' (no overwrite)")
        signed["if-none-match"] = "*"
    if writer is not None:
        signed[WRITER_HEADER] = writer
    return Headers(given, signed)
