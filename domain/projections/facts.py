"""The facts the rules read, folded from events: one struct per run, correction, course release.

Projections keep these (in memory for a replay, as rows of the read models for the site); the scoring rules
and the documents are pure functions of them.
"""

from __future__ import annotations

from datetime import date, datetime

import msgspec

from domain.agent.verdicts import Verdict
from domain.week.publications import Publication


class RunFact(msgspec.Struct, kw_only=True):
    """What is known about one run at some log position."""

    run_id: str
    station: str
    model: str
    week: str
    """The ISO week the result counts for: the week (UTC) in which the run started; until it starts, and for runs
    scheduled before that rule (Run.Scheduled.counts_by_start false), the week it was scheduled for."""
    kind: str
    course_version: str
    task: str
    attempt: int
    repeat: int
    org: str | None
    """Set for private tests; such runs never count and never appear in public documents."""
    scheduled_at: datetime
    position: int
    """Log position of the newest event of this run."""
    status: str = "scheduled"
    """scheduled, running, finished or cut_short."""
    started_at: datetime | None = None
    ended_at: datetime | None = None
    """When it finished or was cut short."""
    end_position: int | None = None
    """Log position of Run.Finished or Run.CutShort: breaks ties between runs ending at the same instant."""
    verdict: Verdict | None = None
    cut_short_cause: str | None = None
    steps: int = 0
    milliseconds: int = 0
    scheduled_week: str | None = None
    """The week the run was scheduled for (Run.Scheduled.week), when it differs from `week`."""
    counts_by_start: bool = False
    """Whether the run counts for the week in which it started (every run scheduled since December 2026)."""
    consented_at: datetime | None = None
    """For a private test made public: when the organisation's written consent covering it was recorded.
    It then shows in the run index and its recording opens, but it still never counts."""
    requested_by: str = ""
    """scheduler, cli, or a staff member's e-mail (Run.Scheduled.requested_by)."""
    target_url: str | None = None
    """For private tests and ARC runs: the start address when it is not a lab station."""
    browser_version: str | None = None
    agent_version: str | None = None
    agent_release: int = 0
    """The agent release it ran with (Run.Started.agent_release); 0 when none was recorded."""
    seconds: float | None = None
    """Wall time as Run.Finished or Run.CutShort recorded it (`milliseconds` is it rounded)."""
    cut_short_detail: str | None = None

    @property
    def passed(self) -> bool | None:
        return self.verdict.passed if self.verdict is not None else None

    @property
    def outcome(self) -> str | None:
        return self.verdict.outcome if self.verdict is not None else None

    @property
    def is_over(self) -> bool:
        return self.status in ("finished", "cut_short")

    @property
    def cell(self) -> tuple[str, str, str, int]:
        """Week (the one it counts for), model, station, repeat: attempts of one cell replace each other."""
        return (self.week, self.model, self.station, self.repeat)


class CorrectionFact(msgspec.Struct, kw_only=True):
    """A correction as issued, with its withdrawal when there was one."""

    correction_id: str
    target: str
    change: str
    week: str | None
    """The week it applies to; for a run target, the run's week."""
    reason: str
    public_text: str
    by: str
    issued_at: datetime
    position: int
    run_id: str | None = None
    model: str | None = None
    station: str | None = None
    passed: bool | None = None
    outcome: str | None = None
    withdrawn: bool = False
    withdrawn_at: datetime | None = None
    withdrawn_by: str | None = None
    withdrawn_reason: str | None = None
    withdrawn_position: int | None = None

    @property
    def active(self) -> bool:
        return not self.withdrawn


class ReleaseFact(msgspec.Struct, frozen=True, kw_only=True):
    version: str
    released_at: datetime
    spec: str
    """The course spec JSON exactly as released."""
    position: int


class PublicationFact(Publication, frozen=True, kw_only=True):
    """A publication as the projections keep it: the Week.Published fields, and where that event sits."""

    event_position: int
    """Where the Week.Published event itself sits in the log."""


class ConsentFact(msgspec.Struct, frozen=True, kw_only=True):
    """A written consent to make private tests public (never withdrawn)."""

    run_ids: list[str]
    until: date | None
    document_sha256: str
    reference: str
    by: str
    at: datetime
    position: int


class OrganisationFact(msgspec.Struct, kw_only=True):
    """An organisation that runs private tests, with the consents it gave."""

    organisation_id: str
    slug: str
    name: str
    registered_at: datetime
    position: int
    consents: list[ConsentFact] = msgspec.field(default_factory=list)


class WeekFacts(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a week's ranking and Matrix depend on."""

    week: str
    runs: list[RunFact]
    corrections: list[CorrectionFact]
    releases: list[ReleaseFact]
    labels: dict[str, str]
    """Model name to the label readers see (from the line-up)."""
    position: int
    """The newest log position any of these facts comes from: the documents are computed at it."""
