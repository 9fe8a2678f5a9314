"""What an answer may say about objects the caller may not read.

A view the caller may read can read objects it may not (``sales.v_hr``
reads ``hr.salaries``). Every answer that describes the view keeps what its
own SQL shows — the names it reads — and leaves out everything else about
such objects: whether they exist, their content ids, types, columns and
snapshots, what they read in turn, and the reasons that concern them (a
reason is a sentence about several objects, so an analysis that reads any
object hidden from the caller shows its status with one neutral reason).
The Hive expanded text, which spells out the columns a ``*`` read, goes
with them. Decision written in docs/security.md.

Every function takes ``readable`` (key elements → may the caller read it;
None: it may read everything, and the answer is returned as it is).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from catalog.audit import ViewHistory
from core.sql.validity import HIDDEN_REASON as HIDDEN_REASON
from core.sql.validity import Readable as Readable
from core.sql.validity import ViewStatus

REDACTED = "redacted"


def hidden(readable: Readable | None, key: Iterable[str]) -> bool:
    return readable is not None and not readable(tuple(key))


def dotted_hidden(readable: Readable | None, name: str) -> bool:
    """A name as an analysis spells it (``hr.salaries``, for names that
    resolved to nothing)."""
    return readable is not None and not readable(tuple(name.split(".")))


def analysis(a: dict[str, Any], readable: Readable | None) -> dict[str, Any]:
    """One stored analysis (a content value's ``analysis`` item)."""
    if readable is None:
        return a
    deps, any_hidden = [], False
    for d in a.get("dependencies") or []:
        if hidden(readable, d["key"]):
            any_hidden = True
            deps.append({"key": d["key"], REDACTED: True})
        else:
            deps.append(d)
    unresolved = []
    for name in a.get("unresolved") or []:
        # A name that resolved to nothing is listed as a hidden one is:
        # otherwise the two lists would tell which hidden names exist.
        if dotted_hidden(readable, name):
            any_hidden = True
            deps.append({"key": name.split("."), REDACTED: True})
        else:
            unresolved.append(name)
    origins = [field_origin(f, readable) for f in a.get("fieldOrigins") or []]
    out = {**a, "dependencies": deps, "unresolved": unresolved, "fieldOrigins": origins}
    if any_hidden and a.get("reasons"):
        out["reasons"] = [HIDDEN_REASON]
    return out


def field_origin(f: dict[str, Any], readable: Readable | None) -> dict[str, Any]:
    """A column's origins: a hidden table by its name only, once."""
    out, seen = [], set()
    for o in f.get("origins") or []:
        if hidden(readable, o["table"]):
            name = tuple(o["table"])
            if name not in seen:
                seen.add(name)
                out.append({"table": o["table"], REDACTED: True})
        else:
            out.append(o)
    return {**f, "origins": out}


def reads_hidden(a: dict[str, Any] | None, readable: Readable | None) -> bool:
    if a is None or readable is None:
        return False
    return any(hidden(readable, d["key"]) for d in a.get("dependencies") or []) or any(
        dotted_hidden(readable, n) for n in a.get("unresolved") or [])


def status(s: ViewStatus, readable: Readable | None) -> ViewStatus:
    """A view's status (catalog.view_status): one neutral reason when the
    view reads an object the caller may not read."""
    return s.seen_by(readable)


def history(h: ViewHistory, readable: Readable | None) -> ViewHistory:
    """A view audit page's statuses (the view's now, each version's then)."""
    if readable is None:
        return h
    return replace(h, status=status(h.status, readable),
                   versions=[replace(v, status=status(v.status, readable))
                             for v in h.versions])


def content(c: dict[str, Any] | None, readable: Readable | None) -> dict[str, Any] | None:
    """A content value's JSON (``Content.to_json``)."""
    if c is None or readable is None or not c.get("analysis"):
        return c
    found = [analysis(a, readable) for a in c["analysis"]]
    out = {**c, "analysis": found}
    if any(reads_hidden(a, readable) for a in c["analysis"]):
        ext = dict(c.get("extensions") or {})
        hive = ext.get("hive")
        if isinstance(hive, dict) and "expanded-text" in hive:
            ext["hive"] = {k: v for k, v in hive.items() if k != "expanded-text"}
        dremio = ext.get("dremio")
        if isinstance(dremio, dict) and dremio.get("field-origins"):
            ext["dremio"] = {**dremio, "field-origins": [
                field_origin(f, readable) for f in dremio["field-origins"]]}
        out["extensions"] = ext
    return out


def freshness(doc: dict[str, Any], subjects: list[str | None], reads_hidden_objects: bool,
              readable: Readable | None) -> dict[str, Any]:
    """A freshness answer (core.mv.freshness.Freshness.to_json):
    ``subjects`` names, per reason, the base it is about (None: the view);
    an invalid view's reasons come from its analysis, about any of its bases."""
    if readable is None:
        return doc
    bases = [{"identifier": b["identifier"], REDACTED: True}
             if dotted_hidden(readable, b["identifier"]) else b for b in doc["baseTables"]]
    if doc["status"] == "invalid" and reads_hidden_objects:
        return {**doc, "baseTables": bases, "reasons": [HIDDEN_REASON]}
    subjects = subjects + [None] * (len(doc["reasons"]) - len(subjects))
    reasons = [HIDDEN_REASON if s is not None and dotted_hidden(readable, s) else r
               for r, s in zip(doc["reasons"], subjects, strict=True)]
    # One neutral sentence however many hidden reasons there were.
    reasons = list(dict.fromkeys(reasons))
    return {**doc, "baseTables": bases, "reasons": reasons}


def refreshes(records: list[dict[str, Any]], readable: Readable | None,
              ) -> list[dict[str, Any]]:
    """A materialized view's refresh records: a hidden base table by name."""
    if readable is None:
        return records
    out = []
    for r in records:
        bases = {n: {"identifier": n, REDACTED: True} if dotted_hidden(readable, n) else b
                 for n, b in (r.get("base-tables") or {}).items()}
        views = {n: v for n, v in (r.get("base-views") or {}).items()
                 if not dotted_hidden(readable, n)}
        out.append({**r, "base-tables": bases, "base-views": views})
    return out


def audit(doc: dict[str, Any], readable: Readable | None) -> dict[str, Any]:
    """A view audit page (catalog.audit.view_history)."""
    if readable is None:
        return doc
    versions = [{**v, "analysis": [analysis(a, readable) for a in v.get("analysis") or []]}
                for v in doc["versions"]]
    out = {**doc, "versions": versions}
    if "refreshes" in doc:  # a hidden base's snapshots are not shown
        out["refreshes"] = [{**r, "baseTables": {
            n: None if dotted_hidden(readable, n) else s
            for n, s in r["baseTables"].items()}} for r in doc["refreshes"]]
    return out
