"""Verifying a leaderboard submission: the sample draw, the re-run judgement and the receipt judgement. Pure.

The draw is reproducible by anyone, in any language: rank the reported ids that count toward n by
sha256("<seed>:<id>") (hex, ascending) and take the first min(10, n). The seed is recorded with the sample.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

import msgspec

from domain.arc import COURSE_TEST_SET, NOT_COUNTED, SUCCESS, Submission
from domain.receipts import ReceiptCheck, ReceiptRefused

SAMPLE_SIZE = 10
AGREEMENT_NEEDED = (8, 10)
"""At least 8 of 10 (80% of the sample) must agree."""
RERUN_OUTCOMES = ("added_to_cart", "checkout_reached", "no_cart", "blocked")
"""What staff can record for a re-run store: the outcomes that count toward n."""


class Judgement(msgspec.Struct, frozen=True):
    verified: bool
    agreed: int
    of: int
    checks: dict[str, str]
    """Per checked id: our re-run's outcome, or what the receipt check found."""
    reason: str
    """Why it was rejected (empty when verified)."""


def draw_sample(ids: Iterable[str], seed: str, size: int = SAMPLE_SIZE) -> list[str]:
    """min(size, n) of the ids, chosen by the seed alone; returned in id order."""
    pool = sorted(set(ids))
    ranked = sorted(pool, key=lambda item: hashlib.sha256(f"{seed}:{item}".encode()).hexdigest())
    return sorted(ranked[: min(size, len(pool))])


def sample_pool(submission: Submission) -> list[str]:
    """The reported stores a sample is drawn from: those whose result counts toward n, by test-set id."""
    return [r.id or r.host or "" for r in submission.results if r.outcome not in NOT_COUNTED]


def reported_outcomes(submission: Submission) -> dict[str, str]:
    return {r.id or r.host or "": r.outcome for r in submission.results}


def agrees(reported: str, rerun: str) -> bool:
    """Results agree when both got the product into a cart or both did not (the rate is about cart success)."""
    return (reported in SUCCESS) == (rerun in SUCCESS)


def judge_reruns(reported: Mapping[str, str], sample: Sequence[str], reruns: Mapping[str, str]) -> Judgement:
    """Verified when our re-runs agree with the reported outcome on at least 80% of the sample (8 of 10)."""
    missing = [item for item in sample if item not in reruns]
    if missing:
        raise ValueError(f"give the re-run outcome of every sampled store; missing: {', '.join(missing)}")
    wrong = sorted({reruns[item] for item in sample} - set(RERUN_OUTCOMES))
    if wrong:
        raise ValueError(f"a re-run outcome must be one of {', '.join(RERUN_OUTCOMES)}, not {wrong[0]!r}")
    disagree = [item for item in sample if not agrees(reported[item], reruns[item])]
    agreed, of = len(sample) - len(disagree), len(sample)
    needed, per = AGREEMENT_NEEDED
    verified = agreed * per >= needed * of
    reason = "" if verified else (
        f"our re-runs agreed on {agreed} of {of} sampled stores; at least {needed} of {per} must agree. "
        "Disagreed: " + ", ".join(f"{item} (reported {reported[item]}, re-run {reruns[item]})" for item in disagree)
    )
    return Judgement(verified, agreed, of, {item: reruns[item] for item in sample}, reason)


def receipt_ids(submission: Submission) -> list[str]:
    """The ids whose results claim cart success: each must carry a receipt for receipts to verify the run."""
    return [r.id or r.host or "" for r in submission.results if r.outcome in SUCCESS]


def can_verify_by_receipts(submission: Submission) -> bool:
    """A course run whose every cart success carries a lab receipt (and at least one does)."""
    successes = [r for r in submission.results if r.outcome in SUCCESS]
    return submission.test_set == COURSE_TEST_SET and bool(successes) and all(r.receipt for r in successes)


def judge_receipts(submission: Submission, checks: Mapping[str, ReceiptCheck]) -> Judgement:
    """Verified when every claimed success carries a receipt the lab signed, for its station, within the run's
    time (when the run gives it), and no receipt is used twice. A result without success needs no receipt."""
    window = _window(submission)
    seen: set[str] = set()
    found: dict[str, str] = {}
    problems: list[str] = []
    for item in receipt_ids(submission):
        check = checks.get(item)
        if check is None:
            problems.append(f"{item}: no receipt")
        elif isinstance(check, ReceiptRefused):
            problems.append(f"{item}: receipt refused ({check.reason}: {check.detail})")
        elif check.station != item:
            problems.append(f"{item}: the receipt is for {check.station}")
        elif check.jti in seen:
            problems.append(f"{item}: the same receipt is used twice")
        elif window and not window[0] <= check.iat <= window[1]:
            problems.append(f"{item}: the receipt was signed outside the run's started_at..finished_at")
        else:
            seen.add(check.jti)
            found[item] = "receipt valid"
            continue
        found[item] = problems[-1].split(": ", 1)[1]
    of = len(found)
    agreed = of - len(problems)
    reason = "" if not problems else "receipts do not hold: " + "; ".join(problems)
    return Judgement(not problems and of > 0, agreed, of, found, reason)


def _window(submission: Submission) -> tuple[int, int] | None:
    run = submission.run
    if not run.started_at or not run.finished_at:
        return None
    start = datetime.fromisoformat(run.started_at.replace("Z", "+00:00")).timestamp()
    end = datetime.fromisoformat(run.finished_at.replace("Z", "+00:00")).timestamp()
    return int(start) - 300, int(end) + 300  # five minutes either side for clocks that differ
