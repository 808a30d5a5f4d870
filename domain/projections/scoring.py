"""How a result counts (COURSE.md), as pure functions of run and correction facts.

Per model and station the newest run of the ISO week counts: the one that started last (its Run.Started, else
when it was scheduled; the same instant broken by the log position of its end), and a run started before the results
cut-off never counts. Weeks published in documents formats 1 to 3 count as they were published: the newest run is
the one that finished last (ties by the log position of its end), and the cut-off applies to when it ended. This
module is the one place that ordering is written (`newest_order`); cut-short runs, private runs and runs of another
course version never count. s12 (the reading station) is scored by the reader run, every other station by the
browser run.
A model is ranked only with s01 passed and results from every obstacle station that is not excluded that week;
its score is the share passed, and equal shares share a place (1, 1, 3), with no tie-break.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from fractions import Fraction
from typing import Final, Literal, TypeVar

import msgspec

from domain.agent.verdicts import Verdict
from domain.courses.course import CourseSpec
from domain.projections.facts import CorrectionFact, RunFact
from domain.week.weeks import RESULTS_CUTOFF

Key = tuple[str, str]
"""(model, station)"""
K = TypeVar("K")

CountBy = Literal["start", "end"]
"""Which moment of a run decides the newest run and the cut-off: its start (documents format 4 on) or its end
(formats 1 to 3, kept so their publications replay)."""
COUNT_BY_START: Final[CountBy] = "start"
COUNT_BY_END: Final[CountBy] = "end"


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """One model's line in a week's ranking."""

    model: str
    ranked: bool
    place: int | None
    passed: int
    of: int
    share: Fraction | None
    control_passed: bool
    missing: list[str]
    reasons: list[str]
    """Why unranked: excluded, no_control_result (no S01 result: cut short or not run), no_control_pass (S01's
    result did not reach the checkout), stations_missing."""
    excluded_text: str | None = None


class WeekScore(msgspec.Struct, frozen=True, kw_only=True):
    week: str
    models: list[str]
    stations: list[str]
    """The obstacle stations that count this week (excluded ones left out)."""
    excluded_stations: dict[str, str]
    """Station to the public text of the correction that excluded it."""
    results: dict[Key, RunFact]
    """The counted run per (model, station), corrections applied."""
    entries: list[Entry]
    count_by: CountBy = COUNT_BY_START
    """How the newest run was decided (`newest_order`): every other "newest" of the week's documents uses the same."""


_READING: dict[str, frozenset[str]] = {}


def counts_at_station(run: RunFact, course: CourseSpec) -> bool:
    """Browser runs score browser stations; the reader run scores the reading station."""
    codes = _READING.get(course.version)
    if codes is None:  # a released version never changes, so its reading stations can be kept by version
        codes = _READING[course.version] = frozenset(s.code for s in course.stations if s.is_reading)
    return run.kind == ("reader" if run.station in codes else "browser")


def is_public_run_of(run: RunFact, week: str, course: CourseSpec) -> bool:
    return (
        run.org is None and run.week == week and run.course_version == course.version
        and run.station in course.codes and counts_at_station(run, course)
    )


def began_at(run: RunFact) -> datetime:
    """When the run started; a run with no Run.Started recorded falls back to when it was scheduled."""
    return run.started_at if run.started_at is not None else run.scheduled_at


def newest_order(run: RunFact, count_by: CountBy = COUNT_BY_START) -> tuple[datetime, int]:
    """The sort key of "newest": the start (or the end, formats 1 to 3), the same instant broken by the log
    position of the run's end. Only for runs that ended (finished or cut short)."""
    moment = began_at(run) if count_by == COUNT_BY_START else run.ended_at
    assert moment is not None, f"run {run.run_id} has not ended"
    return (moment, run.end_position or 0)


def newest(runs: Iterable[RunFact], count_by: CountBy = COUNT_BY_START) -> RunFact | None:
    """The newest of runs that ended (the first of equals); None without runs."""
    return max(runs, key=lambda r: newest_order(r, count_by), default=None)


def is_result(run: RunFact, count_by: CountBy = COUNT_BY_START) -> bool:
    """A finished run from after the cut-off (by its start; by its end in formats 1 to 3); cut-short runs are never
    results."""
    if run.status != "finished" or run.ended_at is None:
        return False
    return (began_at(run) if count_by == COUNT_BY_START else run.ended_at) >= RESULTS_CUTOFF


