"""Storage access delegated per request: what the catalog signs or vends
for one principal and one table (docs/security.md).

The caller (the API) says what the principal may do with the table on the
ref it addressed — read, or read and write — after the grants are checked;
this decides what that allows in the bucket: only objects under the
table's location in the warehouse bucket, writes only for a writer, and a
delete only of an object no retained commit on any reference references
(catalog.maintenance.liveness: what gc itself could delete) that the same
principal wrote (each object a signed request creates is marked with its
writer) or that is older than gc's write window. A write that stores an
object is signed only for a key no retained commit references, and (by
``If-None-Match``) only while nothing is stored there; which headers are
signed, and what a body binds, is catalog.delegation.sign_headers'.
"""

from __future__ import annotations

import json
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from catalog.commands import Loaded
from catalog.delegation.s3_requests import Access, S3Request, check_key, parse, refuse, under
from catalog.delegation.settings import MODES, SIGNING, VENDING, DelegationSettings
from catalog.delegation.sign_headers import WRITER_HEADER, to_sign
from catalog.delegation.vending import Vended, Vendor
from catalog.maintenance.gc import write_window
from catalog.maintenance.liveness import Liveness
from catalog.metadata.sigv4 import Signer
from catalog.targets import dotted
from core.errors import InvalidInputError
from core.keys import ContentKey
from core.refs import RefSpec
from store.held import Held, Holding

LOCAL_NOTE = ("unavailable: the warehouse is not on S3, so there is nothing to delegate; "
              "clients read and write its files directly")
# The config key that says what this catalog delegates (config and loadTable).
NOTE_KEY = "sapwood.access-delegation"
_MAX_DELETE_KEYS = 1000  # S3's own limit for one DeleteObjects
# What a refusal says of a retained commit the caller may not read.
_HIDDEN = "a retained commit of another reference"


@dataclass(frozen=True)
class SignRequest:
    method: str
    uri: str
    region: str
    headers: dict[str, list[str]] = field(default_factory=dict)
    body: str | None = None


@dataclass(frozen=True)
class History:
    """What a DELETE, or a write that stores an object, is checked against:
    the table the request names, where, and which references and keys the
    caller may read (a refusal names a reference only then; None: every one)."""

    ref: RefSpec
    key: ContentKey
    sees: Callable[[str, ContentKey], bool] | None = None
    # The store's commit token the request's table was read at (located):
    # history is read as of the same moment, without asking again.
    token: object | None = None


@dataclass(frozen=True, slots=True)
class Located:
    """A table's location as a signing request finds it (StorageAccess.located)."""

    location: str
    token: object | None  # the store's commit token it is of (None: unknown)
    writable: bool | None = None  # the reference is a branch (None: not known here)


@dataclass(frozen=True)
class Decision:
    """One signing or vending decision, for the metrics and the access log."""

    kind: str  # sign | vend
    granted: bool
    reason: str  # read | write | delete | outside-table | not-permitted | ...
    action: str


