"""A view both sides of a merge gave a new version, merged dialect by dialect
(pure: no I/O; catalog.merge.content.views reads the files and writes the
result).

Per dialect, each side did one thing since the merge base: added SQL,
changed it, removed it, or left it as it was. A dialect only one side
touched takes that side's SQL; the same change on both sides is one. The
merged version is one new version on top of the target's (the view spec's
rules: an identical version's id is reused, else one past the highest; the
version-log records the instant the merge made it current).

Not combined, each with the reason and what each side did per dialect:
both sides touched a dialect differently; one side changed the query (the
SQL of a dialect the base had) while the other wrote SQL (added or changed
a dialect) for the query as it was — SQL of two different queries in one
version would say two things; or both sides changed the schema, the default
namespace or the default catalog differently."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pyiceberg.schema import Schema
from pyiceberg.view.metadata import ViewMetadata, ViewVersion

from core.views import (
    LAST_ADDED,
    AddSchema,
    AddViewVersion,
    SetCurrentViewVersion,
    apply_view_updates,
    current_version,
    sql_representations,
)

Side = Literal["source", "target"]
Action = Literal["added", "changed", "removed", "untouched"]
# How long a SQL text a one-line message quotes (the diff has it whole).
QUOTED = 60


def action(base: str | None, side: str | None) -> Action:
    """What a side did to one dialect's SQL since the merge base."""
    if side == base:
        return "untouched"
    if base is None:
        return "added"
    return "removed" if side is None else "changed"


@dataclass(frozen=True)
class DialectMerge:
    """One dialect's SQL at the merge base and on each side (None: none)."""

    dialect: str
    base: str | None
    source: str | None
    target: str | None

    def did(self, side: Side) -> Action:
        return action(self.base, self.source if side == "source" else self.target)

    @property
    def agreed(self) -> bool:
        """Both sides hold the same SQL (changed alike, or untouched)."""
        return self.source == self.target

    @property
    def clash(self) -> bool:
        """Both sides touched it, differently."""
        return not self.agreed and "untouched" not in (self.did("source"), self.did("target"))

    @property
    def taken(self) -> Side:
        """The side whose SQL the merged version has (the target's when they agree)."""
        return "source" if self.target == self.base and not self.agreed else "target"


@dataclass(frozen=True)
class VersionMerge:
    """The outcome: ``reasons`` empty means combinable, into ``version``
    (None: the kept side's version stands as it is), ``side`` saying whose
    version it is ("both": a new one with SQL of each)."""

    dialects: tuple[DialectMerge, ...]
    reasons: tuple[str, ...] = ()
    side: Literal["source", "target", "both"] = "target"
    version: ViewVersion | None = None
    schema: Schema | None = None
    taken: dict[str, Side] = field(default_factory=dict)

    def message(self) -> str:
        """One line: why not, and what each side did to each dialect in the
        conflict (``details`` has every dialect either side touched)."""
        cause = _cause(self.dialects)
        said = "; ".join(_said(d) for d in self.dialects if d.dialect in cause)
        return "; ".join(self.reasons) + (f" ({said})" if said else "")

    def details(self) -> dict[str, Any]:
        """The conflict's structured details: per dialect each side's action
        and whether it is part of the conflict, the SQL of each, and a
        unified diff (target to source) per dialect whose SQL differs."""
        cause = _cause(self.dialects)
        return {
            "reasons": list(self.reasons),
            "dialects": {d.dialect: {"target": d.did("target"), "source": d.did("source"),
                                     "conflict": d.dialect in cause}
                         for d in self.dialects if d.base not in (d.source, d.target)
                         or d.source != d.target},
            "sql": {side: {d.dialect: text for d in self.dialects
                           if (text := getattr(d, side)) is not None}
                    for side in ("base", "target", "source")},
            "sqlDiff": {d.dialect: sql_diff(d) for d in self.dialects if not d.agreed},
        }


