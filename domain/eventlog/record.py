"""The record: one eventsourcing application holding every aggregate, so the notification log orders every
event of CanItBuy totally. Its methods are the use cases: load, act, save.

eventsourcing is synchronous; async callers reach these methods through a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any, Protocol
from urllib.parse import urlsplit
from uuid import UUID

import msgspec
from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError

from domain.agent.agent_releases import AGENT_RELEASES_ID, AgentReleases, AgentSpec
from domain.agent.lineup import LINEUP_ID, Entrant, LineUp, ModelCheckResult
from domain.agent.ports import StepRecord
from domain.agent.runs import Run
from domain.agent.verdicts import CutShortCause, Verdict
from domain.courses.course import RELEASES, course_bytes
from domain.courses.releases import CourseRelease, release_id
from domain.errata.corrections import Correction
from domain.eventlog.schema import Envelope, name_for_topic, payload_decoder
from domain.eventlog.topics import topics_of
from domain.leaderboards.arc import Submission
from domain.leaderboards.receipt_ledger import (
    AgentKey,
    AgentKeyError,
    KeyRegistration,
    SpentReceipt,
    agent_key_id,
    spent_receipt_id,
)
from domain.leaderboards.submissions import (
    LeaderboardSubmission,
    Method,
    SubmissionDay,
    SubmissionError,
    day_book_id,
    submission_id,
)
from domain.leaderboards.verification import Judgement
from domain.orgs.organisations import Organisation, OrganisationError, organisation_id
from domain.week.publications import Week, publication_id

Clock = Callable[[], datetime]

Notification = tuple[int, str, int, str, bytes]
"""(position, originator id, originator version, topic, stored payload) of one event in the log."""


class LogSource(Protocol):
    """Reads the notification log in order: the events with positions greater than `after` (and at most
    `stop`), at most `limit` of them."""

    def notifications(self, after: int, limit: int, stop: int | None) -> Sequence[Notification]: ...


class RecorderLogSource:
    """The log as any eventsourcing recorder gives it (SQLite, PostgreSQL); adapters may set a faster one."""

    def __init__(self, recorder: Any) -> None:
        self.recorder = recorder
        self._ids: dict[Any, str] = {}  # str(UUID) is slow, and a run's events share one id

    def notifications(self, after: int, limit: int, stop: int | None) -> list[Notification]:
        found = self.recorder.select_notifications(after, limit, stop=stop, inclusive_of_start=False)
        ids = self._ids if len(self._ids) < 100_000 else {}
        self._ids = ids
        return [
            (n.id, ids.get(n.originator_id) or ids.setdefault(n.originator_id, str(n.originator_id)),
             n.originator_version, n.topic, n.state)
            for n in found
        ]


class Skimmed(msgspec.Struct, frozen=True):
    """The payload of an event read with `skim`: checked to be well-formed JSON, only its time kept."""

    timestamp: datetime


_skim_decoder = msgspec.json.Decoder(Skimmed)


def utc_now() -> datetime:
    return datetime.now(UTC)


class UnknownRunError(LookupError):
    def __str__(self) -> str:
        return f"no run {self.args[0]}"


class UnknownSubmissionError(LookupError):
    def __str__(self) -> str:
        return f"no leaderboard submission {self.args[0]}"


class Accepted(msgspec.Struct, frozen=True):
    """The answer to a submission: its id, and whether it was stored now or is the same run sent before."""

    id: UUID
    created: bool


class UndecodableEventError(RuntimeError):
    """An event in the log cannot be decoded: projections stop at its position and say so."""

    def __init__(self, position: int, detail: str) -> None:
        super().__init__(f"event at log position {position} cannot be decoded: {detail}")
        self.position = position


class Record(Application[UUID]):
    name = "canitbuy"
    env = {"MAPPER_TOPIC": "domain.eventlog.schema:MsgspecMapper", "IS_SNAPSHOTTING_ENABLED": "n"}

    def __init__(self, env: dict[str, str] | None = None, clock: Clock = utc_now) -> None:
        super().__init__(env)
        self.clock = clock
        self.log_source: LogSource = RecorderLogSource(self.recorder)

    # --- course releases and line-up -----------------------------------------------------------------

    def ensure_course_released(self, version: str) -> bool:
        """Release a course version once (the first start releases 2.1). True when it was released now."""
        try:
            self.repository.get(release_id(version))
            return False
        except AggregateNotFoundError:
            pass
        released_at = datetime.fromisoformat(RELEASES[version].replace("Z", "+00:00"))
        spec = course_bytes(version).decode()
        self.save(CourseRelease.release(version=version, released_at=released_at, spec=spec, at=self.clock()))
        return True

    def released_versions(self) -> list[str]:
        found = []
        for version in RELEASES:
            try:
                self.repository.get(release_id(version))
                found.append(version)
            except AggregateNotFoundError:
                continue
        return found

    def agent_releases(self) -> AgentReleases | None:
        try:
            return self.repository.get(AGENT_RELEASES_ID)
        except AggregateNotFoundError:
            return None

    def ensure_agent_released(self, spec: AgentSpec) -> int:
        """The release number of this agent: released now when its content is not in the log yet. Several
        processes starting at once may race; the loser finds the winner's release."""
        for _ in range(5):
            releases = self.agent_releases() or AgentReleases.open(at=self.clock())
            found = releases.number_of(spec.sha256())
            if found is not None:
                return found
            number = releases.release(spec, at=self.clock())
            try:
                self.save(releases)
            except IntegrityError:
                continue
            return number
        raise RuntimeError("could not record the agent release; try again")

    def lineup(self) -> LineUp:
        try:
            return self.repository.get(LINEUP_ID)
        except AggregateNotFoundError:
            return LineUp.open(at=self.clock())

    def set_entrants(self, entrants: Iterable[Entrant], *, by: str) -> None:
        lineup = self.lineup()
        for entrant in entrants:
            lineup.set_entrant(entrant, by=by, at=self.clock())
        self.save(lineup)

    def record_models_checked(self, week: str, results: Sequence[ModelCheckResult], *, attempt: int = 1) -> bool:
        """Record the week's check (1: the morning's, 2: the afternoon's) once; False when it was already recorded
        (the first one stands)."""
        lineup = self.lineup()
        if lineup.checked(week, attempt):
            return False
        lineup.record_check(week, list(results), at=self.clock(), attempt=attempt)
        try:
            self.save(lineup)
        except IntegrityError:
            return False
        return True

    # --- runs (scheduled by domain/eventlog/handlers.py) ----------------------------------------------------------

    def get_run(self, run_id: UUID) -> Run:
        try:
            return self.repository.get(run_id)
        except AggregateNotFoundError:
            raise UnknownRunError(run_id) from None

    def start_run(self, run_id: UUID, *, worker: str, browser_version: str, agent_version: str,
                  agent_release: int = 0) -> None:
        run = self.get_run(run_id)
        run.start(worker=worker, browser_version=browser_version, agent_version=agent_version,
                  agent_release=agent_release, at=self.clock())
        self.save(run)

    def record_steps(self, run_id: UUID, steps: Sequence[StepRecord]) -> None:
        run = self.get_run(run_id)
        for step in steps:
            run.record_step(step, at=self.clock())
        self.save(run)

    def finish_run(self, run_id: UUID, verdict: Verdict, *, steps: int, seconds: float) -> None:
        run = self.get_run(run_id)
        run.finish(verdict, steps=steps, seconds=seconds, at=self.clock())
        self.save(run)

    def cut_short_run(
        self, run_id: UUID, cause: CutShortCause, detail: str, *, steps: int = 0, seconds: float = 0.0
    ) -> None:
        run = self.get_run(run_id)
        run.cut_short(cause, detail, steps=steps, seconds=seconds, at=self.clock())
        self.save(run)

    # --- corrections and publications (commands are handled in domain/eventlog/handlers.py) ---------------------

    def withdraw_correction(self, correction_id: UUID, *, reason: str, by: str) -> None:
        try:
            correction: Correction = self.repository.get(correction_id)
        except AggregateNotFoundError:
            raise LookupError(f"no correction {correction_id}") from None
        correction.withdraw(reason=reason, by=by, at=self.clock())
        self.save(correction)

    def week_record(self, week: str) -> Week | None:
        try:
            return self.repository.get(publication_id(week))
        except AggregateNotFoundError:
            return None

    def record_publication(
        self, *, week: str, position: int, ranking_sha256: str, matrix_sha256: str, course_version: str,
        by: str, documents_format: int, events_sha256: str | None = None, dataset_format: int = 1,
    ) -> None:
        record = self.week_record(week) or Week.open(week=week, at=self.clock())
        record.publish(
            position=position, ranking_sha256=ranking_sha256, matrix_sha256=matrix_sha256,
            course_version=course_version, by=by, at=self.clock(), documents_format=documents_format,
            events_sha256=events_sha256, dataset_format=dataset_format,
        )
        self.save(record)

    # --- leaderboard submissions (outside agents, ARC's format) -----------------------------------------

    def submit_leaderboard_run(self, submission: Submission, *, network_key: str) -> Accepted:
        """Store a checked submission, once: the same run again answers with the first id (and uses no quota).
        Otherwise it counts toward the day's limits (raises QuotaExceeded), saved with it in one transaction."""
        sid = submission_id(submission.fingerprint())
        for _ in range(8):  # a concurrent submission of the same day makes the save fail: count again
            if self._leaderboard_submission(sid) is not None:
                return Accepted(sid, created=False)
            now = self.clock()
            try:
                day: SubmissionDay = self.repository.get(day_book_id(now.date()))
            except AggregateNotFoundError:
                day = SubmissionDay.open(now.date(), at=now)
            day.count(network_key, sid, at=now)
            try:
                self.save(LeaderboardSubmission.submit(submission, network_key=network_key, at=now), day)
            except IntegrityError:
                continue
            return Accepted(sid, created=True)
        raise RuntimeError("too many concurrent submissions; try again")

    def _leaderboard_submission(self, sid: UUID) -> LeaderboardSubmission | None:
        try:
            return self.repository.get(sid)
        except AggregateNotFoundError:
            return None

    def leaderboard_submission(self, sid: UUID) -> LeaderboardSubmission:
        found = self._leaderboard_submission(sid)
        if found is None:
            raise UnknownSubmissionError(sid)
        return found

    def start_verification(self, sid: UUID, *, method: Method, seed: str, sample: list[str], by: str) -> None:
        entry = self.leaderboard_submission(sid)
        entry.start_verification(method=method, seed=seed, sample=sample, by=by, at=self.clock())
        self.save(entry)

    def record_verification(self, sid: UUID, judgement: Judgement, *, by: str) -> None:
        entry = self.leaderboard_submission(sid)
        entry.conclude(
            verified=judgement.verified, agreed=judgement.agreed, of=judgement.of, checks=judgement.checks,
            reason=judgement.reason, by=by, at=self.clock(),
        )
        self.save(entry)

    def record_receipt_verification(
        self, sid: UUID, judgement: Judgement, *, jtis: Mapping[str, str], seed: str, sample: list[str], by: str
    ) -> None:
        """Record a check of the receipts in one save. Receipts that do not hold reject the run (method receipts).
        Receipts that hold verify nothing alone: the verification starts as receipts+reruns with the drawn
        `sample` (and its `seed`), to be concluded by the re-runs, and every receipt's jti (`jtis`: station to jti)
        is spent in the same transaction, so a jti spent meanwhile by another submission makes the whole save
        fail rather than let two submissions use one receipt."""
        entry = self.leaderboard_submission(sid)
        now = self.clock()
        if judgement.verified:
            entry.start_verification(method="receipts+reruns", seed=seed, sample=sample, by=by, at=now)
        else:
            entry.start_verification(method="receipts", seed="", sample=sorted(judgement.checks), by=by, at=now)
            entry.conclude(
                verified=False, agreed=judgement.agreed, of=judgement.of, checks=judgement.checks,
                reason=judgement.reason, by=by, at=now,
            )
        spent = [SpentReceipt.spend(jti=jti, submission=sid, station=station, by=by, at=now)
                 for station, jti in sorted(jtis.items())] if judgement.verified else []
        try:
            self.save(entry, *spent)
        except IntegrityError:
            raise SubmissionError(
                "a receipt of this run was used by another submission meanwhile (or the submission changed); "
                "check the receipts again"
            ) from None

    def register_agent_key(self, *, keyid: str, agent: str, evidence: str, by: str) -> KeyRegistration:
        """Register an agent's Web Bot Auth key (once: a key belongs to one agent); its time is the event's."""
        key = AgentKey.register(keyid=keyid, agent=agent, evidence=evidence, by=by, at=self.clock())
        try:
            self.save(key)
        except IntegrityError:
            known = self.agent_key(key.keyid)
            owner = known.agent if known else "an agent"
            raise AgentKeyError(f"the key {key.keyid} is already registered to {owner}") from None
        return key.registration()

    def agent_key(self, keyid: str) -> KeyRegistration | None:
        try:
            key: AgentKey = self.repository.get(agent_key_id(keyid))
        except AggregateNotFoundError:
            return None
        return key.registration()

    def receipt_spent_by(self, jti: str) -> str | None:
        """The submission a receipt (by its jti) verified, if any."""
        try:
            spent: SpentReceipt = self.repository.get(spent_receipt_id(jti))
        except AggregateNotFoundError:
            return None
        return spent.submission_id

    def agent_keys(self) -> list[KeyRegistration]:
        """Every registered agent key, in the order registered."""
        topics = topics_of(AgentKey.Registered)
        found: list[KeyRegistration] = []
        after = 0
        while batch := self.recorder.select_notifications(after, 1000, topics=topics, inclusive_of_start=False):
            for notification in batch:
                key: AgentKey = self.repository.get(UUID(str(notification.originator_id)))
                found.append(key.registration())
            after = batch[-1].id
        return found

    def reject_submission(self, sid: UUID, *, reason: str, by: str) -> None:
        entry = self.leaderboard_submission(sid)
        entry.reject(reason=reason, by=by, at=self.clock())
        self.save(entry)

    # --- organisations and their private tests -------------------------------------------------------

    def register_organisation(self, *, slug: str, name: str, by: str) -> UUID:
        organisation = Organisation.register(slug=slug, name=name, by=by, at=self.clock())
        try:
            self.save(organisation)
        except IntegrityError:
            raise OrganisationError(f"an organisation {slug} is already registered") from None
        return organisation.id

    def organisation(self, slug: str) -> Organisation:
        try:
            return self.repository.get(organisation_id(slug))
        except (AggregateNotFoundError, ValueError):
            raise OrganisationError(f"no organisation {slug}") from None

    def add_member(self, slug: str, email: str, *, by: str) -> None:
        organisation = self.organisation(slug)
        organisation.add_member(email, by=by, at=self.clock())
        self.save(organisation)

    def remove_member(self, slug: str, email: str, *, by: str) -> None:
        organisation = self.organisation(slug)
        organisation.remove_member(email, by=by, at=self.clock())
        self.save(organisation)

    def record_consent(
        self, slug: str, *, run_ids: Sequence[str], until: date | None, document_sha256: str, reference: str,
        by: str,
    ) -> None:
        """Record a written consent. Every run named must exist and be this organisation's: a consent never
        reaches another organisation's runs, nor public ones."""
        organisation = self.organisation(slug)
        for run_id in run_ids:
            try:
                run = self.get_run(UUID(run_id))
            except (UnknownRunError, ValueError):
                raise OrganisationError(f"no run {run_id}") from None
            if run.org != slug:
                raise OrganisationError(f"run {run_id} is not a private test of {slug}")
        organisation.record_consent(
            run_ids=[str(UUID(r)) for r in run_ids], until=until, document_sha256=document_sha256,
            reference=reference, by=by, at=self.clock(),
        )
        self.save(organisation)

    # --- reading the log --------------------------------------------------------------------------------

    def head_position(self) -> int:
        return self.recorder.max_notification_id() or 0

    def read_log(
        self, after: int = 0, limit: int = 5000, stop: int | None = None, skim: Collection[str] = ()
    ) -> list[Envelope]:
        """Events with positions greater than `after` (and at most `stop`), payloads decoded typed.

        Events named in `skim` (e.g. Run.StepRecorded for the projections, which only count steps) are checked
        to be well-formed JSON and carry a `Skimmed` payload: most of a replay's time was decoding step
        payloads nobody reads. Positions may have gaps; read "greater than the last seen", never "+1".
        """
        decoders: dict[str, tuple[str, msgspec.json.Decoder[Any]]] = {}
        envelopes: list[Envelope] = []
        append = envelopes.append
        for position, originator, version, topic, state in self.log_source.notifications(after, limit, stop):
            try:
                found = decoders.get(topic)
                if found is None:
                    name = name_for_topic(topic)
                    found = decoders[topic] = (name, _skim_decoder if name in skim else payload_decoder(name))
                append(Envelope(position, originator, version, found[0], found[1].decode(state)))
            except Exception as error:  # an undecodable event stops readers; never skipped silently
                raise UndecodableEventError(position, str(error)) from error
        return envelopes


def check_target_url(url: str | None) -> str | None:
    """An organisation's own store: an absolute https address with a host, or None for our lab."""
    if url is None or not url.strip():
        return None
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.username or parts.password:
        raise OrganisationError("the store's address must be https://host/... (no user name or password)")
    if any(c.isspace() for c in url) or len(url) > 2000:
        raise OrganisationError("the store's address has spaces or is too long")
    return url
