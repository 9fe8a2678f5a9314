"""Running the application under uvicorn, one process or several."""

from __future__ import annotations

import os
import socket

import uvicorn
from uvicorn.supervisors import Multiprocess

from api.settings import Settings

APP = "api.app:app_from_env"


def serve(settings: Settings, host: str, port: int, workers: int, log_level: str) -> None:
    # Workers build their own app from the environment: pass the choices on.
    os.environ["SAPWOOD_DATABASE_URL"] = settings.database_url
    os.environ["SAPWOOD_WAREHOUSE"] = settings.warehouse
    if settings.allow_external_locations:
        os.environ["SAPWOOD_ALLOW_EXTERNAL_LOCATIONS"] = "1"
    # The bound address is one of the host names served (api.hosts).
    os.environ["SAPWOOD_BIND_HOST"] = host
    config = uvicorn.Config(APP, factory=True, host=host, port=port, workers=workers,
                            log_level=log_level, access_log=False)
    if workers <= 1:
        uvicorn.Server(config).run()
        return
    Multiprocess(config, sockets=[_listening_socket(host, port)]).run()


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
