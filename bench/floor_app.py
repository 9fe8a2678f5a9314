"""The floor for bench/rest_bench.py: a bare FastAPI app that answers the same
JSON bodies Sapwood answered, taken from a file, with nothing else to do.
``python -m bench.floor_app PORT`` serves it under uvicorn with the HTTP
protocol Sapwood's server is given (api.server.uvicorn_config), so the two
differ by the application alone, never by the parser."""

from __future__ import annotations

import json
import os
import sys

import uvicorn
from fastapi import FastAPI, Response

from api.server import uvicorn_config

app = FastAPI()
with open(os.environ["SAPWOOD_FLOOR_BODIES"], encoding="utf-8") as f:
    BODIES = {k: v.encode() for k, v in json.load(f).items()}


# The barest endpoint FastAPI offers: async, a path parameter, prebuilt bytes.
@app.get("/floor/{name}")
async def floor(name: str) -> Response:
    return Response(BODIES[name], media_type="application/json")


# Sapwood's, whatever it is: a change to the server's parser moves the floor too.
HTTP_PROTOCOL = uvicorn_config("127.0.0.1", 0, 1, "warning").http

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), http=HTTP_PROTOCOL,
                log_level="warning", access_log=False)
