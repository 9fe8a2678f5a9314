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
branches is two datasets."""

from __future__ import annotations

import uuid
from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset as cl
from openlineage.client.facet_v2 import dataset_version_dataset as dv
from openlineage.client.facet_v2 import schema_dataset as sd
from openlineage.client.serde import Serde

from core.content import IcebergView, MaterializedView
from core.mv.metadata import Refresh

PRODUCER = "https://github.com/sapwood/sapwood"
_RUNS = uuid.UUID("6b3f6f6a-5a77-4c6e-9d3b-0c1f3f2d9a10")  # uuid5 namespace of run ids


def view_run_event(view: IcebergView | MaterializedView, key: tuple[str, ...], schema: Any,
                   ref: str, source: str, event_id: int, time_iso: str) -> dict[str, Any]:
    """The RunEvent for one written view version, as JSON-ready data."""
    namespace = f"{source}:{ref}"
    name = ".".join(key)
    facets = _view_facets(view, schema, namespace)
    analysis = view.analysis[0] if view.analysis else None
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
                      ref: str, source: str, event_id: int, time_iso: str) -> dict[str, Any]:
    """The RunEvent for one refresh of a materialized view: its inputs are
    the base tables at the snapshots the refresh read (``version`` facets),
    its output the view's storage at the snapshot it produced."""
    namespace = f"{source}:{ref}"
    name = ".".join(key)
    facets = _view_facets(mv, schema, namespace)
    if refresh.snapshot_id is not None:
        facets["version"] = dv.DatasetVersionDatasetFacet(
            datasetVersion=str(refresh.snapshot_id), producer=PRODUCER)
    event = RunEvent(
        eventTime=time_iso, producer=PRODUCER, eventType=RunState.COMPLETE,
        run=Run(runId=str(uuid.uuid5(_RUNS, f"{event_id}/{name}/refresh/{refresh.refresh_id}"))),
        job=Job(namespace=namespace, name=f"{name} (refresh)"),
        inputs=[InputDataset(namespace, table, facets={"version": dv.DatasetVersionDatasetFacet(
            datasetVersion=str(base.snapshot_reference), producer=PRODUCER)})
            for table, base in sorted(refresh.base_tables.items())],
        outputs=[OutputDataset(namespace, name, facets=facets)])
    out: dict[str, Any] = Serde.to_dict(event)
    return out


def _view_facets(view: IcebergView | MaterializedView, schema: Any,
                 namespace: str) -> dict[str, Any]:
    """The ``schema`` facet, and ``columnLineage`` from the recorded origins."""
    analysis = view.analysis[0] if view.analysis else None
    lineage = analysis.lineage() if analysis is not None else {}
    fields = {
        column: cl.Fields(
            inputFields=[cl.InputField(namespace, ".".join(o.table), o.column)
                         for o in lin.origins],
            transformationType="TRANSFORMATION" if lin.derived else "IDENTITY",
            transformationDescription="derived" if lin.derived else "as is")
        for column, lin in lineage.items()}
    facets: dict[str, Any] = {
        "schema": sd.SchemaDatasetFacet(fields=[
            sd.SchemaDatasetFacetFields(name=f.name, type=str(f.field_type))
            for f in schema.fields], producer=PRODUCER)}
    if fields:
        facets["columnLineage"] = cl.ColumnLineageDatasetFacet(fields=fields, producer=PRODUCER)
    return facets
