"""Published weeks: the log position a week was computed at and the hashes of its ranking, its Matrix and the
events they were computed from.

Replaying the log up to that position gives the same bytes, forever. Republishing after corrections adds a
publication; the first stays.

A publication made while the week is still in progress is provisional: it is verifiable at its log position like
any other, and the publication once the week is over (the final one) supersedes it. After a final publication a
week changes only through corrections, and no provisional publication follows.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from uuid import NAMESPACE_URL, UUID, uuid5

import msgspec
from eventsourcing.domain import Aggregate

from domain.week.weeks import is_over


def publication_id(week: str) -> UUID:
    return uuid5(NAMESPACE_URL, f"canitbuy:week:{week}")


class Publication(msgspec.Struct, frozen=True, kw_only=True):
    week: str
    position: int
    """The notification-log position the week was computed at (inclusive)."""
    ranking_sha256: str
    matrix_sha256: str
    course_version: str
    by: str
    at: datetime
    provisional: bool = False
    """Made while the week was in progress; superseded by the week's final publication."""
    documents_format: int = 1
    """The format the documents were written in (see domain/projections/documents.py); replays use it."""
    events_sha256: str | None = None
    """sha256 of the events the documents were computed from (domain/week/audit.py: `events_sha256`); None on
    publications made before it was recorded."""
    dataset_format: int = 1
    """The wording of the week's open dataset, its card and column meanings (domain/projections/dataset_tables.py:
    DATASET_FORMAT): 1 on publications made before it was recorded."""


class PublicationError(Exception):
    pass


def standing(publications: Sequence[Publication]) -> int:
    """Index of the publication that stands for the week "as published": the first final one (later ones follow
    corrections), or the newest provisional one while the week is in progress."""
    final = next((i for i, p in enumerate(publications) if not p.provisional), None)
    return final if final is not None else len(publications) - 1


class Week(Aggregate):
    class Opened(Aggregate.Created):
        """The week's record was opened (at its first publication)."""

        week: str

    class Published(Aggregate.Event):
        """The week's ranking and Matrix were published."""

        position: int
        """Notification-log position the results were computed at (inclusive)."""
        ranking_sha256: str
        """sha256 of the canonical ranking JSON."""
        matrix_sha256: str
        """sha256 of the canonical Matrix JSON."""
        course_version: str
        by: str
        provisional: bool = False
        """True when published while the week was in progress (more runs could still count for it); the
        publication made once the week is over supersedes it. False on every final publication."""
        documents_format: int = 1
        """The format the ranking and Matrix were written in, so a replay writes the same bytes: 1 for weeks
        published before December 2026, 2 since (the citation as the method gives it, remarks and causes), 3 (the
        Matrix in stage order), 4 (the newest run is the one that started last; docs/audit-format.md)."""
        events_sha256: str | None = None
        """sha256 of the events the ranking and Matrix were computed from, in log order up to `position`: the
        event lines of the publication's audit file (docs/audit-format.md), so a file can be checked against the
        publication and not only against itself. None on publications made before it was recorded (their events
        are not anchored)."""
        dataset_format: int = 1
        """The wording of the week's open dataset, its card and column meanings (docs/dataset.md), so every release
        of the week says what its publication said: 1 on publications made before it was recorded (their cards
        call cost_usd the provider's list price), 2 since (the gateway's reported cost, or our estimate from the
        prices /agent lists). It is in no audit file: a Week.Published event changes no week's documents."""

        def apply(self, aggregate: Week) -> None:
            aggregate.publications.append(
                Publication(
                    week=aggregate.week, position=self.position, ranking_sha256=self.ranking_sha256,
                    matrix_sha256=self.matrix_sha256, course_version=self.course_version, by=self.by,
                    at=self.timestamp, provisional=self.provisional,
                    documents_format=self.documents_format, events_sha256=self.events_sha256,
                    dataset_format=self.dataset_format,
                )
            )

    def __init__(self, *, week: str) -> None:
        self.week = week
        self.publications: list[Publication] = []

    @property
    def final(self) -> Publication | None:
        """The first publication made once the week was over; None while only provisional ones exist."""
        return next((p for p in self.publications if not p.provisional), None)

    @classmethod
    def open(cls, *, week: str, at: datetime) -> Week:
        return cls._create(cls.Opened, id=publication_id(week), timestamp=at, week=week)

    def publish(
        self, *, position: int, ranking_sha256: str, matrix_sha256: str, course_version: str, by: str,
        at: datetime, documents_format: int = 1, events_sha256: str | None = None, dataset_format: int = 1,
    ) -> None:
        """Record a publication; made before the week is over (by `at`), it is provisional."""
        provisional = not is_over(self.week, at)
        last = self.publications[-1] if self.publications else None
        if last and last.position > position:
            raise PublicationError("a publication cannot go back in the log")
        if provisional and self.final is not None:
            raise PublicationError(f"{self.week} is over and published; it changes only through corrections")
        same = last and (last.ranking_sha256, last.matrix_sha256) == (ranking_sha256, matrix_sha256)
        if same and (provisional or not last.provisional):  # type: ignore[union-attr]
            # the week's close supersedes a provisional publication even when the results are the same
            raise PublicationError(f"{self.week} is already published with these results")
        self.trigger_event(
            self.Published, timestamp=at, position=position, ranking_sha256=ranking_sha256,
            matrix_sha256=matrix_sha256, course_version=course_version, by=by, provisional=provisional,
            documents_format=documents_format, events_sha256=events_sha256, dataset_format=dataset_format,
        )
