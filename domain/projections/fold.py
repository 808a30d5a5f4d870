"""The fold: events of the log, in order, into the facts the documents are made of.

`LogState.apply` returns the weeks an event can change (ALL for course releases and line-up changes), which
tells the read models what to refresh and the audit export what a week depends on. Run.Started and
Run.StepRecorded change no week's ranking or Matrix, and private runs change nothing public.

A week is the calendar: a run counts for the ISO week (UTC) in which its Run.Started falls, whatever week it was
scheduled for. Until it starts it sits in the week it was scheduled for; a Run.Started in another week moves it
there (and is then part of what that week depends on). Runs scheduled before this rule keep their label.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from domain.facts import (
    ConsentFact,
    CorrectionFact,
    OrganisationFact,
    PublicationFact,
    ReleaseFact,
    RunFact,
    WeekFacts,
)
from domain.organisations import terms_of
from domain.schema import Envelope
from domain.weeks import week_of

ALL = "*"
"""Affects every week."""
NONE: frozenset[str] = frozenset()
STEP = "Run.StepRecorded"
SKIMMED: frozenset[str] = frozenset({STEP})
"""Events whose payload the fold never reads: read them with `Record.read_log(skim=SKIMMED)`."""


class LogState:
    """Facts folded from the log up to `position`. Read models may hold only part of it (a page's working set)."""

    def __init__(self) -> None:
        self.runs: dict[str, RunFact] = {}
        self.corrections: dict[str, CorrectionFact] = {}
        self.releases: dict[str, ReleaseFact] = {}
        self.labels: dict[str, str] = {}
        self.week_ids: dict[str, str] = {}
        """Week record id to ISO week (Week.Published names only its record)."""
        self.publications: list[PublicationFact] = []
        self.week_positions: dict[str, int] = {}
        self.global_position = 0
        self.position = 0
        self.dirty_runs: set[str] = set()
        self.dirty_corrections: set[str] = set()
        self.organisations: dict[str, OrganisationFact] = {}
        """Organisation id to its fact; read models load the ones a page's events name."""
        self.dirty_organisations: set[str] = set()
        self._handlers: dict[str, Callable[[Envelope], frozenset[str]]] = {
            "CourseRelease.Released": self._released,
            "LineUp.EntrantSet": self._entrant_set,
            "Run.Scheduled": self._scheduled,
            "Run.Started": self._started,
            "Run.StepRecorded": self._step_recorded,
            "Run.Finished": self._finished,
            "Run.CutShort": self._cut_short,
            "Correction.Issued": self._issued,
            "Correction.Withdrawn": self._withdrawn,
            "Week.Opened": self._week_opened,
            "Week.Published": self._published,
            "Organisation.Registered": self._organisation_registered,
            "Organisation.ConsentRecorded": self._consent_recorded,
        }

    def fold(self, envelopes: Iterable[Envelope]) -> set[str]:
        """Apply events in order; return the weeks they can change (as `apply` does, one event at a time)."""
        touched: set[str] = set()
        runs, dirty = self.runs, self.dirty_runs
        for envelope in envelopes:
            if envelope.name == STEP:  # most of the log: the same as _step_recorded, without the dispatch
                run = runs[envelope.originator_id]
                run.position = self.position = envelope.position
                run.steps += 1
                dirty.add(envelope.originator_id)
            else:
                touched |= self.apply(envelope)
        return touched

    def apply(self, envelope: Envelope) -> frozenset[str]:
        """Apply one event; return the weeks whose documents it can change."""
        handler = self._handlers.get(envelope.name)
        affected = handler(envelope) if handler else NONE
        self.position = envelope.position
        if ALL in affected:
            self.global_position = envelope.position
        for week in affected - {ALL}:
            self.week_positions[week] = envelope.position
        return affected

    def week_facts(self, week: str) -> WeekFacts:
        return WeekFacts(
            week=week,
            runs=[r for r in self.runs.values() if r.week == week and r.org is None],
            corrections=[c for c in self.corrections.values() if c.week == week],
            releases=sorted(self.releases.values(), key=lambda r: r.position),
            labels=dict(self.labels),
            position=max(self.week_positions.get(week, 0), self.global_position),
        )

    def every_week_facts(self) -> list[WeekFacts]:
        """`week_facts` of every week an event touched, grouped in one pass (for a rebuild)."""
        runs: dict[str, list[RunFact]] = {week: [] for week in self.week_positions}
        corrections: dict[str, list[CorrectionFact]] = {week: [] for week in self.week_positions}
        for r in self.runs.values():
            if r.org is None and r.week in runs:
                runs[r.week].append(r)
        for c in self.corrections.values():
            if c.week in corrections:
                corrections[c.week].append(c)
        releases = sorted(self.releases.values(), key=lambda r: r.position)
        return [
            WeekFacts(
                week=week, runs=runs[week], corrections=corrections[week], releases=releases,
                labels=dict(self.labels), position=max(position, self.global_position),
            )
            for week, position in sorted(self.week_positions.items())
        ]

    def weeks(self) -> list[str]:
        return sorted({r.week for r in self.runs.values() if r.org is None})

    # --- handlers ---------------------------------------------------------------------------------------

    def _released(self, e: Envelope) -> frozenset[str]:
        p = e.payload
        self.releases[p.course_version] = ReleaseFact(
            version=p.course_version, released_at=p.released_at, spec=p.spec, position=e.position
        )
        return frozenset({ALL})

    def _entrant_set(self, e: Envelope) -> frozenset[str]:
        self.labels[e.payload.entrant.model] = e.payload.entrant.label
        return frozenset({ALL})

    def _scheduled(self, e: Envelope) -> frozenset[str]:
        p = e.payload
        self.runs[e.originator_id] = RunFact(
            run_id=e.originator_id, station=p.station, model=p.model, week=p.week, kind=p.kind,
            course_version=p.course_version, task=p.task, attempt=p.attempt, repeat=p.repeat, org=p.org,
            scheduled_at=p.timestamp, position=e.position, counts_by_start=p.counts_by_start,
        )
        self.dirty_runs.add(e.originator_id)
        return _public_week(self.runs[e.originator_id])

    def _run(self, e: Envelope) -> RunFact:
        run = self.runs[e.originator_id]
        run.position = e.position
        self.dirty_runs.add(e.originator_id)
        return run

    def _started(self, e: Envelope) -> frozenset[str]:
        run = self._run(e)
        run.status, run.started_at = "running", e.payload.timestamp
        started_in = week_of(run.started_at)
        if not run.counts_by_start or started_in == run.week:
            return NONE
        run.scheduled_week, run.week = run.scheduled_week or run.week, started_in
        return _public_week(run)

    def _step_recorded(self, e: Envelope) -> frozenset[str]:
        self._run(e).steps += 1
        return NONE

    def _finished(self, e: Envelope) -> frozenset[str]:
        run, p = self._run(e), e.payload
        run.status, run.verdict, run.ended_at, run.end_position = "finished", p.verdict, p.timestamp, e.position
        run.steps, run.milliseconds = p.steps, round(p.seconds * 1000)
        return _public_week(run)

    def _cut_short(self, e: Envelope) -> frozenset[str]:
        run, p = self._run(e), e.payload
        run.status, run.cut_short_cause, run.ended_at, run.end_position = "cut_short", p.cause, p.timestamp, e.position
        run.steps, run.milliseconds = max(run.steps, p.steps), round(p.seconds * 1000)
        return _public_week(run)

    def _issued(self, e: Envelope) -> frozenset[str]:
        p = e.payload
        run = self.runs.get(p.run_id) if p.run_id else None
        week = run.week if run is not None else p.week
        if run is not None and run.org is not None:
            week = None  # a correction of a private run changes nothing public
        self.corrections[e.originator_id] = CorrectionFact(
            correction_id=e.originator_id, target=p.target, change=p.change, week=week, reason=p.reason,
            public_text=p.public_text, by=p.by, issued_at=p.timestamp, position=e.position, run_id=p.run_id,
            model=p.model if p.model else (run.model if run else None),
            station=p.station if p.station else (run.station if run else None),
            passed=p.passed, outcome=p.outcome,
        )
        self.dirty_corrections.add(e.originator_id)
        return frozenset({week}) if week else NONE

    def _withdrawn(self, e: Envelope) -> frozenset[str]:
        c, p = self.corrections[e.originator_id], e.payload
        c.withdrawn, c.withdrawn_at, c.withdrawn_by = True, p.timestamp, p.by
        c.withdrawn_reason, c.withdrawn_position = p.reason, e.position
        self.dirty_corrections.add(e.originator_id)
        return frozenset({c.week}) if c.week else NONE

    def _week_opened(self, e: Envelope) -> frozenset[str]:
        self.week_ids[e.originator_id] = e.payload.week
        return NONE

    def _published(self, e: Envelope) -> frozenset[str]:
        p: Any = e.payload
        self.publications.append(PublicationFact(
            week=self.week_ids[e.originator_id], position=p.position, ranking_sha256=p.ranking_sha256,
            matrix_sha256=p.matrix_sha256, course_version=p.course_version, by=p.by, at=p.timestamp,
            event_position=e.position, provisional=p.provisional,
        ))
        return NONE

    def _organisation_registered(self, e: Envelope) -> frozenset[str]:
        p = e.payload
        self.organisations[e.originator_id] = OrganisationFact(
            organisation_id=e.originator_id, slug=p.slug, name=p.name, registered_at=p.timestamp,
            position=e.position,
        )
        self.dirty_organisations.add(e.originator_id)
        return NONE

    def _consent_recorded(self, e: Envelope) -> frozenset[str]:
        """Covered runs of the organisation become shown (never counted): no week's documents change."""
        p = e.payload
        organisation = self.organisations[e.originator_id]
        organisation.consents.append(ConsentFact(
            run_ids=list(p.run_ids), until=p.until, document_sha256=p.document_sha256, reference=p.reference,
            by=p.by, at=p.timestamp, position=e.position,
        ))
        self.dirty_organisations.add(e.originator_id)
        terms = terms_of(p.org, p.run_ids, p.until, p.timestamp)
        for run in self.runs.values():
            if run.consented_at is None and terms.covers(
                org=run.org, run_id=run.run_id, scheduled_at=run.scheduled_at
            ):
                run.consented_at = p.timestamp
                self.dirty_runs.add(run.run_id)
        return NONE


def _public_week(run: RunFact) -> frozenset[str]:
    return NONE if run.org is not None else frozenset({run.week})
