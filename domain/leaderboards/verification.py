"""Verifying a leaderboard submission: the sample draw, the re-run judgement and the receipt judgement. Pure.

The draw is reproducible by anyone, in any language: rank the reported ids that count toward n or were reported
as `error` by sha256("<seed>:<id>") (hex, ascending) and take the first min(10, that many). The seed is recorded
with the sample.

Why `error` rows are drawn: ARC samples "at least 10 of the stores you reported" (abab7575/arc-open,
docs/leaderboard-spec.md), and a failure relabelled `error` ("the agent's own run broke") leaves n, raising the
rate; drawn only from n, such rows would never be re-run. A store reported as `error` agrees when our re-run gets
the product into a cart (the error hid no failure: counting it would only have lowered the rate) and disagrees
when it does not. `not_attempted` rows ("You skipped this store") claim no run and are not drawn.

Receipts never verify a run alone. A receipt proves that the holder of the registered agent key opened this
station's order form, with these cart contents, at this time; it does not prove that a model, rather than a
script, got past the station's obstacle (the lab cannot tell a browser from a script: S09 takes
`?terms=accepted`, S14 `?point=...`, and a POST to /cart/add with a GET of /checkout opens most stations' form),
and a result reported as `error` carries no receipt at all, so receipts cannot show that an error hid no failure.
ARC's rule (a re-run sample agrees on at least 8 of 10) is what verifies; receipts that hold are the evidence
check before it (RECEIPTS_THEN_RERUNS), receipts that fail reject the run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

import msgspec

from domain.leaderboards.arc import COURSE_TEST_SET, NOT_COUNTED, SUCCESS, Submission
from domain.leaderboards.receipt_ledger import KeyRegistration, agent_name_key
from domain.leaderboards.receipts import ReceiptCheck, ReceiptRefused, parse

SAMPLE_SIZE = 10
AGREEMENT_NEEDED = (8, 10)
"""At least 8 of 10 (80% of the sample) must agree."""
CLOCK_SLACK_S = 300
"""Five minutes either side of the run's times for a receipt's iat: the lab's clock and the agent's may differ."""
RERUN_OUTCOMES = ("added_to_cart", "checkout_reached", "no_cart", "blocked")
"""What staff can record for a re-run store: the outcomes that count toward n."""
RECEIPTS_ALONE = "receipts"
"""The method of verifications by receipts alone, recorded before receipts stopped verifying a run alone: their
events replay as they were (verified or rejected by the receipts), and the page says what they proved."""
RECEIPTS_THEN_RERUNS = "receipts+reruns"
"""The receipts were checked and held, then a sample was drawn to re-run: verified only when the re-runs agree."""


class OwnAgent(msgspec.Struct, frozen=True, kw_only=True):
    """What CanItBuy's own agent has made public, so that no submission can pass it off as its own: its key (in
    our key directory) and every receipt of our recorded runs (each run's JSON holds it, with the key it names)."""

    keys: dict[str, str] = {}
    """Our agent's key ids, now and before, to where each shows it is ours ("our key directory", "run <id>")."""
    receipts: dict[str, str] = {}
    """The jti of every receipt our recorded runs hold, to the run's id (for the staff, never published)."""

    def key_problem(self, keyid: str) -> str | None:
        """Why the key cannot be registered to an outside agent, or None."""
        where = self.keys.get(keyid)
        if where is None:
            return None
        return (f"the key {keyid} is CanItBuy's own agent key ({where} names it), public and no outside agent's: "
                "a receipt naming it proves a run of ours, not of theirs")


NO_OWN_AGENT = OwnAgent()


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


DRAWN = ("error",)
"""Outcomes left out of n that are drawn all the same (the module's docstring)."""


def sample_pool(submission: Submission) -> list[str]:
    """The reported stores a sample is drawn from: those whose result counts toward n, and those reported as
    `error`, by test-set id."""
    return [r.id or r.host or "" for r in submission.results if r.outcome not in NOT_COUNTED or r.outcome in DRAWN]


def reported_outcomes(submission: Submission) -> dict[str, str]:
    return {r.id or r.host or "": r.outcome for r in submission.results}


def agrees(reported: str, rerun: str) -> bool:
    """Results agree when both got the product into a cart or both did not (the rate is about cart success). A
    store reported as `error` agrees only when our re-run got the product into a cart: a failure there is one the
    report left out of n."""
    if reported in DRAWN:
        return rerun in SUCCESS
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
    """The ids whose results claim cart success: each must carry a receipt for the receipts to hold."""
    return [r.id or r.host or "" for r in submission.results if r.outcome in SUCCESS]


def can_check_receipts(submission: Submission) -> bool:
    """A course run whose every cart success carries a lab receipt (and at least one does): its receipts can be
    checked before its re-runs. Holding, they verify nothing alone (the module's docstring)."""
    successes = [r for r in submission.results if r.outcome in SUCCESS]
    return submission.test_set == COURSE_TEST_SET and bool(successes) and all(r.receipt for r in successes)


def receipts_leave_out(submission: Submission) -> str:
    """In one line, what the receipts of a run cannot show and the re-runs must: its `error` rows, and in any case
    whether a model rather than a script passed the obstacles."""
    errors = [r.id or r.host or "" for r in submission.results if r.outcome in DRAWN]
    hidden = (f"{len(errors)} stores reported as error ({', '.join(errors)}) carry no receipt, and a failure "
              "relabelled error raises the rate; ") if errors else ""
    return (f"Receipts verify no run alone: {hidden}a receipt proves that the holder of the registered key opened "
            "the order form, not that a model rather than a script got past the obstacle. Holding receipts draw a "
            "sample to re-run, error rows included; the run is verified only when the re-runs agree.")


def unsigned_receipts(submission: Submission) -> list[str]:
    """The claimed successes whose receipt names no agent key: the lab signed a checkout opened by a client that did
    not sign its requests (any plain HTTP client can get one), so the receipt proves nothing about this run."""
    found = []
    for result in submission.results:
        if result.outcome in SUCCESS and result.receipt:
            parsed = parse(result.receipt)
            if not isinstance(parsed, ReceiptRefused) and parsed.payload.agent_keyid is None:
                found.append(result.id or result.host or "")
    return found


def unsigned_note(ids: Sequence[str]) -> str:
    """In words, why unsigned receipts do not verify a run (empty when there are none)."""
    if not ids:
        return ""
    return (f"Unsigned receipts prove nothing about this run: the receipts of {', '.join(ids)} name no agent key "
            "(the checkout was opened by a client that did not sign its requests with Web Bot Auth, as any plain "
            "HTTP client can). Verify this run by re-running a sample instead.")


UNSIGNED = ("the receipt is unsigned: it names no agent key, so it proves that someone opened that checkout, "
            "not that this agent did")


def judge_receipts(
    submission: Submission, checks: Mapping[str, ReceiptCheck], keys: Mapping[str, KeyRegistration],
    spent: Mapping[str, str], ours: OwnAgent = NO_OWN_AGENT,
) -> Judgement:
    """Verified when every claimed success carries a receipt the lab signed for its station, for a request signed
    with an agent key registered to this submission's agent before the run started, signed within the run's
    started_at..finished_at, and whose jti no submission has spent (`spent`: jti to the submission that did) nor
    this one uses twice. `keys` maps the receipts' agent key ids to their registrations. A receipt of one of our
    own runs, or naming our own agent's key (`ours`), proves nothing about anyone else's agent: all are public. A
    result without success needs no receipt."""
    window = _window(submission)
    seen: set[str] = set()
    found: dict[str, str] = {}
    problems: list[str] = []
    for item in receipt_ids(submission):
        problem = _receipt_problem(submission, window, checks.get(item), item, keys, spent, seen, ours)
        if problem:
            problems.append(f"{item}: {problem}")
            found[item] = problem
        else:
            found[item] = "receipt valid"
    of = len(found)
    agreed = of - len(problems)
    reason = "" if not problems else "receipts do not hold: " + "; ".join(problems)
    return Judgement(not problems and of > 0, agreed, of, found, reason)


def _receipt_problem(
    submission: Submission, window: tuple[int, int] | None, check: ReceiptCheck | None, item: str,
    keys: Mapping[str, KeyRegistration], spent: Mapping[str, str], seen: set[str], ours: OwnAgent = NO_OWN_AGENT,
) -> str | None:
    """What keeps one receipt from proving this run, or None when it proves it (its jti is then marked seen)."""
    if check is None:
        return "no receipt"
    if isinstance(check, ReceiptRefused):
        return f"receipt refused ({check.reason}: {check.detail})"
    if check.station != item:
        return f"the receipt is for {check.station}"
    # The reasons are published with the submission: they name no run (it may be an organisation's private test).
    if check.jti in ours.receipts:
        return "the receipt is from one of CanItBuy's own runs (public with the run), not from a run of this agent"
    if check.agent_keyid is not None and check.agent_keyid in ours.keys:
        return f"its agent key {check.agent_keyid} is CanItBuy's own agent's, not this agent's"
    if check.agent_keyid is None:
        return UNSIGNED
    if window is None:
        return "the run gives no started_at and finished_at, so no receipt can be placed inside it"
    if not window[0] - CLOCK_SLACK_S <= check.iat <= window[1] + CLOCK_SLACK_S:
        return "the receipt was signed outside the run's started_at..finished_at"
    registration = keys.get(check.agent_keyid)
    if registration is None:
        return f"its agent key {check.agent_keyid} is not registered to any agent"
    if agent_name_key(registration.agent) != agent_name_key(submission.agent.name):
        return f"its agent key {check.agent_keyid} is registered to another agent, not {submission.agent.name}"
    registered = int(registration.registered_at.timestamp())
    if registered > window[0] or registered > check.iat:
        return (f"its agent key was registered at {_utc(registration.registered_at)}, after the run started "
                "(a key must be registered before the run)")
    if check.jti in seen:
        return "the same receipt is used twice"
    if check.jti in spent:
        return f"the receipt was already used by submission {spent[check.jti]}"
    seen.add(check.jti)
    return None


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _window(submission: Submission) -> tuple[int, int] | None:
    """The run's started_at..finished_at in unix seconds, as the submitter states them."""
    run = submission.run
    if not run.started_at or not run.finished_at:
        return None
    start = datetime.fromisoformat(run.started_at.replace("Z", "+00:00")).timestamp()
    end = datetime.fromisoformat(run.finished_at.replace("Z", "+00:00")).timestamp()
    return int(start), int(end)
