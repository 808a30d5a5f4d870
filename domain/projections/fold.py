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

from domain.eventlog.schema import Envelope
from domain.orgs.organisations import terms_of
from domain.projections.facts import (
    ConsentFact,
    CorrectionFact,
    OrganisationFact,
    PublicationFact,
    ReleaseFact,
    RunFact,
    WeekFacts,
)
from domain.week.weeks import week_of

ALL = "*"
"""Affects every week."""
NONE: frozenset[str] = frozenset()
STEP = "Run.StepRecorded"
MEDIA = "Run.MediaKept"
MEDIA_EVENTS = frozenset({MEDIA, "Run.TraceCleaned"})
"""A run's trace and video, and a trace's later cleaning: they change nothing but the recording."""
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
            "Run.Started": self._run_event,
            "Run.StepRecorded": self._run_event,
            "Run.Finished": self._run_event,
            "Run.CutShort": self._run_event,
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
            if envelope.name == STEP:  # most of the log: the same as fold_run, without the dispatch
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
            runs=self._counting(week),
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

    def models_with_runs(self, week: str) -> list[str]:
        """The models with a public run that counts for the week, sorted (what the read models' query of the same
        name gives: adapters/readmodel_queries.py)."""
        return sorted({r.model for r in self._counting(week)})

    def stations_with_runs(self, week: str) -> list[str]:
        """The stations with a public run that counts for the week, sorted (the read models' query of the same
        name)."""
        return sorted({r.station for r in self._counting(week)})

    def _counting(self, week: str) -> list[RunFact]:
        return [r for r in self.runs.values() if r.week == week and r.org is None]

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
        run = self.runs[e.originator_id] = scheduled(e.originator_id, e.payload, e.position)
        self.dirty_runs.add(e.originator_id)
        return _public_week(run)

    def _run_event(self, e: Envelope) -> frozenset[str]:
        run = self.runs[e.originator_id]
        self.dirty_runs.add(e.originator_id)
        return _public_week(run) if fold_run(run, e.name, e.payload, e.position) else NONE

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
            documents_format=p.documents_format, events_sha256=p.events_sha256, dataset_format=p.dataset_format,
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


# --- one run: the one fold of a run's events, read by the projections, the workers' ledger and the recording --

def scheduled(run_id: str, p: Any, position: int) -> RunFact:
    """The fact of a run from its Run.Scheduled (an envelope's payload or the event itself)."""
    return RunFact(
        run_id=run_id, station=p.station, model=p.model, week=p.week, kind=p.kind,
        course_version=p.course_version, task=p.task, attempt=p.attempt, repeat=p.repeat, org=p.org,
        scheduled_at=p.timestamp, position=position, counts_by_start=p.counts_by_start,
        requested_by=p.requested_by, target_url=p.target_url,
    )


def fold_run(run: RunFact, name: str, p: Any, position: int) -> bool:
    """Apply a later event of the run (Run.Started, .StepRecorded, .Finished, .CutShort, .MediaKept,
    .TraceCleaned; a skimmed step's payload is never read); True when it can change the week's documents (an end,
    or a start in another week). The trace and video change nothing but the recording."""
    if name in MEDIA_EVENTS:
        return False
    run.position = position
    if name == STEP:
        run.steps += 1
        return False
    if name == "Run.Started":
        run.status, run.started_at = "running", p.timestamp
        run.browser_version, run.agent_version, run.agent_release = p.browser_version, p.agent_version, p.agent_release
        started_in = week_of(p.timestamp)
        if not run.counts_by_start or started_in == run.week:
            return False
        run.scheduled_week, run.week = run.scheduled_week or run.week, started_in
        return True
    run.ended_at, run.end_position, run.seconds = p.timestamp, position, p.seconds
    run.milliseconds = round(p.seconds * 1000)
    if name == "Run.Finished":
        run.status, run.verdict, run.steps = "finished", p.verdict, p.steps
    else:  # Run.CutShort
        run.status, run.cut_short_cause, run.cut_short_detail = "cut_short", p.cause, p.detail
        run.steps = max(run.steps, p.steps)
    return True


def _public_week(run: RunFact) -> frozenset[str]:
    return NONE if run.org is not None else frozenset({run.week})
