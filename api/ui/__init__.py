"""The web UI (``/ui``): server-rendered pages over the catalog's own HTTP
API, called in-process with the visitor's credential, so the UI holds no
powers of its own: what the API refuses, the page shows as refused."""
