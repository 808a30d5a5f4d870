"""Reading a batch's runs for its export, and checking the export before it is printed.

The check is ARC's own JSON Schema (for our course: the same schema with the course's test-set name, ids and
the receipt allowed, as our MCP tool publishes it), then our submission service's parser: what we print is what
ARC and our site both accept.
"""

from __future__ import annotations

from functools import cache
from typing import Any
from uuid import UUID

import jsonschema  # type: ignore[import-untyped]
import msgspec

from adapters.wiring import Runtime
from domain.leaderboards.arc import SubmissionProblem
from domain.leaderboards.arc_batches import ArcBatch, load_batch
from domain.leaderboards.arc_export import RunEnd, submission_of
from domain.leaderboards.arc_export import run_end as end_of
from domain.leaderboards.arc_schema import arc_schema, course_schema
from domain.leaderboards.arc_validation import parse_submission


class UnknownBatchError(LookupError):
    def __str__(self) -> str:
        return f"no ARC batch {self.args[0]}"


def run_end(runtime: Runtime, run_id: UUID) -> RunEnd | None:
    return end_of(list(runtime.record.repository.event_store.get(run_id)))


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
def schema_for(course: bool) -> dict[str, Any]:
    if not course:
        return arc_schema()
    return course_schema()


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
