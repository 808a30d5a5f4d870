"""The week's public documents, the ranking and the Matrix, as canonical JSON (CC BY 4.0).

Both are computed from a week's facts only, at the newest log position those facts come from, so replaying
the log up to any later position that added nothing to the week gives the same bytes. Their shapes are
documented field by field in docs/schemas/ranking.json and docs/schemas/matrix.json.
"""

from __future__ import annotations

from datetime import date, timedelta
from fractions import Fraction
from functools import lru_cache
from typing import Any

import msgspec

from domain.canonical import canonical_bytes, decimal_text
from domain.course import CourseSpec, decode_course
from domain.facts import ReleaseFact, RunFact, WeekFacts
from domain.scoring import Entry, WeekScore, score_week
from domain.verdicts import accepted_all_cookies
from domain.weeks import week_end

LICENSE = "CC BY 4.0"
RANKING_FORMAT = "canitbuy-ranking/1"
MATRIX_FORMAT = "canitbuy-matrix/1"


class NoCourseError(LookupError):
    """No course version was released in the log read so far."""


class WeekDocuments(msgspec.Struct, frozen=True, kw_only=True):
    week: str
    course_version: str
    position: int
    ranking: bytes
    matrix: bytes


@lru_cache(maxsize=8)
def _course(spec: str) -> CourseSpec:
    return decode_course(spec)


def course_for_week(releases: list[ReleaseFact], week: str) -> CourseSpec:
    """The newest version in force before the week ended; a week before every release takes the first."""
    if not releases:
        raise NoCourseError("no course version is released in the log")
    ordered = sorted(releases, key=lambda r: (r.released_at, r.position))
    in_force = [r for r in ordered if r.released_at < week_end(week)] or ordered[:1]
    return _course(in_force[-1].spec)


CITED_AS = "CanItBuy AI agent ranking, canitbuy.com/ranking"
"""The method's citation, word for word ("Cite as: CanItBuy AI agent ranking, canitbuy.com/ranking, week and date")."""


def as_of(facts: WeekFacts) -> date:
    """The date of the citation: the day of the newest result or correction the week's documents hold.

    Taken from the facts (never the clock), so a replay cites the same date; a later correction moves it on.
    """
    times = [r.ended_at or r.started_at or r.scheduled_at for r in facts.runs if r.week == facts.week and r.org is None]
    times += [c.withdrawn_at or c.issued_at for c in facts.corrections if c.week == facts.week]
    return max(times).date() if times else (week_end(facts.week) - timedelta(days=1)).date()


def citation(facts: WeekFacts) -> str:
    """How to cite the week's data, exactly as the method gives it: "<ranking>, <week>, <date>"."""
    return f"{CITED_AS}, {facts.week}, {as_of(facts).isoformat()}"


def document_header(fmt: str, kind: str, facts: WeekFacts, course: CourseSpec) -> dict[str, Any]:
    return {
        "format": fmt, "license": LICENSE, "week": facts.week, "course_version": course.version,
        "position": facts.position, "citation": citation(facts),
    }


def _entry_json(entry: Entry, labels: dict[str, str], score: WeekScore, runs: list[RunFact],
                control: str) -> dict[str, Any]:
    without = ([control] if "no_control_result" in entry.reasons else []) + entry.missing
    return {
        "model": entry.model, "label": labels.get(entry.model, entry.model), "ranked": entry.ranked,
        "place": entry.place, "passed": entry.passed, "of": entry.of,
        "share": decimal_text(entry.share) if entry.share is not None else None,
        "control_passed": entry.control_passed, "missing": entry.missing, "reasons": entry.reasons,
        "excluded_text": entry.excluded_text,
        "no_result": {code: _why_no_result(entry.model, code, runs) for code in without},
        "accepted_all_cookies": sum(
            1 for (model, _), run in score.results.items()
            if model == entry.model and run.verdict is not None and accepted_all_cookies(run.verdict)
        ),
    }


