"""What an answer may say about objects the caller may not read: the one
redaction that the routes (api.v2.redact), the change feed and its
OpenLineage events (catalog.feed.events, catalog.feed.lineage_events), webhooks (which
deliver the feed) and the UI (a client of the routes) all apply.

A view the caller may read can read objects it may not (``sales.v_hr``
reads ``hr.salaries``). Every answer that describes the view keeps what its
own SQL shows — the names it reads — and leaves out everything else about
such objects: whether they exist, their content ids, types, columns and
snapshots, what they read in turn, and the reasons that concern them (a
reason is a sentence about several objects, so an analysis that reads any
object hidden from the caller shows its status with one neutral reason).
The Hive expanded text, which spells out the columns a ``*`` read, goes
with them. Decision written in docs/security.md.

Column origins are recorded down to base tables with the way there (the
views the value passes through, ``via``): an origin whose way passes a
hidden object stops at the first such object, named as the SQL that reads
it names it, once per column — ``sales.v_nested`` (``SELECT * FROM
hr.v_inner``) shows ``{"table": ["hr", "v_inner"], "redacted": true}``,
never the ``hr.salaries`` that ``hr.v_inner`` reads, nor its columns.

A change's list of the views it breaks (a merge's ``invalidatedViews``, a
drop's ``sapwood.invalidated-views`` commit property, which the change
feed's DELETE shows) names a view the caller may not read nowhere: it is
left out, and a view that is shown gives the neutral reason when its way
passes a hidden object, as a view's status does.

What a commit's writer wrote — its message, author(s) and properties — is
shown only to a caller that may read the whole reference it reads the
commit through, as the log is (``commit_meta``): free text can name
anything, a key the caller may not read among them ("drop table hr.x"), so
it cannot be redacted to what the caller may see. A reader of part of the
reference gets the commit with an empty message, no author and no
properties (as a commit that had none), its hash, committer (the catalog's
record of who acted, as the feed's principal), times and parents kept:
a reference's head (``/api/v2/trees?fetch=ALL``, ``/trees/{ref}?fetch=ALL``,
the UI's reference list), the change feed's commits and webhooks, the
view audit's commits, and a revert's quote of the commits it reverts.

Every function takes ``readable`` (key elements → may the caller read it;
None: it may read everything, and the answer is returned as it is). Pure:
JSON in, JSON out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from core.sql.invalidation import invalidated_keys
from core.sql.validity import HIDDEN_REASON, Readable, ViewStatus

__all__ = ["HIDDEN_REASON", "REDACTED", "Readable", "analysis", "audit", "column_origins",
           "commit_meta", "content", "dotted_hidden", "field_origins", "freshness",
           "hidden", "invalidated", "invalidated_views", "lineage", "reads_hidden", "refreshes",
           "shows_commit_meta", "status"]

REDACTED = "redacted"
_TABLE = "ICEBERG_TABLE"
Key = tuple[str, ...]


def hidden(readable: Readable | None, key: Iterable[str]) -> bool:
    return readable is not None and not readable(tuple(key))


def dotted_hidden(readable: Readable | None, name: str) -> bool:
    """A name as an analysis spells it (``hr.salaries``, for names that
    resolved to nothing)."""
    return readable is not None and not readable(tuple(name.split(".")))


def _named(key: Key) -> dict[str, Any]:
    return {"table": list(key), REDACTED: True}


def column_origins(origins: Iterable[Mapping[str, Any]],
                   dependencies: Sequence[Mapping[str, Any]],
                   readable: Readable | None) -> list[dict[str, Any]]:
    """One column's origins (stored ``{"table", "column", "via"?}``) as an
    answer gives them: each base column once (``{"table", "column"}``), and
    an origin whose way passes an object the reader may not read as that
    object's name only (``{"table", "redacted": true}``), once.
    ``dependencies``: the analysis's, what the view's SQL reads itself."""
    direct = {tuple(d["key"]) for d in dependencies}
    views = [tuple(d["key"]) for d in dependencies if d.get("type") != _TABLE]
    out: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()

    def add(mark: tuple[Any, ...], item: dict[str, Any]) -> None:
        if mark not in seen:
            seen.add(mark)
            out.append(item)

    for o in origins:
        table = tuple(o["table"])
        if readable is not None:
            way = [tuple(k) for k in o.get("via") or ()]
            if not way and table not in direct:
                # Recorded before the way was: it came through one of the
                # views the SQL reads, which one is not known, so every one
                # the reader may not read stands for it.
                way = [v for v in views if not readable(v)]
                if way:
                    for v in way:
                        add((REDACTED, v), _named(v))
                    continue
            stop = next((k for k in way if not readable(k)), None)
            if stop is None and not readable(table):
                stop = table
            if stop is not None:
                add((REDACTED, stop), _named(stop))
                continue
        add((table, o["column"]), {"table": list(table), "column": o["column"]})
    return out


def field_origins(fields: Iterable[Mapping[str, Any]],
                  dependencies: Sequence[Mapping[str, Any]],
                  readable: Readable | None) -> list[dict[str, Any]]:
    """Field origins (``{"name", "origins", "derived"}`` each), redacted."""
    return [{**f, "origins": column_origins(f.get("origins") or [], dependencies, readable)}
            for f in fields]


def lineage(a: Mapping[str, Any] | None, readable: Readable | None) -> list[dict[str, Any]]:
    """A view's column lineage from its stored analysis (by alias, as
    ``DialectAnalysis.model_dump(by_alias=True)`` gives it): per output
    column its name, whether a step computes it, and its origins as
    ``column_origins`` gives them — the ``…/lineage`` answer's ``columns``,
    and the OpenLineage ``columnLineage`` facet's."""
    if a is None:
        return []
    return [{"name": f["name"], "derived": bool(f.get("derived")),
             "origins": column_origins(f.get("origins") or [], a.get("dependencies") or [],
                                       readable)}
            for f in a.get("fieldOrigins") or []]


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
    origins = field_origins(a.get("fieldOrigins") or [], a.get("dependencies") or [], readable)
    out = {**a, "dependencies": deps, "unresolved": unresolved, "fieldOrigins": origins}
    if any_hidden and a.get("reasons"):
        out["reasons"] = [HIDDEN_REASON]
    return out


