"""A published week's open dataset, computed from the log: runs, steps, verdicts, corrections and stations.

Everything but the "as corrected" columns comes from the log up to the standing publication's position, so it
changes only through a new publication. The "as corrected" verdicts and the corrections come from the log up to
the release's position: the newest event of a correction of the week (or the publication, when none came since).
A release is named by that position; exporting it again from the same log gives the same rows in the same order.
Private runs (an organisation's tests) are never included, nor are their steps.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from domain.agent.actions import Action
from domain.agent.ports import StepRecord
from domain.courses.course import CourseSpec
from domain.eventlog.schema import Envelope
from domain.projections.dataset_tables import Row
from domain.projections.documents import citation, counting_rule, course_for_week
from domain.projections.facts import CorrectionFact, PublicationFact, RunFact, WeekFacts
from domain.projections.fold import STEP, LogState
from domain.projections.scoring import CountBy, corrected, excluded
from domain.week.publications import standing
from domain.week.publishing import LogReader, NotPublishedError, replay


class StartFact(msgspec.Struct, frozen=True, kw_only=True):
    position: int
    agent_release: int
    agent_version: str
    browser_version: str


class WeekDataset(msgspec.Struct, frozen=True, kw_only=True):
    week: str
    publication: PublicationFact
    publication_number: int
    """1-based, as on the week's archive page."""
    release: int
    """The log position the release is computed at (see the module's docstring)."""
    course_version: str
    citation: str
    tables: dict[str, list[Row]]
    count_by: CountBy
    """How the publication counted (documents.counting_rule of its format): the card's rules and query, and the
    meaning of end_position, say the same."""
    dataset_format: int
    """The wording the publication recorded (domain/projections/dataset_tables.py: DATASET_FORMAT): the card's
    known limits and the meaning of cost_usd say what it said, so a release's bytes never change."""


class _Reading:
    """What one pass over the log (payloads decoded) gathers beside the fold: starts and the week's steps."""

    def __init__(self, week: str) -> None:
        self.week = week
        self.state = LogState()
        self.scheduled: dict[str, int] = {}
        self.starts: dict[str, StartFact] = {}
        self.steps: dict[str, list[tuple[int, StepRecord]]] = {}

    def take(self, envelopes: Iterable[Envelope]) -> None:
        for e in envelopes:
            self.state.apply(e)
            if e.name == "Run.Scheduled":
                self.scheduled[e.originator_id] = e.position
            elif e.name == "Run.Started":
                p: Any = e.payload
                self.starts[e.originator_id] = StartFact(
                    position=e.position, agent_release=p.agent_release, agent_version=p.agent_version,
                    browser_version=p.browser_version,
                )
            elif e.name == STEP:
                run = self.state.runs[e.originator_id]
                if run.week == self.week and run.org is None:  # a run's week is settled when it starts
                    self.steps.setdefault(e.originator_id, []).append((e.position, e.payload.step))


def publications_of(state: LogState, week: str) -> list[PublicationFact]:
    return [p for p in state.publications if p.week == week]


def week_dataset(read_log: LogReader, week: str, page: int = 2000) -> WeekDataset:
    """The dataset of the week's standing publication; raises NotPublishedError."""
    now = replay(read_log)
    publications = publications_of(now, week)
    if not publications:
        raise NotPublishedError(week)
    number = standing(publications)
    publication = publications[number]
    reading, after = _Reading(week), 0
    while envelopes := read_log(after=after, limit=page, stop=publication.position):
        reading.take(envelopes)
        after = envelopes[-1].position
    at_publication = reading.state.week_facts(week)
    course = course_for_week(at_publication.releases, week)
    corrections_now = [c for c in now.corrections.values() if c.week == week]
    release = max([publication.position] + [c.withdrawn_position or c.position for c in corrections_now])
    runs = _ordered(at_publication.runs, reading.scheduled)
    tables = {
        "runs": run_rows(runs, at_publication, course, reading),
        "steps": step_rows(runs, reading),
        "verdicts": verdict_rows(runs, at_publication.corrections, corrections_now),
        "corrections": correction_rows(corrections_now, at_publication.corrections),
        "stations": station_rows(week, course, at_publication.corrections),
    }
    return WeekDataset(
        week=week, publication=publication, publication_number=number + 1, release=release,
        course_version=course.version, citation=citation(at_publication), tables=tables,
        count_by=counting_rule(publication.documents_format), dataset_format=publication.dataset_format,
    )


