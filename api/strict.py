"""JSON types as the REST spec declares them: an integer field takes a JSON
integer, a boolean field ``true`` or ``false``, nothing else.

The request bodies are PyIceberg's models and ours (api/models.py), which
pydantic validates in its lax mode: ``"2"``, ``2.0`` and ``true`` all
become the integer 2 or 1, ``"yes"`` becomes ``True``. A number a client
spelled as a string is a mistake somewhere (a ``first-row-id`` of
``"2"``), and a catalog that guesses what was meant stores what nobody
asserted. Strict mode cannot be switched on for models that are not ours,
so ``loose`` walks a validated model beside the JSON it came from and
names the first integer or boolean field whose JSON was of another type;
the models' parsers turn that into a 400.

Only fields declared ``int`` or ``bool`` (possibly optional, or lists of
them) are checked: fields of any type (a column's ``initial-default``) and
maps (properties, which the spec says are strings and clients send as
numbers too) are left to their own validation.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, RootModel


def loose(raw: Any, parsed: Any, path: str = "") -> str | None:
    """A message naming the first integer or boolean field of ``parsed`` (a
    validated model) whose value in ``raw`` (its JSON) had another JSON
    type; None when every one was of its own type."""
    if isinstance(parsed, RootModel):
        return loose(raw, parsed.root, path)
    if isinstance(parsed, BaseModel):
        if not isinstance(raw, Mapping):
            return None  # built from another shape (a string it parses): its own check
        for name, f in type(parsed).model_fields.items():
            key = f.alias if f.alias is not None and f.alias in raw else name
            if key not in raw:
                continue
            where = f"{path}.{key}" if path else key
            found = _field(_kind(f.annotation), raw[key], getattr(parsed, name, None), where)
            if found is not None:
                return found
        return None
    if isinstance(parsed, list | tuple) and isinstance(raw, list) and len(raw) == len(parsed):
        for i, (r, p) in enumerate(zip(raw, parsed, strict=True)):
            found = loose(r, p, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def _field(kind: type | None, raw: Any, parsed: Any, where: str) -> str | None:
    if kind is None:
        return loose(raw, parsed, where)
    items = raw if isinstance(raw, list) else [raw]
    for i, item in enumerate(items):
        if item is None or _is(kind, item):
            continue
        at = f"{where}[{i}]" if isinstance(raw, list) else where
        shown = repr(item) if len(repr(item)) <= 40 else repr(item)[:40] + "..."
        return (f"{at}: expected a JSON {'integer' if kind is int else 'boolean'}, "
                f"got {_json_type(item)} {shown}")
    return None


def _is(kind: type, value: Any) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(annotation: Any) -> type | None:
    """``int`` or ``bool`` for a field declared as one of them, optional, or
    a list of them; None for any other field."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _kind(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        kinds = {_kind(a) for a in get_args(annotation) if a is not type(None)}
        return kinds.pop() if len(kinds) == 1 else None
    if origin in (list, tuple):
        args = [a for a in get_args(annotation) if a is not Ellipsis]
        return _kind(args[0]) if len(args) == 1 else None
    if annotation is bool or annotation is int:
        return annotation
    return None


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"
