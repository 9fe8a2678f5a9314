"""Numbers from SAPWOOD_* settings, checked one way everywhere: a value that
is not a number, or out of its range, is refused naming the setting."""

from __future__ import annotations

import math

from core.errors import InvalidInputError


def number_setting(variable: str, text: str | None, default: float, low: float = -math.inf,
                   high: float = math.inf, whole: bool = False) -> float:
    """``text`` (the setting's value; empty or None: ``default``) as a number
    between ``low`` and ``high``; ``whole``: an integer."""
    if not text:
        return default
    try:
        value = float(int(text)) if whole else float(text)
    except ValueError:
        kind = "a whole number" if whole else "a number"
        raise InvalidInputError(f"{variable} must be {kind}, not {text[:60]!r}") from None
    if not low <= value <= high:
        raise InvalidInputError(f"{variable} must be between {low:g} and {high:g}, "
                                f"not {text[:60]!r}")
    return value
