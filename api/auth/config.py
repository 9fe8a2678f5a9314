"""Authentication settings, from SAPWOOD_* variables (``sapwood serve`` sets
them from its options, so uvicorn workers see the same)."""

from __future__ import annotations

import os
from dataclasses import dataclass

LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def _flag(name: str) -> bool:
    return os.environ.get(name, "").lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True, slots=True)
class AuthSettings:
    # Tokens and keys are required on every route but the public ones.
    enabled: bool = False
    # Lifetime of the access tokens the catalog issues.
    token_ttl_s: int = 3600
    # An external OpenID Connect issuer whose tokens are trusted as well.
    oidc_issuer: str | None = None
    oidc_audience: str | None = None
    oidc_jwks: str | None = None  # a JWKS file path, or an https:// URL
    oidc_principal_claim: str = "sub"
    oidc_roles_claim: str = "groups"

    @property
    def configured(self) -> bool:
        return self.enabled or self.oidc_issuer is not None

    @staticmethod
    def from_env() -> AuthSettings:
        issuer = os.environ.get("SAPWOOD_OIDC_ISSUER") or None
        return AuthSettings(
            enabled=_flag("SAPWOOD_AUTH") or issuer is not None,
            token_ttl_s=int(os.environ.get("SAPWOOD_TOKEN_TTL_S") or 3600),
            oidc_issuer=issuer,
            oidc_audience=os.environ.get("SAPWOOD_OIDC_AUDIENCE") or None,
            oidc_jwks=os.environ.get("SAPWOOD_OIDC_JWKS") or None,
            oidc_principal_claim=os.environ.get("SAPWOOD_OIDC_PRINCIPAL_CLAIM") or "sub",
            oidc_roles_claim=os.environ.get("SAPWOOD_OIDC_ROLES_CLAIM") or "groups")


def refuse_open_bind(host: str, auth: AuthSettings, insecure: bool) -> str | None:
    """Why ``sapwood serve`` must not start (None: it may). An open catalog is
    fine on a loopback address (the embedded default); anywhere else it needs
    authentication or an explicit --insecure."""
    if auth.configured or insecure or host in LOOPBACK or host.startswith("127."):
        return None
    return (f"refusing to serve an open catalog on {host}: turn authentication on "
            "(--auth or SAPWOOD_AUTH=1, or an OIDC issuer with SAPWOOD_OIDC_ISSUER), bind to "
            "127.0.0.1, or pass --insecure to run open anyway")
