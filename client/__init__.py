"""A typed Python client for Sapwood's versioning API (``/api/v2``): the one
HTTP client the command line (cli/), the Spark helpers (spark/) and users'
scripts share (docs/python-client.md). It imports nothing else of ours
(tests/test_layers.py): what it knows of the API is the API's JSON."""

from client.errors import (
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    NotFound,
    Unauthorized,
    Unreachable,
)
from client.versioning import Client, Diff, KeyResult, MergeResult, Reference

__all__ = ["ApiError", "BadRequest", "Client", "Conflict", "Diff", "Forbidden", "KeyResult",
           "MergeResult", "NotFound", "Reference", "Unauthorized", "Unreachable"]
