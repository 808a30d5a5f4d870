"""Reading a batch's runs for its export, and checking the export before it is printed.

The check is ARC's own JSON Schema (for our course: the same schema with the course's test-set name, ids and
the receipt allowed, as our MCP tool publishes it), then our submission service's parser: what we print is what
ARC and our site both accept.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any
from uuid import UUID

import jsonschema  # type: ignore[import-untyped]
import msgspec

from adapters.wiring import Runtime
from domain.arc import SubmissionProblem
from domain.arc_batches import ArcBatch, load_batch
from domain.arc_export import RunEnd, submission_of
from domain.arc_validation import parse_submission
from web.public.recording import NotPublic, load_recording


class UnknownBatchError(LookupError):
    def __str__(self) -> str:
        return f"no ARC batch {self.args[0]}"


def run_end(runtime: Runtime, run_id: UUID) -> RunEnd | None:
    try:
        recording = load_recording(runtime.record, run_id)
    except NotPublic:
        return None
    run = recording.run
    shots = [s.screenshot for s in recording.steps if s.screenshot]
    reason = recording.verdict.reason if recording.verdict else (run.cut_short_detail or "")
    return RunEnd(status=run.status, verdict=recording.verdict, steps=run.steps, seconds=run.seconds,
                  ended_at=run.ended_at, agent_version=run.agent_version, screenshot=shots[-1] if shots else None,
                  reason=reason)


def batch_ends(runtime: Runtime, batch_id: UUID) -> tuple[ArcBatch, dict[str, RunEnd]]:
    """The batch and what each of its runs ended with (by run id; runs not found are left out)."""
    batch = load_batch(runtime.record.repository, batch_id)
    if batch is None:
        raise UnknownBatchError(batch_id)
    ends = {row.run_id: end for row in batch.rows if (end := run_end(runtime, UUID(row.run_id))) is not None}
    return batch, ends


def export_batch(runtime: Runtime, batch_id: UUID, *, evidence_base: str | None) -> dict[str, Any]:
    batch, ends = batch_ends(runtime, batch_id)
    return submission_of(batch, ends, evidence_base=evidence_base)


@cache
def arc_schema() -> dict[str, Any]:
    text = (resources.files("domain") / "testsets" / "arc-submission-v1.schema.json").read_text()
    return json.loads(text)  # type: ignore[no-any-return]


def schema_for(course: bool) -> dict[str, Any]:
    if not course:
        return arc_schema()
    from web.mcp import input_schema

    return input_schema()


def check_export(document: dict[str, Any], *, course: bool) -> str | None:
    """The first problem found, or None when both ARC's schema and our parser accept the document."""
    validator = jsonschema.Draft202012Validator(schema_for(course), format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        error = errors[0]
        where = ".".join(str(p) for p in error.absolute_path) or "(the object)"
        # jsonschema's message quotes the whole instance; a long one says only which keyword failed.
        message = error.message if len(error.message) <= 200 else f"fails {error.validator} {error.validator_value!r}"
        return f"{where}: {message} (ARC's JSON Schema)"
    try:
        parse_submission(msgspec.json.encode(document))
    except SubmissionProblem as error:
        return str(error)
    return None
