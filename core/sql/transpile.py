"""A view's SQL in another dialect, by sqlglot (Bingsan's several dialects
per view; the result is a generated representation, marked as such)."""

from __future__ import annotations

from importlib.metadata import version

from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, SqlglotError, TokenError

from core.errors import InvalidInputError
from core.sql.analysis import known_dialect
from core.sql.budget import OverBudget, parse_within_budget

GENERATED = "sapwood.generated-representation"


def transpile(sql: str, source: str, target: str) -> str:
    for d in (source, target):
        if not known_dialect(d):
            raise InvalidInputError(f"sqlglot does not know the SQL dialect {d!r}")
    try:
        # Parsed within the analysis budget first: generating recurses too.
        tree = parse_within_budget(sql, source)
        statements = tree.expressions if isinstance(tree, exp.Block) else [tree]
        out = [s.sql(dialect=target, unsupported_level=ErrorLevel.RAISE) for s in statements]
    except OverBudget as e:
        raise InvalidInputError(f"cannot transpile the {source} SQL: {e.reason}") from None
    except RecursionError:
        raise InvalidInputError(f"cannot transpile the {source} SQL: it is nested too "
                                "deeply") from None
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
    return f"{target} transpiled from {source} by sqlglot {version('sqlglot')}"
