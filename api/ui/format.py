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


def instant(value: Any) -> Markup:
    """An instant as ISO-8601 in UTC to the millisecond, in a <time> element:
    what the as-of picker and the ref grammar accept. ``value`` is epoch
    milliseconds (Iceberg's timestamps) or an ISO-8601 string (the API's
    commit times, to the microsecond): the text is cut to the millisecond,
    the element's ``datetime`` keeps the API's own spelling and, when that
    says more than the text, its ``title`` (on hover) too: nothing is lost
    to a reader who needs the whole instant."""
    if value is None:
        return Markup("")
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            at = datetime.fromtimestamp(value / 1000, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return escape(str(value))
        text = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return Markup(f'<time datetime="{text}">{text}</time>')
    if not isinstance(value, str):
        return escape(str(value))
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        return escape(value)
    if at.tzinfo is None:
        return escape(value)  # not an instant: shown as it came
    at = at.astimezone(UTC)
    text = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    title = f' title="{escape(value)}"' if at.microsecond % 1000 else ""
    return Markup(f'<time datetime="{escape(value)}"{title}>{text}</time>')


def count(value: Any) -> str:
    """A count with thousands separators (``12,345``); anything else as it is."""
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return "" if value is None else str(value)


def size(value: Any) -> str:
    """Bytes in the unit that reads best (``4.8 KiB``); anything else as it is."""
    try:
        n = int(value)
    except (TypeError, ValueError):
        return "" if value is None else str(value)
    if abs(n) < 1024:
        return f"{n} B"
    scaled, units = n / 1024, ["KiB", "MiB", "GiB", "TiB"]
    while abs(scaled) >= 1024 and len(units) > 1:
        scaled, units = scaled / 1024, units[1:]
    return f"{scaled:.1f} {units[0]}"


_SPACES = re.compile(r"(\s+)")


def words(value: Any) -> Markup:
    """Text that wraps only between words: a word a browser could break
    (``local-1764-app`` after a hyphen, a path after a slash) is put in a
    span that never breaks; letters and digits alone never break anyway."""
    parts = _SPACES.split("" if value is None else str(value))
    return Markup("".join(escape(p) if p.isspace() or p.isalnum() or not p else
                          Markup('<span class="word">') + escape(p) + Markup("</span>")
                          for p in parts))


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