def _ordered(runs: list[RunFact], scheduled: dict[str, int]) -> list[RunFact]:
    return sorted(runs, key=lambda r: (r.model, r.station, scheduled[r.run_id]))


def _published(runs: list[RunFact], corrections: list[CorrectionFact]) -> dict[str, RunFact]:
    """The runs as the ranking read them: run corrections applied; voided runs left out."""
    return {r.run_id: r for r in corrected(runs, corrections)}


def run_rows(runs: list[RunFact], facts: WeekFacts, course: CourseSpec, reading: _Reading) -> list[Row]:
    published = _published(runs, facts.corrections)
    rows: list[Row] = []
    for run in runs:
        shown = published.get(run.run_id, run)
        verdict = shown.verdict
        start = reading.starts.get(run.run_id)
        steps = [s for _, s in reading.steps.get(run.run_id, [])]
        stage = course.station(run.station).stage if run.station in course.codes else ""
        rows.append((
            run.week, run.run_id, run.model, facts.labels.get(run.model, run.model), run.station, stage,
            run.kind, run.task, run.attempt, run.repeat, run.status,
            verdict.outcome if verdict else None, verdict.passed if verdict else None,
            run.run_id not in published, verdict.stage if verdict else None, verdict.step if verdict else None,
            run.cut_short_cause, run.steps, run.milliseconds / 1000,
            sum(s.tokens_in for s in steps), sum(s.tokens_out for s in steps), sum(s.cost_usd for s in steps),
            start.agent_release if start else None, start.agent_version if start else None,
            start.browser_version if start else None, run.course_version,
            run.scheduled_at, run.started_at, run.ended_at,
            reading.scheduled[run.run_id], start.position if start else None, run.end_position, run.position,
        ))
    return rows


def step_rows(runs: list[RunFact], reading: _Reading) -> list[Row]:
    rows: list[Row] = []
    for run in runs:
        for position, s in sorted(reading.steps.get(run.run_id, []), key=lambda p: (p[1].number, p[0])):
            kind, target, value = action_parts(s.action)
            rows.append((
                run.week, run.run_id, run.model, run.station, s.number, s.url, s.title, kind, target, value,
                s.result, s.duration_ms, s.model_ms, s.tokens_in, s.tokens_out, s.cost_usd,
                s.screenshot, s.elements, s.exchange, position,
            ))
    return rows


_TARGETS = ("id", "key", "direction", "url", "seconds", "reason")
_VALUES = ("text", "option", "on", "note")


def action_parts(action: Action | None) -> tuple[str | None, str | None, str | None]:
    """The action's kind, what it acted on and the value it gave, as text."""
    if action is None:
        return None, None, None
    fields = {name: getattr(action, name) for name in action.__struct_fields__}
    target = next((_text(fields[n]) for n in _TARGETS if n in fields), None)
    value = next((_text(fields[n]) for n in _VALUES if n in fields), None)
    return action.__struct_config__.tag, target, value  # type: ignore[return-value]


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def verdict_rows(runs: list[RunFact], at_publication: list[CorrectionFact],
                 now: list[CorrectionFact]) -> list[Row]:
    published, latest = _published(runs, at_publication), _published(runs, now)
    rows: list[Row] = []
    for run in runs:
        if run.verdict is None:
            continue
        p, c = published.get(run.run_id), latest.get(run.run_id)
        rows.append((
            run.week, run.run_id, run.model, run.station, run.verdict.passed, run.verdict.outcome,
            run.verdict.reason,
            p.verdict.passed if p and p.verdict else None, p.verdict.outcome if p and p.verdict else None, p is None,
            c.verdict.passed if c and c.verdict else None, c.verdict.outcome if c and c.verdict else None, c is None,
        ))
    return rows


def correction_rows(now: list[CorrectionFact], at_publication: list[CorrectionFact]) -> list[Row]:
    then = {c.correction_id: c.active for c in at_publication}
    return [
        (c.week, c.correction_id, c.target, c.change, c.run_id, c.model, c.station, c.passed, c.outcome, c.reason,
         c.public_text, c.issued_at, c.position, c.withdrawn_at, c.withdrawn_reason, c.withdrawn_position,
         then.get(c.correction_id, False), c.active)
        for c in sorted(now, key=lambda c: c.position)
    ]


def station_rows(week: str, course: CourseSpec, at_publication: list[CorrectionFact]) -> list[Row]:
    out = excluded(at_publication, "station_week")
    return [
        (week, course.version, s.code, s.name, s.stage, s.control, s.is_reading, s.code in out, out.get(s.code))
        for s in sorted(course.stations, key=lambda s: s.code)
    ]
