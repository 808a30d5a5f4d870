"""How a result counts (COURSE.md), as pure functions of run and correction facts.

Per model and station the newest run of the ISO week counts (newest = latest finish, ties by log position);
cut-short runs, private runs, runs of another course version and runs finished before the results cut-off never
count. s12 (the reading station) is scored by the reader run, every other station by the browser run.
A model is ranked only with s01 passed and results from every obstacle station that is not excluded that week;
its score is the share passed, and equal shares share a place (1, 1, 3), with no tie-break.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction

import msgspec

from domain.agent.verdicts import Verdict
from domain.courses.course import CourseSpec
from domain.projections.facts import CorrectionFact, RunFact
from domain.week.weeks import RESULTS_CUTOFF

Key = tuple[str, str]
"""(model, station)"""


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


def is_result(run: RunFact) -> bool:
    """A finished run from after the cut-off; cut-short runs are never results."""
    return run.status == "finished" and run.ended_at is not None and run.ended_at >= RESULTS_CUTOFF


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


def newest_results(runs: Iterable[RunFact]) -> dict[Key, RunFact]:
    """The newest result per (model, station): latest finish, ties broken by log position."""
    newest: dict[Key, RunFact] = {}
    for run in runs:
        if not is_result(run):
            continue
        key = (run.model, run.station)
        held = newest.get(key)
        if held is None or _finish_order(run) > _finish_order(held):
            newest[key] = run
    return newest


def _finish_order(run: RunFact) -> tuple[object, int]:
    return (run.ended_at, run.end_position or 0)


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
    week: str, runs: Iterable[RunFact], corrections: Sequence[CorrectionFact], course: CourseSpec
) -> WeekScore:
    """The week's results and ranking under the course's rules, corrections applied."""
    public = [r for r in runs if is_public_run_of(r, week, course)]
    week_corrections = [c for c in corrections if c.week == week]
    results = newest_results(corrected(public, week_corrections))
    out_stations = excluded(week_corrections, "station_week")
    out_models = excluded(week_corrections, "model_week")
    stations = [code for code in course.obstacle_codes if code not in out_stations]
    models = sorted({r.model for r in public})
    entries = [_entry(m, results, stations, course.control.code, out_models.get(m)) for m in models]
    return WeekScore(
        week=week, models=models, stations=stations, excluded_stations=out_stations, results=results,
        entries=placed(entries),
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