def corrected(runs: Iterable[RunFact], corrections: Sequence[CorrectionFact]) -> list[RunFact]:
    """The runs with active run corrections applied: void drops the run, set_outcome replaces its verdict."""
    active = sorted((c for c in corrections if c.active and c.target == "run"), key=lambda c: c.position)
    out = []
    for run in runs:
        for c in (c for c in active if c.run_id == run.run_id):
            if c.change == "void":
                break
            if c.change == "set_outcome" and run.verdict is not None:
                verdict = msgspec.structs.replace(run.verdict, passed=bool(c.passed), outcome=c.outcome)
                run = msgspec.structs.replace(run, verdict=verdict)
        else:
            out.append(run)
    return out


def newest_result_by(runs: Iterable[RunFact], key: Callable[[RunFact], K],
                        count_by: CountBy = COUNT_BY_START) -> dict[K, RunFact]:
    """The newest result (`is_result`, `newest_order`) of each group of runs with the same `key`."""
    grouped: dict[K, list[RunFact]] = {}
    for run in runs:
        if is_result(run, count_by):
            grouped.setdefault(key(run), []).append(run)
    return {k: max(results, key=lambda r: newest_order(r, count_by)) for k, results in grouped.items()}


def newest_results(runs: Iterable[RunFact], count_by: CountBy = COUNT_BY_START) -> dict[Key, RunFact]:
    """The newest result per (model, station), by `newest_order`."""
    return newest_result_by(runs, lambda r: (r.model, r.station), count_by)


def excluded(corrections: Sequence[CorrectionFact], target: str) -> dict[str, str]:
    """Models (model_week) or stations (station_week) excluded by an active correction, with its text."""
    found = {}
    for c in sorted(corrections, key=lambda c: c.position):
        if c.active and c.target == target and c.change == "exclude":
            name = c.model if target == "model_week" else c.station
            if name:
                found[name] = c.public_text
    return found


def score_week(
    week: str, runs: Iterable[RunFact], corrections: Sequence[CorrectionFact], course: CourseSpec,
    count_by: CountBy = COUNT_BY_START,
) -> WeekScore:
    """The week's results and ranking under the course's rules, corrections applied; `count_by` as the documents
    format being written says (documents.counting_rule)."""
    public = [r for r in runs if is_public_run_of(r, week, course)]
    week_corrections = [c for c in corrections if c.week == week]
    results = newest_results(corrected(public, week_corrections), count_by)
    out_stations = excluded(week_corrections, "station_week")
    out_models = excluded(week_corrections, "model_week")
    stations = [code for code in course.obstacle_codes if code not in out_stations]
    models = sorted({r.model for r in public})
    entries = [_entry(m, results, stations, course.control.code, out_models.get(m)) for m in models]
    return WeekScore(
        week=week, models=models, stations=stations, excluded_stations=out_stations, results=results,
        entries=placed(entries), count_by=count_by,
    )


def _entry(
    model: str, results: dict[Key, RunFact], stations: list[str], control: str, excluded_text: str | None
) -> Entry:
    control_run = results.get((model, control))
    control_passed = bool(control_run and _passed(control_run.verdict))
    missing = [s for s in stations if (model, s) not in results]
    passed = sum(1 for s in stations if (model, s) in results and _passed(results[(model, s)].verdict))
    reasons = (
        (["excluded"] if excluded_text is not None else [])
        + ([] if control_passed else ["no_control_pass"] if control_run else ["no_control_result"])
        + (["stations_missing"] if missing else [])
    )
    ranked = not reasons and bool(stations)
    return Entry(
        model=model, ranked=ranked, place=None, passed=passed, of=len(stations),
        share=Fraction(passed, len(stations)) if ranked else None, control_passed=control_passed,
        missing=missing, reasons=reasons, excluded_text=excluded_text,
    )


def _passed(verdict: Verdict | None) -> bool:
    return verdict is not None and verdict.passed


def placed(entries: Sequence[Entry]) -> list[Entry]:
    """Competition places (1, 1, 3) by share; equal shares share a place. Ranked first, then by name."""
    shares = [e.share for e in entries if e.ranked and e.share is not None]
    out = [
        msgspec.structs.replace(e, place=1 + sum(1 for s in shares if s > e.share))
        if e.ranked and e.share is not None else e
        for e in entries
    ]
    return sorted(out, key=lambda e: (not e.ranked, e.place or 0, e.model))
