"""Leaderboard submissions: runs of outside agents sent in ARC's format (arc-leaderboard-submission/v1).

A submission is listed as unverified straight away, in its own table, never mixed into our ranking. Staff verify
it by re-running a seeded random sample of the stores it reports (verified when at least 8 of 10 agree), for runs of
our course after checking the lab's signed receipts (which verify no run alone: failing, they reject it; holding,
they lead to the re-runs); or reject it with the reason.

The rules of the service are here as guards: the same run twice is the same aggregate (its id is derived from
the run's fingerprint, so a race cannot store it twice), and a day's book counts submissions per network and
overall, saved in the same transaction as the submission (a race makes one save fail and retry).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from datetime import date, datetime
from typing import Literal
from uuid import UUID, uuid5

import msgspec
from eventsourcing.domain import Aggregate

from domain.leaderboards.arc import Submission

PER_NETWORK_PER_DAY = 5
PER_DAY_OVERALL = 200
"""ARC's "200 overall", read as a day's total over every network (UTC): a lifetime cap would close the service."""

NAMESPACE = UUID("6d1d1f0e-6b1c-4b8e-9a52-2f3f6c1e8a41")
Status = Literal["unverified", "verified", "rejected"]
Method = Literal["rerun", "receipts", "receipts+reruns"]


class SubmissionError(ValueError):
    """A step of the verification workflow that does not fit the submission's state; the message says why."""


class QuotaExceeded(SubmissionError):
    """A submission over a day's limits (per network, or overall)."""


def submission_id(fingerprint: str) -> UUID:
    """The same run (the same fingerprint) always has the same id: sending it twice finds the first."""
    return uuid5(NAMESPACE, f"submission:{fingerprint}")


def day_book_id(day: date) -> UUID:
    return uuid5(NAMESPACE, f"submission-day:{day.isoformat()}")


