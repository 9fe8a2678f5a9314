"""Probes and metrics: ``/healthz`` (the process answers), ``/readyz`` (the
database answers and its schema is this version's), ``/metrics``
(Prometheus text format). Public: they say nothing about the catalog's
contents."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from api.deps import json_response, services_of

router = APIRouter()


@router.get("/healthz")
async def healthz() -> Response:
    return json_response({"status": "up"})


@router.get("/readyz")
async def readyz(request: Request) -> Response:
    try:
        why = await run_in_threadpool(services_of(request).health.not_ready)
    except Exception as e:  # any failure to answer is "not ready"
        why = f"the database does not answer: {type(e).__name__}"
    if why:
        response = json_response({"status": "not ready", "reason": why})
        response.status_code = 503
        return response
    return json_response({"status": "ready"})


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    body = await run_in_threadpool(generate_latest, request.app.state.metrics.registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
