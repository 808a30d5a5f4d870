"""Documents format 1: how weeks published before December 2026 were written, so they replay to their bytes.

Format 2 (issue #10) added facts to the documents and changed two wordings. A publication records the format it
was made in, and replaying it writes that format again, so every published hash still holds. Format 1 is exactly
format 2 less what format 2 added:

- the citation was "CanItBuy AI agent <ranking|Matrix>, <week> (<monday> to <sunday>), course <version>, log
  position <n>. CC BY 4.0." (format 2 cites as the method gives it);
- a model with no result in S01 (cut short or not run) was unranked for `no_control_pass`, as if its S01 run had
  failed (format 2 says `no_control_result`);
- ranking entries had no `no_result` and no `accepted_all_cookies`; Matrix cells had no `remarks` and no `cause`.

This module is frozen: it changes only if a format-1 publication is found not to replay, never to move one.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from domain.courses.course import CourseSpec
from domain.projections.facts import WeekFacts
from domain.week.weeks import week_start

LICENSE = "CC BY 4.0"
_ADDED_TO_ENTRIES = ("no_result", "accepted_all_cookies")
_ADDED_TO_CELLS = ("remarks", "cause")


def citation_one(kind: str, week: str, version: str, position: int) -> str:
    monday = week_start(week).date()
    sunday = monday + timedelta(days=6)
    return (
        f"CanItBuy AI agent {kind}, {week} ({monday} to {sunday}), course {version}, log position {position}. "
        f"{LICENSE}."
    )


def ranking_one(doc: dict[str, Any], facts: WeekFacts, course: CourseSpec) -> dict[str, Any]:
    doc = {**doc, "format": "canitbuy-ranking/1",
           "citation": citation_one("ranking", facts.week, course.version, facts.position)}
    doc["entries"] = [_entry_one(e) for e in doc["entries"]]
    return doc


def _entry_one(entry: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in entry.items() if k not in _ADDED_TO_ENTRIES}
    reasons = ["no_control_pass" if r == "no_control_result" else r for r in entry["reasons"]]
    return {**kept, "reasons": reasons}


def matrix_one(doc: dict[str, Any], facts: WeekFacts, course: CourseSpec) -> dict[str, Any]:
    doc = {**doc, "format": "canitbuy-matrix/1",
           "citation": citation_one("Matrix", facts.week, course.version, facts.position)}
    doc["models"] = [
        {**m, "cells": {code: {k: v for k, v in cell.items() if k not in _ADDED_TO_CELLS}
                        for code, cell in m["cells"].items()}}
        for m in doc["models"]
    ]
    return doc