def network_of(address: str) -> str:
    """The client's network: the /24 of an IPv4 address, the /48 of an IPv6 one (anything else as given)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = 24 if ip.version == 4 else 48
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


def network_key(address: str, salt: bytes) -> str:
    """A salted hash of the client's network: enough to count a network's submissions, never the address."""
    return hmac.new(salt, network_of(address).encode(), hashlib.sha256).hexdigest()[:32]


class LeaderboardSubmission(Aggregate):
    class Submitted(Aggregate.Created):
        """An outside agent's run was submitted. It is listed as unverified."""

        submission: str
        """The submission as received, re-encoded as JSON with sorted keys and without the contact."""
        fingerprint: str
        """sha256 of the submission without its contact: the same run sent twice has the same fingerprint."""
        test_set: str
        """"ARC-100 v1" or "CanItBuy course 2.1"."""
        agent_name: str
        agent_path: str
        """browser, ucp, mcp, acp, api or other."""
        network_key: str
        """A salted hash of the sender's network (/24 or /48), to count a network's submissions; never the address."""
        contact: str | None = None
        """Private: how to reach the submitter to arrange verification. Never on a public page or in public data."""

    class VerificationStarted(Aggregate.Event):
        """Staff began verifying: the stores to re-run were drawn (or the receipts are to be checked)."""

        method: str
        """rerun (a sample of reported stores is re-run), receipts+reruns (the lab's signed receipts held and a
        sample is re-run), or receipts (the receipts are checked and decide alone: only the events recorded before
        receipts stopped verifying a run alone, or a rejection by receipts that do not hold)."""
        seed: str
        """The draw's seed: anyone can redo it with `domain.leaderboards.verification.draw_sample`."""
        sample: list[str]
        """The drawn test-set ids, in test-set order."""
        by: str

        def apply(self, aggregate: LeaderboardSubmission) -> None:
            aggregate.method, aggregate.seed, aggregate.sample = self.method, self.seed, list(self.sample)

    class Verified(Aggregate.Event):
        """The run was verified: at least 80% of the sample agreed (after its receipts held, for receipts+reruns).
        Events with method receipts were recorded when every success carrying a valid receipt verified a run."""

        method: str
        agreed: int
        of: int
        checks: dict[str, str]
        """Per checked id: our re-run's outcome, or "receipt valid"."""
        by: str

        def apply(self, aggregate: LeaderboardSubmission) -> None:
            aggregate.status = "verified"

    class Rejected(Aggregate.Event):
        """The run was rejected, with the reason (too little agreement, a bad receipt, spam, impersonation)."""

        reason: str
        by: str
        method: str | None = None
        agreed: int | None = None
        of: int | None = None
        checks: dict[str, str] | None = None
        """Per checked id, when the rejection followed a verification: what our check found."""

        def apply(self, aggregate: LeaderboardSubmission) -> None:
            aggregate.status = "rejected"

    def __init__(
        self, *, submission: str, fingerprint: str, test_set: str, agent_name: str, agent_path: str,
        network_key: str, contact: str | None = None,
    ) -> None:
        self.submission, self.fingerprint, self.test_set = submission, fingerprint, test_set
        self.agent_name, self.agent_path, self.network_key, self.contact = agent_name, agent_path, network_key, contact
        self.status: Status = "unverified"
        self.method: str | None = None
        self.seed: str | None = None
        self.sample: list[str] | None = None

    @classmethod
    def submit(cls, submission: Submission, *, network_key: str, at: datetime) -> LeaderboardSubmission:
        public = msgspec.structs.replace(submission, contact=None)
        text = msgspec.json.encode(msgspec.to_builtins(public, order="sorted")).decode()
        fingerprint = submission.fingerprint()
        return cls._create(
            cls.Submitted, id=submission_id(fingerprint), timestamp=at, submission=text, fingerprint=fingerprint,
            test_set=submission.test_set, agent_name=submission.agent.name, agent_path=submission.agent.path,
            network_key=network_key, contact=submission.contact,
        )

    def parsed(self) -> Submission:
        return msgspec.json.decode(self.submission, type=Submission)

    def start_verification(self, *, method: Method, seed: str, sample: list[str], by: str, at: datetime) -> None:
        if self.status != "unverified":
            raise SubmissionError(f"this submission is already {self.status}")
        if self.sample is not None:
            raise SubmissionError("the verification has already started; record its outcome")
        self.trigger_event(self.VerificationStarted, timestamp=at, method=method, seed=seed, sample=sample, by=by)

    def conclude(
        self, *, verified: bool, agreed: int, of: int, checks: dict[str, str], reason: str, by: str, at: datetime
    ) -> None:
        if self.status != "unverified" or self.sample is None:
            raise SubmissionError("start the verification first" if self.sample is None else f"already {self.status}")
        if verified:
            self.trigger_event(
                self.Verified, timestamp=at, method=self.method, agreed=agreed, of=of, checks=checks, by=by
            )
        else:
            self.trigger_event(
                self.Rejected, timestamp=at, reason=reason, by=by, method=self.method, agreed=agreed, of=of,
                checks=checks,
            )

    def reject(self, *, reason: str, by: str, at: datetime) -> None:
        """Staff hide a submission that is spam, impersonates another company's agent, or breaks the rules."""
        if self.status == "rejected":
            raise SubmissionError("this submission is already rejected")
        if not reason.strip():
            raise SubmissionError("say why the submission is rejected")
        self.trigger_event(self.Rejected, timestamp=at, reason=reason.strip(), by=by)


class SubmissionDay(Aggregate):
    """One UTC day's count of accepted submissions, per network and overall."""

    class Opened(Aggregate.Created):
        """The first submission of a UTC day arrived."""

        day: str

    class Counted(Aggregate.Event):
        """A submission was accepted and counts toward the day's limits."""

        network_key: str
        submission_id: str

        def apply(self, aggregate: SubmissionDay) -> None:
            aggregate.per_network[self.network_key] = aggregate.per_network.get(self.network_key, 0) + 1
            aggregate.total += 1

    def __init__(self, *, day: str) -> None:
        self.day = day
        self.per_network: dict[str, int] = {}
        self.total = 0

    @classmethod
    def open(cls, day: date, *, at: datetime) -> SubmissionDay:
        return cls._create(cls.Opened, id=day_book_id(day), timestamp=at, day=day.isoformat())

    def count(self, network_key: str, submission: UUID, *, at: datetime) -> None:
        if self.per_network.get(network_key, 0) >= PER_NETWORK_PER_DAY:
            raise QuotaExceeded(
                f"at most {PER_NETWORK_PER_DAY} submissions a network a day; this network has sent "
                f"{PER_NETWORK_PER_DAY} today ({self.day}, UTC). Try again tomorrow."
            )
        if self.total >= PER_DAY_OVERALL:
            raise QuotaExceeded(
                f"at most {PER_DAY_OVERALL} submissions a day overall; today's ({self.day}, UTC) are taken. "
                "Try again tomorrow."
            )
        self.trigger_event(self.Counted, timestamp=at, network_key=network_key, submission_id=str(submission))
