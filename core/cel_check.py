"""The names a Nessie ``filter`` (CEL) may use, checked on its parse tree
before it runs (core.cel_filter compiles, this checks): the variables and
fields core.cel_values provides, the functions and methods below, and the
macros. Anything else is a 400 naming it: an unknown variable or field, a
function Sapwood does not provide, a message literal (``T{…}``), a name
with a leading dot, a field read off a list, or a macro over
``operations`` inside another macro (its cost would grow with the square of
a commit's operations). What the filter reads is recorded in a ``Needs``,
so only those fields are built for each commit or entry."""

from __future__ import annotations

from typing import Any

from lark import Token, Tree

from core.cel_values import OPERATIONS, ListOf, Needs, Record, Shape
from core.errors import bad_request

Node = Tree[Token]
FUNCTIONS = frozenset({"size", "int", "uint", "double", "string", "bool", "bytes", "timestamp",
                       "duration", "dyn", "type", "matches"})
METHODS = frozenset({"contains", "startsWith", "endsWith", "matches", "size", "getFullYear",
                     "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear",
                     "getHours", "getMinutes", "getSeconds", "getMilliseconds"})
MACROS = frozenset({"exists", "all", "exists_one", "map", "filter"})
# Names that stand for types (``type(x) == string``).
TYPE_NAMES = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map",
                        "null_type", "type"})
# Nodes that only pass their one child on.
PASS = frozenset({"expr", "conditionalor", "conditionaland", "relation", "addition",
                   "multiplication", "unary", "member", "primary", "paren_expr"})


