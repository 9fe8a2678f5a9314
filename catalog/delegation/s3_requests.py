"""What an S3 request asks for, from its method and URI (a signing request
names both): which bucket, which object or listing prefix, read or write.
Anything this does not recognise is refused, so a signature is only ever
made for the handful of operations a table's reader and writer need."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from urllib.parse import parse_qsl, unquote, urlsplit

from core.errors import ForbiddenError


class Access(Enum):
    READ = "read"
    WRITE = "write"


@dataclass(frozen=True)
class S3Request:
    method: str
    bucket: str
    key: str  # the object's key, or for a listing its prefix ('' when none)
    listing: bool
    query: dict[str, str]
    access: Access
    # An object delete (DeleteObject, or DeleteObjects with its body): only
    # files the principal wrote may go.
    deletes: bool = False
    # A write that creates an object (PutObject, CreateMultipartUpload): it
    # is marked with who wrote it.
    creates: bool = False


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
    if any(seg in (".", "..") for seg in key.split("/")) or "\\" in key or "\x00" in key:
        raise refuse(f"the object path {key[:200]!r} is not normalised ('.', '..')")
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    if not bucket:
        raise refuse("the request names no bucket")
    if not key:
        return _bucket_request(method, bucket, query)
    extra = set(query) - _OBJECT_QUERY
    if extra:
        raise refuse(f"the subresource {sorted(extra)[0]!r} of an object is not signed")
    if method in ("GET", "HEAD"):
        if "uploads" in query or ("uploadId" in query and method == "GET"):
            return S3Request(method, bucket, key, False, query, Access.WRITE)
        return S3Request(method, bucket, key, False, query, Access.READ)
    if method == "PUT":
        return S3Request(method, bucket, key, False, query, Access.WRITE,
                         creates="uploadId" not in query)
    if method == "POST" and ("uploads" in query or "uploadId" in query):
        return S3Request(method, bucket, key, False, query, Access.WRITE,
                         creates="uploads" in query)
    if method == "DELETE":
        # With an uploadId: abandoning an upload, nothing stored is lost.
        return S3Request(method, bucket, key, False, query, Access.WRITE,
                         deletes="uploadId" not in query)
    raise refuse(f"{method} of an object is not signed")


def _bucket_request(method: str, bucket: str, query: dict[str, str]) -> S3Request:
    if method == "GET" and query.get("list-type") in ("2", None) and \
            not set(query) - _LIST_QUERY:
        return S3Request(method, bucket, query.get("prefix", ""), True, query, Access.READ)
    if method == "POST" and set(query) <= {"delete", "x-id"} and "delete" in query:
        return S3Request(method, bucket, "", False, query, Access.WRITE, deletes=True)
    raise refuse(f"{method} on the bucket {bucket!r} is not signed (only listing a "
                 "table's files and deleting objects are)")


def under(location: str, bucket: str, key: str) -> bool:
    """Whether ``bucket``/``key`` lies at or below ``location`` (s3://bucket/path)."""
    loc = urlsplit(location)
    if loc.scheme not in ("s3", "s3a", "s3n") or loc.netloc != bucket:
        return False
    prefix = loc.path.strip("/")
    return not prefix or key == prefix or key.startswith(prefix + "/")
