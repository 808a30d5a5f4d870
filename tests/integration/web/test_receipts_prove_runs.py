"""Issue #18, item 1: a lab receipt proves a run only when it carries the agent's key id, the key was registered to
the submitter before the run, the run's times cover it and no submission spent its jti before.

A real lab server signs the receipts (plain httpx, and httpx signing its checkout request with Web Bot Auth through
the independent http-message-signatures package); the real site checks them at the staff desk against the keys
the lab publishes, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from desk_client import STAFF, csrf_of, sign_in, sign_out
from http_message_signatures import HTTPMessageSigner, HTTPSignatureKeyResolver, algorithms
from leaderboard_site import body, from_network, site_on_backend

from lab.botauth.directory import thumbprint
from lab.server import LabServer

BROWSER_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36"
COURSE = "CanItBuy course 2.1"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, lab: LabServer) -> Iterator:
    yield from site_on_backend(request, tmp_path_factory, lab_url=lab.url_for(None))


def checkout_receipt(lab: LabServer, signature: dict[str, str] | None = None) -> str:
    """Add a pair to the cart on s01 and open the checkout, as any HTTP client can; the receipt the lab sends."""
    with httpx.Client(base_url=lab.loopback_url(), headers={"Host": lab.host_for("s01"), "User-Agent": BROWSER_UA},
                      follow_redirects=False, timeout=10) as http:
        added = http.post("/cart/add", data={"product": "aero-run-2", "colour": "black", "size": "42", "pairs": "1"})
        assert added.status_code == 303, added.text
        checkout = http.get("/checkout", headers=signature or {})
        assert checkout.status_code == 200, checkout.text
        return checkout.headers["nordlys-receipt"]


def moment(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def course_run(agent: str, receipt: str, started: datetime, finished: datetime, notes: str) -> dict:
    outcomes = ["checkout_reached"] + ["no_cart", "blocked"] * 5 + ["no_cart"]
    results = [{"id": f"s{i + 1:02d}", "outcome": o} for i, o in enumerate(outcomes)]
    results[0]["receipt"] = receipt
    return {
        "spec": "arc-leaderboard-submission/v1", "test_set": COURSE,
        # ARC's fingerprint ignores notes and times: each run names its own version to be a run of its own
        "agent": {"name": agent, "version": f"1.0+{notes.replace(' ', '-')}", "path": "browser"},
        "run": {"stopped_before_payment": True, "started_at": moment(started), "finished_at": moment(finished),
                "notes": notes},
        "results": results,
    }


ADDRESSES = iter(f"198.18.{80 + n // 4}.{n % 4 + 1}" for n in range(200))  # 4 a network: under the day's limit


def submit(client, data: dict) -> str:
    response = from_network(client, next(ADDRESSES)).post("/api/leaderboard/submit", content=body(data))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def check_receipts(client, sid: str) -> httpx.Response:
    sign_in(client, *STAFF)
    try:
        page = client.get(f"/staff/leaderboard/{sid}")
        return client.post(f"/staff/leaderboard/{sid}/receipts", data={"csrf": csrf_of(page.text)},
                           follow_redirects=False)
    finally:
        sign_out(client)


def listed(client, sid: str) -> dict:
    return next(s for s in client.get("/api/leaderboard.json").json()["submissions"] if s["id"] == sid)


def test_a_receipt_any_http_client_can_get_verifies_no_submission_and_says_why(client, lab) -> None:
    started = datetime.now(UTC) - timedelta(seconds=2)
    receipt = checkout_receipt(lab)
    finished = datetime.now(UTC) + timedelta(seconds=2)
    sids = [submit(client, course_run(agent, receipt, started, finished, "plain http")) for agent in
            ("Plain Agent One", "Plain Agent Two")]
    for sid in sids:
        response = check_receipts(client, sid)
        assert response.status_code == 400
        assert "Unsigned receipts prove nothing about this run" in response.text
        assert "Verify this run by re-running a sample instead" in response.text
        entry = listed(client, sid)
        assert (entry["status"], entry["verification"]["method"]) == ("unverified", None)
        sign_in(client, *STAFF)
        page = client.get(f"/staff/leaderboard/{sid}").text
        sign_out(client)
        assert "Unsigned receipts prove nothing" in page and "Draw the stores to re-run" in page
        assert "Check the lab receipts" not in page


class _Key(HTTPSignatureKeyResolver):
    def __init__(self, private) -> None:
        self.private = private

    def resolve_private_key(self, key_id: str):
        return self.private


def web_bot_auth(keys, authority: str) -> dict[str, str]:
    """The Signature-Agent, Signature-Input and Signature headers of a GET to `authority`, signed as an agent does
    (tag web-bot-auth, covering @authority and signature-agent, a fresh nonce)."""
    request = httpx.Request("GET", f"http://{authority}/checkout", headers={"Signature-Agent": f'"{keys.origin}"'})
    created = datetime.now(UTC)
    signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519, key_resolver=_Key(keys.private))
    signer.sign(request, key_id=thumbprint(keys.x), created=created, expires=created + timedelta(seconds=60),
                nonce=secrets.token_urlsafe(16), label="sig1", tag="web-bot-auth",
                covered_component_ids=("@authority", "signature-agent"))
    return {name: request.headers[name] for name in ("Signature-Agent", "Signature-Input", "Signature")}


@dataclass
class SignedRun:
    agent: str
    keyid: str
    before_registration: str
    """Signed with the agent's key before the key was registered."""
    receipts: list[str]
    """Signed after the registration, between started and finished."""
    started: datetime
    finished: datetime


@pytest.fixture(scope="module")
def signed(client, lab: LabServer, agent_keys) -> SignedRun:
    def signed_receipt() -> str:
        return checkout_receipt(lab, web_bot_auth(agent_keys, lab.host_for("s01")))

    early = signed_receipt()
    time.sleep(1.1)  # the registration comes a whole second after that receipt
    keyid = thumbprint(agent_keys.x)
    sign_in(client, *STAFF)
    page = client.get("/staff/leaderboard/keys")
    response = client.post("/staff/leaderboard/keys", follow_redirects=False, data={
        "csrf": csrf_of(page.text), "keyid": keyid, "agent": "Signed Agent",
        "evidence": f"{agent_keys.origin}/.well-known/http-message-signatures-directory"})
    assert response.status_code == 303, response.text
    listing = client.get("/staff/leaderboard/keys").text
    sign_out(client)
    assert keyid in listing and "Signed Agent" in listing
    started = datetime.now(UTC)
    receipts = [signed_receipt() for _ in range(4)]
    time.sleep(1.0)
    return SignedRun("Signed Agent", keyid, early, receipts, started, datetime.now(UTC))


def test_a_signed_receipt_of_a_key_registered_before_the_run_holds_and_leads_to_reruns(client, signed) -> None:
    sid = submit(client, course_run(signed.agent, signed.receipts[0], signed.started, signed.finished, "proved"))
    assert check_receipts(client, sid).status_code == 303
    entry = listed(client, sid)
    assert (entry["status"], entry["verification"]["method"]) == ("unverified", "receipts+reruns")
    assert len(entry["verification"]["sample"]) == 10 and entry["verification"]["seed"]


def test_the_same_receipt_in_a_second_submission_is_refused_as_spent(client, signed) -> None:
    first = submit(client, course_run(signed.agent, signed.receipts[1], signed.started, signed.finished, "once"))
    second = submit(client, course_run(signed.agent, signed.receipts[1], signed.started, signed.finished, "twice"))
    assert check_receipts(client, first).status_code == 303
    assert check_receipts(client, second).status_code == 303
    assert listed(client, first)["verification"]["method"] == "receipts+reruns"
    entry = listed(client, second)
    assert entry["status"] == "rejected"
    assert f"the receipt was already used by submission {first}" in entry["verification"]["reason"]


def test_a_receipt_submitted_by_another_agent_is_refused(client, signed) -> None:
    sid = submit(client, course_run("Copying Agent", signed.receipts[2], signed.started, signed.finished, "copy"))
    assert check_receipts(client, sid).status_code == 303
    entry = listed(client, sid)
    assert entry["status"] == "rejected"
    assert f"its agent key {signed.keyid} is registered to another agent" in entry["verification"]["reason"]


def test_a_receipt_from_before_the_key_was_registered_is_refused(client, signed) -> None:
    earlier = signed.started - timedelta(minutes=1)
    sid = submit(client, course_run(signed.agent, signed.before_registration, earlier, signed.finished, "early"))
    assert check_receipts(client, sid).status_code == 303
    entry = listed(client, sid)
    assert entry["status"] == "rejected"
    assert "after the run started (a key must be registered before the run)" in entry["verification"]["reason"]


def test_a_receipt_outside_the_runs_times_is_refused(client, signed) -> None:
    started, finished = signed.started - timedelta(hours=2), signed.started - timedelta(hours=1)
    sid = submit(client, course_run(signed.agent, signed.receipts[3], started, finished, "outside"))
    assert check_receipts(client, sid).status_code == 303
    entry = listed(client, sid)
    assert entry["status"] == "rejected"
    assert "signed outside the run's started_at..finished_at" in entry["verification"]["reason"]


def station_receipt(lab: LabServer, station: str, query: str = "", signature: dict[str, str] | None = None) -> str:
    """What a script, no browser, gets: POST /cart/add, then GET /checkout (with `query`), signed when given."""
    with httpx.Client(base_url=lab.loopback_url(), headers={"Host": lab.host_for(station), "User-Agent": BROWSER_UA},
                      follow_redirects=False, timeout=10) as http:
        added = http.post("/cart/add", data={"product": "aero-run-2", "colour": "black", "size": "42", "pairs": "1"})
        assert added.status_code == 303, added.text
        checkout = http.get(f"/checkout{query}", headers=signature or {})
        assert checkout.status_code == 200, (station, checkout.status_code)
        return checkout.headers["nordlys-receipt"]


def signed_run(agent: str, receipts: dict[str, str], outcomes: dict[str, str], started: datetime, version: str
               ) -> dict:
    """A course run, s01..s18: `receipts` reached the checkout, the others as `outcomes` says."""
    results = []
    for i in range(1, 19):
        item = f"s{i:02d}"
        if item in receipts:
            results.append({"id": item, "outcome": "checkout_reached", "receipt": receipts[item]})
        else:
            results.append({"id": item, "outcome": outcomes[item]})
    return {
        "spec": "arc-leaderboard-submission/v1", "test_set": COURSE, "agent": {"name": agent, "version": version,
                                                                              "path": "browser"},
        "run": {"stopped_before_payment": True, "started_at": moment(started),
                "finished_at": moment(datetime.now(UTC) + timedelta(seconds=2))},
        "results": results,
    }


def record_reruns(client, sid: str, outcome_of) -> httpx.Response:
    sign_in(client, *STAFF)
    try:
        page = client.get(f"/staff/leaderboard/{sid}")
        sample = listed(client, sid)["verification"]["sample"]
        form = {"csrf": csrf_of(page.text), **{f"rerun_{i}": outcome_of(i) for i in sample}}
        return client.post(f"/staff/leaderboard/{sid}/reruns", data=form, follow_redirects=False)
    finally:
        sign_out(client)


def test_failures_relabelled_error_beside_valid_receipts_are_rerun_and_reject_the_run(
    client, lab: LabServer, signed, agent_keys
) -> None:
    """Audit r1: ten checkouts reached with signed receipts of the registered key, eight failures reported as error.
    Receipts never looked at error rows, so the run was verified at 10 of 10 = 100%. Now the holding receipts draw
    the re-run sample, error rows in its pool, and the re-runs of those rows reject the run."""
    queries = {"s09": "?terms=accepted", "s14": "?point=pp-7c1d"}
    stations = ["s01", "s02", "s03", "s04", "s06", "s09", "s11", "s13", "s14", "s16"]
    receipts = {st: station_receipt(lab, st, queries.get(st, ""), web_bot_auth(agent_keys, lab.host_for(st)))
                for st in stations}
    errors = {f"s{i:02d}": "error" for i in (5, 7, 8, 10, 12, 15, 17, 18)}
    sid = submit(client, signed_run(signed.agent, receipts, errors, signed.started, "1.0+relabelled"))
    assert check_receipts(client, sid).status_code == 303
    entry = listed(client, sid)
    assert (entry["status"], entry["verification"]["method"]) == ("unverified", "receipts+reruns")
    assert (entry["successes"], entry["n"], entry["rate"]) == (10, 10, 100)
    drawn_errors = [i for i in entry["verification"]["sample"] if i in errors]
    assert drawn_errors, entry["verification"]["sample"]
    page = client.get("/leaderboard").text
    assert "8 more left out of n (error, not attempted)" in page and "stores drawn to re-run" in page
    response = record_reruns(client, sid, lambda i: "no_cart" if i in errors else "checkout_reached")
    assert response.status_code == 303, response.text
    entry = listed(client, sid)
    assert entry["status"] == "rejected"
    assert f"{drawn_errors[0]} (reported error, re-run no_cart)" in entry["verification"]["reason"]


def test_a_script_with_the_registered_key_gets_receipts_past_obstacles_it_never_met_and_is_not_verified(
    client, lab: LabServer, signed, agent_keys
) -> None:
    """Audit r2: the lab signs a receipt for whoever POSTs /cart/add and GETs /checkout: S09 with ?terms=accepted
    and no box ticked, S14 with ?point=pp-7c1d and no map clicked, S04, S06 and S11 with no page at all. A script
    signed with the agent's registered key so gets receipts that hold; they no longer verify the run alone, and the
    page says what a receipt proves and what it does not."""
    queries = {"s01": "", "s04": "", "s06": "", "s09": "?terms=accepted", "s11": "", "s14": "?point=pp-7c1d"}
    receipts = {st: station_receipt(lab, st, q, web_bot_auth(agent_keys, lab.host_for(st)))
                for st, q in queries.items()}
    others = {f"s{i:02d}": "no_cart" for i in range(1, 19)}
    sid = submit(client, signed_run(signed.agent, receipts, others, signed.started, "1.0+scripted"))
    assert check_receipts(client, sid).status_code == 303
    entry = listed(client, sid)
    assert entry["status"] == "unverified" and entry["verification"]["method"] == "receipts+reruns"
    page = client.get("/leaderboard").text
    words = " ".join(page.split())
    assert "It does not prove that a model, rather than a script, got past the station's obstacle" in words
    assert "the holder of the agent's registered key opened this station's order form" in words
    assert "receipts never verify a run alone" in page
    sign_in(client, *STAFF)
    desk = client.get(f"/staff/leaderboard/{sid}").text
    sign_out(client)
    assert "The lab receipts held. Receipts verify no run alone" in desk and "Record the re-runs" in desk