class Check:
    """The names a filter uses, checked against what ``variables`` provide;
    records what it reads in ``needs``. Each method returns the shape of
    the value its node stands for."""

    def __init__(self, variables: dict[str, Shape], needs: Needs) -> None:
        self.variables = variables
        self.needs = needs
        self.over_operations = False  # inside a macro over ``operations``

    def top(self, tree: Node) -> None:
        self.use(self.shape(tree, {}))

    def use(self, shape: Shape) -> None:
        """``shape`` is used as a value: all of its fields are needed."""
        if isinstance(shape, ListOf):
            shape = shape.item
        if isinstance(shape, Record) and shape.name not in self.needs.whole:
            self.needs.whole.add(shape.name)
            for sub in shape.fields.values():
                self.use(sub)

    def shape(self, t: Node, scope: dict[str, Shape]) -> Shape:
        kids = t.children
        if t.data in PASS and len(kids) == 1 and isinstance(kids[0], Tree):
            return self.shape(kids[0], scope)
        if t.data == "ident":
            return self.ident(str(kids[0]), scope)
        if t.data == "member_dot":
            return self.field(self.shape(_tree(kids[0]), scope), str(kids[1]), t)
        if t.data == "member_index":
            target = self.shape(_tree(kids[0]), scope)
            name = _string_literal(_tree(kids[1]))
            if isinstance(target, Record) and name is not None:
                return self.field(target, name, t)
            self.use(target)
            self.use(self.shape(_tree(kids[1]), scope))
            return target.item if isinstance(target, ListOf) else None
        if t.data == "member_dot_arg":
            return self.method(t, scope)
        if t.data == "ident_arg":
            return self.function(t, scope)
        if t.data in ("dot_ident", "dot_ident_arg", "member_object"):
            raise bad_request(f"The filter uses {_construct(t.data)}, which is not supported "
                              "here")
        for kid in kids:
            if isinstance(kid, Tree):
                self.use(self.shape(kid, scope))
        return None

    def ident(self, name: str, scope: dict[str, Shape]) -> Shape:
        if name in scope:
            return scope[name]
        if name in self.variables:
            self.needs.variables.add(name)
            return self.variables[name]
        if name in TYPE_NAMES:
            return None
        raise bad_request(f"The filter names {name!r}, which is not a variable here: it "
                          f"provides {_listed(self.variables)} (docs/versioning-api.md)")

    def field(self, target: Shape, name: str, node: Node) -> Shape:
        if isinstance(target, ListOf):
            raise bad_request(f"The filter reads '.{name}' of a list: use a macro such as "
                              f"operations.exists(op, op.{name} …)")
        if not isinstance(target, Record):
            return None  # a map's key, or a field of a value CEL checks itself
        if name not in target.fields:
            raise bad_request(f"The filter reads {target.name}.{name}, which Sapwood does not "
                              f"provide: {target.name} has {_listed(target.fields)}")
        self.needs.fields.setdefault(target.name, set()).add(name)
        return target.fields[name]

    def function(self, t: Node, scope: dict[str, Shape]) -> Shape:
        name, args = str(t.children[0]), _args(t.children[1:])
        if name == "has":
            if len(args) != 1 or _inner(args[0]).data != "member_dot":
                raise bad_request("has() takes one field selection, such as has(commit.author)")
            self.shape(args[0], scope)  # checks the field exists
            return None
        if name not in FUNCTIONS:
            raise bad_request(f"The filter calls {name}(), which is not supported here: the "
                              f"functions are {', '.join(sorted(FUNCTIONS | {'has'}))}")
        for a in args:
            self.use(self.shape(a, scope))
        return None

    def method(self, t: Node, scope: dict[str, Shape]) -> Shape:
        target_tree, name = _tree(t.children[0]), str(t.children[1])
        args = _args(t.children[2:])
        target = self.shape(target_tree, scope)
        if name in MACROS:
            return self.macro(target, name, args, scope)
        if name not in METHODS:
            raise bad_request(f"The filter calls .{name}(), which is not supported here: the "
                              f"methods are {', '.join(sorted(METHODS | MACROS))}")
        self.use(target)
        for a in args:
            self.use(self.shape(a, scope))
        return None

    def macro(self, target: Shape, name: str, args: list[Node],
              scope: dict[str, Shape]) -> Shape:
        var = _bare_ident(args[0]) if args else None
        if var is None or len(args) not in ((2, 3) if name == "map" else (2,)):
            raise bad_request(f".{name}() takes a variable name and an expression, such as "
                              f"operations.{name}(op, op.type == 'PUT')")
        if var in self.variables or var in scope:
            raise bad_request(f".{name}(): the name {var!r} is taken; choose another")
        over = target is OPERATIONS
        if over and self.over_operations:
            raise bad_request(f"The filter runs operations.{name}() inside another macro over "
                              "operations: refused, as its cost grows with the square of a "
                              "commit's operations")
        if target is not None and not isinstance(target, ListOf):
            self.use(target)
        inner = {**scope, var: target.item if isinstance(target, ListOf) else None}
        outer, self.over_operations = self.over_operations, self.over_operations or over
        try:
            for a in args[1:]:
                self.use(self.shape(a, inner))
        finally:
            self.over_operations = outer
        return None


def _tree(node: Node | Token) -> Node:
    assert isinstance(node, Tree)
    return node


def _args(rest: list[Any]) -> list[Node]:
    """The argument expressions of a call (its optional ``exprlist``)."""
    for node in rest:
        if isinstance(node, Tree) and node.data == "exprlist":
            return [c for c in node.children if isinstance(c, Tree)]
    return []


def _inner(t: Node) -> Node:
    while t.data in PASS and len(t.children) == 1 and isinstance(t.children[0], Tree):
        t = t.children[0]
    return t


def _bare_ident(t: Node) -> str | None:
    found = _inner(t)
    return str(found.children[0]) if found.data == "ident" else None


def _string_literal(t: Node) -> str | None:
    """The text of a plain quoted string literal (None for anything else:
    an escape, a raw or triple-quoted string is left to CEL itself)."""
    found = _inner(t)
    if found.data != "literal" or not isinstance(found.children[0], Token):
        return None
    text = str(found.children[0])
    if len(text) >= 2 and text[0] in "'\"" and text[-1] == text[0] and "\\" not in text \
            and not text.startswith(("\'\'\'", '"""')):
        return text[1:-1]
    return None


def _construct(data: str) -> str:
    return {"member_object": "a message literal (Type{field: …})"}.get(
        data, "a name with a leading '.'")


def _listed(names: Any) -> str:
    return ", ".join(sorted(names))