def _last_tried(model: str, station: str, runs: list[RunFact]) -> RunFact | None:
    tried = [r for r in runs if r.model == model and r.station == station and r.ended_at is not None]
    return max(tried, key=lambda r: (r.ended_at, r.end_position or 0), default=None)


def _why_no_result(model: str, station: str, runs: list[RunFact]) -> str:
    """our_error or model_connection (the last run was cut short, not the model's failure), else not_run."""
    last = _last_tried(model, station, runs)
    if last is not None and last.status == "cut_short" and last.cut_short_cause:
        return last.cut_short_cause
    return "not_run"


def ranking_document(facts: WeekFacts, course: CourseSpec, score: WeekScore) -> dict[str, Any]:
    doc = document_header(RANKING_FORMAT, "ranking", facts, course)
    doc["control"] = course.control.code
    doc["stations"] = score.stations
    doc["excluded_stations"] = [{"station": s, "text": t} for s, t in sorted(score.excluded_stations.items())]
    runs = [r for r in facts.runs if r.week == facts.week and r.org is None]
    doc["entries"] = [_entry_json(e, facts.labels, score, runs, course.control.code) for e in score.entries]
    doc["corrections"] = [
        {"id": c.correction_id, "target": c.target, "change": c.change, "text": c.public_text,
         "model": c.model, "station": c.station, "run_id": c.run_id}
        for c in sorted(facts.corrections, key=lambda c: c.position) if c.active
    ]
    return doc


def _cell(model: str, station: str, score: WeekScore, runs: list[RunFact], corrected: set[str]) -> dict[str, Any]:
    run = score.results.get((model, station))
    if run is not None and run.verdict is not None:
        v = run.verdict
        status = v.outcome if v.outcome in ("passed", "verification_page", "broke_brief") else "stopped"
        return {
            "status": status, "run_id": run.run_id, "outcome": v.outcome, "stage": v.stage, "step": v.step,
            "broke": list(v.broke), "corrected": run.run_id in corrected,
            "remarks": ["consent_all"] if accepted_all_cookies(v) else [], "cause": None,
        }
    last = _last_tried(model, station, runs)
    cut = bool(last and last.status == "cut_short")
    return {
        "status": "cut_short" if cut else "not_run",
        "run_id": last.run_id if last else None, "outcome": None, "stage": None, "step": None, "broke": [],
        "corrected": bool(last and last.run_id in corrected), "remarks": [],
        "cause": last.cut_short_cause if cut and last else None,
    }


def _station_json(code: str, course: CourseSpec, score: WeekScore) -> dict[str, Any]:
    station = course.station(code)
    results = [r for (_, s), r in score.results.items() if s == code]
    passed = sum(1 for r in results if r.verdict is not None and r.verdict.passed)
    return {
        "code": code, "name": station.name, "stage": station.stage,
        "excluded": code in score.excluded_stations, "excluded_text": score.excluded_stations.get(code),
        "passed": passed, "results": len(results),
        "rate": decimal_text(Fraction(passed, len(results))) if results else None,
    }


def matrix_document(facts: WeekFacts, course: CourseSpec, score: WeekScore) -> dict[str, Any]:
    runs = [r for r in facts.runs if r.week == facts.week and r.org is None]
    corrected = {c.run_id for c in facts.corrections if c.active and c.run_id}
    doc = document_header(MATRIX_FORMAT, "Matrix", facts, course)
    doc["stations"] = [_station_json(code, course, score) for code in course.codes]
    doc["models"] = [
        {"model": m, "label": facts.labels.get(m, m),
         "cells": {code: _cell(m, code, score, runs, corrected) for code in course.codes}}
        for m in score.models
    ]
    return doc


def week_documents(facts: WeekFacts) -> WeekDocuments:
    course = course_for_week(facts.releases, facts.week)
    score = score_week(facts.week, facts.runs, facts.corrections, course)
    return WeekDocuments(
        week=facts.week, course_version=course.version, position=facts.position,
        ranking=canonical_bytes(ranking_document(facts, course, score)),
        matrix=canonical_bytes(matrix_document(facts, course, score)),
    )
