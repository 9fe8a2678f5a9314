"""``/docs`` and ``/redoc``: where FastAPI would serve its interactive API
pages, which load their scripts and styles from a CDN (and the project loads
nothing from one). They answer 404 with where the API reference is."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException

router = APIRouter()

WHERE = ("No interactive API page here: it would load its scripts from a CDN. The API "
         "reference: /openapi.json (OpenAPI, every route of this server); "
         "docs/iceberg-rest.md and docs/versioning-api.md in Sapwood's source; "
         "the Iceberg REST catalog spec for /iceberg.")


@router.get("/docs", include_in_schema=False)
def docs_page() -> None:
    raise HTTPException(404, WHERE)


@router.get("/redoc", include_in_schema=False)
def redoc_page() -> None:
    raise HTTPException(404, WHERE)
