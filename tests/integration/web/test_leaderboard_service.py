"""Each rule of the submission service, over HTTP to the real app, on SQLite and on a fresh PostgreSQL database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from leaderboard_site import CONTACT, a_run, body, from_network, leaderboard_site, site_on_backend, spec_example

from adapters.settings import Settings
from domain.leaderboards.submissions import PER_DAY_OVERALL, SubmissionDay, day_book_id, network_key, submission_id

SUBMIT = "/api/leaderboard/submit"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    yield from site_on_backend(request, tmp_path_factory)


def test_a_valid_run_is_answered_201_with_its_id(client) -> None:
    response = from_network(client, "192.0.2.1").post(SUBMIT, content=body(a_run("201")),
                                                      headers={"content-type": "application/json"})
    assert response.status_code == 201, response.text
    answer = response.json()
    assert answer["status"] == "unverified" and answer["id"] == str(submission_id(_fingerprint(a_run("201"))))
    assert response.headers["etag"] and response.headers["location"].startswith("/leaderboard#sub-")


def test_the_first_problem_found_is_answered_400_naming_the_field(client) -> None:
    data = a_run("400")
    data["agent"]["path"] = "telepathy"
    response = from_network(client, "192.0.2.2").post(SUBMIT, content=body(data))
    assert response.status_code == 400
    assert response.json()["error"]["detail"] == "agent.path must be one of browser, ucp, mcp, acp, api, other."


def test_a_body_over_200_kb_is_answered_413_as_arc_does(client) -> None:
    data = a_run("big")
    data["padding"] = "x" * (200 * 1024)
    response = from_network(client, "192.0.2.3").post(SUBMIT, content=body(data))
    assert response.status_code == 413
    assert response.json()["error"]["detail"] == "The submission is larger than 200 KB (204800 bytes)."


def test_a_streamed_body_is_read_only_up_to_200_kb_and_one_byte(client) -> None:
    sent = []

    def chunks() -> Iterator[bytes]:
        for _ in range(64):  # 4 MB if it were all read
            sent.append(1)
            yield b"x" * 65536

    response = from_network(client, "192.0.2.4").post(SUBMIT, content=chunks())
    assert response.status_code == 413


def test_the_same_run_twice_returns_the_first_id(client) -> None:
    first = from_network(client, "192.0.2.5").post(SUBMIT, content=body(a_run("twice")))
    again = from_network(client, "198.51.100.5").post(SUBMIT, content=body(a_run("twice") | {"contact": "x@y.test"}))
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"] and again.json()["duplicate"] is True


def test_a_network_may_send_five_runs_a_day_then_429_with_the_reason(client) -> None:
    answers = [from_network(client, f"203.0.113.{n + 10}").post(SUBMIT, content=body(a_run(f"quota {n}")))
               for n in range(6)]  # six addresses, one /24 network
    assert [a.status_code for a in answers] == [201] * 5 + [429]
    assert answers[-1].json()["error"]["detail"].startswith("at most 5 submissions a network a day")
    assert from_network(client, "203.0.114.1").post(SUBMIT, content=body(a_run("quota 6"))).status_code == 201


def test_the_specs_example_run_is_refused(client) -> None:
    response = from_network(client, "192.0.2.6").post(SUBMIT, content=body(spec_example()))
    assert response.status_code == 400
    assert response.json()["error"]["detail"].startswith("This is the example run. It is valid, but replace")


def test_two_hundred_a_day_overall_then_429(settings: Settings) -> None:
    with leaderboard_site(settings) as fresh:
        record = fresh.app.state.site.runtime.record
        today = record.clock()
        day = SubmissionDay.open(today.date(), at=today)
        for n in range(PER_DAY_OVERALL):
            day.count(f"network {n}", submission_id(str(n)), at=today)
        record.save(day)
        assert record.repository.get(day_book_id(datetime.now(UTC).date())).total == PER_DAY_OVERALL
        response = from_network(fresh, "192.0.2.7").post(SUBMIT, content=body(a_run("the 201st")))
        assert response.status_code == 429
        assert response.json()["error"]["detail"].startswith("at most 200 submissions a day overall")


def test_the_page_and_the_json_never_show_the_contact_or_the_network(client) -> None:
    sender = from_network(client, "198.51.100.23")
    assert sender.post(SUBMIT, content=body(a_run("private"))).status_code == 201
    key = network_key("198.51.100.23", client.app.state.site.network_salt)
    for path in ("/leaderboard", "/api/leaderboard.json"):
        text = client.get(path).text
        assert "Nordic Shopper" in text
        for secret in (CONTACT, key, "198.51.100", "private-contact"):
            assert secret not in text, (path, secret)


def _fingerprint(data: dict) -> str:
    from domain.leaderboards.arc_validation import parse_submission

    return parse_submission(json.dumps(data).encode()).fingerprint()
