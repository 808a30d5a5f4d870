"""The week's repeat-run document (canonical JSON, CC BY 4.0), beside the ranking and the Matrix.

It is computed from the same week facts as they are, at the same log position, and documented field by field in
docs/schemas/repeats.json. It does not change the ranking or the Matrix (their bytes and hashes stay as they
were) and it is not part of a publication: Week.Published carries the hashes of those two only.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from domain.canonical import canonical_bytes, decimal_text
from domain.course import CourseSpec
from domain.facts import WeekFacts
from domain.projections.documents import course_for_week, document_header
from domain.repeats import ALPHA, ModelRepeats, PairTest, RepeatCell, WeekRepeats, week_repeats
from domain.statistics import Z95, agreement

REPEATS_FORMAT = "canitbuy-repeats/1"


def _decimal(value: float, places: int = 4) -> str:
    return decimal_text(Fraction(value), places)


def _cell(cell: RepeatCell | None, counts: bool) -> dict[str, Any]:
    results = cell.results if cell is not None else []
    outcomes = [bool(r.verdict and r.verdict.passed) for r in results]
    return {
        "counts": counts, "runs": len(results), "passed": sum(outcomes), "outcomes": outcomes,
        "repeats": [r.repeat for r in results], "run_ids": [r.run_id for r in results],
        "agreement": _decimal(agreement(outcomes)) if outcomes else None,
        "outcome": cell.outcome if cell is not None else None,
    }


def _model(m: ModelRepeats, repeats: WeekRepeats, labels: dict[str, str], course: CourseSpec) -> dict[str, Any]:
    entry = next(e for e in repeats.score.entries if e.model == m.model)
    counting = set(repeats.score.stations)
    return {
        "model": m.model, "label": labels.get(m.model, m.model), "ranked": entry.ranked, "place": entry.place,
        "excluded_text": entry.excluded_text, "runs": m.runs, "passed": m.passed,
        "share": decimal_text(Fraction(m.passed, m.runs)) if m.runs else None,
        "interval": {"low": _decimal(m.interval.low), "high": _decimal(m.interval.high)},
        "pass_hat_k": [{"k": k, "value": decimal_text(v)} for k, v in enumerate(m.pass_hat_k, start=1)],
        "band": {"best": m.band[0], "worst": m.band[1]} if m.band else None,
        "tied_with": m.tied_with,
        "cells": {
            code: _cell(repeats.cells.get((m.model, code)), code in counting) for code in course.codes
        },
    }


def _pair(p: PairTest) -> dict[str, Any]:
    return {
        "a": p.a, "b": p.b, "stations": p.stations, "only_a": p.test.only_a, "only_b": p.test.only_b,
        "p_value": _decimal(p.test.p_value, 6), "tied": p.tied,
    }


def repeats_document(facts: WeekFacts, course: CourseSpec, repeats: WeekRepeats) -> dict[str, Any]:
    doc = document_header(REPEATS_FORMAT, "repeat runs", facts, course)
    score = repeats.score
    doc["confidence"], doc["alpha"], doc["z"] = "0.95", _decimal(ALPHA), _decimal(Z95, 6)
    doc["control"] = course.control.code
    doc["stations"] = score.stations
    doc["excluded_stations"] = [{"station": s, "text": t} for s, t in sorted(score.excluded_stations.items())]
    doc["most_repeats"] = max((len(c.results) for c in repeats.cells.values()), default=0)
    doc["models"] = [_model(m, repeats, facts.labels, course) for m in repeats.models]
    doc["pairs"] = [_pair(p) for p in repeats.pairs]
    return doc


def repeats_bytes(facts: WeekFacts) -> bytes:
    """The week's repeat-run document as canonical JSON."""
    course = course_for_week(facts.releases, facts.week)
    repeats = week_repeats(facts.week, facts.runs, facts.corrections, course)
    return canonical_bytes(repeats_document(facts, course, repeats))
