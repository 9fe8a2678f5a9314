"""The commit-log store (SQLAlchemy 2; SQLite file or PostgreSQL)."""

from store.store import Store

__all__ = ["Store"]
