"""How the pages show values: instants, booleans, hashes (Jinja filters and
globals, registered in api.ui.pages)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup, escape

# A commit hash, alone or at the end of a ref spec (`@hash`, `main@hash`).
_HASH = re.compile(r"^(?P<lead>.*?)(?P<hash>[0-9a-f]{16,})$")
SHORT = 12


def instant(ms: Any) -> Markup:
    """Epoch milliseconds as an ISO-8601 instant (UTC, to the millisecond),
    in a <time> element; what the as-of picker and the ref grammar accept."""
    if not isinstance(ms, int) or isinstance(ms, bool):
        return Markup("") if ms is None else escape(str(ms))
    try:
        at = datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return escape(str(ms))
    text = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return Markup(f'<time datetime="{text}">{text}</time>')


def yesno(value: Any) -> str:
    return "yes" if value is True or str(value).lower() == "true" else "no"


def short(value: Any) -> Markup:
    """A hash (or a ref spec ending in one) shown by its first 12 characters;
    the full hash on hover (title) and in the copied text: the rest is in the
    element at font size 0, so a selection or a double click takes all of it."""
    text = "" if value is None else str(value)
    m = _HASH.match(text)
    if m is None or len(m["hash"]) <= SHORT:
        return Markup(f"<code>{escape(text)}</code>")
    h = m["hash"]
    return Markup(f'<code class="hash" title="{escape(text)}">{escape(m["lead"])}'
                  f'{h[:SHORT]}<span class="rest">{h[SHORT:]}</span></code>')
