"""Who is calling: bearer tokens, raw API keys and the OAuth2 token endpoint.

The guard (api.auth.guard) asks this module who sent a request, then decides
what they may do; keeping the two apart keeps each small enough to review.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

from api.auth.config import AuthSettings
from api.auth.errors import OAuthError, Unauthorized
from api.auth.tokens import InvalidToken, Verifier, mint, token_response
from catalog.access import Access, AuthData
from core.auth import Principal
from core.secrets import verify_secret

_VERIFIED_CACHE = 10_000


class Authenticator:
    def __init__(self, access: Access, settings: AuthSettings) -> None:
        self.access = access
        self.settings = settings
        self.verifier = Verifier(settings)
        # Secrets already checked, by a digest of the key id, the secret sent
        # and the hash stored for it: scrypt runs once per key and process, not
        # on every raw-key request, token request or refresh (Spark's clients
        # refresh with Basic id:secret). A new secret for the key (a new hash)
        # misses; whether the key is still live is asked on every request.
        self._verified: set[bytes] = set()
        self._lock = threading.Lock()

    def authenticate(self, authorization: str | None) -> tuple[Principal, AuthData]:
        data = self.access.current()
        if not authorization:
            raise Unauthorized("Authentication required: send 'Authorization: Bearer <token>' "
                               "(a token from /iceberg/v1/oauth/tokens, or an API key "
                               "id:secret)")
        scheme, _, credential = authorization.partition(" ")
        credential = credential.strip()
        if scheme.lower() != "bearer" or not credential or credential == "None":
            raise Unauthorized("Authentication required: the Authorization header must be "
                               "'Bearer <token>'")
        if ":" in credential:  # a raw API key, id:secret
            key_id = self._raw_key(credential, data)
            rec = data.live_key(key_id)
            if rec is None:
                raise Unauthorized("The API key has been revoked")
            return self._principal(data, rec.principal, key_id), data
        try:
            claims = self.verifier.verify(credential, data.signing_key)
        except InvalidToken as e:
            raise Unauthorized(f"Invalid access token: {e}") from None
        if claims.key_id is not None:
            rec = data.live_key(claims.key_id)
            if rec is None or rec.principal != claims.principal:
                raise Unauthorized("The key this token was issued for has been revoked")
            return self._principal(data, claims.principal, claims.key_id), data
        # An OpenID Connect principal: roles from its token, unless the catalog
        # revoked a local principal of the same name.
        local = data.principals.get(claims.principal)
        if local is not None and not local.active:
            raise Unauthorized(f"Principal {claims.principal!r} has been revoked")
        roles = set(claims.roles or ()) | set(local.roles if local else ())
        return Principal(claims.principal, frozenset(roles)), data

    def _principal(self, data: AuthData, name: str, key_id: str) -> Principal:
        p = data.principals[name]
        return Principal(name, frozenset(p.roles), key_id)

    def _raw_key(self, credential: str, data: AuthData) -> str:
        key_id, _, secret = credential.partition(":")
        rec = data.keys.get(key_id)
        if rec is None or not self._secret_ok(key_id, secret, rec.secret_hash):
            raise Unauthorized("Invalid API key")
        return key_id

    def _secret_ok(self, key_id: str, secret: str, stored: str) -> bool:
        digest = hashlib.sha256("\0".join((key_id, secret, stored)).encode()).digest()
        if digest in self._verified:
            return True
        if not verify_secret(secret, stored):
            return False
        with self._lock:
            if len(self._verified) >= _VERIFIED_CACHE:
                self._verified.clear()  # rare; the next checks refill it
            self._verified.add(digest)
        return True

    # -- the token endpoint --------------------------------------------------------------
    def issue(self, form: dict[str, str], authorization: str | None) -> dict[str, Any]:
        """OAuth2 client credentials (RFC 6749 §4.4) and token exchange
        (RFC 8693, which Iceberg's Java client uses to refresh)."""
        data = self.access.current()
        grant = form.get("grant_type")
        ttl = self.settings.token_ttl_s
        if grant == "client_credentials":
            cid, secret = form.get("client_id"), form.get("client_secret")
            if (not cid or not secret) and authorization and \
                    authorization.lower().startswith("basic "):
                cid, secret = _basic(authorization)
            if not cid or not secret:
                raise OAuthError("invalid_client", "client_id and client_secret are required")
            rec = data.live_key(cid)
            if rec is None or not self._secret_ok(cid, secret, rec.secret_hash):
                raise OAuthError("invalid_client", "Invalid client credentials")
            return token_response(mint(data.signing_key, rec.principal, rec.id, ttl), ttl)
        if grant == "urn:ietf:params:oauth:grant-type:token-exchange":
            if authorization and authorization.lower().startswith("basic "):
                # Iceberg's Java client, when its refresh comes after the token
                # expired, exchanges that expired token while authenticating
                # with its credential (Basic id:secret): the credential proves
                # the caller, as in client_credentials, and the session lives on.
                cid, secret = _basic(authorization)
                rec = data.live_key(cid) if cid else None
                if rec is None or not secret or \
                        not self._secret_ok(rec.id, secret, rec.secret_hash):
                    raise OAuthError("invalid_client", "Invalid client credentials")
                return token_response(mint(data.signing_key, rec.principal, rec.id, ttl), ttl)
            subject = form.get("subject_token") or ""
            try:
                claims = self.verifier.verify(subject, data.signing_key)
            except InvalidToken as e:
                raise OAuthError("invalid_grant", f"Cannot exchange the token: {e}") from None
            rec = data.live_key(claims.key_id) if claims.key_id else None
            if rec is None:
                raise OAuthError("invalid_grant", "Only tokens issued by this catalog for a "
                                 "live key can be exchanged")
            return token_response(mint(data.signing_key, rec.principal, rec.id, ttl), ttl)
        raise OAuthError("unsupported_grant_type",
                         f"Unsupported grant_type {grant!r}: use client_credentials")


def _basic(authorization: str) -> tuple[str | None, str | None]:
    import base64
    import binascii

    try:
        raw = base64.b64decode(authorization.split(" ", 1)[1]).decode()
    except (binascii.Error, UnicodeDecodeError, IndexError):
        return None, None
    cid, _, secret = raw.partition(":")
    return cid or None, secret or None
