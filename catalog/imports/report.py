"""What an import did, as the JSON its ``--report FILE`` holds (and, later,
the admin route's answer): each reference with its commits, every Nessie
commit this catalog holds mapped to its own hash, the commits whose time
had to move, and — for an import refused — every problem found, each naming
the Nessie commit and key it is about."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.errors import InvalidInputError
from core.instants import format_instant, from_micros


@dataclass(frozen=True, slots=True)
class Problem:
    commit: str | None
    key: str | None
    problem: str

    def to_json(self) -> dict[str, Any]:
        return {"nessieCommit": self.commit, "key": self.key, "problem": self.problem}

    def __str__(self) -> str:
        where = ", ".join(p for p in (f"commit {self.commit}" if self.commit else None,
                                      f"key {self.key}" if self.key else None) if p)
        return f"{where}: {self.problem}" if where else self.problem


@dataclass(frozen=True, slots=True)
class RefOutcome:
    name: str
    type: str
    nessie_hash: str
    hash: str
    # Commits on its first-parent chain (what Nessie's log of it lists).
    commits: int
    # created, moved (forward through the source's commits), reassigned
    # (to a commit not after the one it had: one reflog row, now), unchanged.
    action: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "nessieHash": self.nessie_hash,
                "hash": self.hash, "commits": self.commits, "action": self.action}


@dataclass(frozen=True, slots=True)
class Clamped:
    """A commit made, by Nessie's clock, at or before its first parent: it
    gets its parent's time plus 1 µs here (times increase along a chain)."""

    nessie_hash: str
    nessie_time: str
    at_us: int

    def to_json(self) -> dict[str, Any]:
        return {"nessieCommit": self.nessie_hash, "nessieTime": self.nessie_time,
                "time": format_instant(from_micros(self.at_us))}


@dataclass(slots=True)
class ImportReport:
    source: str
    started_us: int
    finished_us: int | None = None
    references: list[RefOutcome] = field(default_factory=list)
    # Nessie hash -> this catalog's, for every commit imported into it so far.
    commits: dict[str, str] = field(default_factory=dict)
    imported: int = 0  # commits this run wrote
    found: int = 0  # commits earlier runs had written that this one needed
    clamped: list[Clamped] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # References this catalog has from an earlier import that Nessie no longer has.
    gone_from_source: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "startedAt": format_instant(from_micros(self.started_us)),
            "finishedAt": (format_instant(from_micros(self.finished_us))
                           if self.finished_us is not None else None),
            "complete": self.finished_us is not None and not self.problems,
            "importedCommits": self.imported,
            "alreadyImportedCommits": self.found,
            "references": [r.to_json() for r in self.references],
            "goneFromSource": self.gone_from_source,
            "clampedTimes": [c.to_json() for c in self.clamped],
            "problems": [p.to_json() for p in self.problems],
            "commits": dict(sorted(self.commits.items())),
        }

    def summary(self) -> str:
        moved = sum(1 for r in self.references if r.action != "unchanged")
        return (f"{self.imported} commits imported ({self.found} already here), "
                f"{len(self.references)} references ({moved} created or moved), "
                f"{len(self.clamped)} commit times moved up to their parent's")


class ImportRefused(InvalidInputError):
    """The import found what it cannot keep and wrote nothing (the report
    lists every problem)."""

    def __init__(self, report: ImportReport) -> None:
        shown = "; ".join(str(p) for p in report.problems[:5])
        more = len(report.problems) - 5
        super().__init__(f"import refused, nothing written: {shown}"
                         + (f" (and {more} more problems: see the report)" if more > 0 else ""))
        self.report = report