def sql_diff(d: DialectMerge) -> str:
    """A unified diff from the target's SQL of a dialect to the source's
    (what taking the source's change would do)."""
    return "\n".join(difflib.unified_diff(
        (d.target or "").splitlines(), (d.source or "").splitlines(), lineterm="",
        fromfile=f"target/{d.dialect}" if d.target is not None else "/dev/null",
        tofile=f"source/{d.dialect}" if d.source is not None else "/dev/null"))


def _quote(sql: str) -> str:
    one = " ".join(sql.split())
    return "'" + (one if len(one) <= QUOTED else one[:QUOTED - 1] + "…") + "'"


def _did(d: DialectMerge, side: Side) -> str:
    text = d.source if side == "source" else d.target
    what = d.did(side)
    if what == "added":
        return f"the {side} added {_quote(text or '')}"
    if what == "changed":
        return f"the {side} changed it to {_quote(text or '')}"
    if what == "removed":
        return f"the {side} removed it"
    return f"the {side} " + ("left it as it was" if d.base is not None else "has none")


def _said(d: DialectMerge) -> str:
    return f"{d.dialect}: {_did(d, 'target')}, {_did(d, 'source')}"


def _changed(dialects: tuple[DialectMerge, ...], side: Side) -> list[str]:
    """The dialects whose SQL ``side`` alone changed (the other side left it)."""
    return [d.dialect for d in dialects
            if not d.agreed and not d.clash and d.did(side) == "changed"]


def _written(dialects: tuple[DialectMerge, ...], side: Side) -> list[str]:
    """The dialects ``side`` alone wrote SQL for (added or changed)."""
    return [d.dialect for d in dialects
            if not d.agreed and not d.clash and d.did(side) in ("added", "changed")]


def _stale(dialects: tuple[DialectMerge, ...]) -> list[tuple[Side, list[str], list[str]]]:
    """(side, dialects whose query it changed, the other side's SQL written
    for the query as it was), for each side that changed the query while
    the other wrote SQL."""
    out: list[tuple[Side, list[str], list[str]]] = []
    sides: tuple[tuple[Side, Side], ...] = (("source", "target"), ("target", "source"))
    for side, other in sides:
        changed = _changed(dialects, side)
        written = _written(dialects, other)
        if changed and written:
            out.append((side, changed, written))
    return out


def _cause(dialects: tuple[DialectMerge, ...]) -> set[str]:
    cause = {d.dialect for d in dialects if d.clash}
    for _side, changed, written in _stale(dialects):
        cause.update(changed, written)
    return cause


