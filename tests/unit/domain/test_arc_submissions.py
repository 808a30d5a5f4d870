"""Each rule of arc-leaderboard-submission/v1 as ARC's validator applies it (abab7575/arc-open,
benchmark/src/submission.ts), with ARC's message; and what we store of a submission that is taken."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from domain.leaderboards.arc import COURSE_TEST_SET, SubmissionProblem
from domain.leaderboards.arc_validation import BodyTooLarge, parse_submission
from domain.projections.statistics import arc_rate, tenths_text

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
OUTCOMES = ["added_to_cart"] * 6 + ["checkout_reached", "no_cart", "blocked", "no_cart", "error", "not_attempted"]


def valid() -> dict[str, Any]:
    return {
        "spec": "arc-leaderboard-submission/v1",
        "test_set": "ARC-100 v1",
        "agent": {"name": "Nordic Shopper", "version": "1.2", "path": "browser", "url": "https://agent.test/"},
        "run": {"stopped_before_payment": True, "started_at": "2026-11-20T10:00:00Z"},
        "results": [
            {"id": f"arc100-v1-{i + 1:03d}", "outcome": outcome, "at": "2026-11-20T10:05:00Z", "steps": 9}
            for i, outcome in enumerate(OUTCOMES)
        ],
        "contact": "team@agent.test",
    }


def read(data: Any) -> Any:
    return parse_submission(json.dumps(data).encode(), NOW)


def problem(data: Any) -> str:
    with pytest.raises(SubmissionProblem) as caught:
        read(data)
    return str(caught.value)


def changed(path: str, value: Any, data: dict[str, Any] | None = None) -> dict[str, Any]:
    data = copy.deepcopy(data or valid())
    *parents, last = path.split(".")
    target: Any = data
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    if value is KeyError:
        del target[int(last) if last.isdigit() else last]
    else:
        target[int(last) if last.isdigit() else last] = value
    return data


def test_a_valid_submission_is_read_with_its_counts() -> None:
    submission = read(valid())
    assert len(submission.counted()) == 10
    assert submission.successes() == 7


def test_unknown_fields_are_ignored_at_every_level_ours_too() -> None:
    data = changed("agent.colour", "blue")
    data["extra"] = {"x": 1}
    data["results"][0]["receipt"] = 12345  # our course extension, meaningless for ARC-100: ignored, not refused
    data["results"][1]["note"] = "<b>x</b>"
    submission = read(data)
    assert submission.agent.name == "Nordic Shopper" and submission.results[0].receipt is None


def test_over_200_kb_is_refused_as_too_large() -> None:
    data = valid()
    data["padding"] = "x" * (200 * 1024)
    with pytest.raises(BodyTooLarge, match="larger than 200 KB"):
        read(data)


def test_not_json_or_not_an_object_is_refused_in_arcs_words() -> None:
    with pytest.raises(SubmissionProblem, match=r"^Send a JSON object\. See /leaderboard/spec\.$"):
        parse_submission(b"{nope", NOW)
    assert problem([valid()]) == "Send a JSON object. See /leaderboard/spec."


def test_a_byte_order_mark_and_bad_utf8_are_read_as_fetch_reads_them() -> None:
    body = "\ufeff".encode() + json.dumps(changed("run.notes", "x")).encode().replace(b'"x"', b'"\xff"')
    assert parse_submission(body, NOW).run.notes == "\ufffd"


def test_spec_test_set_path_and_name_in_arcs_order_and_words() -> None:
    assert problem(changed("spec", KeyError)) == 'spec must be "arc-leaderboard-submission/v1".'
    assert problem(changed("test_set", "ARC-200 v1")).startswith('test_set must be "ARC-100 v1".')
    assert problem(changed("agent", KeyError)) == "agent.path must be one of browser, ucp, mcp, acp, api, other."
    assert problem(changed("agent.path", "x", changed("agent.name", ""))).startswith("agent.path")
    assert problem(changed("run", KeyError)).startswith("run.stopped_before_payment must be true.")
    assert problem(changed("results", KeyError)) == "results must be an array."


def test_path_and_outcome_are_trimmed_and_lowercased() -> None:
    data = changed("agent.path", " Browser\n")
    data["results"][0]["outcome"] = " ADDED_TO_CART "
    submission = read(data)
    assert submission.agent.path == "browser" and submission.results[0].outcome == "added_to_cart"


def test_text_is_cleaned_to_plain_text_and_measured_after_cleaning() -> None:
    data = changed("agent.name", "  <b>Nordic</b>\u0007\n Shopper  ")
    data["run"]["notes"] = "<script>alert(1)</script>\r\n\tsecond line"
    data["agent"]["builder"] = "\u00a0Labs\u3000"
    submission = read(data)
    assert submission.agent.name == "b Nordic /b Shopper"
    assert submission.run.notes == "script alert(1) /script second line"
    assert submission.agent.builder == "Labs"
    stored = json.dumps([submission.agent.name, submission.run.notes])
    assert "<" not in stored and ">" not in stored and "\\u0007" not in stored
    assert read(changed("agent.name", "  " + "y" * 60 + "  ")).agent.name == "y" * 60
    assert problem(changed("agent.name", "😀" * 31)) == "agent.name must be at most 60 characters."  # UTF-16 units


def test_a_required_field_empty_after_cleaning_is_missing() -> None:
    for value in (None, "", "   ", "<>", "\u0000\t"):
        assert problem(changed("agent.name", value)) == "agent.name is required."
    assert problem(changed("agent.name", 5)) == "agent.name must be a string."


def test_null_and_empty_mean_absent_in_optional_fields() -> None:
    data = valid()
    data["agent"].update(version=None, builder="", url=None, model="")
    data["run"].update(started_at="", notes=None)
    data["results"][0].update(at=None, evidence_url="")
    data["contact"] = None
    submission = read(data)
    assert submission.agent.version is None and submission.agent.url is None and submission.run.started_at is None
    assert submission.results[0].evidence_url is None and submission.contact is None


@pytest.mark.parametrize(("key", "limit"), [("agent.version", 40), ("agent.builder", 80), ("agent.model", 80),
                                            ("run.notes", 500), ("contact", 200)])
def test_lengths_are_arcs(key: str, limit: int) -> None:
    assert read(changed(key, "v" * limit))
    assert problem(changed(key, "v" * (limit + 1))) == f"{key} must be at most {limit} characters."


def test_stopped_before_payment_must_be_true() -> None:
    assert problem(changed("run.stopped_before_payment", "true")) == (
        "run.stopped_before_payment must be true. ARC-100 runs must stop before payment; never place real orders.")


@pytest.mark.parametrize("key", ["run.started_at", "run.finished_at", "results.3.at"])
def test_times_within_ten_minutes_ahead_and_ninety_days_back(key: str) -> None:
    where = key.replace("results.3", "results[3]")
    assert problem(changed(key, "yesterday")) == f"{where} must be an ISO 8601 timestamp."
    assert problem(changed(key, 1700000000)) == f"{where} must be an ISO 8601 timestamp."
    assert problem(changed(key, "2026-11-21T12:11:00Z")) == f"{where} is in the future."
    assert read(changed(key, "2026-11-21T12:09:00Z"))
    assert problem(changed(key, "2026-08-22T11:59:59Z")) == f"{where} is older than 90 days. Re-run against ARC-100 v1."
    assert read(changed(key, "2026-08-23T12:00:00Z"))


def test_times_are_stored_as_arc_writes_them() -> None:
    submission = read(changed("run.started_at", "2026-11-20T11:00:00.5+01:00"))
    assert submission.run.started_at == "2026-11-20T10:00:00.500Z"


def test_urls_https_only_without_credentials_at_most_500() -> None:
    assert problem(changed("agent.url", "http://agent.test/")) == "agent.url must be an https URL."
    for secret in ("https://user:hunter2@agent.test/", "https://user@agent.test/", "https://:hunter2@agent.test/"):
        message = problem(changed("results.0.evidence_url", secret))
        assert message == "results[0].evidence_url must be an https URL." and "hunter2" not in message
    assert problem(changed("agent.url", "https://a.test/" + "p" * 486)) == "agent.url must be at most 500 characters."
    assert read(changed("agent.url", "HTTPS://Agent.TEST:443")).agent.url == "https://agent.test/"


def test_a_result_names_its_store_by_id_or_by_host_and_the_id_wins() -> None:
    by_host = changed("results.0.id", KeyError)
    for host in ("apc.fr", "WWW.APC.FR.", " www.apc.fr "):
        by_host["results"][0]["host"] = host
        stored = read(by_host).results[0]
        assert (stored.id, stored.host) == ("arc100-v1-001", "apc.fr")
    wrong_id = changed("results.0.id", "arc100-v1-999")
    wrong_id["results"][0]["host"] = "apc.fr"
    assert problem(wrong_id) == (
        "results[0]: id must be an ARC-100 v1 store id (arc100-v1-001 ... arc100-v1-100) or host.")
    assert read(changed("results.0.host", "elsewhere.test")).results[0].host == "apc.fr"
    assert problem(changed("results.1.id", "arc100-v1-001")) == "results[1]: arc100-v1-001 appears twice."


def test_at_most_100_results_and_at_least_10_counted() -> None:
    data = valid()
    data["results"] = [{"id": f"arc100-v1-{i:03d}", "outcome": "no_cart"} for i in range(1, 101)] * 2
    assert problem(data) == "At most 100 results (one per ARC-100 store)."
    assert problem(changed("results.0.outcome", "error")) == (
        "Send at least 10 results that are not error or not_attempted.")
    assert problem(changed("results.3.outcome", "bought")) == (
        "results[3].outcome must be one of added_to_cart, checkout_reached, no_cart, blocked, error, not_attempted.")


def test_steps_and_seconds_out_of_range_or_not_numbers_are_dropped() -> None:
    data = valid()
    for index, (steps, seconds) in enumerate([(-1, 86_401), ("5", True), (2.5, 0.4), (10_000, 86_400)]):
        data["results"][index].update(steps=steps, seconds=seconds)
    results = read(data).results
    assert [(r.steps, r.seconds) for r in results[:4]] == [(None, None), (None, None), (3, 0), (10_000, 86_400)]


def test_the_same_run_has_arcs_fingerprint_whatever_the_notes_times_or_contact() -> None:
    a = read(valid())
    other = changed("run.notes", "another attempt", changed("contact", "someone@else.test"))
    other["run"]["started_at"] = "2026-11-19T08:00:00Z"
    other["agent"]["name"] = "NORDIC SHOPPER"
    other["agent"]["url"] = "https://elsewhere.test/"
    assert read(other).fingerprint() == a.fingerprint()
    assert read(changed("results.0.outcome", "no_cart")).fingerprint() != a.fingerprint()
    assert read(changed("agent.version", "1.3")).fingerprint() != a.fingerprint()


def test_the_fingerprint_is_arcs_value() -> None:
    # Computed with ARC's code: sha256 of JSON.stringify(["nordic shopper", "1.2", "browser", [[id, outcome], ...]]).
    assert read(valid()).fingerprint() == "b1613cba162d0420087e4a2852af898735e2f9055718b454c128a8c668b76467"


def test_our_course_is_a_test_set_too() -> None:
    data = valid()
    data["test_set"] = COURSE_TEST_SET
    data["results"] = [{"id": f"s{i:02d}", "outcome": "checkout_reached", "receipt": "a.b.c"} for i in range(1, 19)]
    submission = read(data)
    assert len(submission.results) == 18 and submission.results[0].receipt == "a.b.c"
    data["results"][0]["id"] = "s19"
    assert problem(data).startswith("results[0]: id must be a CanItBuy course 2.1 station id")
    data["results"][0] = {"id": "s01", "outcome": "checkout_reached", "receipt": "<b>not a receipt</b>"}
    assert read(data).results[0].receipt is None  # ignored, never refused


def test_the_example_is_refused_as_arc_refuses_it() -> None:
    data = changed("agent.name", "Example Shopper", changed("agent.builder", "Example Labs"))
    assert problem(data) == ("This is the example run. It is valid, but replace agent and results with your own run "
                             "against ARC-100 v1 before submitting.")
    assert read(changed("agent.builder", "Real Labs", data))  # ARC refuses only the name and builder together


def test_the_example_printed_in_arcs_spec_is_refused() -> None:
    from pathlib import Path

    body = (Path(__file__).parent / "arc_spec_example.json").read_bytes()
    with pytest.raises(SubmissionProblem, match="This is the example run"):
        parse_submission(body, datetime(2026, 10, 10, tzinfo=UTC))


def test_what_we_accept_also_satisfies_arcs_json_schema() -> None:
    from importlib import resources

    import jsonschema

    schema = json.loads((resources.files("domain") / "testsets" / "arc-submission-v1.schema.json").read_text())
    jsonschema.validate(valid(), schema)


@pytest.mark.parametrize(("successes", "n", "shown"), [
    # Values computed with ARC's stats.ts wilson() and publicSubmission(): rate, low, high.
    (7, 10, ("70", "39.7", "89.2")), (0, 10, ("0", "0", "27.8")), (10, 10, ("100", "72.2", "100")),
    (7, 12, ("58.3", "32", "80.7")), (1, 3, ("33.3", "6.1", "79.2")), (2, 3, ("66.7", "20.8", "93.9")),
])
def test_rates_are_arcs_to_a_tenth_of_a_percent(successes: int, n: int, shown: tuple[str, str, str]) -> None:
    figures = arc_rate(successes, n)
    assert figures is not None
    assert (tenths_text(figures.rate), tenths_text(figures.low), tenths_text(figures.high)) == shown
    assert arc_rate(0, 0) is None
