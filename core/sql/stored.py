"""A view version's analysis as the catalog keeps it, in the view's content
value (so it is versioned, merged and time-travelled with the view)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from core.dialects import ColumnOrigin, FieldOrigin
from core.sql.model import TABLE, Analysis, Lineage, Origin

Status = Literal["ok", "invalid", "unanalysed"]


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="forbid")


class StoredDependency(_Model):
    key: list[str] = Field(min_length=1)
    content_id: str = Field(alias="contentId")
    type: Literal["ICEBERG_TABLE", "ICEBERG_VIEW", "MATERIALIZED_VIEW"]
    # The columns of it the SQL uses, with their types then (None: unknown;
    # absent rather than empty, so values without it keep their bytes).
    columns: dict[str, str] | None = None
    # Their Iceberg field ids (tables; None for values written before ids
    # were kept): a column renamed since is named as such, not as gone.
    field_ids: dict[str, int] | None = Field(None, alias="fieldIds")


class DialectAnalysis(_Model):
    """One SQL representation's analysis."""

    dialect: str
    # ok: analysed and compiles against its bases; invalid: analysed, but a
    # base is missing or changed (``reasons`` say how); unanalysed: sqlglot
    # could not read it (``reasons`` carry its message).
    status: Status
    reasons: list[str] = []
    dependencies: list[StoredDependency] = []
    unresolved: list[str] = []
    field_origins: list[FieldOrigin] = Field([], alias="fieldOrigins")

    def lineage(self) -> dict[str, Lineage]:
        return {f.name: Lineage(tuple(sorted(
                    Origin(tuple(o.table), o.column, tuple(tuple(k) for k in o.via or ()))
                    for o in f.origins)), f.derived)
                for f in self.field_origins}


def stored(a: Analysis, kinds: dict[tuple[str, ...], str] | None = None) -> DialectAnalysis:
    """``kinds`` gives each dependency's content type (default: from the
    analysis: tables are ICEBERG_TABLE, views ICEBERG_VIEW)."""
    if a.error is not None:
        return DialectAnalysis(dialect=a.dialect, status="unanalysed", reasons=[a.error])
    deps = [StoredDependency(key=list(d.key), content_id=d.content_id,
                             type=(kinds or {}).get(d.key) or (
                                 "ICEBERG_TABLE" if d.kind == TABLE else "ICEBERG_VIEW"),
                             columns=dict(d.columns) if d.columns else None,
                             field_ids=dict(d.ids) if d.ids else None)
            for d in a.dependencies]
    origins = [FieldOrigin(name=name, derived=lin.derived,
                           origins=[ColumnOrigin(table=list(o.table), column=o.column,
                                                 via=[list(k) for k in o.via] or None)
                                    for o in lin.origins])
               for name, lin in a.columns]
    return DialectAnalysis(dialect=a.dialect, status="invalid" if a.problems else "ok",
                           reasons=list(a.problems), dependencies=deps,
                           unresolved=list(a.unresolved), field_origins=origins)
