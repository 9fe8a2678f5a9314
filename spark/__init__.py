"""PySpark side of Sapwood; talks to the catalog over HTTP only (never imports
``api``, ``store`` or ``core``)."""

from spark.errors import CatalogError, NotFoundError, QueryError, SetupError
from spark.lineage import view_dependents, view_lineage
from spark.session import add_catalog, catalog_conf, session
from spark.views import create_branch, diff, merge, read_view, restore, revert, view_history

__all__ = ["CatalogError", "NotFoundError", "QueryError", "SetupError", "add_catalog",
           "catalog_conf", "create_branch", "diff", "merge", "read_view", "restore", "revert",
           "session", "view_dependents", "view_history", "view_lineage"]
