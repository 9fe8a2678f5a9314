"""What every route needs, in one table, keyed by the route's name: the
privilege it asks, and what the layers around it must know of it — whether
it is one of the reads clients send most (``hot``: answered before
FastAPI's routing by api.hot_reads, and matched first by api.app), whether
a POST only asks and changes nothing (``changes_nothing``: an
Idempotency-Key is ignored there, api.idempotency). No other registry
names routes.

The application refuses to start when a route is missing here
(``check_complete``), and tests/api/test_auth_routes.py walks this table, so
a new route without a rule fails before it can serve anyone.

``ref`` says where the addressed reference comes from: ``iceberg`` (the
path's ref or prefix, as api.paths folds it), a path parameter,
``query:<name>``, ``all`` (a grant covering every reference, ``*``), or
``any`` (the privilege on at least one reference).
``key`` says which part of the catalog the privilege must cover: ``None`` is
the whole reference (logs, merges, diffs), ``ns`` the namespace path
parameter, ``ns+table`` / ``ns+view`` that plus the name, ``key`` a
versioning-API key, and ``handler`` that the handler checks the keys its body
names (the wrapper then asks only that the privilege reaches somewhere into
the reference). ``listing`` routes show only what the caller may read.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.auth import Privilege

R, W = Privilege.READ, Privilege.WRITE


@dataclass(frozen=True, slots=True)
class Rule:
    privilege: Privilege | None  # None: public (no credential needed)
    ref: str = "iceberg"
    key: str | None = None
    listing: bool = False
    # A write that changes a branch directly (refused on a protected branch).
    direct_write: bool = False
    # A read that the spec's referenced-by may let in through definer views.
    via_views: bool = False
    # One of the requests clients send most (Spark loads a table or view per
    # statement, and signs a request per file): answered before FastAPI's
    # routing by calling the route's own function (api.hot_reads), and
    # matched first (api.app); 1 the most often sent.
    hot: int = 0
    # A POST that asks and changes nothing in the catalog (a query, a token):
    # an Idempotency-Key is ignored there (an answer kept for another
    # request is never its answer).
    changes_nothing: bool = False


PUBLIC = Rule(None)

RULES: dict[str, Rule] = {
    # -- public: discovery and the token endpoint itself ----------------------------
    "get_config": Rule(None, hot=4),
    "oauth_tokens": Rule(None, changes_nothing=True),
    "nessie_config": PUBLIC,
    # Nessie's repository configuration: none kept, an update refused (api.routes.nessie_repo).
    "repository_config": PUBLIC,
    "update_repository_config": PUBLIC,
    # -- operations: probes and metrics (no catalog contents) ---------------------------
    "healthz": PUBLIC,
    "readyz": PUBLIC,
    "metrics": PUBLIC,
    # Where the API reference is (a 404 that says so).
    "docs_page": PUBLIC,
    "redoc_page": PUBLIC,
    # -- Iceberg REST: namespaces ------------------------------------------------------
    "list_namespaces": Rule(R, key="handler", listing=True),
    "create_namespace": Rule(W, key="handler", direct_write=True),
    "load_namespace": Rule(R, key="ns", hot=3),
    "namespace_exists": Rule(R, key="ns"),
    "drop_namespace": Rule(W, key="ns", direct_write=True),
    "update_properties": Rule(W, key="ns", direct_write=True),
    # -- tables -------------------------------------------------------------------------
    "list_tables": Rule(R, key="ns", listing=True),
    "create_table": Rule(W, key="ns", direct_write=True),
    "load_table": Rule(R, key="ns+table", via_views=True, hot=1),
    "table_exists": Rule(R, key="ns+table"),
    "commit_table": Rule(W, key="ns+table", direct_write=True),
    "drop_table": Rule(W, key="ns+table", direct_write=True),
    "report_metrics": Rule(R, key="ns+table", changes_nothing=True),
    # Storage access: read to ask at all; what is signed or vended follows
    # the caller's privileges on the table (api.delegated).
    "sign_request": Rule(R, key="ns+table", via_views=True, hot=5, changes_nothing=True),
    # The change feed: read on some reference; what it shows is filtered.
    "list_events": Rule(R, ref="any"),
    # The prefix's reference; keys the caller may not read are left out.
    "query_events": Rule(R, key="handler", listing=True, changes_nothing=True),
    # Webhooks: the owner's read decides what they deliver; handlers check
    # that a webhook is the caller's own unless it holds manage-grants.
    **{name: Rule(R, ref="any") for name in (
        "add_webhook", "list_webhooks", "get_webhook", "remove_webhook", "resume_webhook")},
    "load_credentials": Rule(R, key="ns+table", via_views=True),
    "register_table": Rule(W, key="ns", direct_write=True),
    "unregister_table": Rule(W, key="ns+table", direct_write=True),
    "rename_table": Rule(W, key="handler", direct_write=True),
    "commit_transaction": Rule(W, key="handler", direct_write=True),
    # -- views --------------------------------------------------------------------------
    "list_views": Rule(R, key="ns", listing=True),
    "create_view": Rule(W, key="ns", direct_write=True),
    "load_view": Rule(R, key="ns+view", via_views=True, hot=2),
    "view_exists": Rule(R, key="ns+view"),
    "replace_view": Rule(W, key="ns+view", direct_write=True),
    "drop_view": Rule(W, key="ns+view", direct_write=True),
    "register_view": Rule(W, key="ns", direct_write=True),
    "rename_view": Rule(W, key="handler", direct_write=True),
    # -- versioning API: references ---------------------------------------------------------
    "list_references": Rule(R, ref="*", listing=True),
    "create_reference": Rule(Privilege.CREATE_REFERENCE, ref="query:name"),
    "get_reference": Rule(R, ref="ref", key="handler", hot=6),
    "assign_reference": Rule(W, ref="ref"),
    "delete_reference": Rule(Privilege.DELETE_REFERENCE, ref="ref"),
    # -- history, commits, merges --------------------------------------------------------
    "history": Rule(R, ref="ref"),
    "commit": Rule(W, ref="ref", key="handler", direct_write=True),
    "merge": Rule(Privilege.MERGE_INTO, ref="ref"),
    "transplant": Rule(Privilege.MERGE_INTO, ref="ref"),
    # Undo: write on each key changed (the handler checks), read on a restore's source.
    "restore_keys": Rule(W, ref="ref", key="handler", direct_write=True),
    "revert_commits": Rule(W, ref="ref", key="handler", direct_write=True),
    # -- contents, diff, audit ----------------------------------------------------------------
    "entries": Rule(R, ref="ref", key="handler", listing=True),
    "get_content": Rule(R, ref="ref", key="key"),
    "get_contents": Rule(R, ref="ref", key="handler"),
    "post_contents": Rule(R, ref="ref", key="handler", changes_nothing=True),
    "diff": Rule(R, ref="from_ref"),
    "audit_view": Rule(R, ref="ref", key="key"),
    "view_dependencies": Rule(R, ref="ref", key="key"),
    "view_lineage": Rule(R, ref="ref", key="key"),
    "add_view_representation": Rule(W, ref="ref", key="key", direct_write=True),
    "recompile_view": Rule(W, ref="ref", key="key", direct_write=True),
    # Dependents may live anywhere: those the caller may not read are left
    # out, and not walked through (api.v2.redact).
    "content_dependents": Rule(R, ref="ref", key="key"),
    "list_views_by_status": Rule(R, ref="ref", key="handler", listing=True),
    # -- materialized views (the refresh itself is an Iceberg table commit) -------------
    "create_materialized_view": Rule(W, ref="ref", key="handler", direct_write=True),
    "get_materialized_view": Rule(R, ref="ref", key="key"),
    "replace_materialized_view": Rule(W, ref="ref", key="key", direct_write=True),
    "drop_materialized_view": Rule(W, ref="ref", key="key", direct_write=True),
    "materialized_view_freshness": Rule(R, ref="ref", key="key"),
    "materialized_view_refresh_plan": Rule(R, ref="ref", key="key"),
    # -- grants and protections (a power over every reference) ---------------------------
    "list_grants": Rule(Privilege.MANAGE_GRANTS, ref="all"),
    "add_grant": Rule(Privilege.MANAGE_GRANTS, ref="all"),
    "revoke_grant": Rule(Privilege.MANAGE_GRANTS, ref="all"),
    "protect_refs": Rule(Privilege.MANAGE_GRANTS, ref="all"),
    "unprotect_refs": Rule(Privilege.MANAGE_GRANTS, ref="all"),
    # -- the web UI: public pages that call the API with the visitor's token (the
    # API's rules apply to what they show and do) ------------------------------------
    **{name: PUBLIC for name in (
        "root", "ui_references", "ui_create_reference", "ui_confirm_delete",
        "ui_delete_reference", "ui_log", "ui_commit", "ui_as_of", "ui_tree", "ui_object",
        "ui_diff", "ui_merge_preview", "ui_merge", "ui_login_form", "ui_login", "ui_logout_form",
        "ui_logout",
        "ui_restore_preview", "ui_restore", "ui_revert_preview", "ui_revert",
        "ui_log_default", "ui_tree_default", "ui_switch", "ui_not_found")},
    # -- administration -----------------------------------------------------------------
    "run_gc": Rule(Privilege.MANAGE_GRANTS, ref="all"),
    "run_fsck": Rule(Privilege.MANAGE_GRANTS, ref="all"),
    "run_import": Rule(Privilege.MANAGE_GRANTS, ref="all"),
    # -- retention policies: managing them is a power over every reference's
    # history; what each reference retains is shown to whoever may read it ----------
    "get_retention": Rule(Privilege.MANAGE_GRANTS, ref="all"),
    "replace_retention": Rule(Privilege.MANAGE_GRANTS, ref="all"),
    "retention_cutoffs": Rule(R, ref="*", listing=True),
}


def check_complete(route_names: list[str]) -> None:
    missing = sorted(set(route_names) - set(RULES))
    if missing:
        raise RuntimeError(f"routes without an authorization rule in api/auth/policy.py: "
                           f"{', '.join(missing)}")
