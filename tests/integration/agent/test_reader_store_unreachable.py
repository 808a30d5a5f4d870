"""The reading station when it cannot reach the store: our error (the lab is ours), never the reader's wrong answer.

Through the real executor, a real record (SQLite), real HTTP servers on loopback and a real local server speaking
the OpenAI protocol. A store where nothing listens, a start page answered with a server error, a gateway answering
502 or a connection dropped mid-crawl cut the run short as `our_error` with one line saying so, with no verdict and
no step, for the model's reader and the built-in reader alike; the model's reader asks no model then (no call, no
cost). A page the store does not have (404), or a server error on a page past the start, is a page the reader reads
past: the run is graded, and every fetch is recorded with its status. A normal s12 run on the real lab is graded.
"""

from __future__ import annotations

import socket
import threading
import time
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest

from adapters.fetcher import FETCH_SECONDS
from adapters.models.lineup import WEEKLY
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.runs import Run
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import OpenAIServer, read_reply
from web.app import create_app
from workers.executor import execute_run
from workers.leases import open_leases
from workers.resources import build_resources

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

pytestmark = pytest.mark.anyio
LUNA = WEEKLY[0]
READERS = [pytest.param(LUNA.model, id="model-reader"), pytest.param("baseline-robust", id="built-in-reader")]
NOTHING_READ: dict[str, Any] = {"price_cents": None, "eu42_available": None, "eu44_available": None,
                                "delivery_cents": None, "return_days": None, "text": "the pages say nothing"}
"""What a model answers when it was given no pages."""
PREFIX = "the reading station could not reach the store: "


@pytest.fixture(scope="module")
def gateway() -> Iterator[tuple[OpenAIServer, str]]:
    fake = OpenAIServer()
    with ThreadedApp(fake.app) as running:
        yield fake, f"{running.url}/v1"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class FrontOfLab:
    """A real HTTP server in front of the real lab (as a proxy stands in front of it when deployed): it passes
    every request on, except the paths it is told to answer with a status of its own, to drop (the connection
    closed with no answer at all) or to hang (no answer within the fetcher's time-out)."""

    lab: LabServer
    overrides: dict[str, int | str]
    paths: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        front = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                front.paths.append(self.path)
                override = front.overrides.get(self.path.split("?")[0])
                if override == "hang":  # accepted, never answered: past the fetcher's own time-out
                    time.sleep(FETCH_SECONDS + 1)
                    return
                if override == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                if isinstance(override, int):
                    status, body = override, f"<p>status {override}</p>".encode()
                else:
                    answer = httpx.get(front.lab.loopback_url(self.path), headers={"Host": self.headers["Host"]})
                    status, body = answer.status_code, answer.content
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        """The lab's address through this server: stations are sNN.lab.localhost on its port."""
        return f"http://lab.localhost:{self.server.server_address[1]}/"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@asynccontextmanager
async def front_of_lab(lab: LabServer, overrides: dict[str, int | str]) -> AsyncIterator[FrontOfLab]:
    front = FrontOfLab(lab, overrides)
    try:
        yield front
    finally:
        front.close()


@dataclass
class Ran:
    outcome: str
    run: Run
    events: list[Any]
    calls: int
    """Requests the model gateway received for the run."""
    page: str
    spend: dict[str, Any]


async def s12_run(tmp_path: Path, gateway: tuple[OpenAIServer, str], model: str, lab_url: str) -> Ran:
    """An s12 run of `model` executed as a worker executes it, with the stations at `lab_url`."""
    fake, base = gateway
    settings = Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4, model_base_url=base,
                        model_api_key="sk-test")
    fake.reply_to_all = read_reply(NOTHING_READ)
    before = len(fake.requests)
    try:
        with build_runtime(settings) as runtime:
            week = week_of(runtime.record.clock())
            [run_id] = schedule_runs(runtime.record, [
                ScheduleRun.on_course(station="s12", model=model, requested_by="test", week=week)])
            resources = build_resources(runtime, open_leases(settings), lab_url=lab_url, directory_url=None)
            try:
                outcome = await execute_run({"resources": resources}, str(run_id))
            finally:
                await resources.aclose()
            return _ran(runtime, run_id, outcome, len(fake.requests) - before, week)
    finally:
        fake.reply_to_all = None


