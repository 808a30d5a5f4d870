"""ARC interoperability: test sets, the arc-leaderboard-submission/v1 format and its rules.

ARC (Agentic Report Card) runs agents on real stores; its submission format is open (CC BY 4.0). We accept the
same object, answer the same way (an id, or the first problem found), and also take runs of our own course
(test set "CanItBuy course 2.1", ids s01..s18), whose lab receipts are checked before the re-runs (they verify no
run alone: domain.leaderboards.verification).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from importlib import resources
from typing import Literal

import msgspec

from domain.courses.course import CURRENT_VERSION, load_course

SPEC = "arc-leaderboard-submission/v1"
ARC_TEST_SET = "ARC-100 v1"
COURSE_TEST_SET = f"CanItBuy course {CURRENT_VERSION}"
MAX_BYTES = 200 * 1024
MIN_COUNTED = 10

ArcOutcome = Literal["added_to_cart", "checkout_reached", "no_cart", "blocked", "error", "not_attempted"]
OUTCOMES: tuple[str, ...] = ("added_to_cart", "checkout_reached", "no_cart", "blocked", "error", "not_attempted")
SUCCESS = frozenset({"added_to_cart", "checkout_reached"})
NOT_COUNTED = frozenset({"error", "not_attempted"})
PATHS = ("browser", "ucp", "mcp", "acp", "api", "other")


class TestItem(msgspec.Struct, frozen=True):
    id: str
    host: str
    product_url: str
    name: str = ""


class TestSet(msgspec.Struct, frozen=True):
    name: str
    items: list[TestItem]

    def by_id(self) -> dict[str, TestItem]:
        return {item.id: item for item in self.items}

    def by_host(self) -> dict[str, TestItem]:
        return {item.host: item for item in self.items}


def arc_100_v1() -> TestSet:
    text = (resources.files("domain") / "testsets" / "arc-100-v1.csv").read_text(encoding="utf-8")
    rows = csv.DictReader(io.StringIO(text))
    return TestSet(
        ARC_TEST_SET, [TestItem(r["id"], r["host"], r["product_url"], r["name"]) for r in rows]
    )


def course_test_set(lab_domain: str = "lab.canitbuy.com", scheme: str = "https") -> TestSet:
    """Our course in ARC's shape: one row a station, its product the Aero Run 2."""
    course = load_course()
    items = [
        TestItem(s.code, f"{s.code}.{lab_domain}", f"{scheme}://{s.code}.{lab_domain}/products/aero-run-2", s.name)
        for s in course.stations
    ]
    return TestSet(COURSE_TEST_SET, items)


def test_set_named(name: str) -> TestSet:
    if name == ARC_TEST_SET:
        return arc_100_v1()
    if name == COURSE_TEST_SET:
        return course_test_set()
    raise SubmissionProblem(f'test_set must be "{ARC_TEST_SET}" or "{COURSE_TEST_SET}".')


class SubmissionProblem(ValueError):
    """The first problem found in a submission; the message names the field."""


class ArcAgent(msgspec.Struct, frozen=True, omit_defaults=True):
    name: str
    path: str
    version: str | None = None
    builder: str | None = None
    url: str | None = None
    model: str | None = None


class ArcRun(msgspec.Struct, frozen=True, omit_defaults=True):
    stopped_before_payment: bool
    started_at: str | None = None
    finished_at: str | None = None
    notes: str | None = None


class ArcResult(msgspec.Struct, frozen=True, omit_defaults=True):
    outcome: str
    id: str | None = None
    host: str | None = None
    at: str | None = None
    evidence_url: str | None = None
    steps: float | None = None
    """Rounded to a whole number from 0 to 10,000 (older events may hold a fraction); dropped when not one."""
    seconds: float | None = None
    """Rounded to a whole number from 0 to 86,400; dropped when not one."""
    receipt: str | None = None
    """Our extension for course runs: the lab's signed checkout receipt (compact JWS)."""


class Submission(msgspec.Struct, frozen=True, omit_defaults=True):
    spec: str
    test_set: str
    agent: ArcAgent
    run: ArcRun
    results: list[ArcResult]
    contact: str | None = None
    """Private: never published."""

    def counted(self) -> list[ArcResult]:
        return [r for r in self.results if r.outcome not in NOT_COUNTED]

    def successes(self) -> int:
        return sum(1 for r in self.counted() if r.outcome in SUCCESS)

    def fingerprint(self) -> str:
        """ARC's fingerprint (abab7575/arc-open, benchmark/src/submission.ts): sha256 of the JSON array
        [lowercased agent name, version, path, [[id, outcome], ...] in the order sent]. The same run sent again with
        other notes, times, URLs or contact is the same run."""
        results = [[r.id, r.outcome] for r in self.results]
        identity = [self.agent.name.lower(), self.agent.version, self.agent.path, results]
        return hashlib.sha256(json.dumps(identity, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()
