"""Access tokens: the catalog's own (HS256 JWTs signed with the key in its
database, so every replica verifies what any other issued) and, when one is
configured, an external OpenID Connect issuer's (verified with its JWKS)."""

from __future__ import annotations

import math
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt

from api.auth.config import AuthSettings

ISSUER = "sapwood"
_ALG = "HS256"
_OIDC_ALGS = ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256"]
_CACHE_SIZE = 10_000


class InvalidToken(Exception):
    """The token cannot be trusted (the message says why, for the 401)."""


@dataclass(frozen=True, slots=True)
class Claims:
    principal: str
    expires: float
    key_id: str | None = None  # our tokens: the key they were minted from
    roles: frozenset[str] | None = None  # OIDC tokens: roles from the claims


def mint(signing_key: str, principal: str, key_id: str, ttl_s: int) -> str:
    now = time.time()
    # ``exp`` is whole seconds: rounded up, the token lives at least the
    # ``expires_in`` the answer announces. Iceberg's Java client schedules its
    # next refresh from expires_in, 10% before the end: rounded down, a short
    # lifetime (10 s) could end before that refresh arrives.
    return jwt.encode({"iss": ISSUER, "sub": principal, "swk": key_id, "iat": int(now),
                       "exp": math.ceil(now) + ttl_s, "jti": uuid.uuid4().hex}, signing_key,
                      algorithm=_ALG)


class Verifier:
    """Checks a bearer token's signature and lifetime. A verified token is
    cached (by its text) until it expires: the signature cannot change, and
    revocation is checked by the caller on every request against the
    database, not here."""

    def __init__(self, settings: AuthSettings) -> None:
        self.settings = settings
        self._cache: dict[str, Claims] = {}
        self._lock = threading.Lock()
        self._jwks: Any = None

    def verify(self, token: str, signing_key: str) -> Claims:
        hit = self._cache.get(token)
        now = time.time()
        if hit is not None:
            if hit.expires > now:
                return hit
            raise InvalidToken("the access token has expired: ask for a new one")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidToken("the bearer token is not a valid token") from None
        claims = (self._ours(token, signing_key) if header.get("alg") == _ALG
                  else self._oidc(token, header))
        with self._lock:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)), None)
            self._cache[token] = claims
        return claims

    def _ours(self, token: str, signing_key: str) -> Claims:
        try:
            c = jwt.decode(token, signing_key, algorithms=[_ALG], issuer=ISSUER,
                           options={"require": ["exp", "sub", "iss"]})
        except jwt.ExpiredSignatureError:
            raise InvalidToken("the access token has expired: ask for a new one") from None
        except jwt.PyJWTError as e:
            raise InvalidToken(f"the access token is not valid here ({e})") from None
        return Claims(str(c["sub"]), float(c["exp"]), str(c.get("swk") or "") or None)

    def _oidc(self, token: str, header: dict[str, Any]) -> Claims:
        s = self.settings
        if s.oidc_issuer is None:
            raise InvalidToken("the access token was not issued by this catalog")
        try:
            key = self._signing_key(header)
            c = jwt.decode(token, key, algorithms=_OIDC_ALGS, issuer=s.oidc_issuer,
                           audience=s.oidc_audience,
                           options={"require": ["exp", "iss"],
                                    "verify_aud": s.oidc_audience is not None})
        except jwt.ExpiredSignatureError:
            raise InvalidToken("the access token has expired: ask for a new one") from None
        except (jwt.PyJWTError, KeyError) as e:
            raise InvalidToken(f"the OpenID Connect token is not valid here ({e})") from None
        name = c.get(s.oidc_principal_claim)
        if not isinstance(name, str) or not name:
            raise InvalidToken(f"the token has no '{s.oidc_principal_claim}' claim")
        roles = c.get(s.oidc_roles_claim) or []
        if isinstance(roles, str):
            roles = roles.split()
        return Claims(name, float(c["exp"]), None, frozenset(str(r) for r in roles))

    def _signing_key(self, header: dict[str, Any]) -> Any:
        source = self.settings.oidc_jwks
        if source is None:
            raise InvalidToken("no JWKS is configured for the OpenID Connect issuer "
                               "(SAPWOOD_OIDC_JWKS)")
        if source.startswith(("https://", "http://")):
            if self._jwks is None:
                self._jwks = jwt.PyJWKClient(source, cache_keys=True, timeout=5)
            return self._jwks.get_signing_key(header["kid"]).key
        if self._jwks is None:
            self._jwks = jwt.PyJWKSet.from_json(Path(source).read_text())
        kid = header.get("kid")
        keys = [k for k in self._jwks.keys if kid is None or k.key_id == kid]
        if not keys:
            raise InvalidToken(f"no key {kid!r} in the configured JWKS")
        return keys[0].key


def token_response(token: str, ttl_s: int) -> dict[str, Any]:
    """RFC 6749 / 8693 answer, as Iceberg's REST clients read it."""
    return {"access_token": token, "token_type": "bearer", "expires_in": ttl_s,
            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}