def _ran(runtime: Runtime, run_id: UUID, outcome: str, calls: int, week: str) -> Ran:
    with TestClient(create_app(runtime.settings), base_url="https://testserver") as client:
        page = " ".join(client.get(f"/runs/{run_id}").text.split())
        spend = client.get(f"/api/weeks/{week}/spend.json").json()
    return Ran(outcome=outcome, run=runtime.record.get_run(run_id), calls=calls, page=page, spend=spend,
               events=list(runtime.record.repository.event_store.get(run_id)))


def assert_cut_short_unread(ran: Ran, detail_starts: str) -> None:
    [cut] = [e for e in ran.events if isinstance(e, Run.CutShort)]
    assert ran.outcome == "cut_short" and ran.run.status == "cut_short" and ran.run.verdict is None
    assert cut.cause == "our_error" and cut.steps == 0
    assert cut.detail.startswith(PREFIX + detail_starts), cut.detail
    assert "\n" not in cut.detail and "Traceback" not in cut.detail
    assert not [e for e in ran.events if isinstance(e, (Run.StepRecorded, Run.Finished))]
    # No pages, so no model was asked: nothing charged, nothing in the week's spend.
    assert ran.calls == 0 and ran.spend["actual_usd"] == 0.0
    assert "Cut short: not a result" in ran.page and f"our error: {cut.detail}" in ran.page


@pytest.mark.parametrize("model", READERS)
async def test_a_store_where_nothing_listens_cuts_the_run_short_as_our_error_and_asks_no_model(
    tmp_path: Path, gateway: tuple[OpenAIServer, str], model: str
) -> None:
    port = free_port()  # nothing listens there: the lab is down
    ran = await s12_run(tmp_path, gateway, model, f"http://lab.localhost:{port}/")
    assert_cut_short_unread(ran, f"ConnectError on http://s12.lab.localhost:{port}/")


@pytest.mark.parametrize("model", READERS)
@pytest.mark.parametrize(("overrides", "detail"), [
    pytest.param({"/": 500}, "the start page http://s12.lab.localhost:{port}/ answered 500", id="start-page-500"),
    pytest.param({"/": 503}, "the start page http://s12.lab.localhost:{port}/ answered 503", id="start-page-503"),
    pytest.param({"/sitemap.xml": 502}, "http://s12.lab.localhost:{port}/sitemap.xml answered 502",
                 id="gateway-502-mid-crawl"),
    pytest.param({"/help/returns": "drop"}, "RemoteProtocolError on http://s12.lab.localhost:{port}/help/returns",
                 id="dropped-mid-crawl"),
    pytest.param({"/": "hang"}, "ReadTimeout on http://s12.lab.localhost:{port}/", id="no-answer-in-time"),
])
async def test_a_store_that_fails_us_cuts_the_run_short_as_our_error_and_asks_no_model(
    tmp_path: Path, gateway: tuple[OpenAIServer, str], lab: LabServer, model: str,
    overrides: dict[str, int | str], detail: str
) -> None:
    async with front_of_lab(lab, overrides) as front:
        ran = await s12_run(tmp_path, gateway, model, front.url)
    port = front.server.server_address[1]
    assert_cut_short_unread(ran, detail.format(port=port))


@pytest.mark.parametrize("model", READERS)
@pytest.mark.parametrize("overrides", [
    pytest.param({}, id="the-lab-as-it-is"),
    pytest.param({"/sitemap.xml": 404, "/help/delivery": 404}, id="pages-missing-by-design"),
    pytest.param({"/help/delivery": 500}, id="a-server-error-past-the-start-page"),
])
async def test_a_store_that_answers_is_graded_and_every_fetch_is_recorded(
    tmp_path: Path, gateway: tuple[OpenAIServer, str], lab: LabServer, model: str, overrides: dict[str, int | str]
) -> None:
    async with front_of_lab(lab, overrides) as front:
        ran = await s12_run(tmp_path, gateway, model, front.url)
    verdict = ran.run.verdict
    assert ran.run.status == "finished" and verdict is not None and ran.outcome in ("passed", "failed")
    assert verdict.stage == "data" and verdict.outcome in ("passed", "wrong_answer")
    assert not [e for e in ran.events if isinstance(e, Run.CutShort)]
    statuses = {f.url.split(":", 2)[2].split("/", 1)[1]: f.status for f in verdict.pages or []}
    assert statuses[""] == 200
    for path, status in overrides.items():
        assert statuses[path.lstrip("/")] == status, path
    # The model's reader asked the model once, with the pages: its one step. The built-in reader asks no model.
    assert ran.calls == (1 if model == LUNA.model else 0)
