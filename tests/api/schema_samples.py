"""Request bodies made from a route's JSON schema: every number a body can
carry (``leaves``), and the smallest body that carries a given value there
and is otherwise valid (``body_with``). For tests that send bad numbers to
every field of every route (tests/api/test_integer_params.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

# A step into a schema: a property, an array's item, or a branch of a union.
Step = tuple[str, Any]
_NUMERIC = ("integer", "number")


@dataclass(frozen=True)
class Leaf:
    path: tuple[Step, ...]
    # The JSON types the leaf takes: {"integer"}, {"integer", "null"}, or
    # more (a default value, which may be a number or a string).
    types: frozenset[str]
    minimum: float | None
    maximum: float | None

    @property
    def name(self) -> str:
        """The wire's name of the field, e.g. ``snapshot-id``."""
        return next(str(arg) for kind, arg in reversed(self.path) if kind == "prop")

    @property
    def dotted(self) -> str:
        out = ""
        for kind, arg in self.path:
            out += f".{arg}" if kind == "prop" else "[]" if kind == "item" else ""
        return out.lstrip(".")

    @property
    def integer_only(self) -> bool:
        return self.types <= {"integer", "null"}


class Samples:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.root = schema
        self.defs: dict[str, Any] = schema.get("$defs", {})

    def resolve(self, s: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in s:
            s = self.defs[s["$ref"].split("/")[-1]]
        return s

    # -- the numeric leaves ------------------------------------------------------------
    def leaves(self) -> Iterator[Leaf]:
        yield from self._leaves(self.root, (), frozenset())

    def _leaves(self, s: dict[str, Any], path: tuple[Step, ...], seen: frozenset[str],
                ) -> Iterator[Leaf]:
        if "$ref" in s:
            name = s["$ref"].split("/")[-1]
            if name in seen:
                return
            seen = seen | {name}
        s = self.resolve(s)
        branches = s.get("anyOf") or s.get("oneOf")
        if branches:
            scalars = [self.resolve(b) for b in branches if self._scalar(b)]
            types = frozenset(t for b in scalars for t in self._types(b))
            if types & set(_NUMERIC):
                num = next(b for b in scalars if self._types(b) & set(_NUMERIC))
                yield Leaf(path, types, num.get("minimum"), num.get("maximum"))
            for i, b in enumerate(branches):
                if not self._scalar(b):
                    yield from self._leaves(b, (*path, ("branch", i)), seen)
            return
        types = self._types(s)
        if types & set(_NUMERIC):
            yield Leaf(path, frozenset(types), s.get("minimum"), s.get("maximum"))
        for name, sub in s.get("properties", {}).items():
            yield from self._leaves(sub, (*path, ("prop", name)), seen)
        if "items" in s and isinstance(s["items"], dict):
            yield from self._leaves(s["items"], (*path, ("item", None)), seen)

    def _scalar(self, s: dict[str, Any]) -> bool:
        s = self.resolve(s)
        return not (s.get("anyOf") or s.get("oneOf") or "properties" in s
                    or s.get("type") in ("object", "array"))

    @staticmethod
    def _types(s: dict[str, Any]) -> set[str]:
        t = s.get("type")
        if isinstance(t, list):
            return set(t)
        if t is not None:
            return {t}
        if "const" in s:
            return {type(s["const"]).__name__}
        return set()

    # -- bodies ------------------------------------------------------------------------
    def body_with(self, leaf: Leaf, value: Any) -> Any:
        return self._build(self.root, leaf.path, value)

    def _build(self, s: dict[str, Any], path: tuple[Step, ...], value: Any) -> Any:
        if not path:
            return value
        s = self.resolve(s)
        (kind, arg), rest = path[0], path[1:]
        if kind == "branch":
            return self._build((s.get("anyOf") or s.get("oneOf"))[arg], rest, value)
        if kind == "item":
            return [self._build(s["items"], rest, value)]
        out = self.fill(s)
        out[arg] = self._build(s["properties"][arg], rest, value)
        return out

    def fill(self, s: dict[str, Any]) -> Any:
        """The smallest valid value of ``s``: required properties only."""
        if s.get("$ref", "").endswith("/IcebergType"):
            return "long"  # PyIceberg parses a field's type itself
        s = self.resolve(s)
        if "const" in s:
            return s["const"]
        if "enum" in s:
            return s["enum"][0]
        branches = s.get("anyOf") or s.get("oneOf")
        if branches:
            return self.fill(next(b for b in branches if self.resolve(b).get("type") != "null"))
        t = s.get("type")
        if t == "object" or "properties" in s:
            # Required properties, and tags (a union's discriminator may have a default).
            return {name: self.fill(sub) for name, sub in s.get("properties", {}).items()
                    if name in s.get("required", ()) or "const" in self.resolve(sub)}
        if t == "array":
            return [self.fill(s["items"]) for _ in range(s.get("minItems", 0))]
        if t == "string":
            if s.get("format") == "uuid":
                return str(uuid.uuid4())
            return "x" * max(1, s.get("minLength", 1))
        if t == "integer":
            return max(1, int(s.get("minimum", 1)))
        if t == "number":
            return max(1.0, float(s.get("minimum", 1)))
        if t == "boolean":
            return False
        return "x"
