"""Every size limit the server enforces, in one place (docs/limits.md lists
them), the checks the request models call, and the request body limit.

The body limit (``limit_body``, called by the edge layer api.edge) answers
413 before any route or parser sees an oversized body, whether the client
announced its length or streamed it in chunks.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Iterable, Mapping

# The catalog's own limits, named here too so that the whole list is in one place.
from api.asgi import App, Message, Receive, Scope, Send
from catalog.limits import DEFAULT_MAX_METADATA_BYTES as DEFAULT_MAX_METADATA_BYTES
from catalog.limits import DEFAULT_READ_TIMEOUT_S as DEFAULT_READ_TIMEOUT_S
from catalog.limits import MAX_PATH_CHARS as MAX_PATH_CHARS
from catalog.limits import MAX_PATH_DEPTH as MAX_PATH_DEPTH
from catalog.limits import MAX_VIEW_NESTING as MAX_VIEW_NESTING
from catalog.limits import TABLE_FORMATS as TABLE_FORMATS
from catalog.limits import unsupported_format as unsupported_format
from core.keys import MAX_ELEMENTS, MAX_LENGTH
from core.numbers import INT64_MAX, INT64_MIN
from core.pages import MAX_PAGE
from core.refs import MAX_ANCESTORS
from core.sql import budget as sql_budget

# A request body, unless SAPWOOD_MAX_BODY_BYTES says otherwise. Spark's and
# PyIceberg's largest bodies (a commit with its snapshots and schemas) are
# tens of kilobytes.
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
# One element of a name (namespace level, table, view): what a file system
# allows in one path segment.
MAX_NAME_CHARS = 255
MAX_PROPERTY_KEY_CHARS = 256
MAX_PROPERTY_VALUE_CHARS = 64 * 1024
# Properties set or removed by one request (or one update of a commit).
MAX_PROPERTIES = 1000
# Updates (and requirements) of one commit, over all its tables; operations
# of one versioning API commit.
MAX_UPDATES = 1000
# A location or metadata location a client sends: below PATH_MAX (4096) with
# room for the folders and file names the server adds under it.
MAX_LOCATION_CHARS = 2048
# Commit messages are kept in the log forever.
MAX_MESSAGE_CHARS = 64 * 1024
# Page sizes (pageSize, maxRecords) larger than this are clamped to it (the
# spec lets a server return fewer items; clients follow the page token).
MAX_PAGE_SIZE = MAX_PAGE
# These live with the code that checks them (core's key and ref grammar);
# named here so that the whole list is in one place.
MAX_KEY_ELEMENTS = MAX_ELEMENTS
MAX_KEY_CHARS = MAX_LENGTH
MAX_REF_ANCESTORS = MAX_ANCESTORS
# Any integer a request carries (core.numbers: declared on each parameter and
# field, and checked in PyIceberg's models of a body).
MIN_INTEGER = INT64_MIN
MAX_INTEGER = INT64_MAX
# How much SQL is analysed (core.sql.budget: over these, a view is stored
# unanalysed, a materialized view refused).
MAX_ANALYSED_SQL_CHARS = sql_budget.MAX_SQL_CHARS
MAX_ANALYSED_SQL_DEPTH = sql_budget.MAX_TREE_DEPTH
MAX_ANALYSED_SQL_NODES = sql_budget.MAX_TREE_NODES
MAX_ANALYSED_SQL_CTES = sql_budget.MAX_CTES
MAX_ANALYSED_STAR_COLUMNS = sql_budget.MAX_STAR_COLUMNS
ANALYSIS_TIME_BUDGET_S = sql_budget.TIME_BUDGET_S
# How much of an oversized body is read and thrown away before the 413, so
# that a client still sending gets to read the answer instead of a reset.
_DRAIN_BYTES = 64 * 1024 * 1024
# A compressed body larger than this is decoded in a worker thread.
_INLINE_DECODE_BYTES = 64 * 1024


# -- checks for the request models (a ValueError becomes a 400) ---------------------
def check_name(name: str, what: str = "name") -> str:
    """A name element: bounded, and text that every database can store."""
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"{what} is {len(name)} characters long, at most {MAX_NAME_CHARS} "
                         "are allowed")
    _text(name, what)
    return name


def check_names(names: Iterable[str], what: str = "namespace level") -> None:
    for n in names:
        check_name(n, what)


def check_properties(props: Mapping[str, str] | None, what: str = "properties") -> None:
    if not props:
        return
    if len(props) > MAX_PROPERTIES:
        raise ValueError(f"{len(props)} {what}, at most {MAX_PROPERTIES} per request")
    for k, v in props.items():
        check_property_key(k)
        if isinstance(v, str) and len(v) > MAX_PROPERTY_VALUE_CHARS:
            raise ValueError(f"property {k[:40]!r} has a value of {len(v)} characters, at most "
                             f"{MAX_PROPERTY_VALUE_CHARS} are allowed")
        if isinstance(v, str):
            _text(v, f"property {k[:40]!r}")


def check_property_key(key: str) -> None:
    if len(key) > MAX_PROPERTY_KEY_CHARS:
        raise ValueError(f"property key of {len(key)} characters, at most "
                         f"{MAX_PROPERTY_KEY_CHARS} are allowed")
    _text(key, "property key")


def check_removals(keys: Iterable[str]) -> None:
    keys = list(keys)
    if len(keys) > MAX_PROPERTIES:
        raise ValueError(f"{len(keys)} property removals, at most {MAX_PROPERTIES} per request")
    for k in keys:
        check_property_key(k)


def check_count(n: int, what: str) -> None:
    if n > MAX_UPDATES:
        raise ValueError(f"{n} {what}, at most {MAX_UPDATES} per commit")


def check_location(location: str | None) -> None:
    if location is not None and len(location) > MAX_LOCATION_CHARS:
        raise ValueError(f"location of {len(location)} characters, at most "
                         f"{MAX_LOCATION_CHARS} are allowed")


def check_message(message: str | None) -> None:
    if message is not None and len(message) > MAX_MESSAGE_CHARS:
        raise ValueError(f"commit message of {len(message)} characters, at most "
                         f"{MAX_MESSAGE_CHARS} are allowed")


def check_updates(updates: Iterable[object]) -> None:
    """The property maps and locations inside table or view updates (PyIceberg's
    and core's update models name these fields alike)."""
    for u in updates:
        check_properties(getattr(u, "updates", None))
        removals = getattr(u, "removals", None)
        if removals is not None:
            check_removals(removals)
        check_location(getattr(u, "location", None))


def _text(value: str, what: str) -> None:
    # A lone surrogate (JSON's "\ud800") is valid JSON but not Unicode text:
    # no database driver can encode it.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} is not valid Unicode text (a lone surrogate)") from None


# -- the request body ----------------------------------------------------------------
async def limit_body(app: App, scope: Scope, receive: Receive, send: Send, max_bytes: int,
                     length: bytes | None, expect: bool, encoding: bytes | None = None,
                     ) -> None:
    """Pass a request with a body on to ``app`` unless the body is larger than
    ``max_bytes`` (then 413). A declared Content-Length (``length``) is checked
    up front; a chunked body is read here (counting) and handed on whole, so
    no route ever sees more than the limit. ``expect``: the client sent
    ``Expect: 100-continue`` (api.edge reads the headers). ``encoding``: its
    Content-Encoding, if any: a gzip or deflate body (Nessie's Java client
    compresses every body it sends) is read whole and handed on decoded, the
    decoded bytes held to the same limit; any other a 415 naming it."""
    coding = encoding.strip().lower() if encoding is not None else b"identity"
    if coding not in (b"identity", b"gzip", b"x-gzip", b"deflate"):
        if not expect:
            await _drain(receive, 0)
        await _refuse_encoding(scope, send, encoding or b"")
        return
    if coding != b"identity":
        await _decoded(app, scope, receive, send, max_bytes, length, expect, coding)
        return
    if length is not None:
        # The HTTP parser delivers no more than announced.
        if not length.strip().isdigit() or int(length) > max_bytes:
            if not expect:  # a client that waits for 100 sends nothing: nothing to drain
                await _drain(receive, 0)
            await _refuse(scope, send, max_bytes)
            return
        await app(scope, receive, send)
        return
    body, more = bytearray(), True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return  # the client went away
        body += message.get("body", b"")
        more = message.get("more_body", False)
        if len(body) > max_bytes:
            if more:
                await _drain(receive, len(body))
            await _refuse(scope, send, max_bytes)
            return
    whole: list[Message] = [{"type": "http.request", "body": bytes(body), "more_body": False}]

    async def replay() -> Message:
        return whole.pop() if whole else await receive()

    await app(scope, replay, send)


async def _decoded(app: App, scope: Scope, receive: Receive, send: Send, max_bytes: int,
                   length: bytes | None, expect: bool, coding: bytes) -> None:
    """The compressed body read whole (its own size bounded as any body's),
    then decoded in one bounded step: a body that decodes to more than
    ``max_bytes`` is a 413 before more than that is held (a zip bomb), one
    that does not decode a 400 naming the encoding."""
    body = bytearray()

    async def collect(_: Scope, rcv: Receive, __: Send) -> None:
        while True:
            message = await rcv()
            if message["type"] != "http.request":
                return
            body.extend(message.get("body", b""))
            if not message.get("more_body", False):
                return

    refused: list[Message] = []

    async def noting(message: Message) -> None:
        refused.append(message)
        await send(message)

    # Read (and bound) the compressed bytes as any body is read.
    await limit_body(collect, scope, receive, noting, max_bytes, length, expect)
    if refused:
        return  # the compressed body itself was too large: answered 413
    wbits = 16 + zlib.MAX_WBITS if coding in (b"gzip", b"x-gzip") else zlib.MAX_WBITS
    try:
        # A large body decodes off the event loop (up to the limit: tens of
        # ms); the usual few kilobytes take microseconds, not a thread hop.
        if len(body) > _INLINE_DECODE_BYTES:
            plain, whole = await asyncio.to_thread(_inflate, bytes(body), wbits, max_bytes)
        else:
            plain, whole = _inflate(bytes(body), wbits, max_bytes)
    except zlib.error as e:
        await _bad_encoding(scope, send, coding, str(e))
        return
    if len(plain) > max_bytes:
        await _refuse(scope, send, max_bytes, decoded=True)
        return
    if not whole:
        await _bad_encoding(scope, send, coding, "the compressed body ends early")
        return
    # The app sees a plain body of known length, as if sent uncompressed.
    scope["headers"] = [(k, v) for k, v in scope["headers"]
                        if k not in (b"content-encoding", b"content-length",
                                     b"transfer-encoding")] + \
        [(b"content-length", str(len(plain)).encode())]
    replay: list[Message] = [{"type": "http.request", "body": plain, "more_body": False}]

    async def replaying() -> Message:
        return replay.pop() if replay else await receive()

    await app(scope, replaying, send)


def _inflate(body: bytes, wbits: int, max_bytes: int) -> tuple[bytes, bool]:
    """(at most ``max_bytes`` + 1 decoded bytes, whether the stream ended
    whole within them)."""
    inflater = zlib.decompressobj(wbits)
    plain = inflater.decompress(body, max_bytes + 1)
    return plain, inflater.eof and not inflater.unconsumed_tail


async def _refuse_encoding(scope: Scope, send: Send, encoding: bytes) -> None:
    from api.errors import error_response

    shown = encoding.decode("latin-1")[:40]
    response = error_response(
        415, "UnsupportedMediaTypeException",
        f"Content-Encoding {shown!r} is not supported: send the body plain, gzip or "
        "deflate", scope)
    await response(scope, _no_receive, send)


async def _bad_encoding(scope: Scope, send: Send, coding: bytes, why: str) -> None:
    from api.errors import error_response

    response = error_response(
        400, "BadRequestException",
        f"The request body is not valid {coding.decode('latin-1')} data "
        f"(Content-Encoding): {why}", scope)
    await response(scope, _no_receive, send)


async def _refuse(scope: Scope, send: Send, max_bytes: int, decoded: bool = False) -> None:
    from api.errors import error_response

    response = error_response(
        413, "RequestEntityTooLargeException",
        f"The request body is larger than the limit of {max_bytes} bytes "
        f"{'once decoded ' if decoded else ''}(setting SAPWOOD_MAX_BODY_BYTES)", scope)
    response.headers["Connection"] = "close"
    await response(scope, _no_receive, send)


async def _drain(receive: Receive, seen: int) -> None:
    """Read and drop the rest of a body (up to a bound), so the client, which
    sends its whole body before it reads, gets the answer."""
    while seen <= _DRAIN_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            return
        seen += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


async def _no_receive() -> Message:
    return {"type": "http.disconnect"}
