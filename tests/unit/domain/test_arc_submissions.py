"""Each rule of arc-leaderboard-submission/v1 as we read it: one test a rule, the message naming the field."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from domain.arc import COURSE_TEST_SET, SubmissionProblem
from domain.arc_validation import parse_submission

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


def problem(data: Any) -> str:
    with pytest.raises(SubmissionProblem) as caught:
        parse_submission(json.dumps(data).encode())
    return str(caught.value)


def changed(path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(valid())
    *parents, last = path.split(".")
    target: Any = data
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    if value is KeyError:
        del target[last]
    else:
        target[int(last) if last.isdigit() else last] = value
    return data


def test_a_valid_submission_is_read_with_its_counts() -> None:
    submission = parse_submission(json.dumps(valid()).encode())
    assert len(submission.counted()) == 10
    assert submission.successes() == 7


def test_unknown_fields_are_ignored() -> None:
    assert parse_submission(json.dumps(changed("agent.colour", "blue")).encode()).agent.name == "Nordic Shopper"


def test_over_200_kb_is_refused() -> None:
    data = valid()
    data["padding"] = "x" * (200 * 1024)
    assert "200 KB" in problem(data)


def test_not_json_is_refused() -> None:
    with pytest.raises(SubmissionProblem, match="not JSON"):
        parse_submission(b"{nope")


def test_an_array_is_not_a_submission() -> None:
    assert problem([valid()]) == "the submission must be one JSON object"


@pytest.mark.parametrize("key", ["spec", "test_set", "agent", "run", "results"])
def test_required_top_level_fields(key: str) -> None:
    assert problem(changed(key, KeyError)) == f"{key}: required"


def test_the_spec_must_be_v1() -> None:
    assert problem(changed("spec", "arc-leaderboard-submission/v2")).startswith("spec:")


def test_an_unknown_test_set_is_refused() -> None:
    assert problem(changed("test_set", "ARC-200 v1")).startswith("test_set:")


def test_agent_name_is_required_and_bounded() -> None:
    assert problem(changed("agent.name", KeyError)) == "agent.name: required"
    assert problem(changed("agent.name", "")) == "agent.name: must be 1 to 60 characters"
    assert problem(changed("agent.name", "x" * 61)) == "agent.name: must be 1 to 60 characters"


def test_agent_path_is_one_of_the_known_paths() -> None:
    assert problem(changed("agent.path", "telepathy")).startswith("agent.path: must be one of")


def test_agent_url_must_be_https() -> None:
    assert problem(changed("agent.url", "http://agent.test/")) == "agent.url: must be an https:// address"


def test_stopped_before_payment_must_be_true() -> None:
    assert problem(changed("run.stopped_before_payment", False)).startswith("run.stopped_before_payment: must be true")


def test_times_must_be_date_times() -> None:
    assert problem(changed("run.started_at", "yesterday")).startswith("run.started_at: must be a date-time")


def test_notes_are_bounded() -> None:
    assert problem(changed("run.notes", "n" * 501)) == "run.notes: must be 0 to 500 characters"


def test_ten_to_a_hundred_results() -> None:
    data = valid()
    data["results"] = data["results"][:9]
    assert problem(data) == "results: must hold 10 to 100 results, not 9"


def test_each_result_needs_an_outcome_from_the_list() -> None:
    assert problem(changed("results.3.outcome", KeyError)) == "results[3].outcome: required"
    assert problem(changed("results.3.outcome", "bought")).startswith("results[3].outcome: must be one of")


def test_each_result_names_its_store() -> None:
    data = changed("results.2.id", KeyError)
    assert problem(data) == "results[2]: needs an id or a host"


def test_ids_follow_the_test_set_pattern() -> None:
    assert problem(changed("results.0.id", "arc100-v2-001")).startswith("results[0].id: must match")


def test_ids_must_exist_in_the_test_set() -> None:
    # The pattern admits arc100-v1-999 but ARC-100 v1 stops at 100.
    assert problem(changed("results.0.id", "arc100-v1-999")) == "results[0]: 'arc100-v1-999' is not in ARC-100 v1"


def test_a_store_reported_twice_is_refused() -> None:
    assert problem(changed("results.1.id", "arc100-v1-001")) == "results[1]: arc100-v1-001 is reported twice"


def test_host_and_id_must_agree() -> None:
    assert "is apc.fr, not" in problem(changed("results.0.host", "everlane.com"))


def test_results_may_name_a_host_instead_of_an_id() -> None:
    data = changed("results.0.id", KeyError)
    data["results"][0]["host"] = "apc.fr"
    assert parse_submission(json.dumps(data).encode()).results[0].host == "apc.fr"


def test_steps_and_seconds_are_not_negative() -> None:
    assert problem(changed("results.0.steps", -1)) == "results[0].steps: must be a number of at least 0"


def test_evidence_must_be_https() -> None:
    message = problem(changed("results.0.evidence_url", "ftp://x/y.png"))
    assert message == "results[0].evidence_url: must be an https:// address"


def test_at_least_ten_results_must_count() -> None:
    data = changed("results.0.outcome", "error")
    assert problem(data).startswith("results: only 9 count toward n")


def test_the_specs_example_run_is_refused() -> None:
    message = problem(changed("agent.name", "Example Shopper"))
    assert message == "this is the spec's example run, not a run of a real agent"


def test_contact_is_bounded() -> None:
    assert problem(changed("contact", "c" * 201)) == "contact: must be 0 to 200 characters"


def test_the_same_run_has_the_same_fingerprint_whatever_the_contact_or_key_order() -> None:
    a = parse_submission(json.dumps(valid()).encode())
    other = valid()
    other["contact"] = "someone@else.test"
    b = parse_submission(json.dumps(other, sort_keys=True).encode())
    assert a.fingerprint() == b.fingerprint()
    c = parse_submission(json.dumps(changed("results.0.outcome", "no_cart")).encode())
    assert c.fingerprint() != a.fingerprint()


def test_our_course_is_a_test_set_too() -> None:
    data = valid()
    data["test_set"] = COURSE_TEST_SET
    data["results"] = [{"id": f"s{i:02d}", "outcome": "checkout_reached"} for i in range(1, 19)]
    assert len(parse_submission(json.dumps(data).encode()).results) == 18
    data["results"][0]["id"] = "s19"
    assert problem(data).startswith("results[0].id: must match")


def test_the_example_printed_in_arcs_spec_is_refused() -> None:
    from pathlib import Path

    body = (Path(__file__).parent / "arc_spec_example.json").read_bytes()
    with pytest.raises(SubmissionProblem, match="example run"):
        parse_submission(body)


def test_what_we_accept_also_satisfies_arcs_json_schema() -> None:
    from importlib import resources

    import jsonschema

    schema = json.loads((resources.files("domain") / "testsets" / "arc-submission-v1.schema.json").read_text())
    jsonschema.validate(valid(), schema)
