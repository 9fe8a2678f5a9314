"""Whether a view still holds against its bases, and if not, why.

A view's analysis records, per object it reads, the content id it read and
the columns it uses with their types. Checked against what the ref holds
now, each difference is a reason in words a user acts on: ``table
sales.orders dropped``, ``column amount no longer exists in sales.orders``,
``type of sales.orders.amount changed long → string``. Pure: the caller
looks up what each key holds now.
"""

from __future__ import annotations

from collections.abc import Callable

from core.sql.model import Key, Relation
from core.sql.stored import DialectAnalysis, StoredDependency

_KIND = {"ICEBERG_TABLE": "table", "ICEBERG_VIEW": "view", "MATERIALIZED_VIEW": "view"}

Lookup = Callable[[tuple[str, ...]], Relation | None]


def dependency_reasons(dep: StoredDependency, now: Relation | None,
                       renamed_to: Key | None = None) -> list[str]:
    """Why ``dep`` no longer holds against ``now`` (None: the key is empty;
    ``renamed_to``: because the object moved there)."""
    name = ".".join(dep.key)
    kind = _KIND[dep.type]
    if now is None:
        if renamed_to is not None:
            return [f"{kind} {name} renamed to {'.'.join(renamed_to)}"]
        return [f"{kind} {name} dropped"]
    if now.content_id != dep.content_id:
        return [f"{kind} {name} was dropped and created again (another object now)"]
    types = dict(now.columns)
    by_id = {i: n for n, i in now.ids.items()}
    out = []
    for col, was in sorted((dep.columns or {}).items()):
        if col not in types:
            moved = by_id.get((dep.field_ids or {}).get(col, -1))
            out.append(f"column {col} of {name} renamed to {moved}" if moved
                       else f"column {col} no longer exists in {name}")
        elif was and types[col] != was:
            out.append(f"type of {name}.{col} changed {was} → {types[col]}")
    return out


def reasons(analysis: DialectAnalysis, lookup: Lookup,
            moved: Callable[[str], Key | None] | None = None) -> list[str]:
    """Why the view no longer holds (empty: it holds), for an analysed view;
    ``moved`` says where an object is now by its content id (a rename)."""
    out = [f"{name} does not exist" for name in analysis.unresolved]
    for dep in analysis.dependencies:
        now = lookup(tuple(dep.key))
        where = moved(dep.content_id) if now is None and moved is not None else None
        out += dependency_reasons(dep, now, where)
    return out
