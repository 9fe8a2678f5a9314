"""The floor for bench/rest_bench.py: a bare FastAPI app that answers the same
JSON bodies Sapwood answered, taken from a file, with nothing else to do."""

from __future__ import annotations

import json
import os

from fastapi import FastAPI, Response

app = FastAPI()
with open(os.environ["SAPWOOD_FLOOR_BODIES"], encoding="utf-8") as f:
    BODIES = {k: v.encode() for k, v in json.load(f).items()}


# The barest endpoint FastAPI offers: async, a path parameter, prebuilt bytes.
@app.get("/floor/{name}")
async def floor(name: str) -> Response:
    return Response(BODIES[name], media_type="application/json")
