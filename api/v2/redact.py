"""What an answer may say about objects the caller may not read: the
routes' door to core.redact, the one redaction that routes, the change
feed, its OpenLineage events, webhooks and the UI share (the rule is
written there and in docs/security.md). Only what needs the catalog's
types lives here.

Every function takes ``readable`` (key elements → may the caller read it;
None: it may read everything, and the answer is returned as it is).
"""

from __future__ import annotations

from dataclasses import replace

from catalog.views.audit import ViewHistory
from core.redact import HIDDEN_REASON as HIDDEN_REASON
from core.redact import REDACTED as REDACTED
from core.redact import Readable as Readable
from core.redact import analysis as analysis
from core.redact import audit as audit
from core.redact import column_origins as column_origins
from core.redact import commit_meta as commit_meta
from core.redact import content as content
from core.redact import dotted_hidden as dotted_hidden
from core.redact import field_origins as field_origins
from core.redact import freshness as freshness
from core.redact import hidden as hidden
from core.redact import invalidated as invalidated
from core.redact import invalidated_views as invalidated_views
from core.redact import lineage as lineage
from core.redact import reads_hidden as reads_hidden
from core.redact import refreshes as refreshes
from core.redact import shows_commit_meta as shows_commit_meta
from core.redact import status as status


def history(h: ViewHistory, readable: Readable | None) -> ViewHistory:
    """A view audit page's statuses (the view's now, each version's then)."""
    if readable is None:
        return h
    return replace(h, status=status(h.status, readable),
                   versions=[replace(v, status=status(v.status, readable))
                             for v in h.versions])
