"""The rules of the leaderboard submission service and its verification, on the domain alone (an in-memory record)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest

from domain.eventlog.record import Record
from domain.leaderboards.arc import COURSE_TEST_SET, Submission
from domain.leaderboards.arc_validation import parse_submission
from domain.leaderboards.receipt_ledger import AgentKeyError, KeyRegistration
from domain.leaderboards.receipts import ReceiptRefused, ReceiptVerified
from domain.leaderboards.submissions import (
    PER_DAY_OVERALL,
    LeaderboardSubmission,
    QuotaExceeded,
    SubmissionDay,
    SubmissionError,
    network_key,
    network_of,
    submission_id,
)
from domain.leaderboards.verification import (
    can_check_receipts,
    draw_sample,
    judge_receipts,
    judge_reruns,
    receipts_leave_out,
    reported_outcomes,
    sample_pool,
)
from web.public.leaderboard import Board

AT = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
OUTCOMES = ["added_to_cart"] * 6 + ["checkout_reached", "no_cart", "blocked", "no_cart", "error", "not_attempted"]


def run_data(notes: str = "first", test_set: str = "ARC-100 v1", contact: str | None = "team@agent.test"
             ) -> dict[str, Any]:
    ids = [f"s{i + 1:02d}" for i in range(12)] if test_set == COURSE_TEST_SET else [
        f"arc100-v1-{i + 1:03d}" for i in range(12)]
    data: dict[str, Any] = {
        "spec": "arc-leaderboard-submission/v1", "test_set": test_set,
        # ARC's fingerprint is the agent and its outcomes, not the notes: the version tells these runs apart.
        "agent": {"name": "Nordic Shopper", "version": notes, "path": "browser"},
        "run": {"stopped_before_payment": True, "notes": notes},
        "results": [{"id": i, "outcome": o} for i, o in zip(ids, OUTCOMES, strict=True)],
    }
    if contact:
        data["contact"] = contact
    return data


def a_run(notes: str = "first", **kwargs: Any) -> Submission:
    return parse_submission(json.dumps(run_data(notes, **kwargs)).encode())


class Clock:
    def __init__(self) -> None:
        self.now = AT

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def record() -> Record:
    return Record(env={}, clock=Clock())


def test_a_network_is_its_ipv4_slash_24_or_its_ipv6_slash_48() -> None:
    assert network_of("203.0.113.77") == "203.0.113.0/24"
    assert network_of("2001:db8:1234:5678::1") == "2001:db8:1234::/48"
    assert network_of("::ffff:203.0.113.9") == "203.0.113.0/24"


def test_the_network_key_is_a_salted_hash_that_never_holds_the_address() -> None:
    key = network_key("203.0.113.77", b"salt")
    assert key == network_key("203.0.113.5", b"salt")
    assert key != network_key("203.0.113.77", b"other salt")
    assert "203" not in key and len(key) == 32


def test_a_submission_is_stored_as_json_without_its_contact_which_is_kept_apart() -> None:
    entry = LeaderboardSubmission.submit(a_run(), network_key="k", at=AT)
    assert "team@agent.test" not in entry.submission
    assert entry.contact == "team@agent.test"
    assert entry.parsed() == a_run(contact=None)
    assert entry.status == "unverified"


def test_the_same_run_sent_twice_returns_the_first_id(record: Record) -> None:
    first = record.submit_leaderboard_run(a_run(), network_key="k")
    again = record.submit_leaderboard_run(a_run(contact="other@agent.test"), network_key="other")
    assert first.created and not again.created
    assert again.id == first.id == submission_id(a_run().fingerprint())


def test_a_repeat_uses_none_of_the_days_quota(record: Record) -> None:
    for _ in range(7):
        record.submit_leaderboard_run(a_run(), network_key="k")
    for n in range(4):
        assert record.submit_leaderboard_run(a_run(f"run {n}"), network_key="k").created


def test_a_network_may_submit_five_runs_a_utc_day(record: Record) -> None:
    for n in range(5):
        record.submit_leaderboard_run(a_run(f"run {n}"), network_key="k")
    with pytest.raises(QuotaExceeded, match="at most 5 submissions a network a day"):
        record.submit_leaderboard_run(a_run("run 6"), network_key="k")
    assert record.submit_leaderboard_run(a_run("another network"), network_key="k2").created
    record.clock.now = AT + timedelta(days=1)  # type: ignore[attr-defined]
    assert record.submit_leaderboard_run(a_run("the next day"), network_key="k").created


def test_two_hundred_runs_a_day_overall() -> None:
    day = SubmissionDay.open(AT.date(), at=AT)
    for n in range(PER_DAY_OVERALL):
        day.count(f"network {n}", submission_id(str(n)), at=AT)
    with pytest.raises(QuotaExceeded, match="at most 200 submissions a day overall"):
        day.count("a new network", submission_id("new"), at=AT)


def test_the_sample_is_drawn_from_counted_and_error_stores_and_the_seed_redoes_the_draw() -> None:
    pool = sample_pool(a_run())
    # ARC samples "the stores you reported": a store reported as error is drawn too; one not attempted is not.
    assert len(pool) == 11 and "arc100-v1-011" in pool and "arc100-v1-012" not in pool
    twelve = [f"arc100-v1-{i:03d}" for i in range(1, 13)]
    drawn = draw_sample(twelve, "seed-1")
    assert len(drawn) == 10 and drawn == draw_sample(list(reversed(twelve)), "seed-1")
    assert draw_sample(twelve, "seed-1", size=3) != draw_sample(twelve, "seed-2", size=3)
    assert draw_sample(twelve[:4], "seed-1") == twelve[:4]  # min(10, n)


def _reruns(sample: list[str], reported: dict[str, str], disagree: int) -> dict[str, str]:
    flip = {"added_to_cart": "no_cart", "checkout_reached": "blocked", "no_cart": "added_to_cart",
            "blocked": "checkout_reached", "error": "no_cart"}
    agree = {"error": "added_to_cart"}  # a store reported as error agrees when the re-run reaches a cart
    return {item: flip[reported[item]] if n < disagree else agree.get(reported[item], reported[item])
            for n, item in enumerate(sample)}


def test_eight_of_ten_agreeing_verifies() -> None:
    submission = a_run()
    reported = {r.id or "": r.outcome for r in submission.results}
    sample = draw_sample(sample_pool(submission), "s")
    judgement = judge_reruns(reported, sample, _reruns(sample, reported, disagree=2))
    assert (judgement.verified, judgement.agreed, judgement.of, judgement.reason) == (True, 8, 10, "")


def test_seven_of_ten_rejects_with_the_reason() -> None:
    submission = a_run()
    reported = {r.id or "": r.outcome for r in submission.results}
    sample = draw_sample(sample_pool(submission), "s")
    judgement = judge_reruns(reported, sample, _reruns(sample, reported, disagree=3))
    assert not judgement.verified and (judgement.agreed, judgement.of) == (7, 10)
    assert judgement.reason.startswith("our re-runs agreed on 7 of 10 sampled stores; at least 8 of 10 must agree")


def test_blocked_and_no_cart_agree_as_no_cart_success() -> None:
    judgement = judge_reruns({"a": "blocked"}, ["a"], {"a": "no_cart"})
    assert judgement.verified


def test_a_store_reported_as_error_agrees_only_when_our_rerun_reaches_a_cart() -> None:
    assert judge_reruns({"a": "error"}, ["a"], {"a": "added_to_cart"}).verified
    assert judge_reruns({"a": "error"}, ["a"], {"a": "checkout_reached"}).verified
    for failed in ("no_cart", "blocked"):  # a failure the report left out of n
        judgement = judge_reruns({"a": "error"}, ["a"], {"a": failed})
        assert not judgement.verified and judgement.reason.endswith(f"a (reported error, re-run {failed})")


def test_failures_relabelled_error_are_drawn_and_reject_the_run() -> None:
    """Ten successes and forty failures reported as error: n is 10 and the rate 100%. Drawn from n alone, the
    sample held only the successes and verified it; drawn from every reported store, it meets the errors, whose
    re-runs fail."""
    data = run_data("relabelled")
    ids = [f"arc100-v1-{i:03d}" for i in range(1, 51)]
    data["results"] = [{"id": i, "outcome": "added_to_cart" if n < 10 else "error"} for n, i in enumerate(ids)]
    submission = parse_submission(json.dumps(data).encode())
    assert len(submission.counted()) == 10 and submission.successes() == 10
    reported = reported_outcomes(submission)
    sample = draw_sample(sample_pool(submission), "seed")
    assert sum(reported[i] == "error" for i in sample) >= 3
    reruns = {i: "added_to_cart" if reported[i] != "error" else "no_cart" for i in sample}
    judgement = judge_reruns(reported, sample, reruns)
    assert not judgement.verified and "reported error, re-run no_cart" in judgement.reason


def test_every_sampled_store_needs_its_rerun_outcome() -> None:
    with pytest.raises(ValueError, match="missing: b"):
        judge_reruns({"a": "no_cart", "b": "no_cart"}, ["a", "b"], {"a": "no_cart"})


def test_verification_is_recorded_only_after_the_draw_and_only_once(record: Record) -> None:
    sid = record.submit_leaderboard_run(a_run(), network_key="k").id
    judgement = judge_reruns({"a": "no_cart"}, ["a"], {"a": "no_cart"})
    with pytest.raises(SubmissionError, match="start the verification first"):
        record.record_verification(sid, judgement, by="staff")
    record.start_verification(sid, method="rerun", seed="s", sample=["a"], by="staff")
    with pytest.raises(SubmissionError, match="already started"):
        record.start_verification(sid, method="rerun", seed="t", sample=["a"], by="staff")
    record.record_verification(sid, judgement, by="staff")
    assert record.leaderboard_submission(sid).status == "verified"
    with pytest.raises(SubmissionError, match="already verified"):
        record.start_verification(sid, method="rerun", seed="u", sample=["a"], by="staff")


def test_staff_reject_with_a_reason(record: Record) -> None:
    sid = record.submit_leaderboard_run(a_run(), network_key="k").id
    with pytest.raises(SubmissionError, match="say why"):
        record.reject_submission(sid, reason=" ", by="staff")
    record.reject_submission(sid, reason="impersonates another company's agent", by="staff")
    assert record.leaderboard_submission(sid).status == "rejected"


KEY = "k" * 43
STARTED = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
KEYS = {KEY: KeyRegistration(keyid=KEY, agent="Nordic Shopper", registered_at=STARTED - timedelta(days=1))}


def _receipt(station: str, jti: str, agent_keyid: str | None = KEY, minutes: int = 5) -> ReceiptVerified:
    iat = int((STARTED + timedelta(minutes=minutes)).timestamp())
    return ReceiptVerified(station=station, host=f"{station}.lab.canitbuy.com", course="2.1", iat=iat, jti=jti,
                           kid="k", order={"station": station}, order_sha256="x", agent_keyid=agent_keyid)


def _course_run_with_receipts(agent: str = "Nordic Shopper", version: str | None = None) -> Submission:
    data = run_data(test_set=COURSE_TEST_SET)
    data["agent"]["name"] = agent
    if version:  # ARC's fingerprint lowercases the name: another run of the same agent differs by its version
        data["agent"]["version"] = version
    data["run"].update(started_at="2026-11-20T10:00:00Z", finished_at="2026-11-20T10:30:00Z")
    for result in data["results"]:
        if result["outcome"] in ("added_to_cart", "checkout_reached"):
            result["receipt"] = f"header.receipt-of-{result['id']}.signature"  # a compact JWS's shape
    return parse_submission(json.dumps(data).encode())


def _checks(**changed: Any) -> dict[str, Any]:
    checks: dict[str, Any] = {f"s{i:02d}": _receipt(f"s{i:02d}", f"j{i}") for i in range(1, 8)}
    return {**checks, **changed}


def test_a_course_run_whose_every_success_carries_a_valid_receipt_has_receipts_that_hold() -> None:
    submission = _course_run_with_receipts()
    assert can_check_receipts(submission)
    judgement = judge_receipts(submission, _checks(), KEYS, {})
    assert (judgement.verified, judgement.agreed, judgement.of) == (True, 7, 7)


def test_a_refused_receipt_rejects_the_run_with_the_reason() -> None:
    checks = _checks(s03=ReceiptRefused(reason="bad_signature", detail="the signature does not verify"),
                     s04=_receipt("s04", "j1"))
    judgement = judge_receipts(_course_run_with_receipts(), checks, KEYS, {})
    assert not judgement.verified and judgement.agreed == 5
    assert "s03: receipt refused (bad_signature" in judgement.reason
    assert "s04: the same receipt is used twice" in judgement.reason


@pytest.mark.parametrize(("changed", "keys", "spent", "agent", "words"), [
    ({"s02": _receipt("s02", "j2", agent_keyid=None)}, KEYS, {}, "Nordic Shopper", "the receipt is unsigned"),
    ({}, {}, {}, "Nordic Shopper", f"its agent key {KEY} is not registered"),
    ({}, KEYS, {}, "Other Shopper", "registered to another agent, not Other Shopper"),
    ({}, {KEY: KeyRegistration(keyid=KEY, agent="nordic  SHOPPER", registered_at=STARTED + timedelta(minutes=1))},
     {}, "Nordic Shopper", "after the run started"),
    ({}, KEYS, {"j2": "another-submission"}, "Nordic Shopper", "already used by submission another-submission"),
    ({"s02": _receipt("s02", "j2", minutes=36)}, KEYS, {}, "Nordic Shopper", "outside the run's started_at"),
])
def test_a_receipt_proves_nothing_unless_signed_with_a_key_registered_before_the_run_and_unspent(
    changed: dict[str, Any], keys: dict[str, Any], spent: dict[str, str], agent: str, words: str
) -> None:
    judgement = judge_receipts(_course_run_with_receipts(agent), _checks(**changed), keys, spent)
    assert not judgement.verified and words in judgement.reason, judgement.reason


def test_a_run_without_its_times_cannot_place_a_receipt() -> None:
    data = json.loads(msgspec.json.encode(_course_run_with_receipts()))
    del data["run"]["started_at"], data["run"]["finished_at"]
    judgement = judge_receipts(parse_submission(json.dumps(data).encode()), _checks(), KEYS, {})
    assert not judgement.verified and "no started_at and finished_at" in judgement.reason


def test_a_key_is_registered_once_to_one_agent_and_a_receipt_is_spent_once() -> None:
    record = Record()
    registration = record.register_agent_key(keyid=KEY, agent=" Nordic   Shopper ", evidence="directory", by="s")
    assert registration.agent == "Nordic Shopper" and record.agent_key(KEY) == registration
    with pytest.raises(AgentKeyError, match="already registered to Nordic Shopper"):
        record.register_agent_key(keyid=KEY, agent="Other Shopper", evidence="directory", by="s")
    with pytest.raises(AgentKeyError, match="thumbprint"):
        record.register_agent_key(keyid="short", agent="Other Shopper", evidence="directory", by="s")
    assert record.agent_keys() == [registration]
    first = record.submit_leaderboard_run(_course_run_with_receipts(), network_key="a").id
    second = record.submit_leaderboard_run(_course_run_with_receipts("Nordic shopper", "2.0"), network_key="b").id
    verified = judge_receipts(_course_run_with_receipts(), _checks(), KEYS, {})
    jtis = {f"s{i:02d}": f"j{i}" for i in range(1, 8)}
    record.record_receipt_verification(first, verified, jtis=jtis, seed="s", sample=["s01"], by="s")
    assert record.receipt_spent_by("j3") == str(first) and record.leaderboard_submission(first).sample == ["s01"]
    # A race: the second submission was judged before the first spent its receipts; the save refuses it.
    with pytest.raises(SubmissionError, match="used by another submission meanwhile"):
        record.record_receipt_verification(second, verified, jtis=jtis, seed="s", sample=["s01"], by="s")
    assert record.leaderboard_submission(second).status == "unverified"


def test_an_arc_run_is_never_verified_by_receipts() -> None:
    assert not can_check_receipts(a_run())


def _relabelled_course_run(version: str = "relabelled") -> Submission:
    """The audit's run: ten checkouts reached, each with a receipt that holds, and eight stores reported as error
    (failures relabelled): n is 10 and the rate 100%."""
    data = run_data(version, test_set=COURSE_TEST_SET)
    data["run"].update(started_at="2026-11-20T10:00:00Z", finished_at="2026-11-20T10:30:00Z")
    data["results"] = [{"id": f"s{i:02d}", "outcome": "checkout_reached", "receipt": f"h.receipt-of-s{i:02d}.sig"}
                       for i in range(1, 11)] + [{"id": f"s{i:02d}", "outcome": "error"} for i in range(11, 19)]
    return parse_submission(json.dumps(data).encode())


def _relabelled_checks() -> dict[str, Any]:
    return {f"s{i:02d}": _receipt(f"s{i:02d}", f"r{i}") for i in range(1, 11)}


def _book(record: Record) -> dict[str, Any]:
    board = Board(record)
    board.listener(0)
    return {e.id: e for e in board.book.listed()}


def test_receipts_that_hold_verify_no_run_alone_and_its_error_rows_go_to_the_reruns(record: Record) -> None:
    """Audit r1: receipts never looked at `error` rows, so failures relabelled error were verified at 100%. Holding
    receipts now only draw the re-run sample, error rows in its pool; the re-runs of those rows fail and reject it."""
    submission = _relabelled_course_run()
    assert (submission.successes(), len(submission.counted())) == (10, 10)
    sid = record.submit_leaderboard_run(submission, network_key="k").id
    judgement = judge_receipts(submission, _relabelled_checks(), KEYS, {})
    assert judgement.verified  # the receipts hold
    sample = draw_sample(sample_pool(submission), "seed")
    errors = [i for i in sample if i >= "s11"]
    assert errors  # the draw meets the error rows
    jtis = {f"s{i:02d}": f"r{i}" for i in range(1, 11)}
    record.record_receipt_verification(sid, judgement, jtis=jtis, seed="seed", sample=sample, by="staff")
    entry = record.leaderboard_submission(sid)
    assert (entry.status, entry.method, entry.sample) == ("unverified", "receipts+reruns", sample)
    listed = _book(record)[str(sid)]
    assert (listed.status, listed.verification.method, listed.verification.sample) == (
        "unverified", "receipts+reruns", sample)
    reported = reported_outcomes(submission)
    reruns = {i: "checkout_reached" if reported[i] != "error" else "no_cart" for i in sample}
    rerun = judge_reruns(reported, sample, reruns)
    record.record_verification(sid, rerun, by="staff")
    assert record.leaderboard_submission(sid).status == "rejected"
    assert f"{errors[0]} (reported error, re-run no_cart)" in _book(record)[str(sid)].verification.reason
    assert "8 stores reported as error (s11, s12, s13, s14, s15, s16, s17, s18)" in receipts_leave_out(submission)


def test_receipts_that_hold_and_reruns_that_agree_verify_and_old_receipts_alone_replay(record: Record) -> None:
    """A run verified by receipts then re-runs is listed with both; one verified by receipts alone before the
    change (its events as the old desk recorded them) still replays as verified by receipts alone."""
    old = record.submit_leaderboard_run(_course_run_with_receipts(), network_key="a").id
    legacy = record.leaderboard_submission(old)  # the events the desk recorded before receipts stopped sufficing
    legacy.start_verification(method="receipts", seed="", sample=[f"s{i:02d}" for i in range(1, 8)], by="s", at=AT)
    legacy.conclude(verified=True, agreed=7, of=7, checks={}, reason="", by="s", at=AT)
    record.save(legacy)
    submission = _relabelled_course_run("honest")
    sid = record.submit_leaderboard_run(submission, network_key="b").id
    judgement = judge_receipts(submission, _relabelled_checks(), KEYS, {})
    sample = draw_sample(sample_pool(submission), "seed")
    record.record_receipt_verification(sid, judgement, jtis={}, seed="seed", sample=sample, by="staff")
    reruns = {i: "checkout_reached" for i in sample}  # the error rows hid no failure
    record.record_verification(sid, judge_reruns(reported_outcomes(submission), sample, reruns), by="staff")
    book = _book(record)
    assert (book[str(sid)].status, book[str(sid)].verification.method) == ("verified", "receipts+reruns")
    assert (book[str(sid)].verification.agreed, book[str(sid)].verification.of) == (10, 10)
    assert (book[str(old)].status, book[str(old)].verification.method) == ("verified", "receipts")
