"""From a week's public documents (ranking and Matrix JSON) to what the pages print.

The documents are the source: the pages never compute a result the JSON does not hold, except the Wilson
interval around each share, which is a pure function of passed and of.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from domain.course import CourseSpec
from domain.statistics import wilson

REASONS = {
    "no_control_pass": "did not reach the checkout in the control store S01",
    "no_control_result": "no result in the control store S01",
    "stations_missing": "has no result from",
    "excluded": "excluded by a correction",
}

NO_RESULT = {
    # Why a station has no result: a cut-short run is not a result, and not the model's failure.
    "our_error": "cut short by our error",
    "model_connection": "cut short: the model could not be reached",
    "not_run": "not run",
}

CELL_TEXT = {
    # status: (icon, css class, words). The icon is decoration; the words carry the meaning.
    "passed": ("✓", "pass", "Passed"),
    "stopped": ("✗", "stop", "Stopped"),
    "verification_page": ("⊘", "stop", "Verification page"),
    "broke_brief": ("⚠", "stop", "Broke the brief"),
    "cut_short": ("↻", "note", "Cut short, not a result"),
    "not_run": ("–", "none", "Not run"),
}

OUTCOME_WORDS = {
    "stopped": "stopped", "step_limit": "ran out of steps", "time_limit": "ran out of time",
    "wrong_answer": "wrong answer", "verification_page": "verification page", "broke_brief": "broke the brief",
    "passed": "passed",
}


def ranking_rows(ranking: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(ranked rows, unranked rows) with the interval and the reasons in words."""
    places = Counter(e["place"] for e in ranking["entries"] if e["ranked"])
    ranked, unranked = [], []
    for e in ranking["entries"]:
        if e["ranked"]:
            interval = wilson(e["passed"], e["of"])
            ranked.append({
                **e, "shared": places[e["place"]] > 1, "percent": round(float(e["share"]) * 100),
                "low": round(interval.low * 100), "high": round(interval.high * 100),
            })
        else:
            unranked.append({**e, "why": [_reason(r, e) for r in e["reasons"]]})
    return ranked, unranked


def _reason(key: str, entry: dict[str, Any]) -> str:
    why = entry.get("no_result") or {}  # absent in documents made before it was added

    def named(code: str) -> str:
        return f"{code.upper()} ({NO_RESULT[why[code]]})" if why.get(code) in NO_RESULT else code.upper()

    if key == "stations_missing":
        return f"{REASONS[key]} {', '.join(named(s) for s in entry['missing'])}"
    if key == "no_control_result":
        control = next((code for code in why if code not in entry["missing"]), None)
        return f"no result in {named(control)}" if control else REASONS[key]
    if key == "excluded" and entry.get("excluded_text"):
        return f"{REASONS[key]}: {entry['excluded_text']}"
    return REASONS.get(key, key)


def stage_order(matrix: dict[str, Any], course: CourseSpec) -> list[dict[str, Any]]:
    """The Matrix's stations in the course's stage order (control first), course order within a stage."""
    rank = {key: i for i, key in enumerate(["control"] + [s.key for s in course.stages])}
    return sorted(matrix["stations"], key=lambda s: rank.get(s["stage"], len(rank)))


def stage_groups(matrix: dict[str, Any], course: CourseSpec) -> list[dict[str, Any]]:
    """The stations grouped by stage, for the Matrix's grouped header."""
    groups: list[dict[str, Any]] = []
    for station in stage_order(matrix, course):
        if groups and groups[-1]["key"] == station["stage"]:
            groups[-1]["stations"].append(station)
        else:
            groups.append({"key": station["stage"], "name": course.stage_name(station["stage"]),
                           "stations": [station]})
    return groups


def cell_view(cell: dict[str, Any], station_stage: str, course: CourseSpec) -> dict[str, Any]:
    """The cell's words. The column's stage is in the header; a stop at another stage names its own."""
    icon, css, words = CELL_TEXT.get(cell["status"], ("?", "none", cell["status"]))
    detail = ""
    if cell["status"] == "stopped":
        stage = cell.get("stage")
        where = course.stage_name(stage) if stage and stage != station_stage else ""
        outcome = OUTCOME_WORDS.get(cell.get("outcome") or "", "")
        outcome = "" if outcome == "stopped" else outcome
        detail = ", ".join(p for p in (where, f"step {cell['step']}" if cell.get("step") else "", outcome) if p)
    elif cell["status"] == "broke_brief" and cell.get("broke"):
        detail = ", ".join(b.replace("_", " ") for b in cell["broke"])
    elif cell["status"] == "cut_short" and cell.get("cause") in NO_RESULT:
        detail = NO_RESULT[cell["cause"]]
    # A fact of the run beside its outcome, never part of it (older documents have no remarks).
    remark = "accepted all cookies" if "consent_all" in (cell.get("remarks") or []) else ""
    return {**cell, "icon": icon, "css": css, "words": words, "detail": detail, "remark": remark}


def matrix_rows(matrix: dict[str, Any], course: CourseSpec) -> list[dict[str, Any]]:
    stages = [(s["code"], s["stage"]) for s in stage_order(matrix, course)]
    return [
        {"model": m["model"], "label": m["label"],
         "cells": [cell_view(m["cells"][code], stage, course) for code, stage in stages]}
        for m in matrix["models"]
    ]


def rate_view(station: dict[str, Any]) -> str:
    if station["excluded"]:
        return "excluded"
    if not station["results"]:
        return "–"
    return f"{station['passed']}/{station['results']}"


def rankings_context(docs: dict[str, Any]) -> dict[str, Any]:
    """The corrected ranking, and the first published one beside it when a correction changed the week."""
    ranked, unranked = ranking_rows(docs["ranking"])
    context: dict[str, Any] = {"ranked": ranked, "unranked": unranked, "published_rows": None}
    if docs["view"].changed_since_publication and docs["published_ranking"] is not None:
        context["published_rows"] = ranking_rows(docs["published_ranking"])
    return context
