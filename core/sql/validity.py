"""Whether a view still holds against its bases, and if not, why; and the
one rule that gives a view its status.

A view's analysis records, per object it reads, the content id it read and
the columns it uses with their types. Checked against what the ref holds
now, each difference is a reason in words a user acts on: ``table
sales.orders dropped``, ``column amount no longer exists in sales.orders``,
``type of sales.orders.amount changed long → string``. Pure: the caller
looks up what each key holds now.

A view's direct status (``status_of``) is its recorded analysis — what was
wrong when it was written: SQL sqlglot cannot read, a name or a column that
does not resolve — plus whether what it reads still holds at the ref asked
about; core.sql.transitive then carries it through the views that read
views (a view holds only if all it reads, at any depth, holds). Every
surface (the status listing and ``sapwood view check``, the dependency and
lineage answers, the audit, the change feed, merge previews, the UI) shows
that one result, redacted by ``ViewStatus.seen_by`` for a reader who may
not read every object the view reads or its reasons name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.sql.model import Key, Relation
from core.sql.stored import DialectAnalysis, Status, StoredDependency

_KIND = {"ICEBERG_TABLE": "table", "ICEBERG_VIEW": "view", "MATERIALIZED_VIEW": "view"}

Lookup = Callable[[tuple[str, ...]], Relation | None]
# Which keys a reader may read (None: all of them).
Readable = Callable[[tuple[str, ...]], bool]
# The one reason shown for a view that reads what its reader may not: a
# reason is a sentence about several objects, and any of them may be hidden.
HIDDEN_REASON = "not shown: it concerns objects you may not read"
NEVER_ANALYSED = "written before analysis existed"


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
    return [c.text for c in _causes(analysis, lookup, moved)]


def _causes(analysis: DialectAnalysis, lookup: Lookup,
            moved: Callable[[str], Key | None] | None) -> list[Cause]:
    out = [Cause(f"{name} does not exist", tuple(name.split(".")))
           for name in analysis.unresolved]
    for dep in analysis.dependencies:
        now = lookup(tuple(dep.key))
        where = moved(dep.content_id) if now is None and moved is not None else None
        out += [Cause(r, tuple(dep.key)) for r in dependency_reasons(dep, now, where)]
    return out


@dataclass(frozen=True, slots=True)
class Cause:
    """One reason a view does not hold, as it travels up to the views that
    read it: what is wrong (``text``), the object it is about (None: the
    view's own SQL), and the views it came through from the view asked about
    (``via``, nearest first; empty: the view's own reason)."""

    text: str
    about: Key | None = None
    via: tuple[Key, ...] = ()
    # Whether the views that read this one take it over (a limit reached
    # while following them is said once, by the view asked about).
    inherited: bool = True

    def names(self) -> tuple[Key, ...]:
        """Every object the reason names."""
        return (*self.via, *((self.about,) if self.about is not None else ()))

    def render(self, key: Key) -> str:
        """As the view at ``key`` says it: its own reasons as they are, one
        that came through other views with the way there
        (``shop.top → shop.big_regions → shop.revenue: table shop.revenue dropped``)."""
        if not self.via:
            return self.text
        way = [key, *self.via, *((self.about,) if self.about not in (None, self.via[-1]) else ())]
        return f"{' → '.join('.'.join(k) for k in way)}: {self.text}"


@dataclass(frozen=True, slots=True)
class ViewStatus:
    """A view's status at a ref, with its reasons (none when ``ok``), and the
    analysis that speaks for it (None: the view was never analysed);
    ``causes`` are the reasons as core.sql.transitive carries them (empty
    when redacted)."""

    status: Status
    reasons: tuple[str, ...]
    analysis: DialectAnalysis | None
    causes: tuple[Cause, ...] = ()

    @property
    def dialect(self) -> str | None:
        return self.analysis.dialect if self.analysis is not None else None

    def reads_hidden(self, readable: Readable | None) -> bool:
        """Whether the view reads (or names, unresolved) a key ``readable`` hides."""
        a = self.analysis
        if a is None or readable is None:
            return False
        return any(not readable(tuple(d.key)) for d in a.dependencies) or any(
            not readable(tuple(n.split("."))) for n in a.unresolved) or any(
            not readable(k) for c in self.causes for k in c.names())

    def seen_by(self, readable: Readable | None) -> ViewStatus:
        """As a reader who may not read everything the view reads sees it:
        the status, with one neutral reason."""
        if self.reasons and self.reads_hidden(readable):
            return ViewStatus(self.status, (HIDDEN_REASON,), self.analysis)
        return self


def status_of(analysis: DialectAnalysis | None, lookup: Lookup,
              moved: Callable[[str], Key | None] | None = None) -> ViewStatus:
    """The view's status: ``unanalysed`` when sqlglot could not read it (or
    it predates analysis); else what its analysis found wrong when it was
    written, then what no longer holds against ``lookup`` (the ref asked
    about): ``invalid`` when either says anything, ``ok`` when neither does."""
    if analysis is None:
        return ViewStatus("unanalysed", (NEVER_ANALYSED,), None)
    if analysis.status == "unanalysed":
        return ViewStatus("unanalysed", tuple(analysis.reasons), analysis)
    why: dict[str, Cause] = {}
    for c in [*(Cause(r) for r in analysis.reasons), *_causes(analysis, lookup, moved)]:
        if c.text not in why or why[c.text].about is None:
            # A reason recorded when the view was written and found again
            # now is said once, naming its object when one of them does.
            why[c.text] = c
    causes = tuple(why.values())
    return ViewStatus("invalid" if causes else "ok", tuple(why), analysis, causes)
