"""Iceberg tables: metadata through PyIceberg's own model and update logic,
one ICEBERG_TABLE content value per table on the branch.

A kernel module: what it needs of the features above it — a materialized
view's storage answered as a table, the views a schema change would break
— it is given by the wiring (catalog/services.py), not imported."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.table.update import AssertCreate, SetLocationUpdate

from catalog.commands import Loaded, NewTable, ReadOptions, Registration, TableCommit
from catalog.iceberg_v3.metadata import dump
from catalog.kernel import (
    Catalog,
    Change,
    Who,
    adopted,
    refuse_clash,
    require_namespace,
)
from catalog.metadata.claims import claims, moved
from catalog.metadata.engine_gc import (
    answer_key,
    create_properties,
    refuse_turning_on,
    served,
)
from catalog.metadata.locations import spelled
from catalog.metadata.referenced_snapshots import referenced_only
from catalog.metadata.table_updates import apply, check_requirements, fresh
from catalog.metadata.update_values import refuse_server_summaries
from catalog.targets import Target, dotted, target
from core.commits import Operation, Put, ResolvedRef
from core.content import Content, ContentType, IcebergTable, MaterializedView
from core.errors import bad_request, no_such_table
from core.keys import ContentKey
from core.refs import RefSpec
from store.locations import Claim


def table_content(meta: TableMetadata, location: str, content_id: str | None) -> IcebergTable:
    return IcebergTable(id=content_id, metadata_location=location,
                        snapshot_id=meta.current_snapshot_id if meta.current_snapshot_id
                        is not None else -1,
                        schema_id=meta.current_schema_id, spec_id=meta.default_spec_id,
                        sort_order_id=meta.default_sort_order_id)


class Materialized(Protocol):
    """Materialized views (catalog.mviews.mviews.MaterializedViews): one
    answers loadTable with its storage when its stored rows may be read."""

    def load_table(self, t: Target, resolved: ResolvedRef, c: MaterializedView,
                   options: ReadOptions) -> Loaded: ...


# Refuses (409) a commit whose tables' new current schemas would break a view
# in a strict namespace, at the head the commit is planned against
# (catalog.views.invalidation.check_schema_changes): each changed table's
# value now and the one about to be written.
SchemaCheck = Callable[[Catalog, ResolvedRef, Mapping[ContentKey, tuple[Content, Content]]],
                       None]


class Tables:
    def __init__(self, catalog: Catalog, check_schema_changes: SchemaCheck,
                 materialized: Materialized | None = None) -> None:
        self.catalog = catalog
        self.files = catalog.files
        self.check_schema_changes = check_schema_changes
        # Materialized views answer loadTable with their storage when fresh.
        self.materialized = materialized

    # -- reads --------------------------------------------------------------------
    def current(self, t: Target) -> IcebergTable:
        c = self.catalog.get(t.ref, t.key)
        if not isinstance(c, IcebergTable):
            raise no_such_table(t.name)
        return c

    def load(self, t: Target, snapshots: str | None = None,
             options: ReadOptions | None = None) -> Loaded:
        """``snapshots="refs"``: only the snapshots a ref names
        (catalog.metadata.referenced_snapshots)."""
        resolved, found = self.catalog.read(t.ref, [t.key])
        c = found.get(t.key)
        if isinstance(c, MaterializedView) and self.materialized is not None:
            return self.materialized.load_table(t, resolved, c, options or ReadOptions())
        if not isinstance(c, IcebergTable):
            raise no_such_table(t.name)
        loc = c.metadata_location
        meta, data = self.files.table(loc)
        if snapshots == "refs":
            key = f"{answer_key(loc)}#snapshots=refs"
            # Written once per file, as the full answer is (the file never changes).
            trimmed = self.files.encoded.get(key)
            if trimmed is None:
                kept = referenced_only(meta)
                if kept is not meta:  # else the same answer as all of them
                    trimmed = dump(kept)
                    self.files.encoded.put(key, trimmed)
            if trimmed is not None:
                return Loaded(loc, trimmed, cache_key=key)
        return Loaded(loc, data, cache_key=answer_key(loc))

    # -- writes -------------------------------------------------------------------
    def create(self, ref: RefSpec, ns: ContentKey, req: NewTable, who: Who) -> Loaded:
        # A name may carry its own branch (``t@etl``), as it may for reads.
        t = target(ref, ns, req.name)
        ref, key = t.ref, t.key
        props = create_properties(t.name, req.properties)
        location = (spelled(self.catalog.locations.check(req.location), req.location)
                    if req.location else self.catalog.locations.default(ns.elements, key.name))
        meta = fresh(req.schema, req.partition_spec or UNPARTITIONED_PARTITION_SPEC,
                     req.write_order or UNSORTED_SORT_ORDER, location, props)
        if req.stage_create:
            # Nothing is written: the client commits it later with assert-create.
            self._check_free(ref, key, ns)
            return Loaded(None, dump(meta))

        def plan(found: dict[ContentKey, Content]) -> Change[Loaded]:
            require_namespace(found, ns)
            refuse_clash(found, key, ContentType.ICEBERG_TABLE)
            loc = self.catalog.metadata_file(meta.location, meta.properties, None)
            data = self.files.write_table(meta, loc)
            return Change([Put(key, table_content(meta, loc, None))],
                          f"create table {dotted(key)}", Loaded(loc, data, answer_key(loc)),
                          [loc],
                          claims(key, meta.location, meta.properties))

        return self.catalog.write(ref, [key, ns], who, plan)

    def _check_free(self, ref: RefSpec, key: ContentKey, ns: ContentKey) -> None:
        _, found = self.catalog.read(ref, [key, ns])
        require_namespace(found, ns)
        refuse_clash(found, key, ContentType.ICEBERG_TABLE)

    def commit(self, t: Target, req: TableCommit, who: Who) -> Loaded:
        return self.commit_many(t.ref, [(t.key, req)], who.through(lambda loaded: loaded[0]))[0]

    def commit_many(self, ref: RefSpec, changes: Sequence[tuple[ContentKey, TableCommit]],
                    who: Who) -> list[Loaded]:
        """Apply every table's requirements and updates; one commit for all."""
        keys = [k for k, _ in changes]
        if len(set(keys)) != len(keys):
            raise bad_request("A transaction may change each table only once")
        namespaces = list({k.parent for k in keys})

        def plan(head: ResolvedRef, found: dict[ContentKey, Content]) -> Change[list[Loaded]]:
            ops: list[Operation] = []
            bodies: list[Loaded] = []
            files: list[str] = []
            taken: list[Claim] = []
            try:
                for key, req in changes:
                    op, loc, data = self._apply(found, key, req)
                    if op is not None:
                        ops.append(op)
                        files.append(loc)
                        taken += self._claims(key, op)
                    bodies.append(Loaded(loc, data, answer_key(loc)))
                # Inside the plan: a retry re-checks the views at its new head.
                self.check_schema_changes(self.catalog, head, {
                    o.key: (o.expected, o.content) for o in ops
                    if isinstance(o, Put) and isinstance(o.expected, IcebergTable)
                    and isinstance(o.content, IcebergTable)
                    and o.content.schema_id != o.expected.schema_id})
            except BaseException:
                for f in files:
                    self.files.discard(f)
                raise
            verb = "create" if all(isinstance(o, Put) and o.expected is None for o in ops) \
                else "update"
            message = (f"{verb} table {dotted(keys[0])}" if len(keys) == 1 else
                       "update tables " + ", ".join(dotted(k) for k in keys))
            return Change(ops, message, bodies, files, taken)

        return self.catalog.write_at(ref, [*keys, *namespaces], who, plan)

    def _claims(self, key: ContentKey, op: Operation) -> list[Claim]:
        """The locations a table commit gives the table, when it moves it (a
        create, set-location, a write.*.path property)."""
        if not isinstance(op, Put):
            return []
        if not isinstance(op.content, IcebergTable):
            return []
        new = self.files.table(op.content.metadata_location)[0]
        old = (self.files.table(op.expected.metadata_location)[0]
               if isinstance(op.expected, IcebergTable) else None)
        after = (new.location, new.properties)
        if not moved((old.location, old.properties) if old else None, after):
            return []
        return claims(key, *after)

    def _apply(self, found: dict[ContentKey, Content], key: ContentKey,
               req: TableCommit) -> tuple[Operation | None, str, bytes]:
        cur = found.get(key)
        creating = any(isinstance(r, AssertCreate) for r in req.requirements)
        if cur is None and not creating:
            raise no_such_table(dotted(key))
        if isinstance(cur, MaterializedView) and not creating:
            raise bad_request(f"{dotted(key)} is a materialized view: its storage is written "
                              "by a refresh (a commit with the Sapwood-Refresh header through "
                              "a catalog pinned at branch@hash)")
        if cur is not None and not isinstance(cur, IcebergTable):
            if creating:
                refuse_clash(found, key, ContentType.ICEBERG_TABLE)
            raise no_such_table(dotted(key))
        if cur is None:
            require_namespace(found, key.parent)
            base, base_loc = None, None
        else:
            base, base_loc = self.files.table(cur.metadata_location)[0], cur.metadata_location
        check_requirements(base, req.requirements)
        if cur is not None and base_loc is not None and not req.updates:
            return None, base_loc, self.files.table(base_loc)[1]
        refuse_turning_on(dotted(key), req.updates)
        refuse_server_summaries(req.updates)
        # Iceberg's metadata builder's rules, PyIceberg's update logic.
        new = served(apply(base, req.updates, base_loc))
        if base is None or any(isinstance(u, SetLocationUpdate) for u in req.updates):
            # The caller's spelling of the location the check passed.
            checked = spelled(self.catalog.locations.check(new.location), new.location)
            if checked != new.location:
                new = new.model_copy(update={"location": checked})
        loc = self.catalog.metadata_file(new.location, new.properties, base_loc)
        data = self.files.write_checked(dotted(key), req.updates, base, new, loc,
                                        self.files.table(base_loc)[1] if base_loc else None)
        content = table_content(new, loc, cur.id if cur else None)
        return Put(key, content, expected=cur), loc, data

    def register(self, ref: RefSpec, ns: ContentKey, req: Registration, who: Who) -> Loaded:
        t, location, (meta, data), taken = adopted(self.catalog, ref, ns, req, "table",
                                                   self.files.table)
        self.files.require_registered(t.name, meta)

        def plan(found: dict[ContentKey, Content]) -> Change[Loaded]:
            require_namespace(found, ns)
            cur = found.get(t.key)
            if cur is not None and not (req.overwrite and isinstance(cur, IcebergTable)):
                refuse_clash(found, t.key, ContentType.ICEBERG_TABLE)
            content = table_content(meta, location, cur.id if cur else None)
            # Answered only once it landed: the claims are checked in its commit.
            return Change([Put(t.key, content, expected=cur)], f"register table {t.name}",
                          Loaded(location, data, answer_key(location)), claims=taken)

        return self.catalog.write(t.ref, [t.key, ns], who, plan)

    def transaction(self, ref: RefSpec, changes: Sequence[tuple[ContentKey, TableCommit]],
                    who: Who) -> None:
        self.commit_many(ref, changes, who)
