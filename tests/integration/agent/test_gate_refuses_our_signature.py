"""A signed agent that s13's bot gate refuses is our outage, not the model's stop: a key directory the lab cannot
reach, a key it does not list, a clock outside the signature's window. In real Chromium on the real lab (which
fetches key directories from loopback, as the in-process lab does), the run is cut short as our error with one line
naming the lab's own reason (its Nordlys-Gate-Refused header, which the agent is never shown); through the real
executor too. On a store that is not ours (ARC's real stores) a verification page stays the store's answer."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from adapters.agents.rule_agent import builtin_agent
from adapters.botauth import BotAuthSigner, directory_app, load_or_create_key
from adapters.browser.playwright_browser import PlaywrightBrowser
from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.agent.agent_ports import station_task
from domain.agent.episode import CutShort, Episode
from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from tests.unit.agent.agent_fakes import ListRecorder, MemoryBlobs
from workers.executor import execute_run
from workers.leases import open_leases
from workers.resources import build_resources

pytestmark = [pytest.mark.anyio, pytest.mark.chromium]
HEAD, TAIL = "our lab's bot gate refused our signed requests (", "): our signing, key or key directory, not the model"


def nowhere() -> str:
    """An origin where nothing listens: a key directory the lab cannot fetch."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


@pytest.fixture
def directories() -> Iterator[ExitStack]:
    with ExitStack() as served:
        yield served


def signer_for(why: str, tmp_path: Path, served: ExitStack) -> BotAuthSigner:
    key = load_or_create_key(None, tmp_path / "ours")
    if why == "unreachable-directory":
        return BotAuthSigner(key, nowhere())
    if why == "key-not-listed":  # the directory answers, listing a key that is not the one we sign with
        other = load_or_create_key(None, tmp_path / "other")
        return BotAuthSigner(key, served.enter_context(ThreadedApp(directory_app(other))).url)
    # Our key, listed, but our clock an hour behind: every signature has expired when it is made.
    origin = served.enter_context(ThreadedApp(directory_app(key))).url
    return BotAuthSigner(key, origin, clock=lambda: time.time() - 3600)


async def s13(signer: BotAuthSigner, lab: LabServer, *, stores_ours: bool = True) -> tuple[Verdict | CutShort,
                                                                                           ListRecorder]:
    task = station_task(load_course(), "s13", lab.url_for("s13"))
    recorder = ListRecorder()
    async with PlaywrightBrowser(signer) as browser:
        session = await browser.session(task.start_url)
        try:
            result = await Episode(session=session, agent=builtin_agent("baseline-robust", think_seconds=0),
                                   task=task, recorder=recorder, blobs=MemoryBlobs(), clock=time.monotonic,
                                   stores_ours=stores_ours, gate_refusal=session.gate_refusal).run()
        finally:
            await session.close()
    return result, recorder


@pytest.mark.parametrize(("why", "reason"), [
    ("unreachable-directory", "sig1: directory could not be fetched: "),
    ("key-not-listed", "sig1: keyid is not in the agent's directory"),
    ("clock-an-hour-behind", "sig1: outside its time window"),
])
async def test_a_signed_run_the_gate_refuses_is_cut_short_as_our_error_naming_the_labs_reason(
        why: str, reason: str, lab: LabServer, tmp_path: Path, directories: ExitStack) -> None:
    result, recorder = await s13(signer_for(why, tmp_path, directories), lab)
    assert isinstance(result, CutShort) and result.cause == "our_error", result
    assert result.detail.startswith(HEAD + reason) and result.detail.endswith(TAIL), result.detail
    assert "\n" not in result.detail and recorder.cut == ("our_error", result.detail) and recorder.verdict is None
    # The step that met the page is kept (no model was asked); the agent was never shown why.
    [step] = recorder.steps
    assert step.result == "verification page: stopped" and step.action is None


async def test_on_a_store_that_is_not_ours_a_verification_page_is_still_the_stores_answer(
        lab: LabServer, tmp_path: Path, directories: ExitStack) -> None:
    result, _ = await s13(signer_for("unreachable-directory", tmp_path, directories), lab, stores_ours=False)
    assert isinstance(result, Verdict) and (result.outcome, result.stage) == ("verification_page", "entry"), result


async def test_the_worker_cuts_a_refused_signed_run_short_as_our_error(lab: LabServer, tmp_path: Path) -> None:
    # The worker signs with its own key (kept in its data folder) and names a key directory the lab cannot reach.
    settings = Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4)
    with build_runtime(settings) as runtime:
        [run_id] = schedule_runs(runtime.record, [ScheduleRun.on_course(
            station="s13", model="baseline-robust", requested_by="test", week=week_of(runtime.record.clock()))])
        resources = build_resources(runtime, open_leases(settings), lab_url=lab.url_for(None),
                                    directory_url=nowhere())
        try:
            outcome = await execute_run({"resources": resources}, str(run_id))
        finally:
            await resources.aclose()
        events = list(runtime.record.repository.event_store.get(run_id))
    [cut] = [e for e in events if isinstance(e, Run.CutShort)]
    assert outcome == "cut_short" and cut.cause == "our_error" and cut.steps == 1, cut
    assert cut.detail.startswith(HEAD + "sig1: ") and cut.detail.endswith(TAIL), cut.detail
    assert not [e for e in events if isinstance(e, Run.Finished)]
