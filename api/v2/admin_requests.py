"""What ``POST /api/v2/admin/gc`` and ``POST /api/v2/admin/import`` are told.

The gc is told: ``dryRun``, ``graceSeconds`` and
``writeWindowSeconds``, in the query string or in a JSON body, under the
same names (issue 43, defect 12: the route once read only the query, so
``{"dryRun": true}`` ran a real collection).

A body must be a JSON object of those fields, each of its JSON type (a
boolean is ``true`` or ``false``, never ``"true"`` or ``1``; a number is a
finite JSON number); anything else — another shape, an unknown field, a
``null``, a body that is not JSON — is a 400 naming it, and nothing runs.
A parameter given both ways must say the same thing both times."""

from __future__ import annotations

from email.message import Message
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from catalog.maintenance.gc import MIN_WRITE_WINDOW_S
from core.errors import bad_request, describe_validation
from core.retention import MAX_GRACE_S


class GcOptions(BaseModel):
    """The options of a collection; a field left out takes the server's default."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=False)
    dry_run: bool | None = Field(None, alias="dryRun")
    grace_seconds: float | None = Field(None, alias="graceSeconds", ge=0, le=MAX_GRACE_S,
                                        allow_inf_nan=False)
    window_seconds: float | None = Field(None, alias="writeWindowSeconds",
                                         ge=MIN_WRITE_WINDOW_S, le=MAX_GRACE_S,
                                         allow_inf_nan=False)


def from_query(dry_run: bool | None, grace_seconds: float | None,
               window_seconds: float | None) -> GcOptions:
    """The options the query string gave (FastAPI checked their ranges)."""
    given = {"dryRun": dry_run, "graceSeconds": grace_seconds,
             "writeWindowSeconds": window_seconds}
    return GcOptions.model_validate({k: v for k, v in given.items() if v is not None})


def gc_options(query: GcOptions, body: bytes, content_type: str | None) -> GcOptions:
    """The query's options with the body's (a 400 naming what cannot be used)."""
    if not body.strip():
        return query
    if content_type is not None and not _is_json(content_type):
        raise bad_request(f"The gc body must be a JSON object (Content-Type: "
                          f"application/json), not {content_type[:80]!r}: nothing was done "
                          "(or give the parameters in the query string)")
    try:
        sent = GcOptions.model_validate_json(body)
    except ValidationError as e:
        raise bad_request(f"Invalid gc body ({describe_validation(e.errors())}): nothing was "
                          "done; it takes a JSON object with dryRun (boolean), graceSeconds "
                          "and writeWindowSeconds (numbers)") from None
    fields = GcOptions.model_fields
    for name in sorted(sent.model_fields_set):
        alias = fields[name].alias
        mine: Any = getattr(sent, name)
        if mine is None:
            raise bad_request(f"Invalid gc body: {alias} is null: nothing was done (leave it "
                              "out for the server's default)")
        theirs: Any = getattr(query, name)
        if name in query.model_fields_set and theirs != mine:
            raise bad_request(f"{alias} is given in the query string ({_shown(theirs)}) and in "
                              f"the body ({_shown(mine)}) with different values: nothing was "
                              "done (give it once)")
    return query.model_copy(update={n: getattr(sent, n) for n in sent.model_fields_set})


def _is_json(content_type: str) -> bool:
    m = Message()
    m["content-type"] = content_type
    sub = m.get_content_subtype()
    return m.get_content_maintype() == "application" and (sub == "json" or
                                                          sub.endswith("+json"))


def _shown(value: Any) -> str:
    return "true" if value is True else "false" if value is False else repr(value)


class ImportRequest(BaseModel):
    """``POST /api/v2/admin/import``'s body, as ``sapwood import --from-nessie``'s
    options: the Nessie v2 API's URL, whether a catalog with commits of its own
    may take the history, how many commits each transaction lands."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=False)
    from_nessie: str = Field(alias="fromNessie", min_length=1, max_length=2048)
    into_nonempty: bool = Field(False, alias="intoNonempty")
    batch_size: int = Field(500, alias="batchSize", ge=1, le=100_000)


def import_request(body: bytes, content_type: str | None) -> ImportRequest:
    """The body as an ImportRequest (a 400 naming what cannot be used)."""
    if content_type is None or not _is_json(content_type):
        raise bad_request("The import body must be a JSON object (Content-Type: "
                          "application/json) with fromNessie: nothing was done")
    try:
        sent = ImportRequest.model_validate_json(body)
    except ValidationError as e:
        raise bad_request(f"Invalid import body ({describe_validation(e.errors())}): nothing "
                          "was done; it takes a JSON object with fromNessie (the URL of "
                          "Nessie's v2 API), intoNonempty (boolean) and batchSize "
                          "(1-100000)") from None
    if not sent.from_nessie.startswith(("http://", "https://")):
        raise bad_request(f"fromNessie must be an http:// or https:// URL of Nessie's v2 API, "
                          f"not {sent.from_nessie[:120]!r}: nothing was done")
    return sent
