"""Request body of ``PUT /api/v2/retention``: the whole list of retention
policies, in matching order. Unknown fields are refused (a misspelt
``keepCommit`` must not silently mean "keep only the head"); what the
values may be is core.retention's to check."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.retention import Policy


class _Body(BaseModel):
    # Only the wire's names: ``keep_commits`` is an unknown field too.
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=False)


class PolicyBody(_Body):
    # Strict: a count sent as "5", 5.0 or true is refused, not converted.
    refs: str = Field(strict=True)
    keep: str | None = Field(None, strict=True)
    keep_commits: int | None = Field(None, alias="keepCommits", strict=True)

    def policy(self) -> Policy:
        return Policy(self.refs, self.keep, self.keep_commits)


class RetentionBody(_Body):
    policies: list[PolicyBody]