def _names(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def dialect_reasons(dialects: tuple[DialectMerge, ...]) -> list[str]:
    """Why the dialects' SQL cannot be combined (empty: it can)."""
    out = []
    clash = [d.dialect for d in dialects if d.clash]
    if clash:
        out.append(f"both sides gave {_names(clash)} different SQL")
    stale = _stale(dialects)
    if len(stale) == 2:
        by = dict((side, changed) for side, changed, _ in stale)
        out.append("each side changed the query in another dialect (the target "
                   f"{_names(by['target'])}, the source {_names(by['source'])})")
    for side, changed, written in stale[:1] if len(stale) == 1 else ():
        other = "target" if side == "source" else "source"
        out.append(f"the {side} changed the query ({_names(changed)}) while the {other} "
                   f"wrote SQL for the query as it was ({_names(written)})")
    return out


def _schema(meta: ViewMetadata, v: ViewVersion) -> Schema:
    return next(s for s in meta.schemas if s.schema_id == v.schema_id)


def _same_schema(a: Schema, b: Schema) -> bool:
    return a.fields == b.fields and a.identifier_field_ids == b.identifier_field_ids


def _sql(v: ViewVersion) -> dict[str, str]:
    return {r.dialect.lower(): r.sql for r in sql_representations(v)}


def _three_way(base: Any, source: Any, target: Any, same: Any = None) -> tuple[Any, bool]:
    """(the merged value, whether both sides changed it differently)."""
    eq = same or (lambda a, b: a == b)
    if eq(source, target) or eq(source, base):
        return target, False
    if eq(target, base):
        return source, False
    return target, True


def merge_versions(base: ViewMetadata, source: ViewMetadata, target: ViewMetadata,
                   ) -> VersionMerge:
    """Both sides' current versions, merged dialect by dialect against the
    base's; the version the view gets, or why it cannot."""
    vb, vs, vt = (current_version(m) for m in (base, source, target))
    sb, ss, st = _sql(vb), _sql(vs), _sql(vt)
    dialects = tuple(DialectMerge(d, sb.get(d), ss.get(d), st.get(d))
                     for d in sorted(set(sb) | set(ss) | set(st)))
    reasons = dialect_reasons(dialects)
    schema, schemas_clash = _three_way(_schema(base, vb), _schema(source, vs),
                                       _schema(target, vt), _same_schema)
    if schemas_clash:
        reasons.append("both sides changed the view's schema differently")
    ns, ns_clash = _three_way(list(vb.default_namespace), list(vs.default_namespace),
                              list(vt.default_namespace))
    if ns_clash:
        reasons.append(f"both sides changed the default namespace differently "
                       f"({'.'.join(vt.default_namespace)} on the target, "
                       f"{'.'.join(vs.default_namespace)} on the source)")
    cat, cat_clash = _three_way(vb.default_catalog, vs.default_catalog, vt.default_catalog)
    if cat_clash:
        reasons.append(f"both sides changed the default catalog differently "
                       f"({vt.default_catalog} on the target, {vs.default_catalog} on the "
                       "source)")
    if reasons:
        return VersionMerge(dialects, tuple(reasons))
    taken = {d.dialect: d.taken for d in dialects
             if (d.source if d.taken == "source" else d.target) is not None}
    merged_sql = {d: (ss if side == "source" else st)[d] for d, side in taken.items()}

    def same_as(v: ViewVersion, meta: ViewMetadata) -> bool:
        return (_sql(v) == merged_sql and _same_schema(_schema(meta, v), schema)
                and list(v.default_namespace) == ns and v.default_catalog == cat)

    if same_as(vt, target):
        return VersionMerge(dialects, side="target", taken=taken)
    if same_as(vs, source):
        return VersionMerge(dialects, side="source", version=vs, schema=schema, taken=taken)
    # The target's representations in their order, then the source's new ones.
    reps = [r for r in vt.representations
            if taken.get(_dialect(r)) == "target"]
    reps += [r for r in vs.representations if taken.get(_dialect(r)) == "source"]
    reps.sort(key=lambda r: _order(r, vt, vs))
    version = vt.model_copy(update={"representations": reps, "default_namespace": ns,
                                    "default_catalog": cat})
    return VersionMerge(dialects, side="both", version=version, schema=schema, taken=taken)


def _dialect(r: object) -> str:
    return str(getattr(r, "root", r).dialect).lower()  # type: ignore[attr-defined]


def _order(r: object, vt: ViewVersion, vs: ViewVersion) -> tuple[int, int]:
    """The target's dialects where the target has them, then the source's."""
    d = _dialect(r)
    for n, v in enumerate((vt, vs)):
        names = [_dialect(x) for x in v.representations]
        if d in names:
            return n, names.index(d)
    return 2, 0


def with_version(target: ViewMetadata, merged: VersionMerge, properties: Mapping[str, str],
                 now_ms: int) -> ViewMetadata:
    """The target's metadata with the merged properties and, when the merge
    made one, the merged version added and made current (the view spec's
    ids and version-log; core.views applies it). A version that drops a
    dialect the target's had is refused as any replace is (InvalidInputError)
    unless the view allows it."""
    meta = target.model_copy(update={"properties": dict(properties)})
    if merged.version is None or merged.schema is None:
        return meta
    # A new version was made now; the source's keeps the instant it was made.
    made = merged.version.timestamp_ms if merged.side == "source" else now_ms
    return apply_view_updates(meta, [
        AddSchema(schema_=merged.schema),
        AddViewVersion(view_version=merged.version.model_copy(update={
            "schema_id": LAST_ADDED, "timestamp_ms": made})),
        SetCurrentViewVersion(view_version_id=LAST_ADDED)], now_ms)