class StorageAccess:
    def __init__(self, settings: DelegationSettings, warehouse: str,
                 liveness: Liveness | None = None) -> None:
        self.settings = settings
        # What retained history references (None: no DELETE is signed).
        self.liveness = liveness
        self.on_s3 = urlsplit(warehouse).scheme in ("s3", "s3a")
        self.signer = Signer() if self.on_s3 else None
        self.vendor = Vendor(settings) if self.on_s3 and settings.role_arn else None
        endpoint = urlsplit(settings.s3_endpoint) if settings.s3_endpoint else None
        self._endpoint_host = endpoint.netloc.lower() if endpoint else None
        self._locations: dict[str, str] = {}
        # A table's location by reference and key, with the commit token it
        # was read at (located).
        self._at: dict[tuple[RefSpec, ContentKey], Located] = {}
        self._lock = threading.Lock()
        self._s3: Any = None

    # -- what is offered -----------------------------------------------------------
    @property
    def modes(self) -> tuple[str, ...]:
        """The delegation modes this catalog offers."""
        if not self.on_s3:
            return ()
        return tuple(m for m in MODES if m != VENDING or self.vendor is not None)

    def note(self) -> str:
        if not self.on_s3:
            return LOCAL_NOTE
        return ",".join(self.modes)

    def chosen(self, asked: str | None) -> str | None:
        """The mode for a request whose X-Iceberg-Access-Delegation is
        ``asked`` (a comma-separated preference list), or None."""
        if not self.on_s3:
            return None
        wanted = [m.strip() for m in (asked or "").split(",") if m.strip()]
        for m in wanted:
            if m in self.modes:
                return m
        return self.settings.always if self.settings.always in self.modes else None

    # -- the table's location ----------------------------------------------------------
    def location_of(self, metadata_location: str | None, metadata: bytes) -> str:
        """The table's location (from its metadata; kept per metadata file)."""
        key = metadata_location or ""
        found = self._locations.get(key) if metadata_location else None
        if found is None:
            found = str(json.loads(metadata)["location"]).rstrip("/")
            if metadata_location:
                with self._lock:
                    if len(self._locations) > 20_000:
                        self._locations.clear()
                    self._locations[key] = found
        return found

    def located(self, ref: RefSpec, key: ContentKey, load: Callable[[], Loaded]) -> Located:
        """The location of the table ``load`` loads (``key`` at the head of
        ``ref``), the store's commit token it is of, and whether ``ref`` is a
        branch a commit may go to. Kept with that token: while no process
        has committed, the table and the reference are what they were (a
        signing request's table load, then, is a token read). Kept only at a
        head and for an answer built from the metadata file alone
        (``cache_key``: not a materialized view's storage, built per
        request)."""
        token = (self.liveness.store.db.commit_token()
                 if self.liveness is not None and ref.is_plain else None)
        if token is not None:
            hit = self._at.get((ref, key))
            if hit is not None and hit.token == token:
                return hit
        # The token was taken before this read: a commit in between makes
        # the next token differ, and that request loads again.
        loaded = load()
        found = Located(self.location_of(loaded.location, loaded.metadata), token)
        if token is not None and loaded.cache_key is not None:
            assert self.liveness is not None
            found = Located(found.location, token, self.liveness.store.resolve(ref).writable)
            with self._lock:
                if len(self._at) > 20_000:
                    self._at.clear()
                self._at[(ref, key)] = found
        return found

    # -- remote signing ----------------------------------------------------------------
    def sign(self, who: str, location: str, may: Callable[[], frozenset[Access]],
             request: SignRequest, history: History | None = None,
             ) -> tuple[dict[str, list[str]], Decision]:
        """The headers that sign ``request`` for ``who``; ForbiddenError
        naming what was refused. ``may`` says what the principal may do with
        the table; asked only for a write (reading it was checked already).
        ``history``: the table as the request names it, for a DELETE or a
        write that stores an object."""
        if self.signer is None:
            raise refuse(LOCAL_NOTE)
        s3 = parse(request.method, request.uri, self._endpoint_host)
        headers = to_sign(s3, request.headers, request.body, who if s3.creates else None)
        action = f"{s3.method} s3://{s3.bucket}/{s3.key}"
        if s3.listing:
            if not s3.key or not under(location, s3.bucket, s3.key.rstrip("/")):
                raise refuse(f"listing s3://{s3.bucket}/{s3.key} reaches outside the table's "
                             f"location {location}")
        elif s3.key and not under(location, s3.bucket, s3.key):
            raise refuse(f"s3://{s3.bucket}/{s3.key} is not under the table's location "
                         f"{location}")
        if s3.access is not Access.READ and s3.access not in may():
            raise refuse(f"principal '{who}' may not {s3.access.value} this table on this "
                         f"reference ({action})")
        if s3.deletes:
            self._check_deletes(who, location, s3, request.body or "", history)
        elif s3.new_object:
            if self.liveness is None or history is None:
                raise refuse("this catalog cannot tell whether history references the object")
            # Iceberg writes every file once, under a new name: a key history
            # holds is never written again (and one that exists then is
            # refused by S3 itself: If-None-Match, sign_headers).
            self._check_unreferenced(s3.bucket, [s3.key], history,
                                     "a file history references is never written again",
                                     new=True)
        answer = self.signer.sign(s3.method, request.uri, headers.signed, headers.given,
                                  request.region)
        reason = "delete" if s3.deletes else s3.access.value
        return answer, Decision("sign", True, reason, action)

    def _check_deletes(self, who: str, location: str, s3: S3Request, body: str,
                       history: History | None) -> None:
        if s3.key:
            keys = [s3.key]
        else:  # DeleteObjects: the keys are in the body, which sign_headers made signed
            keys = _delete_keys(body)
            for k in keys:
                if not under(location, s3.bucket, k):
                    raise refuse(f"s3://{s3.bucket}/{k} is not under the table's location "
                                 f"{location}")
        if self.liveness is None or history is None:
            raise refuse("this catalog cannot tell whether history references the object")
        self._check_unreferenced(s3.bucket, keys, history, "gc deletes it once no retained "
                                 "commit references it (docs/operations.md)")
        window = write_window()
        for k in keys:
            found = self._object(s3.bucket, k)
            if found is None:
                continue  # nothing to delete
            writer, age_s = found
            if writer != who and age_s < window:
                raise refuse(
                    f"s3://{s3.bucket}/{k} was not written by principal '{who}' and is younger "
                    f"than gc's write window ({window:g} s, SAPWOOD_GC_WRITE_WINDOW_S): it may "
                    "belong to a commit in flight, so only its writer may delete it until then")

    def _check_unreferenced(self, bucket: str, keys: list[str], history: History,
                            then: str, new: bool = False) -> None:
        """Refused when a commit some reference retains references one of
        the objects: gc keeps it, and so does signing (``then``: what the
        refusal says of it); and when one lies in the folders of a table
        whose retained history cannot all be read (gc keeps every file
        there). ``new``: the objects are to be written."""
        assert self.liveness is not None
        uris = [f"s3://{bucket}/{k}" for k in keys]
        sees = history.sees

        def shown(h: Held) -> bool:
            return sees is None or sees(h.ref, h.key)

        found = self.liveness.referencing(history.ref, history.key, uris, shown, new,
                                          history.token)
        if found is None:
            raise refuse(f"{dotted(history.key)} is not a table on this reference")
        for uri in uris:
            h = found.held.get(uri)
            if h is not None:
                said = _holder(h) if shown(h) else _HIDDEN
                raise refuse(f"{uri} is referenced by history that is retained ({said}): {then}")
        for uri in uris:
            hurt = found.damaged.get(uri)
            if hurt is not None:
                d, h = hurt
                said = (f"{_retained(h)}, holds a version of {dotted(h.key)} whose {d.kind} "
                        f"file {d.path} cannot be read: {d.problem}") if shown(h) else _HIDDEN
                raise refuse(
                    f"{uri} lies in the folders of a table whose retained history cannot all "
                    f"be read ({said}): which files there it needs is unknown, so none is "
                    f"{'written' if new else 'deleted'} through a signature, as gc keeps them "
                    "all (sapwood fsck --files names the damage)")

    def _object(self, bucket: str, key: str) -> tuple[str, float] | None:
        """The principal that wrote the object, and its age in seconds; None
        when it does not exist. An object written without the catalog's
        signature has no writer, and counts as someone else's."""
        client = self._client()
        try:
            head = client.head_object(Bucket=bucket, Key=key)
        except client.exceptions.ClientError as e:
            if e.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return None
            raise
        writer = str(head.get("Metadata", {}).get(WRITER_HEADER.removeprefix("x-amz-meta-"),
                                                  "(unknown)"))
        modified = head.get("LastModified")
        age_s = time.time() - modified.timestamp() if modified is not None else 0.0
        return writer, age_s

    def _client(self) -> Any:
        if self._s3 is None:
            import boto3

            # The catalog's own endpoint (AWS_ENDPOINT_URL[_S3], read by boto3),
            # which may differ from the one clients are told to use.
            self._s3 = boto3.client("s3", region_name=self.settings.region)
        return self._s3

    # -- vended credentials ------------------------------------------------------------
    def vend(self, who: str, location: str, may: frozenset[Access]) -> tuple[Vended, Decision]:
        if self.vendor is None:
            raise InvalidInputError("This catalog vends no credentials: "
                                    + (LOCAL_NOTE if not self.on_s3 else
                                       "no role is set (SAPWOOD_VEND_ROLE_ARN)"))
        access = Access.WRITE if Access.WRITE in may else Access.READ
        vended, _ = self.vendor.vend(who, location, access)
        return vended, Decision("vend", True, access.value, f"{access.value} {location}")

    # -- the table answers' config -------------------------------------------------------
    def client_config(self, mode: str, signer_uri: str, signer_endpoint: str,
                      vended: Vended | None) -> dict[str, str]:
        """What a client needs in the answer's ``config`` for ``mode``."""
        config = {NOTE_KEY: mode, "client.region": self.settings.region}
        if self.settings.s3_endpoint:
            config["s3.endpoint"] = self.settings.s3_endpoint
            config["s3.path-style-access"] = "true"
        if mode == SIGNING:
            config.update({
                "s3.remote-signing-enabled": "true",
                # PyIceberg: its signer, and the FileIO that can use it.
                "s3.signer": "S3V4RestSigner",
                "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO",
                # Read by PyIceberg and by Iceberg's Java S3 signer up to 1.11.
                # Not the spec's signer.uri / signer.endpoint: they are
                # deprecated, no Java client needs them (1.11 reads these
                # first; 1.12 signs at the spec's own path under the
                # catalog's URI, which this server answers) and 1.12 warns
                # whenever they are set (docs/iceberg-rest.md).
                "s3.signer.uri": signer_uri, "s3.signer.endpoint": signer_endpoint})
        elif vended is not None:
            config.update(credential_config(vended, self.settings.region))
        return config


