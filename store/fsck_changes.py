"""fsck of the change index (store.changes): every commit's ancestry row and
posting rows, recomputed from the commits themselves as migration 0005
computes them, must be exactly what the tables hold — a row missing, wrong
or extra would make an audit or a filtered log silently incomplete."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import select

from store.changes import backfill
from store.db import Database
from store.objects import COMMIT_COLUMNS, record_from_row
from store.schema import ANCESTRY, CHANGES

# (kind, where, detail) → the report's Problem
Report = Callable[[str, str, str], None]


def check_change_index(db: Database, report: Report) -> int:
    """Compare the index with the commits; returns the number of rows checked."""
    with db.read() as conn:
        records = [record_from_row(r) for r in conn.execute(select(*COMMIT_COLUMNS))]
        have_anc = {r[0]: tuple(r) for r in conn.execute(select(*ANCESTRY.c))}
        have_chg = {tuple(r) for r in conn.execute(select(*CHANGES.c))}
    want_chg: set[tuple[object, ...]] = set()
    for a, rows in backfill(records):
        got = have_anc.pop(a.hash, None)
        if got is None:
            report("missing-ancestry", a.hash[:12], "no ancestry row")
        elif got != a.row():
            report("bad-ancestry", a.hash[:12], f"holds {got[1:]}, expected {a.row()[1:]}")
        want_chg.update(rows)
    for h in sorted(have_anc):
        report("unexpected-ancestry", h[:12], "ancestry row of no commit")
    for row in sorted(want_chg - have_chg, key=str):
        report("missing-change", str(row[2])[:12], f"no {row[5]} row for {row[0]}")
    for row in sorted(have_chg - want_chg, key=str):
        report("unexpected-change", str(row[2])[:12],
               f"{row[5]} row for {row[0]} that the commit does not justify")
    return len(records) + len(want_chg)
