"""OpenLineage JSON read back into openlineage-python's own classes, as a
consumer in Python would: openlineage-python serializes (Serde) but has no
parser, so this builds its attrs classes field by field — their validators
check the run id and event time — for the facets Sapwood sends. A field the
classes do not know fails; ``parse`` then checks that serializing the parsed
event gives back exactly the JSON it came from."""

from __future__ import annotations

from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset as cl
from openlineage.client.facet_v2 import dataset_version_dataset as dv
from openlineage.client.facet_v2 import schema_dataset as sd
from openlineage.client.serde import Serde

_BASE = ("_producer", "_schemaURL")


def _facet(name: str, data: dict[str, Any]) -> Any:
    rest = {k: v for k, v in data.items() if k not in _BASE}
    producer = data["_producer"]
    if name == "schema":
        return sd.SchemaDatasetFacet(fields=[sd.SchemaDatasetFacetFields(**f)
                                             for f in rest.pop("fields")],
                                     producer=producer, **rest)
    if name == "columnLineage":
        return cl.ColumnLineageDatasetFacet(fields={
            column: cl.Fields(inputFields=[cl.InputField(**i) for i in f["inputFields"]],
                              **{k: v for k, v in f.items() if k != "inputFields"})
            for column, f in rest.pop("fields").items()}, producer=producer, **rest)
    if name == "version":
        return dv.DatasetVersionDatasetFacet(producer=producer, **rest)
    raise AssertionError(f"a facet this parser does not know: {name}")


def _facets(data: dict[str, Any] | None) -> dict[str, Any]:
    return {name: _facet(name, dict(f)) for name, f in (data or {}).items()}


def parse(event: dict[str, Any]) -> RunEvent:
    """``event`` as openlineage-python's RunEvent (AssertionError: it is not one)."""
    parsed = RunEvent(
        eventTime=event["eventTime"], producer=event["producer"],
        eventType=RunState(event["eventType"]),
        run=Run(runId=event["run"]["runId"]),
        job=Job(namespace=event["job"]["namespace"], name=event["job"]["name"]),
        inputs=[InputDataset(d["namespace"], d["name"], facets=_facets(d.get("facets")))
                for d in event.get("inputs", [])],
        outputs=[OutputDataset(d["namespace"], d["name"], facets=_facets(d.get("facets")))
                 for d in event.get("outputs", [])])
    again = Serde.to_dict(parsed)
    assert again == event, f"the event has fields openlineage-python drops: {again} != {event}"
    return parsed
