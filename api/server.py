"""Running the application under uvicorn, one process or several."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable

import uvicorn
from uvicorn.supervisors import Multiprocess

from api.auth.config import AuthSettings, refuse_open_bind
from api.http_protocol import HttpProtocol
from api.settings import Settings
from catalog.access import active_principals
from catalog.services import prepare_database

APP = "api.app:app_from_env"


def start(database: str | None, warehouse: str | None, host: str, port: int, workers: int,
          log_level: str, auth: bool | None, insecure: bool, token_ttl: int | None,
          say: Callable[[str, bool], None]) -> int:
    """``sapwood serve``: check the choices, say what is served, serve until
    stopped. 1 when it must not start (an open catalog on a network address,
    or on a catalog with principals unless --no-auth says so): one ``error:``
    line and exit 1, as every refusal (docs/cli.md; exit 2 is click's, for a
    command line it cannot parse).
    ``say(line, to_stderr)`` prints."""
    # Workers build their app from the environment: the choices travel there.
    if auth is not None:
        os.environ["SAPWOOD_AUTH"] = "1" if auth else "0"
    if token_ttl is not None:
        os.environ["SAPWOOD_TOKEN_TTL_S"] = str(token_ttl)
    auth_settings = AuthSettings.from_env()
    why = refuse_open_bind(host, auth_settings, insecure)
    if why:
        say(f"error: {why}", True)
        return 1
    if host in ("0.0.0.0", "::") and not os.environ.get("SAPWOOD_ALLOWED_HOSTS"):
        say("note: only requests addressed to loopback names are served; set "
            "SAPWOOD_ALLOWED_HOSTS to the host names clients use", True)
    if insecure and not auth_settings.configured:
        say(f"warning: serving an OPEN catalog on {host} (--insecure): anyone who "
            "reaches this address can read and change everything", True)
    settings = Settings.resolve(database, warehouse)
    safe = prepare_database(settings.database_url)  # its schema made or upgraded, up front
    why = refuse_open_principals(auth_settings, settings.database_url)
    if why:
        say(f"error: {why}", True)
        return 1
    say(f"Sapwood: database {safe}, warehouse {settings.warehouse}, authentication "
        f"{'on' if auth_settings.configured else 'off'}", False)
    for line in banner(host, port):
        say(line, False)
    serve(settings, host, port, workers, log_level)
    return 0


def refuse_open_principals(auth: AuthSettings, url: str) -> str | None:
    """Why a catalog set up for authentication (it has principals: ``sapwood
    init --auth``, ``sapwood principal create``) must not be served with no
    auth setting: it would be open to everyone, its grants unused. Serving it
    open is a choice made out loud (``--no-auth`` or SAPWOOD_AUTH=0)."""
    if auth.configured or os.environ.get("SAPWOOD_AUTH", "").strip():
        return None
    names = active_principals(url)
    if not names:
        return None
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (f"this catalog has principals ({shown}): serve it with --auth (or SAPWOOD_AUTH=1) "
            "so that they need their keys, or with --no-auth to serve it open to everyone")


def banner(host: str, port: int) -> list[str]:
    """Where each surface is served (``sapwood serve`` prints it as it starts)."""
    base = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    return [f"API: {base}/iceberg (Iceberg REST), {base}/api/v2 (versioning)",
            f"UI: {base}/ui",
            f"metrics: {base}/metrics"]


def serve(settings: Settings, host: str, port: int, workers: int, log_level: str) -> None:
    # Workers build their own app from the environment: pass the choices on.
    os.environ["SAPWOOD_DATABASE_URL"] = settings.database_url
    os.environ["SAPWOOD_WAREHOUSE"] = settings.warehouse
    if settings.allow_external_locations:
        os.environ["SAPWOOD_ALLOW_EXTERNAL_LOCATIONS"] = "1"
    # The bound address is one of the host names served (api.hosts).
    os.environ["SAPWOOD_BIND_HOST"] = host
    config = uvicorn_config(host, port, workers, log_level)
    if workers <= 1:
        uvicorn.Server(config).run()
        return
    Multiprocess(config, sockets=[_listening_socket(host, port)]).run()


def uvicorn_config(host: str, port: int, workers: int, log_level: str) -> uvicorn.Config:
    """How uvicorn serves the app (tests/api/test_http_upgrade.py checks the
    parser). HTTP/1.1 parsed by httptools, in uvicorn's protocol but for an
    upgrade it does not take: uvicorn's own drops the body of a request that
    offers h2c (every JDK HttpClient on http://, curl --http2; uvicorn#2722),
    and a server must ignore such an offer (RFC 9110, 7.8). h11 would be safe
    too, at 0.6 of the requests per second (docs/performance.md);
    api/http_protocol.py says how, and bench/floor_app.py serves the same."""
    return uvicorn.Config(APP, factory=True, host=host, port=port, workers=workers,
                          http=HttpProtocol, log_level=log_level, access_log=False)


def _listening_socket(host: str, port: int) -> socket.socket:
    """The shared socket for several workers, created with an explicit TCP
    protocol: asyncio sets TCP_NODELAY only on connections whose socket says
    IPPROTO_TCP, and uvicorn's own (protocol 0) left Nagle on, so with workers
    every keep-alive response waited out a 40 ms delayed ACK."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock
