"""The public table and the staff desk's verification, over HTTP: the draw is recorded with its seed and can be
redone; 8 of 10 agreeing re-runs verify, 7 reject with the reason; CSRF and roles as on the rest of the desk."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import jsonschema
import pytest
from desk_client import AUDITOR, STAFF, csrf_of, sign_in, sign_out
from leaderboard_site import a_run, body, from_network, site_on_backend

from domain.leaderboards.verification import draw_sample, sample_pool

SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "web" / "schemas" / "leaderboard.json").read_text())
FLIP = {"added_to_cart": "no_cart", "checkout_reached": "blocked", "no_cart": "added_to_cart",
        "blocked": "added_to_cart", "error": "no_cart"}
AGREE = {"error": "added_to_cart"}
"""A store reported as error is drawn too, and agrees when our re-run gets the product into a cart."""


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    yield from site_on_backend(request, tmp_path_factory)


def submit(client, notes: str, address: str) -> str:
    response = from_network(client, address).post("/api/leaderboard/submit", content=body(a_run(notes)))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def draw(client, sid: str) -> tuple[str, list[str]]:
    page = client.get(f"/staff/leaderboard/{sid}")
    response = client.post(f"/staff/leaderboard/{sid}/start", data={"csrf": csrf_of(page.text)},
                           follow_redirects=False)
    assert response.status_code == 303, response.text
    entry = client.app.state.site.runtime.record.leaderboard_submission(UUID(sid))
    return entry.seed, entry.sample


def record_reruns(client, sid: str, sample: list[str], disagree: int):
    reported = {r["id"]: r["outcome"] for r in a_run("x")["results"]}
    page = client.get(f"/staff/leaderboard/{sid}")
    form = {"csrf": csrf_of(page.text)}
    for n, item in enumerate(sample):
        form[f"rerun_{item}"] = FLIP[reported[item]] if n < disagree else AGREE.get(reported[item], reported[item])
    return client.post(f"/staff/leaderboard/{sid}/reruns", data=form, follow_redirects=False)


def listed(client, sid: str) -> dict:
    found = [s for s in client.get("/api/leaderboard.json").json()["submissions"] if s["id"] == sid]
    assert len(found) == 1
    return found[0]


def test_the_json_is_open_data_that_validates_and_answers_304_to_its_etag(client) -> None:
    submit(client, "open data", "198.18.60.1")
    response = client.get("/api/leaderboard.json")
    data = response.json()
    jsonschema.validate(data, SCHEMA)
    assert (data["license"], data["citation"]) == ("CC BY 4.0", data["citation"]) and data["citation"]
    entry = data["submissions"][0]
    assert (entry["status"], entry["successes"], entry["n"]) == ("unverified", 7, 10)
    assert entry["cart_success"] == {"share": "0.7000", "low": "0.3968", "high": "0.8922"}
    again = client.get("/api/leaderboard.json", headers={"if-none-match": response.headers["etag"]})
    assert again.status_code == 304


def test_the_page_lists_submissions_in_their_own_table_apart_from_the_ranking(client) -> None:
    sid = submit(client, "page", "198.18.61.1")
    html = client.get("/leaderboard").text
    assert f'id="sub-{sid}"' in html and "Unverified submissions" in html
    assert "Nordic Shopper" not in client.get("/ranking").text
    assert 'href="/leaderboard"' in client.get("/").text


def test_the_drawn_sample_is_recorded_with_its_seed_and_redone_from_it(client) -> None:
    sid = submit(client, "draw", "198.18.62.1")
    sign_in(client, *STAFF)
    seed, sample = draw(client, sid)
    sign_out(client)
    assert len(sample) == 10 and seed
    assert draw_sample(sample_pool(_parsed(a_run("draw"))), seed) == sample
    public = listed(client, sid)["verification"]
    assert (public["seed"], public["sample"], public["method"]) == (seed, sample, "rerun")


def test_eight_of_ten_agreeing_reruns_verify_the_run(client) -> None:
    sid = submit(client, "eight", "198.18.63.1")
    sign_in(client, *STAFF)
    _, sample = draw(client, sid)
    assert record_reruns(client, sid, sample, disagree=2).status_code == 303
    sign_out(client)
    entry = listed(client, sid)
    assert (entry["status"], entry["verification"]["agreed"], entry["verification"]["of"]) == ("verified", 8, 10)
    assert "Verified submissions" in client.get("/leaderboard").text


def test_seven_of_ten_reject_the_run_with_the_reason(client) -> None:
    sid = submit(client, "seven", "198.18.64.1")
    sign_in(client, *STAFF)
    _, sample = draw(client, sid)
    assert record_reruns(client, sid, sample, disagree=3).status_code == 303
    sign_out(client)
    entry = listed(client, sid)
    assert entry["status"] == "rejected"
    assert entry["verification"]["reason"].startswith("our re-runs agreed on 7 of 10 sampled stores")
    assert "our re-runs agreed on 7 of 10" in client.get("/leaderboard").text


def test_staff_reject_spam_with_a_reason(client) -> None:
    sid = submit(client, "spam", "198.18.65.1")
    sign_in(client, *STAFF)
    page = client.get(f"/staff/leaderboard/{sid}")
    assert "private-contact@agent.test" in page.text  # staff see the contact to arrange verification
    response = client.post(f"/staff/leaderboard/{sid}/reject", data={"csrf": csrf_of(page.text), "reason": "spam"},
                           follow_redirects=False)
    sign_out(client)
    assert response.status_code == 303
    assert (listed(client, sid)["status"], listed(client, sid)["verification"]["reason"]) == ("rejected", "spam")


def test_a_form_without_its_csrf_token_is_refused(client) -> None:
    sid = submit(client, "csrf", "198.18.66.1")
    sign_in(client, *STAFF)
    response = client.post(f"/staff/leaderboard/{sid}/start", data={"csrf": "wrong"}, follow_redirects=False)
    sign_out(client)
    assert response.status_code == 403
    assert listed(client, sid)["verification"]["sample"] == []


def test_signed_out_or_as_an_auditor_the_desk_changes_nothing(client) -> None:
    sid = submit(client, "roles", "198.18.67.1")
    assert client.get("/staff/leaderboard", follow_redirects=False).status_code == 303
    assert client.post(f"/staff/leaderboard/{sid}/reject", data={"reason": "x"}).status_code == 403
    sign_in(client, *AUDITOR)
    page = client.get(f"/staff/leaderboard/{sid}")
    assert page.status_code == 200 and not re.search(r"/staff/leaderboard/[^/]+/start", page.text)
    assert client.post(f"/staff/leaderboard/{sid}/reject",
                       data={"csrf": csrf_of(page.text), "reason": "x"}).status_code == 403
    sign_out(client)
    assert listed(client, sid)["status"] == "unverified"


def _parsed(data: dict):
    from domain.leaderboards.arc_validation import parse_submission

    return parse_submission(json.dumps(data).encode())
