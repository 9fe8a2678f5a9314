"""A trusted external OpenID Connect issuer, with a key pair made here: its
tokens are accepted when issuer, audience, signature and lifetime hold; the
principal is the ``sub`` claim and its roles come from ``groups``. The JWKS is
read from a file, and from a URL served on loopback."""

from __future__ import annotations

import http.server
import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from store import Store
from tests.fixtures import server_fixture

ISSUER = "https://idp.example.test/realms/data"
AUDIENCE = "sapwood"


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


KEY, OTHER = _key(), _key()


def jwks() -> dict[str, Any]:
    jwk = json.loads(RSAAlgorithm.to_jwk(KEY.public_key()))
    return {"keys": [jwk | {"kid": "k1", "use": "sig", "alg": "RS256"}]}


def token(sub: str = "alice", key: rsa.RSAPrivateKey = KEY, **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + 60,
            "groups": []} | claims
    return jwt.encode(body, key, algorithm="RS256", headers={"kid": "k1"})


def _grants(url: str) -> None:
    s = Store(url)
    try:
        s.auth.add_grant("alice", "read", "*")
        s.auth.add_grant("role:analysts", "read", "main")
    finally:
        s.close()


class _Jwks(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        data = json.dumps(jwks()).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def _jwks_from(request: pytest.FixtureRequest, base: Path) -> dict[str, str]:
    """The issuer's keys from a file, or from a JWKS endpoint served here."""
    if request.param == "file":
        source = base / "jwks.json"
        source.write_text(json.dumps(jwks()))
        where = str(source)
    else:
        idp = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Jwks)
        threading.Thread(target=idp.serve_forever, daemon=True).start()
        request.addfinalizer(idp.shutdown)
        where = f"http://127.0.0.1:{idp.server_address[1]}/certs"
    return {"SAPWOOD_OIDC_ISSUER": ISSUER, "SAPWOOD_OIDC_AUDIENCE": AUDIENCE,
            "SAPWOOD_OIDC_JWKS": where}


server = server_fixture(["file", "url"], backend=lambda _: "sqlite", prepare=_grants,
                        environment=_jwks_from, prefix="oidc")


def get(http: httpx.Client, tok: str, path: str = "/iceberg/v1/namespaces") -> httpx.Response:
    return http.get(path, headers={"Authorization": f"Bearer {tok}"})


def test_a_token_of_the_trusted_issuer_is_accepted(http) -> None:
    assert get(http, token()).status_code == 200
    assert get(http, token(), "/api/v2/trees").json()["references"][0]["name"] == "main"


def test_roles_come_from_the_groups_claim(http) -> None:
    # Without the role bob may read no reference: main answers as a missing one.
    assert get(http, token("bob")).status_code == 404
    assert get(http, token("bob", groups=["analysts"])).status_code == 200


@pytest.mark.parametrize(("why", "tok"), [
    ("wrong audience", lambda: token(aud="someone-else")),
    ("wrong issuer", lambda: token(iss="https://evil.example.test")),
    ("expired", lambda: token(exp=int(time.time()) - 10)),
    ("another key", lambda: token(key=OTHER)),
    ("no subject", lambda: token(sub="")),
])
def test_a_token_that_does_not_hold_is_401(http, why: str, tok) -> None:
    r = get(http, tok())
    assert r.status_code == 401, (why, r.text)
    assert r.json()["error"]["type"] == "NotAuthorizedException"
