"""What an S3 request asks for, from its method and URI (a signing request
names both): which operation, which bucket, which object or listing prefix,
read or write. Anything this does not recognise is refused, so a signature
is only ever made for the handful of operations a table's reader and writer
need; a query parameter given twice is refused too (the signature would
cover both while a check could read only one)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from urllib.parse import parse_qsl, unquote, urlsplit

from core.errors import ForbiddenError


class Access(Enum):
    READ = "read"
    WRITE = "write"


# Operations that store an object under a key: the key must be one no
# retained commit references (Iceberg never writes a file twice).
NEW_OBJECT = frozenset({"PutObject", "CreateMultipartUpload", "CompleteMultipartUpload"})
# Of those, the ones that make the object appear: signed with
# ``If-None-Match: *``, so S3 itself refuses them if the key exists then.
NO_OVERWRITE = frozenset({"PutObject", "CompleteMultipartUpload"})


@dataclass(frozen=True)
class S3Request:
    method: str
    bucket: str
    key: str  # the object's key, or for a listing its prefix ('' when none)
    listing: bool
    query: dict[str, str]
    access: Access
    op: str  # S3's name of the operation (PutObject, DeleteObjects, ...)
    # An object delete (DeleteObject, or DeleteObjects with its body): only
    # files the principal wrote may go.
    deletes: bool = False
    # A write that creates an object (PutObject, CreateMultipartUpload): it
    # is marked with who wrote it.
    creates: bool = False

    @property
    def new_object(self) -> bool:
        return self.op in NEW_OBJECT

    @property
    def no_overwrite(self) -> bool:
        return self.op in NO_OVERWRITE


# Query parameters each kind of request may carry; any other subresource
# (?acl, ?policy, ?tagging, ?versioning, ...) is not a table's business.
_OBJECT_QUERY = frozenset({"partNumber", "uploadId", "uploads", "versionId", "x-id"})
_LIST_QUERY = frozenset({"list-type", "prefix", "delimiter", "max-keys", "continuation-token",
                         "start-after", "encoding-type", "fetch-owner", "x-id"})


def refuse(why: str) -> ForbiddenError:
    return ForbiddenError(f"Signing refused: {why}")


def parse(method: str, uri: str, endpoint_host: str | None) -> S3Request:
    """The request ``method uri`` addressed to S3. ``endpoint_host``: the
    S3-compatible endpoint's host (path-style requests only), None for AWS
    itself (virtual-hosted or path-style on ``*.amazonaws.com``)."""
    method = method.upper()
    parts = urlsplit(uri)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        raise refuse(f"{uri[:200]!r} is not an http(s) URI")
    raw_path = parts.path or "/"
    if endpoint_host is not None:
        if f"{host}:{parts.port}" != endpoint_host and host != endpoint_host:
            raise refuse(f"host {host!r} is not the warehouse's S3 endpoint")
        bucket, _, raw_key = raw_path.lstrip("/").partition("/")
    elif host.endswith(".amazonaws.com") and host.split(".")[0] not in ("s3",):
        bucket, raw_key = host.split(".s3", 1)[0], raw_path.lstrip("/")
    elif host.endswith(".amazonaws.com"):
        bucket, _, raw_key = raw_path.lstrip("/").partition("/")
    else:
        raise refuse(f"host {host!r} is not S3")
    key = unquote(raw_key)
    check_key(key)
    pairs = parse_qsl(parts.query, keep_blank_values=True) if parts.query else []
    query = dict(pairs)
    if len(query) != len(pairs):
        twice = next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i]))
        raise refuse(f"the query parameter {twice[:100]!r} is given more than once")
    if not bucket:
        raise refuse("the request names no bucket")
    if not key:
        return _bucket_request(method, bucket, query)
    extra = set(query) - _OBJECT_QUERY
    if extra:
        raise refuse(f"the subresource {sorted(extra)[0]!r} of an object is not signed")
    if method in ("GET", "HEAD"):
        if "uploads" in query or ("uploadId" in query and method == "GET"):
            return S3Request(method, bucket, key, False, query, Access.WRITE, "ListParts")
        return S3Request(method, bucket, key, False, query, Access.READ,
                         "GetObject" if method == "GET" else "HeadObject")
    if method == "PUT":
        if "uploadId" in query:
            return S3Request(method, bucket, key, False, query, Access.WRITE, "UploadPart")
        if "partNumber" in query or "uploads" in query:
            raise refuse("a PUT names a part or an upload but no uploadId")
        return S3Request(method, bucket, key, False, query, Access.WRITE, "PutObject",
                         creates=True)
    if method == "POST" and ("uploads" in query) != ("uploadId" in query):
        if "uploads" in query:
            return S3Request(method, bucket, key, False, query, Access.WRITE,
                             "CreateMultipartUpload", creates=True)
        return S3Request(method, bucket, key, False, query, Access.WRITE,
                         "CompleteMultipartUpload")
    if method == "DELETE":
        # With an uploadId: abandoning an upload, nothing stored is lost.
        if "uploadId" in query:
            return S3Request(method, bucket, key, False, query, Access.WRITE,
                             "AbortMultipartUpload")
        return S3Request(method, bucket, key, False, query, Access.WRITE, "DeleteObject",
                         deletes=True)
    raise refuse(f"{method} of an object is not signed")


def _bucket_request(method: str, bucket: str, query: dict[str, str]) -> S3Request:
    if method == "GET" and query.get("list-type") in ("2", None) and \
            not set(query) - _LIST_QUERY:
        return S3Request(method, bucket, query.get("prefix", ""), True, query, Access.READ,
                         "ListObjectsV2" if "list-type" in query else "ListObjects")
    if method == "POST" and set(query) <= {"delete", "x-id"} and "delete" in query:
        return S3Request(method, bucket, "", False, query, Access.WRITE, "DeleteObjects",
                         deletes=True)
    raise refuse(f"{method} on the bucket {bucket!r} is not signed (only listing a "
                 "table's files and deleting objects are)")


def check_key(key: str) -> None:
    """Refused unless ``key`` names one object as S3 reads it: no ``.`` or
    ``..`` segment, backslash or NUL (a single DELETE's key and every key
    of a DeleteObjects body alike)."""
    if any(seg in (".", "..") for seg in key.split("/")) or "\\" in key or "\x00" in key:
        raise refuse(f"the object path {key[:200]!r} is not normalised ('.', '..')")


def under(location: str, bucket: str, key: str) -> bool:
    """Whether ``bucket``/``key`` lies at or below ``location`` (s3://bucket/path)."""
    loc = urlsplit(location)
    if loc.scheme not in ("s3", "s3a", "s3n") or loc.netloc != bucket:
        return False
    prefix = loc.path.strip("/")
    return not prefix or key == prefix or key.startswith(prefix + "/")
