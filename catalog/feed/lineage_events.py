"""OpenLineage for views (issue 26): each view or materialized-view version
a change wrote, and each refresh of a materialized view, becomes an
OpenLineage RunEvent (built with
``openlineage-python``) whose output is the view — its ``schema`` facet from
the view's schema, its ``columnLineage`` facet from the field origins the
catalog recorded for its SQL (core.sql) — and whose inputs are what the SQL
reads. Lineage tools (Marquez, DataHub, OpenMetadata) take them as they
are; the feed carries them as ``dev.sapwood.openlineage`` CloudEvents.

Datasets are named by key within the namespace ``<source>:<ref>`` (the
catalog's event source and the reference), so the same view on two
branches is two datasets.

An event says what the routes say to the same reader (``readable``, as
core.redact takes it): the column lineage is ``…/lineage``'s, by the same
function, so an input field whose way passes an object the reader may not
read is that object by name with no column (``"field": ""``)."""

from __future__ import annotations

import uuid
from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset as cl
from openlineage.client.facet_v2 import dataset_version_dataset as dv
from openlineage.client.facet_v2 import schema_dataset as sd
from openlineage.client.serde import Serde

from catalog.views.status import primary
from core import redact
from core.content import IcebergView, MaterializedView
from core.mv.metadata import Refresh
from core.sql.validity import Readable

PRODUCER = "https://github.com/sapwood/sapwood"
_RUNS = uuid.UUID("6b3f6f6a-5a77-4c6e-9d3b-0c1f3f2d9a10")  # uuid5 namespace of run ids


def view_run_event(view: IcebergView | MaterializedView, key: tuple[str, ...], schema: Any,
                   ref: str, source: str, event_id: int, time_iso: str,
                   readable: Readable | None = None) -> dict[str, Any]:
    """The RunEvent for one written view version, as JSON-ready data; its
    inputs are the names the view's SQL reads (those alone, hidden or not)."""
    namespace = f"{source}:{ref}"
    name = ".".join(key)
    facets = _view_facets(view, schema, namespace, readable)
    analysis = primary(view)
    inputs = sorted({tuple(d.key) for d in (analysis.dependencies if analysis else [])})
    event = RunEvent(
        eventTime=time_iso, producer=PRODUCER, eventType=RunState.COMPLETE,
        run=Run(runId=str(uuid.uuid5(_RUNS, f"{event_id}/{name}"))),
        job=Job(namespace=namespace, name=f"{name} (definition)"),
        inputs=[InputDataset(namespace, ".".join(k)) for k in inputs],
        outputs=[OutputDataset(namespace, name, facets=facets)])
    out: dict[str, Any] = Serde.to_dict(event)
    return out


def refresh_run_event(mv: MaterializedView, key: tuple[str, ...], schema: Any, refresh: Refresh,
                      ref: str, source: str, event_id: int, time_iso: str,
                      readable: Readable | None = None) -> dict[str, Any]:
    """The RunEvent for one refresh of a materialized view: its inputs are
    the base tables at the snapshots the refresh read (``version`` facets),
    its output the view's storage at the snapshot it produced."""
    namespace = f"{source}:{ref}"
    name = ".".join(key)
    facets = _view_facets(mv, schema, namespace, readable)
    if refresh.snapshot_id is not None:
        facets["version"] = dv.DatasetVersionDatasetFacet(
            datasetVersion=str(refresh.snapshot_id), producer=PRODUCER)
    event = RunEvent(
        eventTime=time_iso, producer=PRODUCER, eventType=RunState.COMPLETE,
        run=Run(runId=str(uuid.uuid5(_RUNS, f"{event_id}/{name}/refresh/{refresh.refresh_id}"))),
        job=Job(namespace=namespace, name=f"{name} (refresh)"),
        inputs=_refresh_inputs(mv, refresh, namespace, readable),
        outputs=[OutputDataset(namespace, name, facets=facets)])
    out: dict[str, Any] = Serde.to_dict(event)
    return out


def _refresh_inputs(mv: MaterializedView, refresh: Refresh, namespace: str,
                    readable: Readable | None) -> list[InputDataset]:
    """The base tables a refresh read, as the refresh record's answer gives
    them to the reader (core.redact.refreshes): a hidden one the SQL names
    by its name alone (no version), the others with the snapshot read."""
    a = primary(mv)
    deps = [d.model_dump(by_alias=True, exclude_none=True) for d in a.dependencies] if a else []
    (record,) = redact.refreshes([refresh.model_dump(mode="json", by_alias=True)], readable,
                                 deps)
    return [InputDataset(namespace, table) if base.get(redact.REDACTED) else
            InputDataset(namespace, table, facets={"version": dv.DatasetVersionDatasetFacet(
                datasetVersion=str(base["snapshot-reference"]), producer=PRODUCER)})
            for table, base in sorted(record["base-tables"].items())]


def _view_facets(view: IcebergView | MaterializedView, schema: Any, namespace: str,
                 readable: Readable | None) -> dict[str, Any]:
    """The ``schema`` facet, and ``columnLineage`` from the recorded origins
    as ``…/lineage`` gives them to the reader."""
    analysis = primary(view)
    lineage = redact.lineage(analysis.model_dump(by_alias=True, exclude_none=True)
                             if analysis is not None else None, readable)
    fields = {
        c["name"]: cl.Fields(
            inputFields=[cl.InputField(namespace, ".".join(o["table"]), o.get("column", ""))
                         for o in c["origins"]],
            transformationType="TRANSFORMATION" if c["derived"] else "IDENTITY",
            transformationDescription="derived" if c["derived"] else "as is")
        for c in lineage}
    facets: dict[str, Any] = {
        "schema": sd.SchemaDatasetFacet(fields=[
            sd.SchemaDatasetFacetFields(name=f.name, type=str(f.field_type))
            for f in schema.fields], producer=PRODUCER)}
    if fields:
        facets["columnLineage"] = cl.ColumnLineageDatasetFacet(fields=fields, producer=PRODUCER)
    return facets
