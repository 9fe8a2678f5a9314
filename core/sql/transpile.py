"""A view's SQL in another dialect, by sqlglot (Bingsan's several dialects
per view; the result is a generated representation, marked as such)."""

from __future__ import annotations

import sqlglot
from sqlglot.errors import ErrorLevel, ParseError, SqlglotError, TokenError

from core.errors import InvalidInputError
from core.sql.analysis import known_dialect

GENERATED = "sapwood.generated-representation"


def transpile(sql: str, source: str, target: str) -> str:
    for d in (source, target):
        if not known_dialect(d):
            raise InvalidInputError(f"sqlglot does not know the SQL dialect {d!r}")
    try:
        out = sqlglot.transpile(sql, read=source, write=target,
                                unsupported_level=ErrorLevel.RAISE)
    except (ParseError, TokenError) as e:
        raise InvalidInputError(f"cannot parse the {source} SQL: "
                                f"{str(e).strip().splitlines()[0][:300]}") from None
    except SqlglotError as e:
        raise InvalidInputError(f"cannot write that SQL in {target}: "
                                f"{str(e).strip().splitlines()[0][:300]}") from None
    if len(out) != 1:
        raise InvalidInputError(f"the {source} SQL holds {len(out)} statements, not one query")
    return out[0]


def provenance(source: str, target: str) -> str:
    return f"{target} transpiled from {source} by sqlglot {sqlglot.__version__}"
