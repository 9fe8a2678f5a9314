"""The Spark helpers' client of the versioning API: the shared typed client
(client.Client, over httpx) and the few steps of their own the helpers take
(a reference's head, a key's first change since an instant)."""

from __future__ import annotations

from typing import Any

from client import Client


class Versioning(Client):
    """``Versioning(uri, credential=, author=)``: ``credential`` (an API key
    ``id:secret``) is for a catalog with authentication on; ``author`` names
    the commits this client's writes make (the ``Sapwood-Commit-Author``
    header on every request, as a Spark catalog's ``header.`` property does,
    and a merge's ``commitMeta``). Refusals raise client.errors' ApiError,
    which spark.errors names CatalogError."""

    def head(self, ref: str) -> str:
        return self.reference(ref).hash

    def create_branch(self, name: str, from_ref: str = "main") -> str:
        """Create branch ``name`` at ``from_ref``'s head; returns that hash."""
        return self.create(name, from_ref).hash

    def delete_branch(self, name: str) -> None:
        self.delete(name)

    def first_change_since(self, key: str, ref: str, since: str) -> dict[str, Any] | None:
        """The oldest commit on ``ref`` (first parents, as the log walks)
        since instant ``since`` that changed ``key``: for a key that was not
        there at ``since``, the commit that created it. None when none did."""
        oldest = None
        for entry in self.log(ref, key=key, since=since):
            oldest = entry
        return oldest["commitMeta"] if oldest else None
