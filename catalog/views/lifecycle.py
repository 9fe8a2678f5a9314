"""Renaming, dropping and unregistering tables and views: one commit each,
checked against the views that read them (strict mode refuses, lenient
leaves them invalid, CASCADE drops them too: catalog.views.invalidation)."""

from __future__ import annotations

from collections.abc import Callable

from catalog.commands import Loaded
from catalog.kernel import KIND, Catalog, Change, Who, require_namespace
from catalog.metadata.claims import places
from catalog.metadata.engine_gc import answer_key
from catalog.metadata.locations import split, under
from catalog.targets import Target, dotted
from catalog.views.invalidation import plan_drop, plan_rename
from core.commits import Delete, Put, ResolvedRef
from core.content import Content, ContentType, IcebergTable
from core.errors import already_exists, bad_request, no_such_table, no_such_view
from core.keys import ContentKey
from core.refs import RefSpec
from core.sql.invalidation import INVALIDATED, invalidated_text


def rename(catalog: Catalog, ref: RefSpec, src: ContentKey, dst: ContentKey, kind: ContentType,
           who: Who) -> None:
    """Rename a table or view (across namespaces too): one commit that deletes
    the old key and puts the same content, same id, under the new one."""
    if src == dst:
        raise bad_request(f"Cannot rename {dotted(src)} to itself")
    missing = no_such_table if kind == ContentType.ICEBERG_TABLE else no_such_view
    ns = dst.namespace
    if ns is None:
        raise bad_request(f"Cannot rename {dotted(src)} to {dotted(dst)}: no namespace")

    def plan(head: ResolvedRef, found: dict[ContentKey, Content]) -> Change[None]:
        cur = found.get(src)
        if cur is None or KIND[cur.type] != KIND[kind]:
            raise missing(dotted(src))
        taken = found.get(dst)
        if taken is not None:
            raise already_exists(f"Cannot rename {dotted(src)} to {dotted(dst)}. "
                                 f"{KIND[taken.type]} already exists")
        require_namespace(found, ns)
        # Inside the plan: a retry re-checks the dependents at its new head.
        plan_rename(catalog, head, src, dst, KIND[kind].lower())
        return Change([Delete(src, expected=cur), Put(dst, cur)],
                      f"rename {KIND[kind].lower()} {dotted(src)} to {dotted(dst)}", None)

    catalog.write_at(ref, [src, dst, ns], who, plan)


def drop(catalog: Catalog, t: Target, kind: ContentType, who: Who, cascade: bool = False,
         require: Callable[[ContentKey], None] | None = None,
         also: tuple[ContentType, ...] = ()) -> None:
    """Drop a table or view. ``purgeRequested`` removes no files: other branches
    and older commits may still point at them; reclaiming them is garbage
    collection's job. The views that read it are checked (strict mode) or,
    with ``cascade``, dropped in the same commit (docs/views.md). ``also``:
    other content types the name may hold (a view route drops a
    materialized view too, its storage with it)."""
    missing = no_such_table if kind == ContentType.ICEBERG_TABLE else no_such_view

    def plan(head: ResolvedRef, found: dict[ContentKey, Content]) -> Change[None]:
        cur = found.get(t.key)
        if cur is None or (cur.type != kind and cur.type not in also):
            raise missing(t.name)
        what = ("materialized view" if cur.type == ContentType.MATERIALIZED_VIEW
                else KIND[kind].lower())
        # Inside the plan: a retry re-checks the dependents at its new head.
        extra, broken = plan_drop(catalog, head, t.key, what, cascade, require)
        message = f"drop {what} {t.name}" + (f" cascade ({len(extra)} views)" if cascade else "")
        # The views it leaves invalid, recorded with it: what the drop broke
        # stays answerable (the log, the change feed) once the name is gone.
        props = {INVALIDATED: invalidated_text(broken)} if broken else {}
        return Change([Delete(t.key, expected=cur), *extra], message, None, properties=props)

    catalog.write_at(t.ref, [t.key], who, plan)


def unregister(catalog: Catalog, t: Target, who: Who,
               require: Callable[[ContentKey], None] | None = None) -> Loaded:
    """The spec's unregisterTable: the table leaves the branch in one commit
    (``unregister table ns.t``, a DELETE in the change feed like a drop's,
    checked against the views that read it as a drop is) and no file is
    touched; the answer is its last metadata file. Only a table that lives
    outside the warehouse: ``sapwood gc`` deletes every warehouse file no
    retained commit references, so a table handed to another catalog from
    inside it would lose each file that catalog writes there, and the rest
    once the commits that held it are let go (docs/iceberg-rest.md)."""

    def plan(head: ResolvedRef, found: dict[ContentKey, Content]) -> Change[Loaded]:
        cur = found.get(t.key)
        if not isinstance(cur, IcebergTable):
            raise no_such_table(t.name)
        loc = cur.metadata_location
        meta, data = catalog.files.table(loc)
        root = catalog.locations.root
        for place in places(meta.location, meta.properties):
            where = split(place)
            if under(where, root) or under(root, where):
                raise bad_request(
                    f"Cannot unregister table {t.name}: it lives in the warehouse "
                    f"({catalog.locations.warehouse}), where sapwood gc deletes every file "
                    "no retained commit of this catalog references, so another catalog "
                    "could not keep its files there; only a table outside the warehouse "
                    "can be handed over")
        _, broken = plan_drop(catalog, head, t.key, "table", False, require)
        props = {INVALIDATED: invalidated_text(broken)} if broken else {}
        return Change([Delete(t.key, expected=cur)], f"unregister table {t.name}",
                      Loaded(loc, data, answer_key(loc)), properties=props)

    return catalog.write_at(t.ref, [t.key], who, plan)
