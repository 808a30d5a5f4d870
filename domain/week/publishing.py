"""Publishing a week, and replaying the log to recompute what was published.

A publication records the log position its documents were computed at, their sha256, the sha256 of the events
they were computed from (the event lines of the week's audit file) and the wording of the week's open dataset
(dataset_tables.DATASET_FORMAT), so that every release of the week says what its publication said. "As published"
is the standing publication's bytes (the first made once the week was over; while the week is in progress, the
newest provisional one), which replaying the log up to that position gives again; "as corrected" is what the log
says now. A week's final publication waits until every run that started in it is over, so that nothing but a
correction changes it afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from domain.eventlog.commands import PublishWeek
from domain.eventlog.record import Record
from domain.eventlog.schema import Envelope
from domain.projections.canonical import sha256_hex
from domain.projections.dataset_tables import DATASET_FORMAT
from domain.projections.documents import WeekDocuments, week_documents
from domain.projections.facts import PublicationFact
from domain.projections.fold import SKIMMED, LogState
from domain.week.audit import events_sha256, published_events
from domain.week.publications import Publication
from domain.week.weeks import is_over, parse_week


class UnknownWeekError(LookupError):
    """A week with no public runs in the record."""

    def __str__(self) -> str:
        return f"no results for week {self.args[0]} in the record"


class NotPublishedError(LookupError):
    def __str__(self) -> str:
        return f"week {self.args[0]} has not been published"


class RunsStillOpenError(RuntimeError):
    """A week that is over still has runs that started in it and have not ended."""

    def __str__(self) -> str:
        week, count = self.args
        return f"{week} is over but {count} run(s) that started in it are still running; publish once they end"


class ReplayMismatchError(RuntimeError):
    """Replaying the log did not give the published bytes: the record or the code changed what it must not."""


class WeekDocumentStore(Protocol):
    """What publishing needs from the read models."""

    def catch_up(self) -> int:
        """Apply every event of the log; return the position reached."""
        ...

    def week_documents(self, week: str) -> WeekDocuments:
        """The week's documents as the log says now; raises UnknownWeekError."""
        ...

    def store_published(self, documents: WeekDocuments) -> None: ...

    def running_runs(self, week: str) -> int:
        """How many public runs counting for the week have started and not ended."""
        ...


def publish_week(record: Record, readmodels: WeekDocumentStore, command: PublishWeek) -> Publication:
    """Compute the week's ranking and Matrix from the whole log and record their publication: provisional while the
    week is in progress (by the record's clock), final once it is over and its runs have ended."""
    week, by = parse_week(command.week), command.by
    readmodels.catch_up()
    if is_over(week, record.clock()) and (running := readmodels.running_runs(week)):
        raise RunsStillOpenError(week, running)
    docs = readmodels.week_documents(week)
    ranking_sha, matrix_sha = sha256_hex(docs.ranking), sha256_hex(docs.matrix)
    # the events of the week's audit file, so a file can be checked against the publication, not only itself
    events_sha = events_sha256(published_events(record.read_log, week, docs.position, docs.documents_format))
    readmodels.store_published(docs)
    record.record_publication(
        week=week, position=docs.position, ranking_sha256=ranking_sha, matrix_sha256=matrix_sha,
        course_version=docs.course_version, by=by, documents_format=docs.documents_format,
        events_sha256=events_sha, dataset_format=DATASET_FORMAT,
    )
    readmodels.catch_up()  # so the read models list the publication at once
    published = record.week_record(week)
    assert published is not None
    return published.publications[-1]


LogReader = Callable[..., list[Envelope]]


def replay(read_log: LogReader, stop: int | None = None, page: int = 5000,
           keep: Callable[[Envelope], bool] | None = None) -> LogState:
    """Fold the log (up to `stop`, inclusive) into a fresh state, page by page."""
    state, after = LogState(), 0
    while envelopes := read_log(after=after, limit=page, stop=stop, skim=SKIMMED):
        state.fold(e for e in envelopes if keep is None or keep(e))
        after = envelopes[-1].position
    return state


def documents_as_published(read_log: LogReader, publication: PublicationFact) -> WeekDocuments:
    """Recompute a publication's documents by replaying the log up to its position; check the hashes."""
    state = replay(read_log, stop=publication.position)
    docs = week_documents(state.week_facts(publication.week), publication.documents_format)
    if (sha256_hex(docs.ranking), sha256_hex(docs.matrix)) != (
        publication.ranking_sha256, publication.matrix_sha256
    ):
        raise ReplayMismatchError(
            f"replaying the log up to {publication.position} does not give the bytes published for "
            f"{publication.week}"
        )
    return docs
