"""What a view's SQL reads and where each of its columns comes from.

Pure: the caller passes a ``resolve`` function that says what a key is at
the ref being written (a table or a view, its content id, its columns, and
for a view the lineage of its own columns). sqlglot does all the SQL work:
parsing in the representation's dialect, scoping (CTEs, subqueries, set
operations), qualifying names and expanding ``*`` against the schemas given.

The steps:
1. every table reference that is not a CTE is resolved the way an engine
   would: a bare name under the version's default namespace, a qualified one
   as written (a leading default catalog dropped);
2. each resolved reference is renamed to a synthetic one-part name, so that
   namespaces of any depth fit sqlglot's schema, and the tree is qualified;
3. the lineage of each output column is followed through the scopes down to
   base tables (a view's columns continue through that view's own lineage);
4. the synthetic names are put back as fully qualified keys: the expanded
   text (Hive's frozen definition).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import OptimizeError, ParseError, SqlglotError, TokenError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope
from sqlglot.schema import MappingSchema

from core.sql.budget import Deadline, OverBudget, check_stars, parse_within_budget

# The values (re-exported: callers name them from here or from core.sql.model).
from core.sql.model import (
    TABLE,
    VIEW,
    Analysis,
    Dependency,
    Key,
    Lineage,
    Origin,
    Relation,
)

__all__ = ["TABLE", "VIEW", "Analysis", "Dependency", "Key", "Lineage", "Origin", "Relation",
           "Resolver", "analyze", "known_dialect"]
_SYNTHETIC = "__sw_rel_"

# What names are at the ref: asked once per analysis with every key the SQL
# may mean (one round trip to the store, not one per table); keys that are
# nothing are left out of the answer.
Resolver = Callable[[Sequence[Key]], Mapping[Key, Relation]]


def known_dialect(dialect: str) -> bool:
    # sqlglot reads an empty name as its generic dialect; no engine is called "".
    if not dialect.strip():
        return False
    try:
        Dialect.get_or_raise(dialect)
        return True
    except (ValueError, SqlglotError):
        return False


def analyze(sql: str, dialect: str, default_namespace: Key, resolve: Resolver,
            default_catalog: str | None = None, with_types: bool = False,
            deadline: Deadline | None = None) -> Analysis:
    """The analysis; SQL over the budget (core.sql.budget) is not analysed:
    ``error`` says which limit. ``deadline``: shared by the analyses of one
    request (default: a budget of its own)."""
    if not known_dialect(dialect):
        return Analysis(dialect, error=f"sqlglot does not know the SQL dialect {dialect!r}")
    deadline = deadline or Deadline()
    try:
        return _analyze(sql, dialect, default_namespace, resolve, default_catalog, with_types,
                        deadline)
    except OverBudget as e:
        return Analysis(dialect, error=f"not analysed: {e.reason}")
    except RecursionError:  # a shape the tree measures did not foresee
        return Analysis(dialect, error="not analysed: the SQL is nested too deeply for "
                                       "analysis")


def _analyze(sql: str, dialect: str, default_namespace: Key, resolve: Resolver,
             default_catalog: str | None, with_types: bool, deadline: Deadline) -> Analysis:
    try:
        tree = parse_within_budget(sql, dialect)
    except (ParseError, TokenError) as e:
        return Analysis(dialect, error=f"cannot parse the {dialect} SQL: {_first_line(e)}")
    if not isinstance(tree, exp.Query):
        return Analysis(dialect, error=f"the {dialect} SQL is not a query "
                                       f"({type(tree).__name__})")
    deadline.check("resolving names")
    relations, unresolved = _resolve_tables(tree, default_namespace, resolve, default_catalog)
    deps = tuple(sorted({Dependency(r.key, r.content_id, r.kind)
                         for r in relations.values()}, key=lambda d: d.key))
    if unresolved:
        return Analysis(dialect, dependencies=deps, unresolved=tuple(sorted(set(unresolved))),
                        problems=tuple(f"{n} does not exist" for n in sorted(set(unresolved))))
    check_stars(tree, [len(r.columns) for r in relations.values()])
    schema = MappingSchema({syn: dict(r.columns) for syn, r in relations.items()},
                           dialect=dialect)
    try:
        deadline.check("qualifying columns")
        qualified = qualify(tree, schema=schema, dialect=dialect, quote_identifiers=False,
                            validate_qualify_columns=True, identify=False)
        deadline.check("tracing column lineage")
        root = build_scope(qualified)
        assert root is not None
        names = [s.alias_or_name for s in _first_select(qualified).selects]
        tracer = _Tracer(root, relations, deadline)
        columns = tuple((name, tracer.position(root, i)) for i, name in enumerate(names))
        used = _used_columns(root, relations)
        types: tuple[str | None, ...] = ()
        if with_types:
            deadline.check("inferring types")
            typed = annotate_types(qualified.copy(), schema=schema, dialect=dialect)
            types = tuple(p.type.sql(dialect) if p.type and not p.type.is_type(
                exp.DataType.Type.UNKNOWN) else None for p in _first_select(typed).selects)
    except (OptimizeError, SqlglotError, KeyError, IndexError, AssertionError) as e:
        return Analysis(dialect, dependencies=deps, problems=(_first_line(e),))
    deps = tuple(Dependency(d.key, d.content_id, d.kind, *used.get(d.key, ((), ())))
                 for d in deps)
    deadline.check("writing the expanded text")
    _restore_names(qualified, relations)
    # copy=False: the tree is not used again, so the generator may transform
    # it in place (a deep copy of the tree is a tenth of the analysis).
    return Analysis(dialect, dependencies=deps,
                    expanded_sql=qualified.sql(dialect=dialect, copy=False),
                    columns=columns, types=types)


# -- 1. resolution -----------------------------------------------------------------------
def _resolve_tables(tree: exp.Expr, default_namespace: Key, resolve: Resolver,
                    default_catalog: str | None) -> tuple[dict[str, Relation], list[str]]:
    """Rename every resolved table reference to a synthetic name (one per
    relation); return those relations by synthetic name, and the names that
    resolved to nothing."""
    root = build_scope(tree)
    tables: list[tuple[exp.Table, list[Key]]] = []
    if root is not None:
        for scope in root.traverse():
            for source in scope.sources.values():
                # Not a table function nor a lateral view: nothing the catalog holds.
                if (isinstance(source, exp.Table) and source.name
                        and source.find_ancestor(exp.Lateral) is None):
                    parts = tuple(p.name for p in source.parts)
                    tables.append((source, _candidates(parts, default_namespace,
                                                       default_catalog)))
    found = resolve(sorted({k for _, keys in tables for k in keys})) if tables else {}
    by_key: dict[Key, str] = {}
    relations: dict[str, Relation] = {}
    unresolved: list[str] = []
    for table, keys in tables:
        rel = next((found[k] for k in keys if k in found), None)
        if rel is None:
            # Named as the key it was looked up as (a bare name under the
            # default namespace), which is what a user would create to fix it.
            unresolved.append(".".join(keys[0]))
            continue
        syn = by_key.get(rel.key)
        if syn is None:
            syn = by_key[rel.key] = f"{_SYNTHETIC}{len(by_key)}"
            relations[syn] = rel
        if not table.alias:
            # Columns written as ``orders.x`` keep meaning the table they named.
            table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name)))
        table.set("this", exp.to_identifier(syn))
        table.set("db", None)
        table.set("catalog", None)
    return relations, unresolved


def _candidates(parts: Key, default_namespace: Key, default_catalog: str | None,
                ) -> list[Key]:
    """The keys a name may mean, in the order an engine tries them."""
    if len(parts) == 1:
        return [(*default_namespace, *parts)]
    if default_catalog and parts[0].lower() == default_catalog.lower():
        return [parts[1:], parts]
    return [parts]


def _used_columns(root: Scope, relations: dict[str, Relation]) -> dict[
        Key, tuple[tuple[tuple[str, str], ...], tuple[tuple[str, int], ...]]]:
    """Per relation read, the columns the SQL touches anywhere, with types
    and (tables) field ids."""
    used: dict[Key, set[str]] = {}
    for scope in root.traverse():
        for col in scope.columns:
            s: Scope | None = scope
            source = None
            while s is not None and source is None:
                source = s.sources.get(col.table)
                s = s.parent
            rel = relations.get(source.name) if isinstance(source, exp.Table) else None
            if rel is not None:
                used.setdefault(rel.key, set()).add(col.name)
    by_key = {r.key: r for r in relations.values()}
    out = {}
    for key, names in used.items():
        rel = by_key[key]
        types = dict(rel.columns)
        out[key] = (tuple(sorted((n, types.get(n, "")) for n in names)),
                    tuple(sorted((n, rel.ids[n]) for n in names if n in rel.ids)))
    return out


# -- 3. lineage ------------------------------------------------------------------------------
class _Tracer:
    def __init__(self, root: Scope, relations: dict[str, Relation],
                 deadline: Deadline | None = None) -> None:
        self.relations = relations
        self.scopes = {id(s.expression): s for s in root.traverse()}
        # Each output column of each scope is traced once: CTEs that read
        # several earlier ones would otherwise be traced once per path,
        # exponentially many.
        self.done: dict[tuple[int, int], Lineage] = {}
        self.deadline = deadline

    def position(self, scope: Scope, i: int) -> Lineage:
        """The lineage of output column ``i`` of ``scope``."""
        key = (id(scope.expression), i)
        hit = self.done.get(key)
        if hit is None:
            if self.deadline is not None and len(self.done) % 256 == 255:
                self.deadline.check("finishing the column lineage")
            hit = self.done[key] = self._position(scope, i)
        return hit

    def _position(self, scope: Scope, i: int) -> Lineage:
        if isinstance(scope.expression, exp.SetOperation):
            parts = [self.position(s, i) for s in scope.set_operation_scopes]
            return _merge(parts, derived=any(p.derived for p in parts))
        query = scope.expression
        assert isinstance(query, exp.Query)  # a scope with columns is a query
        return self.expression(scope, query.selects[i])

    def by_name(self, scope: Scope, name: str) -> Lineage:
        names = [s.alias_or_name for s in _first_select(scope.expression).selects]
        return self.position(scope, names.index(name))

    def expression(self, scope: Scope, node: exp.Expr) -> Lineage:
        inner = node.this if isinstance(node, exp.Alias) else node
        if isinstance(inner, exp.Column):
            return self.column(scope, inner)
        parts = [self.column(scope, c) for c in _value_columns(inner)]
        for sub in _value_subqueries(inner):
            sub_scope = self.scopes.get(id(sub))
            if sub_scope is not None:
                width = len(_first_select(sub_scope.expression).selects)
                parts += [self.position(sub_scope, j) for j in range(width)]
        return _merge(parts, derived=True)

    def column(self, scope: Scope, col: exp.Column) -> Lineage:
        source = None
        s: Scope | None = scope
        while s is not None and source is None:  # correlated: an outer scope's source
            source = s.sources.get(col.table)
            s = s.parent
        if isinstance(source, Scope):
            if isinstance(source.expression, exp.Query):
                return self.by_name(source, col.name)
            # A table function (UNNEST, a lateral view …): its columns come
            # from the values it is given, computed.
            inner = [c for c in source.expression.find_all(exp.Column) if c is not col]
            return _merge([self.column(scope, c) for c in inner], derived=True)
        if isinstance(source, exp.Table):
            rel = self.relations.get(source.name)
            if rel is None:
                return Lineage()
            if rel.kind == TABLE:
                return Lineage((Origin(rel.key, col.name),), False)
            lin = rel.lineage.get(col.name, Lineage((), True))
            return Lineage(tuple(Origin(o.table, o.column, (rel.key, *o.via))
                                 for o in lin.origins), lin.derived)
        return Lineage()


def _merge(parts: list[Lineage], derived: bool) -> Lineage:
    return Lineage(tuple(sorted({o for p in parts for o in p.origins})), derived)


def _value_columns(node: exp.Expr) -> Iterator[exp.Column]:
    """Columns whose values flow into ``node``'s value: not those that only
    order or partition a window, nor those inside nested queries."""
    if isinstance(node, exp.Column):
        yield node
        return
    if isinstance(node, exp.Query | exp.Subquery):
        return
    for key, child in node.args.items():
        if isinstance(node, exp.Window) and key in ("partition_by", "order"):
            continue
        for c in child if isinstance(child, list) else [child]:
            if isinstance(c, exp.Expr):
                yield from _value_columns(c)


def _value_subqueries(node: exp.Expr) -> Iterator[exp.Expr]:
    """The queries nested in a value expression (scalar subqueries, EXISTS)."""
    for sub in node.find_all(exp.Subquery, exp.Select):
        q = sub.this if isinstance(sub, exp.Subquery) else sub
        if q is not node:
            yield q


def _first_select(node: exp.Expr) -> exp.Select:
    while isinstance(node, exp.SetOperation | exp.Subquery):
        node = node.this if isinstance(node, exp.Subquery) else node.left
    assert isinstance(node, exp.Select)
    return node


# -- 4. the expanded text ----------------------------------------------------------------------
def _restore_names(tree: exp.Expr, relations: dict[str, Relation]) -> None:
    for table in tree.find_all(exp.Table):
        rel = relations.get(table.name)
        if rel is None:
            continue
        *ns, name = rel.key
        table.set("this", exp.to_identifier(name))
        table.set("db", exp.to_identifier(ns[-1]) if ns else None)
        # Deeper namespaces than sqlglot's catalog.db.table keep their levels
        # dotted in the catalog part, each level quoted where needed.
        table.set("catalog", exp.to_identifier(".".join(ns[:-1])) if len(ns) > 1 else None)


def _first_line(e: Exception) -> str:
    return str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
