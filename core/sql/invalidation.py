"""Strict invalidation: which views a change would break, and whether that
refuses the change.

A namespace chooses with the property ``sapwood.view-invalidation``
(``strict`` or ``lenient``); a namespace without it takes its nearest
ancestor's, and the default is lenient. The mode of the *dependent view's*
namespace governs: it protects the view's owners, who are the ones whose
queries would fail, whoever owns the table being changed.

Pure: the caller looks up the dependents' analyses, the namespaces'
properties and what the changed keys are before and after.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from core.keys import ContentKey
from core.sql.model import Key, Relation
from core.sql.stored import DialectAnalysis
from core.sql.validity import dependency_reasons

MODE_PROPERTY = "sapwood.view-invalidation"
STRICT = "strict"
LENIENT = "lenient"

Properties = Callable[[Key], Mapping[str, str] | None]
# A drop's commit property: the views it left invalid, as a JSON list of
# keys in path form (the log shows it to readers of the whole reference; the
# change feed's DELETE each reader only the ones it may read:
# core.redact.invalidated_views).
INVALIDATED = "sapwood.invalidated-views"


def invalidated_text(keys: Sequence[ContentKey]) -> str:
    return json.dumps([k.to_path_string() for k in keys])


def invalidated_keys(properties: Mapping[str, str]) -> list[ContentKey] | None:
    """The views a commit's drop left invalid (empty: not such a commit;
    None: the property is there but is not a list of keys, as a drop writes
    it — written by hand)."""
    text = properties.get(INVALIDATED)
    if not text:
        return []
    try:
        found = json.loads(text)
        if not isinstance(found, list):
            return None
        return [ContentKey.parse(k) for k in found]
    except (ValueError, TypeError, AttributeError):
        return None


def ancestors(namespace: Key) -> list[Key]:
    """The namespace and its ancestors, nearest first."""
    return [namespace[:n] for n in range(len(namespace), 0, -1)]


def mode(namespace: Key, properties: Properties) -> str:
    """The invalidation mode of ``namespace``: its own property, else its
    nearest ancestor's, else lenient. Only ``strict`` (any case) is strict, so
    a value this version does not know never refuses a write."""
    for ns in ancestors(namespace):
        value = (properties(ns) or {}).get(MODE_PROPERTY)
        if value is not None:
            return STRICT if value.strip().lower() == STRICT else LENIENT
    return LENIENT


def invalidated(views: Mapping[Key, DialectAnalysis | None],
                before: Mapping[Key, Relation | None],
                after: Mapping[Key, Relation | None],
                renamed: Mapping[Key, Key] | None = None) -> dict[Key, list[str]]:
    """The views among ``views`` that the change ``before`` → ``after`` (per
    changed key; None: absent; ``renamed``: moved to another key) would
    break, each with why.

    Only reasons the change adds count: a view already broken by something
    else (say it reads an object since dropped and created again) is not the
    change's doing. A view reading a view that breaks
    breaks too (it can no longer be queried), transitively; ``views`` must
    hold the whole closure of dependents for that to be seen."""
    out: dict[Key, list[str]] = {}
    for key, a in views.items():
        why: list[str] = []
        for dep in a.dependencies if a is not None else []:
            k = tuple(dep.key)
            was = before.get(k)
            # Already reading another object (or nothing): broken before this.
            if k not in after or was is None or was.content_id != dep.content_id:
                continue
            had = set(dependency_reasons(dep, before.get(k)))
            why += [r for r in dependency_reasons(dep, after[k], (renamed or {}).get(k))
                    if r not in had]
        if why:
            out[key] = why
    grew = True
    while grew:  # a fixed point: views of broken views, at any depth
        grew = False
        for key, a in views.items():
            if key in out or a is None:
                continue
            hit = sorted({".".join(d.key) for d in a.dependencies
                          if tuple(d.key) in out and tuple(d.key) not in after})
            if hit:
                out[key] = [f"view {name} it reads would become invalid" for name in hit]
                grew = True
    return out


def refusals(broken: Mapping[Key, list[str]], properties: Properties) -> dict[Key, list[str]]:
    """The broken views whose own namespace is strict: each refuses the change."""
    return {k: why for k, why in sorted(broken.items()) if mode(k[:-1], properties) == STRICT}


def describe(refused: Mapping[Key, list[str]]) -> str:
    """``ns.v (reason; reason), ns.w (reason)`` for an error message."""
    return ", ".join(f"{'.'.join(k)} ({'; '.join(why)})" for k, why in refused.items())