def _retained(h: Held) -> str:
    """A retained commit and what retains it, as a refusal says it."""
    by = {Holding.BRANCH: f"by branch '{h.ref}'", Holding.TAG: f"by tag '{h.ref}'",
          Holding.DELETED: f"by branch '{h.ref}' (deleted within gc's grace period)",
          Holding.EARLIER: f"through an earlier head of '{h.ref}' (within gc's grace period)"}
    return f"commit {h.commit[:12]}, retained {by[h.holding]}"


def _holder(h: Held) -> str:
    """Which retained commit references a file, as a refusal says it."""
    return f"{_retained(h)}, holds a version of {dotted(h.key)} that references it"


def credential_config(v: Vended, region: str) -> dict[str, str]:
    return {"s3.access-key-id": v.access_key_id, "s3.secret-access-key": v.secret_access_key,
            "s3.session-token": v.session_token,
            "s3.session-token-expires-at-ms": str(v.expires_at_ms), "client.region": region}


def _delete_keys(body: str) -> list[str]:
    if "<!" in body:  # a DTD or entity could make a key read otherwise than S3 reads it
        raise refuse("a DeleteObjects body with a DOCTYPE, entity or comment is not signed")
    try:
        # expat refuses external entities and bounds expansion; the body is small.
        root = ET.fromstring(body)
    except ET.ParseError as e:
        raise refuse(f"the DeleteObjects body is not XML: {e}") from None
    keys = [el.text or "" for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "Key"]
    if not keys or len(keys) > _MAX_DELETE_KEYS:
        raise refuse(f"a DeleteObjects body names 1 to {_MAX_DELETE_KEYS} keys")
    for k in keys:
        check_key(k)  # as a single DELETE's key is
    return keys
