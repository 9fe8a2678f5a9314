"""Analysing a view version where it is written: the resolver that tells
core.sql what a name is at the ref (columns from the table's or view's
metadata file, a view's own lineage from its content value), and the
analysis and frozen text that go into the view's content value."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence

from pyiceberg.view.metadata import ViewMetadata

from catalog.kernel import Catalog
from catalog.targets import dotted
from core.content import Content, IcebergTable, IcebergView, MaterializedView
from core.dialects import HiveExtension
from core.errors import SapwoodError, bad_request
from core.keys import ContentKey
from core.refs import RefSpec
from core.sql.analysis import TABLE, VIEW, Key, Relation, analyze
from core.sql.budget import Deadline
from core.sql.stored import DialectAnalysis, stored
from core.views import current_version, sql_representations


class Resolver:
    """Names at one commit (the head the write plans against), each key
    looked up once: ``many`` asks the store for all of an analysis's names in
    one lookup; calling it asks for one. ``overlay`` answers for some keys
    instead of the commit (None: nothing there), as a merge would leave
    them; ``contents`` keeps what each key found holds."""

    def __init__(self, catalog: Catalog, ref: RefSpec | str,
                 overlay: Mapping[ContentKey, Content | None] | None = None) -> None:
        self.catalog = catalog
        self.ref = ref
        self.kinds: dict[Key, str] = {}
        self.contents: dict[Key, Content] = {}
        self.overlay = overlay or {}
        self._seen: dict[Key, Relation | None] = {}
        self._at: str | None = None  # the commit, resolved once: one snapshot

    def __call__(self, key: Key) -> Relation | None:
        return self.many([key]).get(key)

    def known(self, key: Key) -> Relation | None:
        """What ``many`` found at ``key`` (None: nothing, or not asked)."""
        return self._seen.get(key)

    def many(self, keys: Sequence[Key]) -> dict[Key, Relation]:
        wanted: dict[ContentKey, Key] = {}
        for key in keys:
            if key in self._seen:
                continue
            try:
                wanted[ContentKey(key)] = key
            except Exception:  # not a valid key: it names nothing
                self._seen[key] = None
        if wanted:
            stored = [ck for ck in wanted if ck not in self.overlay]
            found: dict[ContentKey, Content] = {}
            if stored:
                if self._at is None:
                    self._at = f"@{self.catalog.store.resolve(self.ref).hash}"
                found = self.catalog.store.lookup(self._at, stored)[1]
            for ck, key in wanted.items():
                c = self.overlay[ck] if ck in self.overlay else found.get(ck)
                rel = relation(self.catalog, key, c) if c is not None and c.id else None
                if rel is not None:
                    self.kinds[key] = c.type  # type: ignore[union-attr]
                    self.contents[key] = c  # type: ignore[assignment]
                self._seen[key] = rel
        return {k: r for k in keys if (r := self._seen.get(k)) is not None}


def relation(catalog: Catalog, key: Key, c: Content) -> Relation | None:
    files = catalog.files
    if isinstance(c, IcebergTable):
        schema = files.table(c.metadata_location)[0].schema()
        return Relation(key, c.id or "", TABLE,
                        tuple((f.name, str(f.field_type)) for f in schema.fields),
                        ids={f.name: f.field_id for f in schema.fields})
    if isinstance(c, IcebergView | MaterializedView):
        return view_relation(key, c, files.view_of(c))
    return None


def view_relation(key: Key, c: IcebergView | MaterializedView, meta: ViewMetadata,
                  ) -> Relation:
    """What a view is to the views that read it: its current version's
    columns, and their lineage from its analysis."""
    version = current_version(meta)
    schema = next(s for s in meta.schemas if s.schema_id == version.schema_id)
    lineage = {}
    for a in c.analysis or []:
        if a.status == "ok":
            lineage = a.lineage()
            break
    return Relation(key, c.id or "", VIEW,
                    tuple((f.name, str(f.field_type)) for f in schema.fields), lineage)


def enabled() -> bool:
    """SAPWOOD_VIEW_ANALYSIS=0 stores views without analysing them (the
    benchmark's baseline, and an operator's way out should sqlglot misbehave).
    Read when used, never at import: a setting belongs to the process that
    serves, not to whoever imported the module first."""
    return os.environ.get("SAPWOOD_VIEW_ANALYSIS", "1").lower() not in ("0", "false", "off")


def analyse_version(catalog: Catalog, ref: RefSpec | str, meta: ViewMetadata,
                    deadline: Deadline | None = None,
                    overlay: Mapping[ContentKey, Content | None] | None = None,
                    ) -> tuple[list[DialectAnalysis] | None, dict[str, HiveExtension]]:
    """Every SQL representation of the current version, analysed at ``ref``
    within one time budget (``deadline``: the request's, when it analyses
    more); and Hive's frozen definition (original and expanded text) of the
    first one that could be expanded. (None, {}) when analysis is switched off.
    ``overlay``: keys that hold something else than at ``ref`` (an imported
    commit's other changes, catalog.imports)."""
    if not enabled():
        return None, {}
    version = current_version(meta)
    resolve = Resolver(catalog, ref, overlay)
    default_ns = tuple(version.default_namespace or ())
    out: list[DialectAnalysis] = []
    hive: dict[str, HiveExtension] = {}
    reps = sql_representations(version)
    deadline = deadline or Deadline()  # one budget for all the representations
    for rep in reps:
        a = analyze(rep.sql, rep.dialect.lower(), default_ns, resolve.many,
                    version.default_catalog, deadline=deadline)
        out.append(stored(a, resolve.kinds))
        if a.expanded_sql and not hive:
            hive["hive"] = HiveExtension(original_text=rep.sql, expanded_text=a.expanded_sql)
    return out, hive


Lookup = Callable[[list[ContentKey]], dict[ContentKey, Content]]


def find_cycle(catalog: Catalog, ref: RefSpec | str, key: ContentKey,
               analyses: list[DialectAnalysis] | None,
               lookup: Lookup | None = None) -> list[ContentKey] | None:
    """The path by which a view at ``key`` with these analyses would read
    itself (``[key, b, …, key]``), following the other views' recorded
    dependencies at ``ref`` (or as ``lookup`` finds them: a merge's result);
    None when there is no such path."""
    if lookup is None:
        def lookup(keys: list[ContentKey]) -> dict[ContentKey, Content]:
            return catalog.store.lookup(ref, keys)[1]

    parents: dict[ContentKey, ContentKey] = {}
    frontier = [(key, d) for a in analyses or [] for d in a.dependencies]
    seen: set[ContentKey] = set()
    while frontier:
        wanted: list[tuple[ContentKey, ContentKey]] = []
        for parent, dep in frontier:
            k = ContentKey(dep.key)
            if k == key:
                path = [parent]
                while path[-1] != key:
                    path.append(parents[path[-1]])
                return [key, *reversed(path[:-1]), key] if parent != key else [key, key]
            if k not in seen and dep.type != "ICEBERG_TABLE":
                seen.add(k)
                parents[k] = parent
                wanted.append((parent, k))
        found = lookup([k for _, k in wanted]) if wanted else {}
        frontier = [(k, d) for _, k in wanted
                    for a in (getattr(found.get(k), "analysis", None) or [])
                    for d in a.dependencies]
    return None


def with_analysis(catalog: Catalog, ref: RefSpec | str, key: ContentKey, c: Content,
                  deadline: Deadline | None = None) -> Content:
    """A view content value sent by a client (a versioning-API commit),
    analysed here like one written through the Iceberg API; other content is
    returned as it is. A metadata file the server may not or cannot read
    leaves the view unanalysed, saying why: the commit itself is the client's
    business (it may well point at files only its engine can reach)."""
    if not enabled() or not isinstance(c, IcebergView | MaterializedView):
        return c
    try:
        catalog.locations.check(c.metadata_location)
        meta = catalog.files.view_of(c)
    except SapwoodError as e:
        why = f"the metadata file cannot be read here: {e.message}"
        return c.model_copy(update={"analysis": [DialectAnalysis(
            dialect="", status="unanalysed", reasons=[why])]})
    found, hive = analyse_version(catalog, ref, meta, deadline)
    cycle = find_cycle(catalog, ref, key, found)
    if cycle:
        raise bad_request(f"View {key} would read itself: "
                          + " → ".join(str(k) for k in cycle))
    return c.model_copy(update={"analysis": found, "extensions": {**c.extensions, **hive}})


def refuse_cycle(catalog: Catalog, ref: RefSpec, key: ContentKey,
                 analyses: list[DialectAnalysis] | None) -> None:
    cycle = find_cycle(catalog, ref, key, analyses)
    if cycle:
        raise bad_request(f"View {dotted(key)} would read itself: "
                          + " → ".join(dotted(k) for k in cycle))
