"""API keys: how they look, and how their secrets are kept (salted scrypt,
never the secret itself; it is shown once, at creation)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

KEY_PREFIX = "sw_"
# scrypt's interactive-login cost (RFC 7914 §2): about 50 ms and 16 MiB per
# check. Checks happen when a client asks for a token, or for the first
# request carrying a raw key; a server remembers a digest of each secret that
# passed (api.auth.authn), so a key costs this once per process.
_N, _R, _P = 2**14, 8, 1


def new_key() -> tuple[str, str]:
    """A fresh key: (id, secret). Clients send ``id:secret`` as their credential."""
    return KEY_PREFIX + secrets.token_hex(8), secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(secret.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    return f"scrypt${_N}${_R}${_P}${_b64(salt)}${_b64(digest)}"


def verify_secret(secret: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, digest = stored.split("$")
    except ValueError:
        return False
    if kind != "scrypt":
        return False
    want = base64.urlsafe_b64decode(digest + "==")
    got = hashlib.scrypt(secret.encode(), salt=base64.urlsafe_b64decode(salt + "=="),
                         n=int(n), r=int(r), p=int(p), dklen=len(want))
    return hmac.compare_digest(want, got)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")
