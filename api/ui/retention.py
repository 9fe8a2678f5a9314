"""What the references page says of each reference's retention (from
``GET /api/v2/retention/cutoffs``, the same page of references as the
listing): its policy in words, and from when its history is kept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from api.ui.client import Api


@dataclass(frozen=True, slots=True)
class Shown:
    retention: str  # "keep P30D, 10 commits (policy 'etl/*')", "all history", …
    since: str | None  # the cutoff instant; None: nothing before the head has expired


async def retention_of(api: Api, params: dict[str, Any]) -> dict[str, Shown]:
    """By reference name, for the references ``/api/v2/trees`` lists with
    ``params`` (prefix, page token, page size)."""
    got = await api.get("/api/v2/retention/cutoffs", **params)
    return {r["name"]: _shown(r) for r in got["references"]}


def _shown(r: dict[str, Any]) -> Shown:
    p = r["policy"]
    if r["type"] == "TAG":
        return Shown("its commit (a tag)", None)
    if p is None:
        return Shown("all history", None)
    said = [f"keep {p['keep']}" if "keep" in p else "",
            f"{p['keepCommits']} commits" if "keepCommits" in p else ""]
    words = ", ".join(s for s in said if s) or "its head only"
    return Shown(f"{words} (policy '{p['refs']}')", r["cutoff"])