def reads_hidden(a: Mapping[str, Any] | None, readable: Readable | None) -> bool:
    if a is None or readable is None:
        return False
    return any(hidden(readable, d["key"]) for d in a.get("dependencies") or []) or any(
        dotted_hidden(readable, n) for n in a.get("unresolved") or [])


def status(s: ViewStatus, readable: Readable | None) -> ViewStatus:
    """A view's status (catalog.views.status): one neutral reason when the
    view reads an object the caller may not read."""
    return s.seen_by(readable)


def invalidated(views: Iterable[tuple[Key, ViewStatus]], readable: Readable | None,
                ) -> list[dict[str, Any]]:
    """The views a change breaks as an answer lists them (a merge's
    ``invalidatedViews``: each view with the reasons the change adds, and
    the causes behind them): a view the caller may not read is left out, as
    if it were not there; the others' reasons as ``status`` gives them, one
    neutral reason when any names an object the caller may not read (a view
    on the way included) or the view reads one."""
    return [{"key": list(k), "reasons": list(status(s, readable).reasons)}
            for k, s in views if not hidden(readable, k)]


def invalidated_views(properties: Mapping[str, str],
                      readable: Readable | None) -> list[Key] | None:
    """The views a drop's commit says it left invalid (its
    ``sapwood.invalidated-views`` property) that the reader may read, as
    the change feed and the log show them; None: the property is not a
    list of keys as a drop writes it (written by hand)."""
    found = invalidated_keys(properties)
    if found is None:
        return None
    return [k.elements for k in found if not hidden(readable, k.elements)]


# What a commit's writer wrote, in each answer's spelling (Nessie's
# commitMeta, the feed's commits and the audit's).
_WRITTEN = frozenset({"message", "author", "authors", "properties", "allProperties"})


def commit_meta(meta: Mapping[str, Any], readable: Readable | None) -> dict[str, Any]:
    """A commit's metadata as an answer shows it (any of the spellings
    above): to a reader of part of the reference (``readable`` not None)
    as a commit that had an empty message, no author and no properties;
    the rest as it is."""
    if readable is None:
        return dict(meta)
    return {k: (_empty(k) if k in _WRITTEN else v) for k, v in meta.items()}


def _empty(field: str) -> Any:
    if field == "message":
        return ""
    if field == "author":
        return None
    return [] if field == "authors" else {}


def shows_commit_meta(readable: Readable | None) -> bool:
    """Whether a commit's message, author and properties are the reader's
    to see (one that may read the whole reference)."""
    return readable is None


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
            deps = [d for a in c["analysis"] for d in a.get("dependencies") or []]
            ext["dremio"] = {**dremio, "field-origins": field_origins(
                dremio["field-origins"], deps, readable)}
        out["extensions"] = ext
    return out


def _direct(dependencies: Iterable[Mapping[str, Any]]) -> dict[str, bool]:
    """The names the SQL reads itself (dotted, as refresh records name
    them), each with whether it is a view."""
    return {".".join(d["key"]): d.get("type") != _TABLE for d in dependencies}


def _hidden_way(direct: Mapping[str, bool], views: Iterable[str],
                readable: Readable | None) -> bool:
    """Whether a view the reader may not read lies on the way to the bases:
    one the SQL reads, or one of ``views`` (those a refresh read)."""
    return any(dotted_hidden(readable, n) for n, is_view in direct.items() if is_view) or any(
        dotted_hidden(readable, n) for n in views)


