"""The integers the catalog takes: what a 64-bit signed integer holds.

Iceberg's ids, counts and timestamps are Java ``long``s, the databases'
integer columns are 64-bit, and every client reads a JSON number into one;
a larger number taken in would fail later, in the store (a 5xx) or in a
client. So every integer a request carries is bounded where it is declared
(``le=INT64_MAX``, and ``ge=0`` or ``ge=1`` where a negative means nothing),
and values built by models that are not ours (PyIceberg's), or kept in
free-form JSON (a versioning commit's content values), are walked once
(``out_of_range``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

INT64_MIN = -(2 ** 63)
INT64_MAX = 2 ** 63 - 1


def out_of_range(value: Any, path: str = "") -> str | None:
    """A message naming the first integer outside the 64-bit range in a
    validated value (pydantic models by their JSON names, lists, tuples,
    mappings), or None when there is none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if INT64_MIN <= value <= INT64_MAX:
            return None
        return (f"{path or 'value'}: {value} is out of range (a 64-bit integer, "
                f"{INT64_MIN} to {INT64_MAX})")
    if isinstance(value, BaseModel):
        for name, field in type(value).model_fields.items():
            found = out_of_range(getattr(value, name, None), _join(path, field.alias or name))
            if found is not None:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = out_of_range(item, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = out_of_range(item, _join(path, str(key)))
            if found is not None:
                return found
    return None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
