"""An organisation that runs private tests: a store, a partner or an agent builder.

Its runs (`Run.Scheduled.org` set to its slug) never count for the public ranking, the Matrix or the repeats, and
are seen only by its members and our staff. A written consent, recorded as `Organisation.ConsentRecorded`, makes
some of them public: they then appear in the run index and their recordings open to everyone, labelled as
private tests made public with consent. They still never count.

A consent cannot be withdrawn, and there is no event for it: a consent covers only runs that exist when it is
recorded (named by id, or every run scheduled up to a date), so it never reaches runs the organisation has not
seen; and what was published has been read, cited and copied under CC BY 4.0, so taking it back would make the
record say something false about what was public. An organisation that wants later runs kept private simply
gives no further consent. A consent recorded in error is answered by a correction note, not by deleting facts.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

import msgspec
from eventsourcing.domain import Aggregate

SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")


class OrganisationError(ValueError):
    """A command that does not fit the organisation; the message says why."""


def organisation_id(slug: str) -> UUID:
    """One aggregate per slug, so registering the same slug twice is refused by the store itself."""
    return uuid5(NAMESPACE_URL, f"https://canitbuy.com/organisations/{slug}")


class ConsentTerms(msgspec.Struct, frozen=True, kw_only=True):
    """What a written consent makes public; the rule both the projections and the site apply."""

    org: str
    run_ids: tuple[str, ...] = ()
    until: date | None = None
    recorded_at: datetime

    def covers(self, *, org: str | None, run_id: str, scheduled_at: datetime) -> bool:
        """A run of this organisation that existed when the consent was recorded, named by id or scheduled
        on or before `until` (a UTC date)."""
        if org != self.org or scheduled_at > self.recorded_at:
            return False
        return run_id in self.run_ids or (self.until is not None and scheduled_at.date() <= self.until)


class Organisation(Aggregate):
    class Registered(Aggregate.Created):
        """An organisation was registered for private tests."""

        slug: str
        """Its short name, e.g. acme: the `org` of its runs and of its members' accounts."""
        name: str
        """Its name as people know it."""
        by: str
        """The staff member who registered it."""

    class MemberAdded(Aggregate.Event):
        """A person of the organisation may now sign in and see its runs."""

        email: str
        by: str

        def apply(self, aggregate: Organisation) -> None:
            aggregate.members.add(self.email)

    class MemberRemoved(Aggregate.Event):
        """A person may no longer see the organisation's runs."""

        email: str
        by: str

        def apply(self, aggregate: Organisation) -> None:
            aggregate.members.discard(self.email)

    class ConsentRecorded(Aggregate.Event):
        """The organisation consented in writing to make some of its runs public (never withdrawn: see the
        module's text). Covered runs are those that existed at `timestamp`."""

        org: str
        """The organisation's slug (repeated here so a reader of this event alone knows whose runs)."""
        run_ids: list[str]
        """Runs named one by one; may be empty when `until` is given."""
        until: date | None
        """Every run scheduled on or before this UTC date; None when only `run_ids` count."""
        document_sha256: str
        """The signed consent letter (PDF) in the blob store."""
        reference: str
        """The letter's own reference, e.g. its date and signatory, as staff read it."""
        by: str
        """The staff member who recorded it."""

        def apply(self, aggregate: Organisation) -> None:
            aggregate.consents.append(terms_of(self.org, self.run_ids, self.until, self.timestamp))

    def __init__(self, *, slug: str, name: str, by: str) -> None:
        self.slug, self.name, self.by = slug, name, by
        self.members: set[str] = set()
        self.consents: list[ConsentTerms] = []

    @classmethod
    def register(cls, *, slug: str, name: str, by: str, at: datetime) -> Organisation:
        if not SLUG.match(slug):
            raise OrganisationError("the slug takes 1 to 40 lower-case letters, digits and inner hyphens")
        if not name.strip():
            raise OrganisationError("give the organisation's name")
        return cls._create(cls.Registered, id=organisation_id(slug), timestamp=at, slug=slug,
                           name=name.strip(), by=by)

    def add_member(self, email: str, *, by: str, at: datetime) -> None:
        if email in self.members:
            raise OrganisationError(f"{email} is already a member of {self.slug}")
        self.trigger_event(self.MemberAdded, timestamp=at, email=email, by=by)

    def remove_member(self, email: str, *, by: str, at: datetime) -> None:
        if email not in self.members:
            raise OrganisationError(f"{email} is not a member of {self.slug}")
        self.trigger_event(self.MemberRemoved, timestamp=at, email=email, by=by)

    def record_consent(
        self, *, run_ids: list[str], until: date | None, document_sha256: str, reference: str, by: str,
        at: datetime,
    ) -> None:
        if not run_ids and until is None:
            raise OrganisationError("a consent names runs, or a date up to which every run is covered")
        if not SHA256.match(document_sha256):
            raise OrganisationError("the consent letter must be in the blob store (its sha256)")
        if not reference.strip():
            raise OrganisationError("give the letter's reference (its date and who signed it)")
        self.trigger_event(
            self.ConsentRecorded, timestamp=at, org=self.slug, run_ids=sorted(set(run_ids)), until=until,
            document_sha256=document_sha256, reference=reference.strip(), by=by,
        )

    def is_public(self, run_id: str, scheduled_at: datetime) -> bool:
        return any(c.covers(org=self.slug, run_id=run_id, scheduled_at=scheduled_at) for c in self.consents)


def terms_of(org: str, run_ids: Any, until: date | None, recorded_at: datetime) -> ConsentTerms:
    return ConsentTerms(org=org, run_ids=tuple(run_ids), until=until, recorded_at=recorded_at)

