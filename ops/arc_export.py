"""Reading a batch's runs for its export, the outcomes a person gave, and checking the export before it is printed.

Outcomes a person gave (`--outcomes FILE`): a CSV with the columns id and outcome, one row a reviewed row of the
batch, each outcome one of ARC's. Rows that need review take one (`no_cart` by code on a store outside our lab),
and so may `blocked` by code there; a course row, or one code judged error or not_attempted, is refused, as is an
id not in the batch.

The check is ARC's own JSON Schema (for our course: the same schema with the course's test-set name, ids and
the receipt allowed, as our MCP tool publishes it), then our submission service's parser: what we print is what
ARC and our site both accept.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any
from uuid import UUID

import jsonschema  # type: ignore[import-untyped]
import msgspec

from adapters.wiring import Runtime
from domain.leaderboards.arc import ARC_TEST_SET, COURSE_TEST_SET, OUTCOMES, SubmissionProblem, TestItem, arc_100_v1
from domain.leaderboards.arc_batches import ArcBatch, load_batch
from domain.leaderboards.arc_export import RunEnd, arc_outcome, may_review, submission_of, unreviewed
from domain.leaderboards.arc_export import run_end as end_of
from domain.leaderboards.arc_schema import arc_schema, course_schema
from domain.leaderboards.arc_validation import parse_submission
from ops.arc_files import differs_from_frozen


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


class ExportRefused(ValueError):
    """The batch cannot be exported as it is; the message says why and what to do, in one line."""


def review_needed(batch: ArcBatch, ends: Mapping[str, RunEnd], reviewed: Mapping[str, str]) -> str | None:
    """The line saying how many rows still need a person's outcome and how to give them, or None."""
    missing = unreviewed(batch, ends, reviewed)
    if not missing:
        return None
    some = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
    rows = "1 row needs" if len(missing) == 1 else f"{len(missing)} rows need"
    return (f"{rows} a person's review ({some}): no_cart by code on stores without the lab's markers, where code "
            f"cannot read the cart; give the outcome each run's evidence shows with --outcomes FILE (a CSV id,outcome)")


def read_outcomes(name: str, batch: ArcBatch, ends: Mapping[str, RunEnd]) -> dict[str, str]:
    """The outcomes a person gave, by row id, from a CSV `id,outcome`; ExportRefused names the file, the row and
    what is wrong with it."""
    path = Path(name)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ExportRefused(f"--outcomes: no file {name!r}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ExportRefused(f"{path}: cannot be read as UTF-8 text ({error})") from None
    reader = csv.DictReader(io.StringIO(text))
    missing = {"id", "outcome"} - {(f or "").strip() for f in reader.fieldnames or []}
    if missing:
        raise ExportRefused(f"{path}: the CSV lacks the column(s) {', '.join(sorted(missing))} (it needs id,outcome)")
    course = batch.test_set == COURSE_TEST_SET
    rows = {row.id: row for row in batch.rows}
    found: dict[str, str] = {}
    try:
        for n, raw in enumerate(reader, start=2):
            line = {(k or "").strip(): (v or "").strip() for k, v in raw.items() if isinstance(v, str)}
            row_id, outcome = line.get("id", ""), line.get("outcome", "").lower()
            where = f"{path}: row {n}"
            if not row_id and not outcome:
                continue  # a blank line
            if row_id not in rows:
                raise ExportRefused(f"{where}: {row_id!r} is not a row of batch {batch.id}")
            if outcome not in OUTCOMES:
                raise ExportRefused(f"{where}: outcome {outcome!r} for {row_id} must be one of {', '.join(OUTCOMES)}")
            if row_id in found:
                raise ExportRefused(f"{where}: {row_id} appears twice")
            if not may_review(ends.get(rows[row_id].run_id), course=course):
                code = arc_outcome(ends.get(rows[row_id].run_id))
                why = ("it ran on our lab, judged by its markers" if course
                       else "only no_cart and blocked rows outside our lab are reviewed")
                raise ExportRefused(f"{where}: {row_id} is {code} as code decided it and stands ({why})")
            found[row_id] = outcome
    except csv.Error as error:
        raise ExportRefused(f"{path}: not a CSV ({error})") from None
    return found


def recorded_off_the_frozen_set(batch: ArcBatch) -> str | None:
    """For an ARC-100 batch recorded before test sets were checked against ARC-100 v1: the first row whose store is
    not its id's, or None."""
    if batch.test_set != ARC_TEST_SET:
        return None
    frozen = arc_100_v1().by_id()
    for row in batch.rows:
        known = frozen.get(row.id)
        problem = (f"{row.id} is not in {ARC_TEST_SET}" if known is None
                   else differs_from_frozen(TestItem(row.id, row.host, row.product_url), known))
        if problem:
            return f"batch {batch.id} ran a store that is not ARC-100 v1's under its id: {problem}; not exported"
    return None


def export_batch(runtime: Runtime, batch_id: UUID, *, evidence_base: str | None,
                 outcomes: str | None = None) -> dict[str, Any]:
    """The batch's submission, with the outcomes a person gave (`outcomes`: the file) applied; ExportRefused when
    it cannot be exported as it is (a row off the frozen set, a problem in the file, rows still to review)."""
    batch, ends = batch_ends(runtime, batch_id)
    problem = recorded_off_the_frozen_set(batch)
    if problem:
        raise ExportRefused(problem)
    reviewed = read_outcomes(outcomes, batch, ends) if outcomes else {}
    problem = review_needed(batch, ends, reviewed)
    if problem:
        raise ExportRefused(problem)
    return submission_of(batch, ends, evidence_base=evidence_base, reviewed=reviewed)


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
