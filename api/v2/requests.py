"""Request bodies of the versioning API (Nessie v2 names)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from api.limits import check_count, check_message, check_names, check_properties
from core.commits import MergeBehavior, check_client_properties
from core.keys import ContentKey
from core.refs import normalize_hash


class _Body(BaseModel):
    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="ignore")


class KeyBody(_Body):
    elements: list[str] = Field(min_length=1)

    @field_validator("elements")
    @classmethod
    def _limits(cls, value: list[str]) -> list[str]:
        check_names(value, "key element")
        return value

    def key(self) -> ContentKey:
        return ContentKey(self.elements)


class ReferenceBody(_Body):
    type: Literal["BRANCH", "TAG", "DETACHED"] | None = None
    name: str | None = None
    hash: str | None = None

    def spec(self) -> str | None:
        """As a ref spec: ``name@hash``, ``@hash`` (detached) or ``name``; a
        malformed hash is a 400 naming the field, as every route answers one
        (core.refs.normalize_hash)."""
        if self.hash:
            h = normalize_hash(self.hash, context="hash")
            return f"{self.name}@{h}" if self.name and self.type != "DETACHED" else f"@{h}"
        return self.name


class CommitMetaBody(_Body):
    """Nessie's CommitMeta. What the server assigns (``hash``, ``committer``,
    the times, the parents) a client may send empty, as Nessie's Java client
    does; what Sapwood does not keep (sign-offs) only empty; its
    ``allProperties`` (one value per key: Sapwood keeps one) are the
    commit's properties. Any other field is a 400 naming it."""

    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="forbid")

    message: str = ""
    author: str | None = None
    authors: list[str] = []
    properties: dict[str, str] = {}
    all_properties: dict[str, list[str]] | None = Field(None, alias="allProperties")
    all_signed_off_by: list[str] | None = Field(None, alias="allSignedOffBy")
    signed_off_by: str | None = Field(None, alias="signedOffBy")
    hash: str | None = None
    committer: str | None = None
    commit_time: str | None = Field(None, alias="commitTime")
    author_time: str | None = Field(None, alias="authorTime")
    parent_commit_hashes: list[str] | None = Field(None, alias="parentCommitHashes")

    @model_validator(mode="before")
    @classmethod
    def _nessie_fields(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        for name in ("hash", "committer", "commitTime", "authorTime", "signedOffBy"):
            if value.get(name):
                raise ValueError(f"commitMeta.{name} is set by the server, not by a client: "
                                 "send it null or leave it out")
        for name in ("allSignedOffBy", "parentCommitHashes"):
            if value.get(name):
                raise ValueError(f"commitMeta.{name} is not kept by Sapwood: send it empty "
                                 "or leave it out")
        multi = value.get("allProperties")
        if not multi:
            return value
        if not isinstance(multi, dict):
            return value  # the field's type check names it
        single = dict(value.get("properties") or {})
        for k, v in multi.items():
            if not isinstance(v, list) or len(v) != 1:
                raise ValueError(f"commitMeta.allProperties[{k!r}] must hold exactly one "
                                 "value: Sapwood keeps one value per commit property")
            if k in single and single[k] != v[0]:
                raise ValueError(f"commitMeta.properties and allProperties give {k!r} "
                                 "different values: give one")
            single[k] = v[0]
        return {**value, "properties": single}

    @field_validator("properties", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> Any:
        return {k: str(v) for k, v in value.items()} if isinstance(value, dict) else value

    @field_validator("properties")
    @classmethod
    def _limits(cls, value: dict[str, str]) -> dict[str, str]:
        check_properties(value)
        return value

    @field_validator("message")
    @classmethod
    def _message(cls, value: str) -> str:
        check_message(value)
        return value

    @model_validator(mode="after")
    def _one_author_list(self) -> CommitMetaBody:
        # Nessie's Java client sends both: ``author`` (deprecated) as the
        # first of ``authors``; two lists that disagree are a mistake.
        if self.author and self.authors and self.author != self.authors[0]:
            raise ValueError(f"commitMeta.author ({self.author!r}) is not the first of "
                             f"commitMeta.authors ({self.authors!r}): give one of them")
        return self

    @property
    def author_text(self) -> str | None:
        """The commit's author as Sapwood keeps it: every author, in order,
        joined by ', ' (as an import from Nessie keeps them), never only the
        first."""
        if self.authors:
            return ", ".join(self.authors)
        return self.author

    def client_properties(self) -> dict[str, str]:
        """The properties the client may set: one under the catalog's own
        ``sapwood.`` prefix is a 400 naming it (core.commits)."""
        check_client_properties(self.properties, "commitMeta.properties")
        return dict(self.properties)


class _Strict(_Body):
    """A body whose every field is known: any other is a 400 naming it."""

    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="forbid")


class OperationBody(_Strict):
    type: Literal["PUT", "DELETE", "UNCHANGED"]
    key: KeyBody
    content: dict[str, Any] | None = None
    expected_content: dict[str, Any] | None = Field(None, alias="expectedContent")
    # Nessie's per-key documentation: Sapwood keeps none, so only null is taken.
    documentation: None = None

    @field_validator("content")
    @classmethod
    def _limits(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        # A namespace's properties: what the Iceberg API limits, limited alike.
        props = value.get("properties") if value else None
        if isinstance(props, dict):
            check_properties(props)
        return value


class CommitBody(_Strict):
    commit_meta: CommitMetaBody = Field(CommitMetaBody(), alias="commitMeta")
    operations: list[OperationBody] = Field(min_length=1)

    @field_validator("operations")
    @classmethod
    def _limits(cls, value: list[OperationBody]) -> list[OperationBody]:
        check_count(len(value), "operations")
        return value


class KeyMergeMode(_Body):
    key: KeyBody
    merge_behavior: MergeBehavior = Field(alias="mergeBehavior")


class _MergeOptions(_Body):
    """What merges and transplants share: per-key modes, dry run, and whether
    a conflict is an error or a result. A field it does not know is refused
    (400 naming it), never ignored: a merge asked to be a dry run in a
    spelling it did not know would land."""

    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="forbid")

    default_key_merge_mode: MergeBehavior = Field(MergeBehavior.NORMAL,
                                                  alias="defaultKeyMergeMode")
    key_merge_modes: list[KeyMergeMode] = Field([], alias="keyMergeModes")
    dry_run: bool = Field(False, alias="dryRun")
    return_conflict_as_result: bool = Field(False, alias="returnConflictAsResult")
    fetch_additional_info: bool = Field(False, alias="fetchAdditionalInfo")
    # Nessie's older spellings, which its Java client still sends: a dry run
    # asked as ``isDryRun`` had merged for real while the field was ignored.
    is_dry_run: bool | None = Field(None, alias="isDryRun")
    is_return_conflict_as_result: bool | None = Field(None, alias="isReturnConflictAsResult")
    is_fetch_additional_info: bool | None = Field(None, alias="isFetchAdditionalInfo")

    @model_validator(mode="after")
    def _one_spelling(self) -> _MergeOptions:
        for field, new, old, value, older in (
                ("dry_run", "dryRun", "isDryRun", self.dry_run, self.is_dry_run),
                ("return_conflict_as_result", "returnConflictAsResult",
                 "isReturnConflictAsResult", self.return_conflict_as_result,
                 self.is_return_conflict_as_result),
                ("fetch_additional_info", "fetchAdditionalInfo", "isFetchAdditionalInfo",
                 self.fetch_additional_info, self.is_fetch_additional_info)):
            if older is not None and field in self.model_fields_set and older != value:
                raise ValueError(f"'{new}' and '{old}' are the same field and were given "
                                 "different values: give one of them")
        return self

    @property
    def dry(self) -> bool:
        return self.dry_run or bool(self.is_dry_run)

    @property
    def conflict_as_result(self) -> bool:
        return self.return_conflict_as_result or bool(self.is_return_conflict_as_result)

    def modes(self) -> dict[ContentKey, MergeBehavior]:
        return {m.key.key(): m.merge_behavior for m in self.key_merge_modes}


class MergeBody(_MergeOptions):
    from_ref_name: str = Field(alias="fromRefName")
    from_hash: str | None = Field(None, alias="fromHash")
    commit_meta: CommitMetaBody | None = Field(None, alias="commitMeta")
    message: str | None = None
    # Sapwood: combine keys both sides changed where it is safe (tables both
    # only appended to, views, namespace properties); false: Nessie's rules.
    content_merge: bool = Field(True, alias="contentMerge")

    @field_validator("message")
    @classmethod
    def _message(cls, value: str | None) -> str | None:
        check_message(value)
        return value

    def source(self) -> str:
        """The merge's source as a ref spec (``fromRefName[@fromHash]``)."""
        if not self.from_hash:
            return self.from_ref_name
        return f"{self.from_ref_name}@{normalize_hash(self.from_hash, context='fromHash')}"


class TransplantBody(_MergeOptions):
    hashes_to_transplant: list[str] = Field(alias="hashesToTransplant", min_length=1)
    from_ref_name: str | None = Field(None, alias="fromRefName")
    content_merge: bool = Field(True, alias="contentMerge")

    def hashes(self) -> list[str]:
        return [normalize_hash(h, context="hashesToTransplant")
                for h in self.hashes_to_transplant]


class ContentsBody(_Strict):
    requested_keys: list[KeyBody] = Field(alias="requestedKeys")
