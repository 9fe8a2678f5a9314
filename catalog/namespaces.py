"""Namespaces: NAMESPACE content values on the branch, properties included."""

from __future__ import annotations

from collections.abc import Callable

from catalog.kernel import Catalog, Change, Who, refuse_clash, require_namespace
from catalog.targets import dotted
from core.commits import Delete, Put
from core.content import Content, ContentType, Namespace
from core.errors import (
    AlreadyExistsError,
    NamespaceNotEmptyError,
    UnprocessableError,
    no_such_namespace,
)
from core.keys import ContentKey
from core.refs import RefSpec

# Which keys (by their elements) the caller may see; None: all.
Visible = Callable[[tuple[str, ...]], bool]


class Namespaces:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.store = catalog.store

    def listed(self, ref: RefSpec, parent: ContentKey | None, page_token: str | None,
               page_size: int | None, visible: Visible | None = None,
               ) -> tuple[list[tuple[str, ...]], str | None]:
        if parent is not None:
            self.load(ref, parent)
        page = list_entries(self.catalog, ref, parent, ContentType.NAMESPACE, page_token,
                            page_size, visible=visible)
        return [e.elements for e in page[0]], page[1]

    def children(self, ref: RefSpec, ns: ContentKey, kind: ContentType | tuple[ContentType, ...],
                 page_token: str | None, page_size: int | None,
                 visible: Visible | None = None) -> tuple[list[ContentKey], str | None]:
        """The tables (or views) directly in a namespace that exists; those
        ``visible`` says the caller may not see are skipped before paging."""
        self.load(ref, ns)
        return list_entries(self.catalog, ref, ns, kind, page_token, page_size,
                            visible=visible)

    def load(self, ref: RefSpec, ns: ContentKey) -> dict[str, str]:
        c = self.catalog.get(ref, ns)
        if not isinstance(c, Namespace):
            raise no_such_namespace(dotted(ns))
        return dict(c.properties)

    def create(self, ref: RefSpec, ns: ContentKey, properties: dict[str, str], who: Who,
               ) -> dict[str, str]:
        parents = ns.ancestors()

        def plan(found: dict[ContentKey, Content]) -> Change[dict[str, str]]:
            if ns in found:
                if found[ns].type == ContentType.NAMESPACE:
                    raise AlreadyExistsError(f"Namespace already exists: {dotted(ns)}")
                refuse_clash(found, ns, ContentType.NAMESPACE)
            for p in parents:
                require_namespace(found, p)
            return Change([Put(ns, Namespace(properties=properties))],
                          f"create namespace {dotted(ns)}", properties)

        return self.catalog.write(ref, [ns, *parents], who, plan)

    def drop(self, ref: RefSpec, ns: ContentKey, who: Who) -> None:
        def plan(found: dict[ContentKey, Content]) -> Change[None]:
            require_namespace(found, ns)
            if list_entries(self.catalog, ref, ns, None, None, 1, depth=None)[0]:
                raise NamespaceNotEmptyError(f"Namespace {dotted(ns)} is not empty")
            return Change([Delete(ns, expected=found[ns])], f"drop namespace {dotted(ns)}",
                          None)

        self.catalog.write(ref, [ns], who, plan)

    def update_properties(self, ref: RefSpec, ns: ContentKey, updates: dict[str, str],
                          removals: list[str], who: Who) -> dict[str, list[str]]:
        both = sorted(set(updates) & set(removals))
        if both:
            raise UnprocessableError(f"Properties cannot be both updated and removed: {both}")

        def plan(found: dict[ContentKey, Content]) -> Change[dict[str, list[str]]]:
            require_namespace(found, ns)
            cur = found[ns]
            assert isinstance(cur, Namespace)  # require_namespace said so
            props = dict(cur.properties)
            removed = [k for k in removals if k in props]
            missing = [k for k in removals if k not in props]
            for k in removed:
                del props[k]
            props.update(updates)
            result = {"updated": sorted(updates), "removed": removed, "missing": missing}
            if props == cur.properties:
                return Change([], "", result)
            new = Namespace(id=cur.id, properties=props)
            return Change([Put(ns, new, expected=cur)],
                          f"update namespace {dotted(ns)} properties", result)

        return self.catalog.write(ref, [ns], who, plan)


def list_entries(catalog: Catalog, ref: RefSpec, parent: ContentKey | None,
                 kind: ContentType | tuple[ContentType, ...] | None, page_token: str | None,
                 page_size: int | None, depth: int | None = 1,
                 visible: Visible | None = None) -> tuple[list[ContentKey], str | None]:
    """Keys directly below ``parent``; without a page token, all of them (the spec:
    a client that does not page gets everything); ``visible``: the keys the
    caller may see (by elements), the others skipped before paging."""
    types = list(kind) if isinstance(kind, tuple) else [kind] if kind else None
    if page_token is None and page_size is None:
        out: list[ContentKey] = []
        token = None
        while True:
            page = catalog.store.entries(ref, parent, depth, types, token, 1000,
                                         visible=visible)
            out += [e.key for e in page.items]
            token = page.next_token
            if token is None:
                return out, None
    page = catalog.store.entries(ref, parent, depth, types, page_token or None, page_size,
                                 visible=visible)
    return [e.key for e in page.items], page.next_token
