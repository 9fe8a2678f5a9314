"""A catalog of 10^4 references in which a read is past retention (issue
43, defect 11), for tests/api/test_expired_reads.py and
bench/rest_bench.py (``expired_read_p50_ms``). ``main`` has 21 commits made
a day ago; 5,000 tags and 5,000 branches stand at its oldest commits
(shallower than the expired one, so none holds it); every branch keeps its
newest 5 commits, so ``main~10`` is past retention and ``main~4`` is not.
Moved in as an export (``store.dump``, what ``sapwood import`` runs): made
one by one, 10^4 references take a minute."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from core.retention import Policy
from store import Store
from store.db import Database
from store.dump import export_rows, import_rows
from tests.store.helpers import Clock, with_ns

REFS = 10_000
EXPIRED = "/iceberg/v1/main~10/namespaces/ns"
KEPT = "/iceberg/v1/main~4/namespaces/ns"


def build(url: str, refs: int = REFS) -> None:
    """``main`` with 21 commits made a day ago, and 10^4 references at its
    oldest commits (shallower than the expired one), moved into ``url``."""
    with tempfile.TemporaryDirectory() as tmp:
        clock = Clock()
        clock.now = time.time_ns() // 1000 - 86_400_000_000
        src = Store(f"sqlite:///{Path(tmp) / 'src.db'}", clock=clock)
        try:
            with_ns(src, "main", "ns")
            for i in range(20):
                clock.tick()
                with_ns(src, "main", f"ns.n{i:02}")
            old = [src.resolve(f"main~{n}").hash for n in range(16, 21)]
            lines = list(export_rows(src.db))
        finally:
            src.close()
    main_row = next(json.loads(x)["r"] for x in lines[1:]
                    if json.loads(x)["t"] == "refs" and json.loads(x)["r"]["name"] == "main")
    for i in range(refs):
        kind, name = ("TAG", f"t/{i:05}") if i % 2 else ("BRANCH", f"b/{i:05}")
        lines.append(json.dumps({"t": "refs", "r": {**main_row, "name": name, "type": kind,
                                                     "head": old[i % len(old)]}}))
    Store(url).close()  # the target's schema
    db = Database(url)
    try:
        import_rows(db, lines)
    finally:
        db.dispose()
    s = Store(url)
    try:
        s.retention.replace([Policy("*", keep_commits=5)])
    finally:
        s.close()
