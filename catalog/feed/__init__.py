"""The change feed as readers take it: the store's events as CloudEvents,
filtered by the reader's grants (events), the same feed in the proposed
Iceberg REST events shape (iceberg_events), OpenLineage for views
(lineage_events), and webhooks that push the feed to a URL (webhooks).

Imports of catalog/: the kernel and views/ (a view's status at a commit);
nothing imports it but the wiring (catalog/services.py) and the API."""
