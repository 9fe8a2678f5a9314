"""Page tokens of both APIs (issue 43, defect 10): opaque, and good only for
the caller and the query that got them.

The store pages by a plain cursor — the last reference name, the next key
or commit of a listing. Given to a client as it is, a cursor names what
comes next, which may be something the caller may not see. So every token
a route answers (``token`` under ``/api/v2``, ``next-page-token`` under
``/iceberg``) is the cursor sealed with AES-256-GCM (its nonce an HMAC of
the query and the cursor: the same page gets the same token) under a key
derived (HKDF-SHA256) from the catalog's signing key — made by migration 0003 and
kept in the database, so every replica seals and opens the same tokens —
with the caller's name, the listing and its parameters as associated data.
A token opens only for that caller, that listing and those parameters (the
page size aside): anything else, or anything altered, is refused with 400
naming the parameter. The listings themselves skip what the caller may not
see before they page (store.refs, store.reads), so a page is never empty
while more the caller may see follows.

The versioning API takes Nessie's spellings of the paging parameters
(``page-token``, ``max-records``: org.projectnessie.api.v2.params) beside
its own (``pageToken``, ``maxRecords``); both given with different values
is a 400 naming both.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from fastapi import Request
from starlette.concurrency import run_in_threadpool

from api.deps import Call, principal
from core.errors import bad_request

T = TypeVar("T")
_VERSION = b"\x01"
_NONCE = 12
_INFO = b"sapwood page tokens v1"


def _keys(request: Request) -> tuple[AESGCM, bytes]:
    """The catalog's page-token keys (the cipher's, and the one that makes
    its nonces), derived once per process."""
    state = request.app.state
    keys: tuple[AESGCM, bytes] | None = getattr(state, "page_token_keys", None)
    if keys is None:
        secret = state.services.access.signing_key().encode()
        key = HKDF(algorithm=hashes.SHA256(), length=64, salt=None, info=_INFO).derive(secret)
        keys = state.page_token_keys = (AESGCM(key[:32]), key[32:])
    return keys


def _bound(request: Request, listing: str, params: Mapping[str, object]) -> bytes:
    """What a token is good for: the caller, the listing, its parameters."""
    return json.dumps([principal(request), listing, sorted(
        (k, v if isinstance(v, str | int | bool) or v is None else str(v))
        for k, v in params.items())], separators=(",", ":")).encode()


class Paging:
    """One request's paging: the store's cursor from the token it sent (if
    any), the page size, and the sealing of the next cursor."""

    __slots__ = ("_bound", "_request", "cursor", "size")

    def __init__(self, request: Request, listing: str, params: Mapping[str, object],
                 token: str | None, size: int | None,
                 nessie_token: str | None = None, nessie_size: int | None = None) -> None:
        self._request = request
        self._bound = _bound(request, listing, params)
        token_name = "pageToken"
        if nessie_token is not None and token is None:
            token_name = "page-token"
        token = either(token, nessie_token, "pageToken", "page-token")
        self.size = either(size, nessie_size, "maxRecords", "max-records")
        self.cursor = self._open(token, token_name) if token else None

    def seal(self, cursor: str | None) -> str | None:
        """The token of the page after this one (None: this is the last)."""
        if cursor is None:
            return None
        aead, nonces = _keys(self._request)
        # A synthetic nonce (SIV): the same page of the same query gets the
        # same token (answers stay comparable and cacheable), and two
        # different cursors or queries never share a nonce.
        nonce = hmac.new(nonces, self._bound + b"\x00" + cursor.encode(),
                         hashlib.sha256).digest()[:_NONCE]
        sealed = aead.encrypt(nonce, cursor.encode(), self._bound)
        return base64.urlsafe_b64encode(_VERSION + nonce + sealed).rstrip(b"=").decode()

    def _open(self, token: str, name: str) -> str:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            if raw[:1] != _VERSION or len(raw) <= 1 + _NONCE:
                raise ValueError(token)
            return _keys(self._request)[0].decrypt(raw[1:1 + _NONCE], raw[1 + _NONCE:],
                                               self._bound).decode()
        except (ValueError, binascii.Error, InvalidTag, UnicodeDecodeError):
            raise bad_request(
                f"Invalid {name} {token[:64]!r}: not a page token this catalog gave for this "
                "listing (a page token holds only for the caller and the query parameters "
                "that got it)") from None


def either(own: T | None, nessie: T | None, own_name: str, nessie_name: str) -> T | None:
    """A parameter given in our spelling or Nessie's (or both, alike)."""
    if own is not None and nessie is not None and own != nessie:
        raise bad_request(f"'{own_name}' and '{nessie_name}' are the same parameter and were "
                          "given different values: give one of them")
    return own if own is not None else nessie


async def iceberg_listing(request: Request, c: Call, listing: str, params: Mapping[str, object],
                          page_token: str | None, page_size: int | None,
                          fn: Callable[..., tuple[list[T], str | None]], *args: Any,
                          ) -> tuple[list[T], str | None]:
    """A page of an Iceberg REST listing (namespaces, a namespace's tables
    or views): ``fn(*args, cursor, size, visible)``, what the caller may not
    see skipped before paging (in the thread pool then: it may walk many
    keys), its ``next-page-token`` sealed for the caller, the reference and
    ``params``. An empty ``pageToken`` (Java's first request) asks for
    pages, as no token with a page size does."""
    paging = Paging(request, listing, {"ref": str(c.ref), **params}, page_token, page_size)
    visible = c.visible()
    cursor = paging.cursor if page_token else page_token
    if visible is None:
        found, token = await c.read(fn, *args, cursor, paging.size, None)
    else:
        found, token = await run_in_threadpool(fn, *args, cursor, paging.size, visible)
    return found, paging.seal(token)
