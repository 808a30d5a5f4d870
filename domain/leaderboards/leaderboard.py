"""The submissions table: what the public may see of leaderboard submissions, folded from their events. Pure.

Each submission is listed with its status (unverified, verified, rejected), its cart success rate with a Wilson
95% interval over n, and the agent as submitted. The contact and the network key are never read here, so no page
or JSON built from this fold can show them.
"""

from __future__ import annotations

from datetime import datetime
from fractions import Fraction
from typing import Any

import msgspec

from domain.eventlog.schema import Envelope
from domain.leaderboards.arc import Submission
from domain.leaderboards.arc_reading import plain_text
from domain.projections.canonical import canonical_bytes, decimal_text
from domain.projections.statistics import ARC_Z, arc_rate, tenths_text, wilson

FORMAT = "canitbuy-leaderboard-submissions/1"
LICENSE = "CC BY 4.0"
LICENSE_URL = "https://creativecommons.org/licenses/by/4.0/"
CITATION = "CanItBuy leaderboard submissions (outside agents, unverified unless marked), canitbuy.com/leaderboard, date"
SCORING = "ARC cart success"
"""Every submission, the course's too, is scored by ARC's rule: an interop format, not the course's scoring (no
control-first rule, s01 counted as a row, no shopper's brief), so never comparable with the Matrix."""
EVENTS = (
    "LeaderboardSubmission.Submitted", "LeaderboardSubmission.VerificationStarted",
    "LeaderboardSubmission.Verified", "LeaderboardSubmission.Rejected",
)


class Verification(msgspec.Struct, kw_only=True):
    method: str | None = None
    seed: str | None = None
    sample: list[str] = msgspec.field(default_factory=list)
    agreed: int | None = None
    of: int | None = None
    reason: str | None = None
    started_at: datetime | None = None
    concluded_at: datetime | None = None


class Entry(msgspec.Struct, kw_only=True):
    id: str
    submitted_at: datetime
    test_set: str
    agent: dict[str, str]
    run: dict[str, Any]
    successes: int
    n: int
    results: int
    status: str = "unverified"
    verification: Verification = msgspec.field(default_factory=Verification)
    position: int = 0

    def rate(self) -> dict[str, str]:
        """The exact share and its Wilson interval at ARC's z, as decimals (ARC's rounded figures: arc())."""
        interval = wilson(self.successes, self.n, ARC_Z)
        low, high = (Fraction(interval.low).limit_denominator(10**9), Fraction(interval.high).limit_denominator(10**9))
        return {"share": decimal_text(Fraction(self.successes, self.n)), "low": decimal_text(low),
                "high": decimal_text(high)}


class Book:
    """The submissions folded from their events, in the order they were submitted."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.position = 0

    def apply(self, e: Envelope) -> None:
        self.position = max(self.position, e.position)
        p = e.payload
        if e.name == "LeaderboardSubmission.Submitted":
            self.entries[e.originator_id] = _entry(e.originator_id, p.submission, p.timestamp, e.position)
            return
        entry = self.entries.get(e.originator_id)
        if entry is None:
            return
        entry.position = e.position
        v = entry.verification
        if e.name == "LeaderboardSubmission.VerificationStarted":
            v.method, v.seed, v.sample, v.started_at = p.method, p.seed, list(p.sample), p.timestamp
        elif e.name == "LeaderboardSubmission.Verified":
            entry.status, v.agreed, v.of, v.concluded_at = "verified", p.agreed, p.of, p.timestamp
        elif e.name == "LeaderboardSubmission.Rejected":
            entry.status, v.reason, v.concluded_at = "rejected", p.reason, p.timestamp
            v.agreed, v.of = p.agreed, p.of

    def listed(self, status: str | None = None) -> list[Entry]:
        found = [e for e in self.entries.values() if status is None or e.status == status]
        return sorted(found, key=lambda e: (e.submitted_at, e.id))


def _entry(sid: str, text: str, at: datetime, position: int) -> Entry:
    s = msgspec.json.decode(text, type=Submission)
    # Submissions are cleaned to plain text when taken; cleaning again here covers events stored before that.
    agent = {k: plain_text(v) for k, v in msgspec.to_builtins(s.agent).items() if isinstance(v, str)}
    run = {k: plain_text(v) if isinstance(v, str) else v
           for k, v in msgspec.to_builtins(s.run).items() if k != "stopped_before_payment"}
    return Entry(
        id=sid, submitted_at=at, test_set=s.test_set, agent=agent, run=run, successes=s.successes(),
        n=len(s.counted()), results=len(s.results), position=position,
    )


def entry_document(entry: Entry) -> dict[str, Any]:
    v = entry.verification
    return {
        "id": entry.id, "submitted_at": entry.submitted_at.isoformat().replace("+00:00", "Z"),
        "test_set": entry.test_set, "agent": entry.agent, "run": entry.run, "status": entry.status,
        "successes": entry.successes, "n": entry.n, "results": entry.results,
        **_arc_figures(entry), "cart_success": entry.rate(),
        "scoring": SCORING,
        "verification": {
            "method": v.method, "seed": v.seed, "sample": v.sample, "agreed": v.agreed, "of": v.of,
            "reason": v.reason,
        },
    }


def _arc_figures(entry: Entry) -> dict[str, Any]:
    """`rate` and `ci` as ARC's public submission rows give them (submission.ts publicSubmission): percent to 0.1."""
    figures = arc_rate(entry.successes, entry.n)
    if figures is None:
        return {"rate": None, "ci": None}
    def number(tenths: int) -> msgspec.Raw:  # a JSON number, written as JavaScript writes it
        return msgspec.Raw(tenths_text(tenths).encode())

    return {"rate": number(figures.rate), "ci": {"low": number(figures.low), "high": number(figures.high)}}


def document(book: Book) -> bytes:
    """The open-data document of /api/leaderboard.json, in canonical JSON."""
    return canonical_bytes({
        "format": FORMAT, "license": LICENSE, "license_url": LICENSE_URL, "citation": CITATION,
        "note": "Runs of outside agents, as submitted. Never mixed into the CanItBuy ranking. A rate is cart "
                "success (added_to_cart or checkout_reached) over n, with a Wilson 95% interval (z = 1.96): "
                "rate and ci in percent rounded to 0.1 as ARC shows them, cart_success as exact decimals. ARC's "
                "scoring, also for runs of our course, which is not the course's (no control-first rule, S01 counted, "
                "no brief) and not comparable with the Matrix; a result by the course's rules is a real-agent test.",
        "position": book.position,
        "submissions": [entry_document(e) for e in book.listed()],
    })
