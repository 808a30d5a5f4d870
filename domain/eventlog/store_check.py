"""A whole-store check, as a file-system check walks a disk: run nightly, and after every restore.

It reads the whole log in order and stops at the first problem, which it names:
- every event decodes with this version's schema (a damaged or unknown event is the first problem);
- every aggregate's versions run 1, 2, 3, … with no gap and no repeat (a lost or doubled event);
- every blob an event names (step screenshots, element lists, model exchanges, runs' traces, videos and the
  screens their videos are made of, manual-test videos, consent letters) is in the blob store, and its bytes
  hash to its name;
- every publication recomputes, by replaying the log up to its position, to the sha256 it recorded.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from domain.agent.ports import BlobStore
from domain.eventlog.record import UndecodableEventError
from domain.eventlog.schema import Envelope
from domain.projections.canonical import sha256_hex
from domain.projections.documents import week_documents
from domain.projections.facts import PublicationFact
from domain.projections.fold import SKIMMED, LogState
from domain.week.publishing import LogReader


class StoreProblem(Exception):
    """The first thing found wrong in the store, in words an operator can act on."""


@dataclass
class CheckReport:
    events: int = 0
    aggregates: int = 0
    blobs: int = 0
    publications: int = 0
    log_seconds: float = 0.0
    """Time to read, decode and check the log (the events per second figure)."""
    blob_seconds: float = 0.0
    publication_seconds: float = 0.0

    @property
    def events_per_second(self) -> float:
        return self.events / self.log_seconds if self.log_seconds else 0.0


def named_blobs(envelope: Envelope) -> Iterator[str]:
    """The blob digests an event names."""
    payload: Any = envelope.payload
    if envelope.name == "Run.StepRecorded":
        step = payload.step
        yield from (d for d in (step.screenshot, step.elements, step.exchange) if d)
    elif envelope.name == "Run.MediaKept":
        yield from (d for d in (payload.trace, payload.video) if d)
        yield from (screen.screenshot for screen in payload.screens)  # a step's screenshot is named twice
    elif envelope.name == "Run.TraceCleaned" and payload.trace:
        yield payload.trace
    elif envelope.name == "ManualTest.Recorded" and payload.video:
        yield payload.video
    elif envelope.name == "Organisation.ConsentRecorded":
        yield payload.document_sha256


class _LogWalk:
    """One pass over the log: versions per aggregate, the blobs named (first mention kept), the publications."""

    def __init__(self) -> None:
        self.versions: dict[str, int] = {}
        self.blobs: dict[str, int] = {}
        self.week_ids: dict[str, str] = {}
        self.publications: list[PublicationFact] = []
        self.events = 0

    def take(self, envelopes: list[Envelope]) -> None:
        versions, blobs = self.versions, self.blobs
        for e in envelopes:
            last = versions.get(e.originator_id, 0)
            if e.originator_version != last + 1:
                raise StoreProblem(
                    f"event at position {e.position} ({e.name}) is version {e.originator_version} of aggregate "
                    f"{e.originator_id}, whose last version was {last}: the log lost or doubled an event")
            versions[e.originator_id] = e.originator_version
            for digest in named_blobs(e):
                blobs.setdefault(digest, e.position)
            if e.name == "Week.Opened":
                self.week_ids[e.originator_id] = e.payload.week
            elif e.name == "Week.Published":
                self.publications.append(self._publication(e))
        self.events += len(envelopes)

    def _publication(self, e: Envelope) -> PublicationFact:
        p: Any = e.payload
        return PublicationFact(
            week=self.week_ids[e.originator_id], position=p.position, ranking_sha256=p.ranking_sha256,
            matrix_sha256=p.matrix_sha256, course_version=p.course_version, by=p.by, at=p.timestamp,
            event_position=e.position, provisional=p.provisional, documents_format=p.documents_format,
            events_sha256=p.events_sha256, dataset_format=p.dataset_format)


def check_store(read_log: LogReader, blobs: BlobStore | None, *, page: int = 5000,
                clock: Callable[[], float] = time.perf_counter) -> CheckReport:
    """Check the whole store; raise StoreProblem naming the first problem. `blobs=None` leaves blobs out."""
    report, walk = CheckReport(), _LogWalk()
    started, after = clock(), 0
    while True:
        try:
            envelopes = read_log(after=after, limit=page)
        except UndecodableEventError as error:
            raise StoreProblem(str(error)) from None
        if not envelopes:
            break
        walk.take(envelopes)
        after = envelopes[-1].position
    report.events, report.aggregates, report.log_seconds = walk.events, len(walk.versions), clock() - started
    if blobs is not None:
        started = clock()
        for digest, position in walk.blobs.items():
            _check_blob(blobs, digest, position)
        report.blobs, report.blob_seconds = len(walk.blobs), clock() - started
    started = clock()
    _recompute(read_log, walk.publications, page)
    report.publications, report.publication_seconds = len(walk.publications), clock() - started
    return report


def _recompute(read_log: LogReader, publications: list[PublicationFact], page: int) -> None:
    """Every publication's documents from the log up to its position, in one pass however many there are: the
    fold stops at each position in turn (as `documents_as_published` replays up to it) and goes on."""
    state, after = LogState(), 0
    for publication in sorted(publications, key=lambda p: (p.position, p.event_position)):
        while envelopes := read_log(after=after, limit=page, stop=publication.position, skim=SKIMMED):
            state.fold(envelopes)
            after = envelopes[-1].position
        docs = week_documents(state.week_facts(publication.week), publication.documents_format)
        if (sha256_hex(docs.ranking), sha256_hex(docs.matrix)) != (
            publication.ranking_sha256, publication.matrix_sha256
        ):
            raise StoreProblem(
                f"publication at position {publication.event_position}: replaying the log up to "
                f"{publication.position} does not give the bytes published for {publication.week}")


def _check_blob(blobs: BlobStore, digest: str, position: int) -> None:
    try:
        data = blobs.get(digest)
    except KeyError:
        raise StoreProblem(f"blob {digest} named at position {position} is missing from the blob store") from None
    if hashlib.sha256(data).hexdigest() != digest:
        raise StoreProblem(f"blob {digest} named at position {position} is damaged: its bytes hash otherwise")
