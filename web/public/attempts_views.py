"""Re-runs on the pages: the Matrix marks a cell whose run is not its only attempt of the week, and a run's page
names the attempts of its cell and which one counts (domain/projections/attempts.py).

The documents are the source of what counts: the Matrix's cell names its run, and the attempts are read from the
same week's facts the documents are computed from (public runs only: a private test is never an attempt). No
published JSON changes: the mark is HTML only.
"""

from __future__ import annotations

import msgspec

from domain.projections.attempts import Attempt, CellAttempts, week_attempts
from domain.projections.documents import Matrix
from web.data import SiteData

OUTCOMES = {
    "passed": "passed", "stopped": "stopped", "step_limit": "ran out of steps", "time_limit": "ran out of time",
    "wrong_answer": "wrong answer", "verification_page": "stopped at a verification page",
    "broke_brief": "broke the brief",
}
CUT_SHORT = {"our_error": "cut short by our error", "model_connection": "cut short: the model could not be reached"}


def attempt_words(attempt: Attempt) -> str:
    """What an attempt did, and why it counts or not, in words."""
    did = OUTCOMES.get(attempt.outcome or "", attempt.outcome or "")
    if attempt.why == "counts":
        return f"{did}, counts (the newest result of the week)"
    if attempt.why == "cut_short":
        return f"{CUT_SHORT.get(attempt.cut_short_cause or '', 'cut short')}, not a result"
    if attempt.why == "voided":
        return f"{did}, voided by a correction, not a result"
    if attempt.why == "before_cutoff":
        return f"{did}, started before the results cut-off, never counts"
    if attempt.why == "running":
        return "still running"
    return f"{did}, replaced by a newer attempt"


class OtherAttempt(msgspec.Struct, frozen=True, kw_only=True):
    run_id: str
    number: int
    words: str


class AttemptsMark(msgspec.Struct, frozen=True, kw_only=True):
    """A Matrix cell's mark: its run is attempt `number` of `of` this week; the others linked."""

    number: int
    of: int
    title: str
    """The mark's title and the end of the cell's sentence, e.g. "re-run: attempt 2 of 2 this week (the newest
    result counts); earlier: attempt 1 (cut short by our error, not a result)"."""
    others: list[OtherAttempt]


def mark_of(attempts: CellAttempts, run_id: str) -> AttemptsMark | None:
    """The mark of the cell showing `run_id`; None when it is the cell's only attempt of the week."""
    shown = attempts.of(run_id)
    if shown is None or len(attempts.attempts) < 2:
        return None
    of = len(attempts.attempts)
    others = [OtherAttempt(run_id=a.run_id, number=a.number, words=attempt_words(a))
              for a in attempts.others(run_id)]
    head = "re-run: " if shown.number > 1 else ""
    what = "the newest result counts" if shown.counts else attempt_words(shown)
    where = f" of repeat {attempts.repeat + 1}" if attempts.repeated else ""
    said = [f"{head}attempt {shown.number} of {of}{where} this week ({what})"]
    for side, group in (("earlier", [o for o in others if o.number < shown.number]),
                        ("later", [o for o in others if o.number > shown.number])):
        if group:
            said.append(f"{side}: " + ", ".join(f"attempt {o.number} ({o.words})" for o in group))
    title = "; ".join(said)
    return AttemptsMark(number=shown.number, of=of, title=title, others=others)


def matrix_attempts(data: SiteData, week: str, matrix: Matrix) -> dict[tuple[str, str], AttemptsMark]:
    """(model, station) to the mark of each Matrix cell whose run is not its only attempt of the week."""
    facts = data.readmodels.week_facts(week)
    course = data.documents(week).course
    attempts = week_attempts(facts.runs, facts.corrections, week, course)
    marks = {}
    for model in matrix.models:
        for code, cell in model.cells.items():
            found = attempts.get(cell.run_id) if cell.run_id else None
            mark = mark_of(found, cell.run_id) if found is not None and cell.run_id else None
            if mark is not None:
                marks[(model.model, code)] = mark
    return marks


class RunAttempts(msgspec.Struct, frozen=True, kw_only=True):
    """What a run's page says of its cell's attempts this week."""

    number: int
    of: int
    week: str
    repeat: int
    repeated: bool
    attempts: list[tuple[Attempt, str]]
    """Every attempt, in the order they started, with its words."""
    counted: Attempt | None
    running: bool
    """An attempt has not ended yet."""


def run_attempts(data: SiteData, run_id: str) -> RunAttempts | None:
    """The attempts of the public run's cell, when it has more than one; None otherwise (also for a private test,
    a run the read models have not reached yet, or a week without documents)."""
    try:
        fact = data.readmodels.run(run_id)
    except LookupError:
        return None
    if fact.org is not None or fact.status == "scheduled":
        return None
    known = data.known(fact.week)
    if known is None:
        return None
    facts = data.readmodels.week_facts(fact.week)
    found = week_attempts(facts.runs, facts.corrections, fact.week, data.documents(fact.week).course).get(run_id)
    if found is None or len(found.attempts) < 2:
        return None
    shown = found.of(run_id)
    assert shown is not None
    return RunAttempts(number=shown.number, of=len(found.attempts), week=found.week, repeat=found.repeat,
                       repeated=found.repeated, attempts=[(a, attempt_words(a)) for a in found.attempts],
                       counted=found.counted, running=any(a.why == "running" for a in found.attempts))
