"""The values view analysis works with: what a name resolves to, where a
column comes from, and the analysis itself. Plain data, no sqlglot, so that
the content model (core.content keeps analyses in view values) loads without
the SQL machinery."""

from __future__ import annotations

from dataclasses import dataclass, field

Key = tuple[str, ...]
TABLE, VIEW = "table", "view"


@dataclass(frozen=True, slots=True, order=True)
class Origin:
    """One base-table column, and the views its value passes through on the
    way (``via``: the one the SQL names first; empty when the SQL reads the
    table itself). Redaction needs the way, not only the end: an answer
    about a view stops at the first object on it the reader may not read
    (core.redact)."""

    table: Key
    column: str
    via: tuple[Key, ...] = ()

    def dotted(self) -> str:
        return ".".join((*self.table, self.column))


@dataclass(frozen=True, slots=True)
class Lineage:
    """Where one output column's value comes from: base-table columns, and
    whether any step computes it (``derived``) rather than passing it on."""

    origins: tuple[Origin, ...] = ()
    derived: bool = False


@dataclass(frozen=True, slots=True)
class Relation:
    """What a name resolved to at the ref: the caller's answer to ``resolve``."""

    key: Key
    content_id: str
    kind: str  # TABLE or VIEW
    columns: tuple[tuple[str, str], ...]  # (name, type), in order
    # For a view: the lineage of each of its columns, down to base tables.
    lineage: dict[str, Lineage] = field(default_factory=dict)
    # For a table: the Iceberg field id of each column, which survives a
    # rename (so a renamed column is told from a dropped one).
    ids: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Dependency:
    key: Key
    content_id: str
    kind: str
    # Every column of it the SQL uses (selected, filtered, joined on …), with
    # the type it had: what a later change of the object must keep.
    columns: tuple[tuple[str, str], ...] = ()
    # Their Iceberg field ids, where the object is a table.
    ids: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Analysis:
    dialect: str
    # Set when the SQL could not be analysed at all (the view is kept,
    # marked unanalysed with this message).
    error: str | None = None
    dependencies: tuple[Dependency, ...] = ()
    # Names read that resolve to nothing at this ref.
    unresolved: tuple[str, ...] = ()
    # Why the definition does not compile against its bases here (a column
    # that is gone, say); empty when it does.
    problems: tuple[str, ...] = ()
    expanded_sql: str | None = None
    columns: tuple[tuple[str, Lineage], ...] = ()
    # Output column types in the dialect's spelling, when asked for (recompile).
    types: tuple[str | None, ...] = ()

    @property
    def analysed(self) -> bool:
        return self.error is None
