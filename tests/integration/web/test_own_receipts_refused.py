"""CanItBuy's own agent key and our own runs' receipts are public (our key directory, each run's JSON), so neither
may prove an outside agent's run: the desk refuses to register a key that is or was ours, and a submission whose
receipt is one of our runs', or names our key, is rejected saying so.

A real lab signs the receipts of checkouts opened with our agent's real Web Bot Auth signatures (its directory
served over HTTP); the run is recorded in the site's own record as the worker records one; the real site judges
at the staff desk, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from uuid import UUID

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from desk_client import STAFF, csrf_of, sign_in, sign_out
from leaderboard_site import site_on_backend
from test_receipts_prove_runs import check_receipts, checkout_receipt, course_run, listed, submit

from adapters.botauth import BotAuthSigner, directory_document, keyid_of, load_or_create_key
from domain.agent.verdicts import Verdict
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from lab.server import LabServer


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, lab: LabServer) -> Iterator:
    yield from site_on_backend(request, tmp_path_factory, lab_url=lab.url_for(None))


@dataclass
class Directory:
    """A key directory served over HTTP on loopback, as an agent's own domain serves it."""

    server: ThreadingHTTPServer
    document: bytes

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


def serve_directory(key: Ed25519PrivateKey) -> Directory:
    directory: Directory

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Type", "application/http-message-signatures-directory+json")
            self.end_headers()
            self.wfile.write(directory.document)

        def log_message(self, *args: object) -> None:
            pass

    directory = Directory(ThreadingHTTPServer(("127.0.0.1", 0), Handler), directory_document(key))
    threading.Thread(target=directory.server.serve_forever, daemon=True).start()
    return directory


@dataclass
class Ours:
    keyid: str
    """The key our site's directory serves now."""
    old_keyid: str
    """A key we signed with before (only the receipt of a recorded run of ours names it)."""
    run_receipt: str
    """The receipt of a recorded run of ours, signed with our key."""
    live_receipt: str
    """A receipt of a checkout opened with our key that no run of ours recorded (a replayed signature)."""
    started: datetime
    finished: datetime


def recorded_run(client, receipt: str) -> UUID:
    """A course run of ours on s01, recorded with the lab's receipt, as the worker records one."""
    record = client.app.state.site.runtime.record
    week = week_of(record.clock())
    [run_id] = schedule_runs(record, [ScheduleRun.on_course(station="s01", model="baseline-robust",
                                                            requested_by="test", week=week)])
    record.start_run(run_id, worker="test", browser_version="chromium-test", agent_version="test")
    verdict = Verdict(passed=True, outcome="passed", stage="checkout", step=6, reason="The checkout's form opened.",
                      receipt=receipt)
    record.finish_run(run_id, verdict, steps=6, seconds=12.0)
    return run_id


@pytest.fixture(scope="module")
def ours(client, lab: LabServer) -> Iterator[Ours]:
    site = client.app.state.site
    key = load_or_create_key(None, site.settings.data_dir)  # the key the site serves in its directory
    old = Ed25519PrivateKey.generate()
    directories = [serve_directory(key), serve_directory(old)]
    try:
        signers = [BotAuthSigner(k, d.origin) for k, d in zip((key, old), directories, strict=True)]
        recorded_run(client, checkout_receipt(lab, signers[1].headers(lab.host_for("s01"))))
        # Before this rule a stranger could register our public key to their agent: written here as history.
        site.runtime.record.register_agent_key(keyid=keyid_of(key), agent="Copycat Agent",
                                               evidence="https://copycat.example/directory", by=STAFF[0])
        time.sleep(1.1)  # the registration a whole second before the run
        started = datetime.now(UTC)
        run_receipt = checkout_receipt(lab, signers[0].headers(lab.host_for("s01")))
        recorded_run(client, run_receipt)
        live_receipt = checkout_receipt(lab, signers[0].headers(lab.host_for("s01")))
        time.sleep(1.0)
        yield Ours(keyid_of(key), keyid_of(old), run_receipt, live_receipt, started, datetime.now(UTC))
    finally:
        for directory in directories:
            directory.server.shutdown()
            directory.server.server_close()


def register(client, keyid: str, agent: str):
    sign_in(client, *STAFF)
    try:
        page = client.get("/staff/leaderboard/keys")
        return client.post("/staff/leaderboard/keys", follow_redirects=False, data={
            "csrf": csrf_of(page.text), "keyid": keyid, "agent": agent,
            "evidence": "https://stranger.example/.well-known/http-message-signatures-directory"})
    finally:
        sign_out(client)


def test_our_agents_key_cannot_be_registered_to_another_agent(client, ours) -> None:
    response = register(client, ours.keyid, "Stranger Agent")
    assert response.status_code == 400
    text = html.unescape(response.text)
    assert f"the key {ours.keyid} is CanItBuy's own agent key (our key directory names it)" in text
    assert "Stranger Agent" not in text.split("Registered agent keys")[1]


def test_a_key_only_a_receipt_of_our_runs_names_cannot_be_registered(client, ours) -> None:
    response = register(client, ours.old_keyid, "Stranger Agent")
    assert response.status_code == 400
    text = html.unescape(response.text)
    assert f"the key {ours.old_keyid} is CanItBuy's own agent key (the receipt of our run " in text


def test_a_receipt_of_our_recorded_run_verifies_no_submission(client, ours) -> None:
    sid = submit(client, course_run("Copycat Agent", ours.run_receipt, ours.started, ours.finished, "our run"))
    assert check_receipts(client, sid).status_code == 303
    entry = listed(client, sid)
    assert entry["status"] == "rejected"
    assert "s01: the receipt is from one of CanItBuy's own runs" in entry["verification"]["reason"]


def test_a_receipt_naming_our_agents_key_verifies_no_submission(client, ours) -> None:
    sid = submit(client, course_run("Copycat Agent", ours.live_receipt, ours.started, ours.finished, "our key"))
    assert check_receipts(client, sid).status_code == 303
    entry = listed(client, sid)
    assert entry["status"] == "rejected"
    assert f"s01: its agent key {ours.keyid} is CanItBuy's own agent's" in entry["verification"]["reason"]
