"""The lookups behind strict invalidation and CASCADE, at the head a write
plans against: the views that read a key (views of views too), the
namespaces' modes, and what a dropped or changed object was and becomes.
The decisions themselves are core.sql.invalidation's."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from catalog.kernel import Catalog
from catalog.views.analysis import Resolver, relation
from core.commits import Delete, ResolvedRef
from core.content import Content, Namespace
from core.errors import bad_request, commit_failed
from core.keys import ContentKey
from core.sql.invalidation import Properties, ancestors, describe, invalidated, refusals
from core.sql.model import Key, Relation
from core.sql.stored import DialectAnalysis

# Checks the caller may write a key (the guard's rule for keys the path does
# not name); None: no guard.
Require = Callable[[ContentKey], None] | None


def dependents(catalog: Catalog, at: str, keys: Sequence[ContentKey],
               ) -> dict[ContentKey, Content]:
    """Every view that reads one of ``keys`` at ``at``, directly or through
    other views; ``keys`` themselves excluded."""
    out: dict[ContentKey, Content] = {}
    start = set(keys)
    frontier = list(keys)
    while frontier:  # a level at a time, each in a few queries however many keys
        nxt: list[ContentKey] = []
        for vk, c in sorted(catalog.store.readers(at, frontier).items()):
            if vk not in out and vk not in start:
                out[vk] = c
                nxt.append(vk)
        frontier = nxt
    return out


def properties(catalog: Catalog, at: str, views: Sequence[ContentKey]) -> Properties:
    """The namespace properties the views' modes depend on, read at ``at``
    in one lookup."""
    wanted = sorted({ContentKey(ns) for v in views for ns in ancestors(v.elements[:-1])})
    found = catalog.read(at, wanted)[1] if wanted else {}
    props = {k.elements: c.properties for k, c in found.items() if isinstance(c, Namespace)}
    return props.get


def primary(c: Content) -> DialectAnalysis | None:
    # The first analysed representation speaks for the view's dependencies
    # (as in the status listing); an unanalysed view records none.
    return next((a for a in getattr(c, "analysis", None) or []
                 if a.status != "unanalysed"), None)


def refused(catalog: Catalog, at: str, views: Mapping[ContentKey, Content],
            before: Mapping[Key, Relation | None], after: Mapping[Key, Relation | None],
            renamed: Mapping[Key, Key] | None = None) -> dict[Key, list[str]]:
    """The views in strict namespaces that the change would break, with why."""
    broken = invalidated({k.elements: primary(c) for k, c in views.items()}, before, after,
                         renamed)
    if not broken:
        return {}
    return refusals(broken, properties(catalog, at, [ContentKey(k) for k in broken]))


def plan_drop(catalog: Catalog, head: ResolvedRef, key: ContentKey, kind: str,
              cascade: bool, require: Require = None,
              ) -> tuple[list[Delete], list[ContentKey]]:
    """The extra deletes a drop of ``key`` takes at ``head``: with CASCADE,
    every view that reads it (at any depth); without, none, after checking
    no strict dependent would break (409 naming each one if so). And the
    views the drop leaves invalid: without CASCADE, every one that reads it,
    directly or through other views."""
    at = f"@{head.hash}"
    views = dependents(catalog, at, [key])
    if not views:
        return [], []
    name = ".".join(key.elements)
    if cascade:
        for k in views:
            if require is not None:
                require(k)
        return [Delete(k, expected=c) for k, c in sorted(views.items())], []
    before = {key.elements: Resolver(catalog, at)(key.elements)}
    strict = refused(catalog, at, views, before, {key.elements: None})
    if strict:
        raise commit_failed(f"Cannot drop {kind} {name}: views that read it would become "
                            f"invalid: {describe(strict)}")
    return [], sorted(views)


def check_removals(catalog: Catalog, head: ResolvedRef, keys: Sequence[ContentKey],
                   changed: set[ContentKey]) -> None:
    """Refuse (409) removing ``keys`` in one commit when a view in a strict
    namespace reads one of them (views the same commit changes, ``changed``,
    are left to their own checks)."""
    at = f"@{head.hash}"
    views = {k: v for k, v in dependents(catalog, at, keys).items() if k not in changed}
    if not views:
        return
    resolve = Resolver(catalog, at)
    strict = refused(catalog, at, views, {k.elements: resolve(k.elements) for k in keys},
                     dict.fromkeys((k.elements for k in keys), None))
    if strict:
        names = ", ".join(".".join(k.elements) for k in keys)
        raise commit_failed(f"Cannot remove {names}: views that read it would become "
                            f"invalid: {describe(strict)}")


def plan_rename(catalog: Catalog, head: ResolvedRef, src: ContentKey, dst: ContentKey,
                kind: str) -> None:
    """Refuse renaming ``src`` when a view in a strict namespace reads it by
    that name (its SQL would no longer find it). 400, not 409: the REST spec
    gives a rename's 409 one meaning, "the target exists", and clients say
    so (Spark would report the new name as taken)."""
    at = f"@{head.hash}"
    views = dependents(catalog, at, [src])
    if not views:
        return
    before = {src.elements: Resolver(catalog, at)(src.elements)}
    strict = refused(catalog, at, views, before, {src.elements: None},
                     {src.elements: dst.elements})
    if strict:
        raise bad_request(f"Cannot rename {kind} {'.'.join(src.elements)} to "
                            f"{'.'.join(dst.elements)}: views that read it would become "
                            f"invalid: {describe(strict)}")


def check_schema_changes(catalog: Catalog, head: ResolvedRef,
                         changed: Mapping[ContentKey, tuple[Content, Content]]) -> None:
    """Refuse (409) table updates whose new current schema would break a
    view in a strict namespace; ``changed`` maps each table whose current
    schema changes to its value now and the one about to be written (its
    metadata file written already: it is discarded if refused)."""
    if not changed:
        return
    check_changes(catalog, head, "the schema of table", {
        k: (new, None) for k, (_, new) in changed.items()})


def check_changes(catalog: Catalog, head: ResolvedRef, what: str,
                  changed: Mapping[ContentKey, tuple[Content, Relation | None]]) -> None:
    """Refuse (409) changes of objects whose new form would break a view in a
    strict namespace; ``changed`` maps each key to its value about to be
    written and, when the caller has it, what that value is as a relation
    (else it is read from the value's metadata file)."""
    at = f"@{head.hash}"
    views = dependents(catalog, at, list(changed))
    if not views:
        return
    resolve = Resolver(catalog, at)
    before = {k.elements: resolve(k.elements) for k in changed}
    after = {k.elements: rel if rel is not None else relation(catalog, k.elements, new)
             for k, (new, rel) in changed.items()}
    strict = refused(catalog, at, views, before, after)
    if strict:
        names = ", ".join(".".join(k.elements) for k in changed)
        raise commit_failed(f"Cannot change {what} {names}: views that read it would "
                            f"become invalid: {describe(strict)}")
