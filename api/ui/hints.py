"""What a "Not found" page suggests: for a reference that does not exist,
the references the visitor may read whose names are close (from the
switcher's listing, so nothing hidden is ever suggested) and the references
page; for a key, its namespace on that reference and the key's history
there (when it was dropped); always the references, the log and browse."""

from __future__ import annotations

import difflib
import re
from typing import Any

from fastapi import Request

from api.ui.client import ApiError
from api.ui.switcher import listed_on

# A ref spec's reference name: what precedes its hash, instant or ancestry.
_REF_NAME = re.compile(r"^[^@*~^]*")
# The codes of "no such reference" in the versioning and the Iceberg API.
MISSING_REF = ("REFERENCE_NOT_FOUND", "NoSuchReferenceException")


def what_to_try(request: Request, e: ApiError, ref: str | None,
                key: str | None) -> dict[str, Any]:
    """``ref`` and ``key``: what the page was asked for (None: not known)."""
    missing_ref = e.code in MISSING_REF
    found = _REF_NAME.match(ref or "")
    named = found.group(0) if found else ""
    close = (difflib.get_close_matches(named, listed_on(request).names, n=3, cutoff=0.5)
             if missing_ref and named else [])
    # A hash that names no commit is answered with the key's code: told
    # apart by the API's words ("commit … does not exist", "no commit hash …").
    missing_commit = not missing_ref and e.message.startswith(("commit ", "no commit "))
    return {"missing": "reference" if missing_ref else "commit" if missing_commit
            else "key" if key else "other",
            "ref": None if missing_ref else ref, "key": key,
            "namespace": key.rpartition(".")[0] if key else "", "close": close}