def _verdict(name: str, direct: Mapping[str, bool], hidden_way: bool,
             readable: Readable | None) -> str | None:
    """What an answer about a materialized view says of an object it reads
    (a base table or a view on the way): "shown", "named" (the SQL names it,
    the reader may not read it: its name only), or None (left out: hidden,
    or reached through a hidden view, and not named by the SQL). Bases are
    recorded without the way to them, so once a hidden view is on the way
    every base the SQL does not name itself is left out."""
    if name in direct:
        return "named" if dotted_hidden(readable, name) else "shown"
    if dotted_hidden(readable, name) or hidden_way:
        return None
    return "shown"


def freshness(doc: dict[str, Any], subjects: list[str | None], reads_hidden_objects: bool,
              readable: Readable | None, dependencies: Iterable[Mapping[str, Any]] = (),
              views: Iterable[str] = ()) -> dict[str, Any]:
    """A freshness answer (core.mv.freshness.Freshness.to_json):
    ``subjects`` names, per reason, the base it is about (None: the view);
    an invalid view's reasons come from its analysis, about any of its bases.
    ``dependencies``: what the view's SQL reads (its analysis's); ``views``:
    the views the refresh read on the way."""
    if readable is None:
        return doc
    direct = _direct(dependencies)
    way = _hidden_way(direct, views, readable)
    bases = []
    for b in doc["baseTables"]:
        verdict = _verdict(b["identifier"], direct, way, readable)
        if verdict == "named":
            bases.append({"identifier": b["identifier"], REDACTED: True})
        elif verdict == "shown":
            bases.append(b)
    if doc["status"] == "invalid" and reads_hidden_objects:
        return {**doc, "baseTables": bases, "reasons": [HIDDEN_REASON]}
    subjects = subjects + [None] * (len(doc["reasons"]) - len(subjects))
    reasons = [HIDDEN_REASON if s is not None and _verdict(s, direct, way, readable) != "shown"
               else r for r, s in zip(doc["reasons"], subjects, strict=True)]
    # One neutral sentence however many hidden reasons there were.
    reasons = list(dict.fromkeys(reasons))
    return {**doc, "baseTables": bases, "reasons": reasons}


def refreshes(records: list[dict[str, Any]], readable: Readable | None,
              dependencies: Iterable[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """A materialized view's refresh records (``Refresh`` by alias): a base
    table the SQL names and the reader may not read by its name only
    (``{"identifier", "redacted": true}``), hidden views and what hidden
    objects read in turn left out. ``dependencies``: what the view's SQL
    reads (its analysis's)."""
    if readable is None:
        return records
    direct = _direct(dependencies)
    out = []
    for r in records:
        views = r.get("base-views") or {}
        way = _hidden_way(direct, views, readable)
        bases: dict[str, Any] = {}
        for n, b in (r.get("base-tables") or {}).items():
            verdict = _verdict(n, direct, way, readable)
            if verdict is not None:
                bases[n] = b if verdict == "shown" else {"identifier": n, REDACTED: True}
        shown = {n: v for n, v in views.items() if _verdict(n, direct, way, readable) == "shown"}
        out.append({**r, "base-tables": bases, "base-views": shown})
    return out


def audit(doc: dict[str, Any], readable: Readable | None) -> dict[str, Any]:
    """A view audit page (catalog.views.audit.view_history): each version's
    commit as ``commit_meta`` shows it."""
    if readable is None:
        return doc
    versions = [{**v, "analysis": [analysis(a, readable) for a in v.get("analysis") or []],
                 **({"commit": commit_meta(v["commit"], readable)} if "commit" in v else {})}
                for v in doc["versions"]]
    out = {**doc, "versions": versions}
    if "refreshes" in doc:  # a hidden base's snapshots are not shown
        read = {v.get("versionId"): [d for a in v.get("analysis") or []
                                     for d in a.get("dependencies") or []]
                for v in doc["versions"]}
        every = [d for deps in read.values() for d in deps]
        out["refreshes"] = [_audited(r, read.get(r.get("versionId"), every), readable)
                            for r in doc["refreshes"]]
    return out


def _audited(r: dict[str, Any], dependencies: list[dict[str, Any]],
             readable: Readable | None) -> dict[str, Any]:
    """One refresh of the audit: a hidden base the SQL of its version names
    with no snapshot (None), the others as ``refreshes`` says."""
    direct = _direct(dependencies)
    way = _hidden_way(direct, (), readable)
    bases = {}
    for n, snap in r["baseTables"].items():
        verdict = _verdict(n, direct, way, readable)
        if verdict is not None:
            bases[n] = snap if verdict == "shown" else None
    return {**r, "baseTables": bases}
