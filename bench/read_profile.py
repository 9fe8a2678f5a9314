"""Where a cached read's time goes inside the server (docs/performance.md).

Drives the real application in process, as uvicorn would call it (one ASGI
call per request, no sockets), for loadTable, loadView and GET namespace,
with authentication off and on, metrics and the access log on; then under
cProfile, and prints each read's µs per request in the application and the
functions that take the most of it (own time, grouped by module).

    python bench/read_profile.py [--requests N]
    python bench/read_profile.py --smoke   # 20 requests a read (the suite runs it)
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import logging
import os
import pstats
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.api import spark_bodies as sb  # noqa: E402

PATHS = {
    "loadtable": "/iceberg/v1/namespaces/bench/tables/events",
    "loadview": "/iceberg/v1/namespaces/bench/views/daily",
    "getns": "/iceberg/v1/namespaces/bench",
}


class Driver:
    """Calls an ASGI app as a server would, one request at a time."""

    def __init__(self, app: Any, headers: list[tuple[bytes, bytes]]) -> None:
        self.app = app
        self.headers = [(b"host", b"127.0.0.1:8181"), *headers]

    async def call(self, method: str, path: str, body: bytes = b"",
                   content_type: bytes = b"application/json") -> tuple[int, bytes]:
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": method, "scheme": "http", "path": path,
                 "raw_path": path.encode(), "query_string": b"", "root_path": "",
                 "headers": [*self.headers, (b"content-type", content_type),
                             (b"content-length", str(len(body)).encode())],
                 "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8181)}
        sent = False
        out: dict[str, Any] = {"status": 0, "body": b""}

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                await asyncio.sleep(3600)
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                out["status"] = message["status"]
            elif message["type"] == "http.response.body":
                out["body"] += message.get("body", b"")

        await self.app(scope, receive, send)
        return out["status"], out["body"]


def populate(driver: Driver) -> None:
    async def go() -> None:
        async def call(method: str, path: str, body: object) -> dict[str, Any]:
            status, data = await driver.call(method, path, json.dumps(body).encode())
            assert status == 200, (path, status, data[:300])
            return json.loads(data) if data else {}

        await call("POST", "/iceberg/v1/namespaces", {"namespace": ["bench"],
                                                      "properties": {"owner": "bi"}})
        meta = (await call("POST", "/iceberg/v1/namespaces/bench/tables",
                           sb.create_table("events")))["metadata"]
        parent = None
        for i in range(20):
            sb.write_manifest_list(meta["location"], 1000 + i)
            await call("POST", PATHS["loadtable"],
                       sb.append(meta["table-uuid"], 1000 + i, parent, meta["location"], i + 1))
            parent = 1000 + i
        uuid = (await call("POST", "/iceberg/v1/namespaces/bench/views",
                           sb.create_view("daily", "SELECT 0")))["metadata"]["view-uuid"]
        for i in range(1, 5):
            await call("POST", PATHS["loadview"],
                       sb.replace_view(uuid, f"SELECT {i} FROM bench.events"))

    asyncio.run(go())


def measure(driver: Driver, path: str, n: int, profile: cProfile.Profile | None,
            warm: int = 200) -> float:
    async def go() -> float:
        for _ in range(warm):
            await driver.call("GET", path)
        t = time.perf_counter()
        if profile is not None:
            profile.enable()
        for _ in range(n):
            status, _ = await driver.call("GET", path)
        if profile is not None:
            profile.disable()
        assert status == 200
        return (time.perf_counter() - t) / n * 1e6

    return asyncio.run(go())


def by_module(stats: pstats.Stats, total_calls: int, top: int = 14) -> list[str]:
    own: dict[str, float] = defaultdict(float)
    for (filename, _, _), (_, _, tt, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        name = filename
        for marker in ("site-packages/", "lib/python3"):
            if marker in name:
                name = name.split(marker, 1)[1]
                break
        else:
            name = os.path.relpath(name, ROOT) if name.startswith(str(ROOT)) else name
        own[name.split("/")[0] if "site-packages" in filename else name] += tt
    rows = sorted(own.items(), key=lambda kv: -kv[1])[:top]
    return [f"    {us / total_calls * 1e6:7.1f} µs  {name}" for name, us in rows]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int)
    ap.add_argument("--smoke", action="store_true", help="20 requests a read")
    args = ap.parse_args(argv)
    requests = args.requests or (20 if args.smoke else 5000)
    warm = 5 if args.smoke else 200
    from api.app import create_app, fastapi_of
    from api.auth.config import AuthSettings
    from api.settings import Settings

    logging.getLogger("sapwood.access").setLevel(logging.INFO)
    for auth in (False, True):
        with tempfile.TemporaryDirectory() as d:
            url = f"sqlite:///{d}/sapwood.db"
            settings = Settings(url, Path(d, "wh").as_uri())
            key = ""
            if auth:
                from catalog.access import create_key
                from store import Store

                s = Store(url)
                s.auth.create_principal("bench")
                s.auth.add_grant("bench", "write", "*")
                s.auth.add_grant("bench", "read", "*")
                key = create_key(s, "bench")
                s.close()
            app = create_app(settings, AuthSettings(enabled=auth))
            inner = fastapi_of(app)
            # The app's lifespan (opens the store), entered once and left open.
            ctx = inner.router.lifespan_context(inner)
            asyncio.run(ctx.__aenter__())
            driver = Driver(app, [])
            if auth:
                key_id, _, secret = key.partition(":")
                status, data = asyncio.run(driver.call(
                    "POST", "/iceberg/v1/oauth/tokens",
                    f"grant_type=client_credentials&client_id={key_id}&client_secret={secret}"
                    .encode(), b"application/x-www-form-urlencoded"))
                assert status == 200, data
                token = json.loads(data)["access_token"]
                driver.headers.append((b"authorization", f"Bearer {token}".encode()))
            populate(driver)
            print(f"authentication {'on' if auth else 'off'}:")
            for name, path in PATHS.items():
                plain = measure(driver, path, requests, None, warm)
                prof = cProfile.Profile()
                measure(driver, path, requests, prof, warm)
                stats = pstats.Stats(prof)
                print(f"  {name}: {plain:.1f} µs per request in the application "
                      f"(unprofiled); own time by module, profiled:")
                print("\n".join(by_module(stats, requests)))


if __name__ == "__main__":
    main()
