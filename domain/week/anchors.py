"""Checking an audit file against its publication, with values from outside the file (docs/audit-format.md).

A file's hash chain and the hashes in its header show only that the file agrees with itself: whoever writes a file
can reseal it. A publication records the sha256 of the ranking, of the Matrix and (since December 2026) of the
events they were computed from; the week's page shows them and its JSON (`WeekPublications`, /api/weeks/W.json)
lists them. `audit verify` compares what it recomputes from a file with those, never with what the file says.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

import msgspec

from domain.projections.canonical import canonical_struct_bytes
from domain.projections.facts import PublicationFact
from domain.week.audit import AuditError, Checked
from domain.week.publications import standing

WEEK_FORMAT: Final = "canitbuy-week/1"


class PublishedValues(msgspec.Struct, frozen=True, kw_only=True):
    """One publication of the week, with the values its audit file is checked against."""

    number: int
    """1 for the week's first publication, as on the week's page and in the audit file's name."""
    position: int
    """The event-log position the ranking and Matrix were computed at (inclusive), the audit file's `position`."""
    event_position: int
    """Where the Week.Published event itself sits in the log."""
    published_at: datetime
    """When it was published."""
    by: str
    """Who published it."""
    course_version: str
    """The course version of the week."""
    documents_format: int
    """The format the ranking and Matrix were written in (docs/audit-format.md)."""
    provisional: bool
    """Made while the week was in progress; the week's final publication supersedes it."""
    ranking_sha256: str
    """sha256 of the ranking's exact bytes (/api/ranking.json?week=W&publication=N)."""
    matrix_sha256: str
    """sha256 of the Matrix's exact bytes (/api/matrix.json?week=W&publication=N)."""
    events_sha256: str | None
    """sha256 of the events the ranking and Matrix were computed from: the event lines of the audit file
    (docs/audit-format.md). null on publications made before it was recorded: their events are not anchored, only
    the ranking and Matrix computed from them."""
    audit_file: str
    """The address of its audit file on this site."""


class WeekPublications(msgspec.Struct, frozen=True, kw_only=True):
    """A week's publications and their hashes, which `canitbuy audit verify --published` checks files against."""

    format: str
    """Document format and version: canitbuy-week/1."""
    week: str
    """The ISO week, e.g. 2026-W48."""
    standing: int | None
    """The number of the publication that stands "as published" (the first final one; while the week is in
    progress, the newest provisional one); null while the week has none."""
    publications: list[PublishedValues]
    """In the order they were made."""


def week_publications(week: str, publications: Sequence[PublicationFact]) -> bytes:
    """The week's JSON (canonical)."""
    return canonical_struct_bytes(
        WeekPublications(
            format=WEEK_FORMAT,
            week=week,
            standing=standing(publications) + 1 if publications else None,
            publications=[
                PublishedValues(
                    number=number,
                    position=p.position,
                    event_position=p.event_position,
                    published_at=p.at,
                    by=p.by,
                    course_version=p.course_version,
                    documents_format=p.documents_format,
                    provisional=p.provisional,
                    ranking_sha256=p.ranking_sha256,
                    matrix_sha256=p.matrix_sha256,
                    events_sha256=p.events_sha256,
                    audit_file=f"/weeks/{week}/audit-{number}.jsonl",
                )
                for number, p in enumerate(publications, start=1)
            ],
        )
    )


class Expected(msgspec.Struct, frozen=True, kw_only=True):
    """The values a file is checked against, from outside it; None: not given (or, for `events_sha256` of a
    publication, not recorded)."""

    ranking_sha256: str | None = None
    matrix_sha256: str | None = None
    events_sha256: str | None = None
    publication: PublishedValues | None = None
    """When the values are a publication's: its header fields are checked too."""


NAMES: Final = {"ranking_sha256": "ranking", "matrix_sha256": "Matrix", "events_sha256": "events"}


def published(record: WeekPublications, checked: Checked) -> Expected:
    """The values of the publication the file is of, found by its week and log position (a provisional and a
    final publication at one position: the one the file's header names; every value is checked, so a header can
    only choose among genuine publications)."""
    header = checked.header
    if record.week != header.week:
        raise AuditError(f"the file is of {header.week} but the published values are of {record.week}")
    at = [p for p in record.publications if p.position == header.position]
    if not at:
        positions = ", ".join(str(p.position) for p in record.publications) or "none"
        raise AuditError(
            f"no publication of {record.week} is at the file's log position {header.position} "
            f"(they are at: {positions})"
        )
    p = next((p for p in at if p.provisional == header.provisional), at[0])
    return Expected(
        ranking_sha256=p.ranking_sha256, matrix_sha256=p.matrix_sha256, events_sha256=p.events_sha256, publication=p
    )


def differences(checked: Checked, expected: Expected) -> list[str]:
    """What differs from the values given: each sha256 recomputed from the file, and for a publication the
    header's own fields (`provisional`, `course_version`, `documents_format`)."""
    found = [
        f"{NAMES[field]} sha256 (published {want}, from the file {got})"
        for field in NAMES
        if (want := getattr(expected, field)) is not None and want != (got := getattr(checked, field))
    ]
    if (p := expected.publication) is not None:
        header = checked.header
        found += [
            f"{name} (published {want}, the file's header {got})"
            for name, want, got in (
                ("provisional", p.provisional, header.provisional),
                ("course_version", p.course_version, header.course_version),
                ("documents_format", p.documents_format, header.documents_format),
            )
            if want != got
        ]
    return found


def given(expected: Expected) -> list[str]:
    """The names of the hashes given, e.g. ["ranking", "Matrix"]."""
    return [name for field, name in NAMES.items() if getattr(expected, field) is not None]
