"""SQL shown with its keywords, strings and numbers marked (sqlglot's
tokenizer in the view's dialect; the text itself is kept exactly)."""

from __future__ import annotations

from html import escape

from sqlglot.dialects.dialect import Dialect
from sqlglot.tokenizer_core import TokenType

_STRINGS = {TokenType.STRING, TokenType.NATIONAL_STRING, TokenType.RAW_STRING}
_NUMBERS = {TokenType.NUMBER}


def highlight(sql: str, dialect: str) -> str:
    """HTML of ``sql``: every character kept, tokens wrapped in spans."""
    try:
        d = Dialect.get_or_raise(dialect.lower())
        tokens = d.tokenize(sql)
    except Exception:  # a dialect or text sqlglot cannot tokenize: shown plain
        return escape(sql)
    out, pos = [], 0
    for t in tokens:
        start, end = t.start, t.end + 1
        if start < pos or end > len(sql):
            continue
        out.append(escape(sql[pos:start]))
        text = escape(sql[start:end])
        if t.token_type in _STRINGS:
            out.append(f'<span class="str">{text}</span>')
        elif t.token_type in _NUMBERS:
            out.append(f'<span class="num">{text}</span>')
        elif t.token_type != TokenType.VAR and sql[start:end].isalpha():
            out.append(f'<span class="kw">{text}</span>')
        else:
            out.append(text)
        pos = end
    out.append(escape(sql[pos:]))
    return "".join(out)
