"""Short-lived credentials for one table's files (STS ``AssumeRole`` with a
session policy), vended to a client instead of the warehouse's own.

The session policy allows reading the objects under the table's location
(and listing that prefix), and writing and deleting there only when the
principal may write the table on that branch; the role's own policy is the
upper bound, the session policy narrows it. It denies what signing refuses
where IAM can say it: ACLs (``x-amz-acl`` and grants need
``s3:PutObjectAcl``), copies (``s3:x-amz-copy-source`` present), tags,
retention and legal holds. What it cannot say is in docs/security.md. Credentials are kept per
(principal, location, access) until shortly before they expire, so a
client loading the table on every statement does not call STS each time.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from catalog.delegation.s3_requests import Access
from catalog.delegation.settings import DelegationSettings
from core.errors import InvalidInputError, UnavailableError

_READ = ["s3:GetObject", "s3:GetObjectVersion"]
_WRITE = ["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload",
          "s3:ListMultipartUploadParts"]
# Never allowed (the role may grant them): each changes an object's access,
# or its life, beyond what a table's writes do.
_DENIED = ["s3:PutObjectAcl", "s3:PutObjectVersionAcl", "s3:PutObjectTagging",
           "s3:PutObjectVersionTagging", "s3:PutObjectRetention", "s3:PutObjectLegalHold",
           "s3:BypassGovernanceRetention", "s3:DeleteObjectVersion"]


@dataclass(frozen=True)
class Vended:
    prefix: str  # the table's location: what the credentials reach
    access_key_id: str
    secret_access_key: str
    session_token: str
    expires_at_ms: int
    access: Access


def session_policy(location: str, access: Access) -> dict[str, Any]:
    """The IAM session policy for ``location`` (s3://bucket/path)."""
    parts = urlsplit(location)
    bucket, prefix = parts.netloc, parts.path.strip("/")
    if any(c in prefix for c in "*?$"):
        # IAM reads these as wildcards or variables: the policy would reach further.
        raise InvalidInputError(f"No credentials are vended for {location!r}: its path holds "
                                "a character IAM policies treat as a wildcard")
    objects = f"arn:aws:s3:::{bucket}/{prefix}/*" if prefix else f"arn:aws:s3:::{bucket}/*"
    statements: list[dict[str, Any]] = [
        {"Sid": "ReadTableFiles", "Effect": "Allow", "Action": _READ, "Resource": [objects]},
        {"Sid": "ListTableFiles", "Effect": "Allow", "Action": ["s3:ListBucket"],
         "Resource": [f"arn:aws:s3:::{bucket}"],
         "Condition": {"StringLike": {"s3:prefix": [prefix, f"{prefix}/*"] if prefix
                                      else ["*"]}}},
    ]
    if access is Access.WRITE:
        statements += [
            {"Sid": "WriteTableFiles", "Effect": "Allow", "Action": _WRITE,
             "Resource": [objects]},
            # Denied everywhere (a session policy's text is limited to 2048
            # characters: no more copies of the location than needed).
            {"Sid": "NoAclsTagsOrLocks", "Effect": "Deny", "Action": _DENIED,
             "Resource": ["*"]},
            # A copy reads its source with these credentials (read is this
            # table's only), but Iceberg never copies: none at all.
            {"Sid": "NoCopies", "Effect": "Deny", "Action": ["s3:PutObject"],
             "Resource": ["*"], "Condition": {"Null": {"s3:x-amz-copy-source": "false"}}}]
    return {"Version": "2012-10-17", "Statement": statements}


class Vendor:
    def __init__(self, settings: DelegationSettings,
                 clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self._clock = clock
        self._kept: dict[tuple[str, str, Access], Vended] = {}
        self._lock = threading.Lock()
        self._sts: Any = None

    @property
    def enabled(self) -> bool:
        return self.settings.role_arn is not None

    def vend(self, principal: str, location: str, access: Access) -> tuple[Vended, bool]:
        """Credentials for ``location``, and whether they were kept from before."""
        if self.settings.role_arn is None:
            raise UnavailableError("This catalog vends no credentials (set "
                                   "SAPWOOD_VEND_ROLE_ARN to the role to vend for)")
        key = (principal, location, access)
        now_ms = int(self._clock() * 1000)
        kept = self._kept.get(key)
        # Kept until a fifth of their life (at least a minute) is left.
        margin_ms = max(60_000, self.settings.duration_s * 200)
        if kept is not None and kept.expires_at_ms - now_ms > margin_ms:
            return kept, True
        policy = session_policy(location, access)
        try:
            answer = self._client().assume_role(
                RoleArn=self.settings.role_arn, RoleSessionName=_session_name(principal),
                DurationSeconds=self.settings.duration_s, Policy=json.dumps(policy))
        except Exception as e:  # botocore's errors: STS refused or is unreachable
            raise UnavailableError(f"STS did not vend credentials: {e}") from None
        c = answer["Credentials"]
        made = Vended(location, c["AccessKeyId"], c["SecretAccessKey"], c["SessionToken"],
                      int(c["Expiration"].timestamp() * 1000), access)
        with self._lock:
            if len(self._kept) > 10_000:
                self._kept.clear()
            self._kept[key] = made
        return made, False

    def _client(self) -> Any:
        if self._sts is None:
            import boto3

            self._sts = boto3.client("sts", endpoint_url=self.settings.sts_endpoint,
                                     region_name=self.settings.region)
        return self._sts


def _session_name(principal: str) -> str:
    """STS: 2-64 characters of [\\w+=,.@-]; CloudTrail shows it."""
    clean = "".join(c if c.isalnum() or c in "+=,.@-_" else "-" for c in principal)
    return f"sapwood-{clean}"[:64]
