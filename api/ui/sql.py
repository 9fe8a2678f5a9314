"""SQL shown with its keywords, strings and numbers marked, by sqlglot in the
view's dialect; the text itself is kept exactly.

A token is a keyword when sqlglot's tokenizer knows it as one: every type but
names, literals and punctuation, including the tokens of several words
(``GROUP BY``, ``ORDER BY``, ``PARTITION BY``, ``LEFT OUTER JOIN``'s words).
Some keywords are keywords only where they stand (``NULLS LAST``, ``ROWS
BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW``, ``INTERVAL 1 DAY``): the
tokenizer calls them names, so the SQL is also parsed, and a name that is
neither an identifier of the parsed query nor a function's name is one of
those. A word that is an identifier where it stands (a column called
``date``) is never marked, whatever its spelling."""

from __future__ import annotations

import re
from html import escape

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokenizer_core import TokenType

_STRINGS = {TokenType.STRING, TokenType.NATIONAL_STRING, TokenType.RAW_STRING,
            TokenType.BYTE_STRING, TokenType.HEX_STRING, TokenType.BIT_STRING,
            TokenType.HEREDOC_STRING, TokenType.UNICODE_STRING}
_NUMBERS = {TokenType.NUMBER}
_NAMES = {TokenType.VAR, TokenType.IDENTIFIER, TokenType.PARAMETER,
          TokenType.PLACEHOLDER}
# Words only: a keyword token is letters (and the spaces of a multi-word one).
_WORDS = re.compile(r"[A-Za-z_]+(?:\s+[A-Za-z_]+)*")


def highlight(sql: str, dialect: str) -> str:
    """HTML of ``sql``: every character kept, tokens wrapped in spans."""
    try:
        d = Dialect.get_or_raise(dialect.lower())
        tokens = d.tokenize(sql)
    except Exception:  # a dialect or text sqlglot cannot tokenize: shown plain
        return escape(sql)
    named = _identifiers(d, sql)
    out, pos = [], 0
    for i, t in enumerate(tokens):
        start, end = t.start, t.end + 1
        if start < pos or end > len(sql):
            continue
        out.append(escape(sql[pos:start]))
        word = sql[start:end]
        text = escape(word)
        if t.token_type in _STRINGS:
            out.append(f'<span class="str">{text}</span>')
        elif t.token_type in _NUMBERS:
            out.append(f'<span class="num">{text}</span>')
        elif _is_keyword(t.token_type, start, word, named,
                         tokens[i + 1].token_type if i + 1 < len(tokens) else None):
            out.append(f'<span class="kw">{text}</span>')
        else:
            out.append(text)
        pos = end
    out.append(escape(sql[pos:]))
    return "".join(out)


def _is_keyword(kind: TokenType, start: int, word: str, named: set[int] | None,
                following: TokenType | None) -> bool:
    if not _WORDS.fullmatch(word) or (named is not None and start in named):
        return False  # punctuation, or an identifier where it stands
    if kind not in _NAMES:
        return True
    # A name to the tokenizer: a keyword where it stands if the parsed query
    # has no identifier there and it is not a function's name.
    return kind == TokenType.VAR and named is not None and following != TokenType.L_PAREN


def _identifiers(d: Dialect, sql: str) -> set[int] | None:
    """Where the parsed query's identifiers start (None: it does not parse,
    and only what the tokenizer knows is marked)."""
    try:
        trees = d.parse(sql)
    except Exception:  # sqlglot's parse errors are of several kinds
        return None
    return {int(i.meta["start"]) for tree in trees if tree is not None
            for i in tree.find_all(exp.Identifier) if "start" in i.meta}
