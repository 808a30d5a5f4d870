"""The recording path off the browser's way (issue 17), on real Chromium, the real lab and the real record.

Blobs are written (fsync) by a thread while the agent decides, never by the event loop every run's browser work
shares; each step is still stored once, in order, naming blobs already on disk, before the run moves on.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import msgspec
import pytest

from adapters.blobs import FileBlobStore
from adapters.browser.playwright_browser import PlaywrightBrowser
from adapters.browser.session import MAX_ELEMENTS, MAX_TEXT, observe_script
from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.agent.actions import Scroll, Stop
from domain.agent.agent_ports import Decision, Task, station_task
from domain.agent.episode import Episode
from domain.agent.observation import Element, Observation
from domain.agent.ports import StepRecord
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from lab.server import LabServer

pytestmark = [pytest.mark.anyio, pytest.mark.chromium]


class ThreadNotingBlobs(FileBlobStore):
    """The real file store, noting which thread wrote each blob."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.writers: list[threading.Thread] = []

    def put(self, data: bytes) -> str:
        self.writers.append(threading.current_thread())
        return super().put(data)


class Scroller:
    name, version = "scroller", "1"

    async def decide(self, observation: Observation, task: Task, history: list[StepRecord]) -> Decision:
        if len(history) == 3:
            return Decision(action=Stop(reason="seen enough"))
        return Decision(action=Scroll(direction="down"))


async def test_blobs_are_written_off_the_event_loop_and_each_step_is_stored_once_in_order(
        browser: PlaywrightBrowser, lab: LabServer, tmp_path: Path) -> None:
    with build_runtime(Settings(data_dir=tmp_path / "var")) as runtime:
        [run_id] = schedule_runs(runtime.record, [ScheduleRun.on_course(
            station="s01", model="baseline-robust", week=week_of(runtime.clock()), requested_by="test")])
        recorder = runtime.recorder(run_id)
        await recorder.started(worker="test", browser_version=browser.version, agent_version="1")
        blobs = ThreadNotingBlobs(tmp_path / "blobs")
        task = station_task(load_course(), "s01", lab.url_for("s01"))
        session = await browser.session(task.start_url)
        try:
            verdict = await Episode(session=session, agent=Scroller(), task=task, recorder=recorder, blobs=blobs,
                                    clock=time.monotonic).run()
        finally:
            await session.close()
        assert isinstance(verdict, Verdict) and verdict.outcome == "stopped"
        assert len(blobs.writers) == 8  # a screenshot and an element list a step
        assert threading.current_thread() not in blobs.writers  # never the event loop's thread

        steps = [e.payload.step for e in runtime.record.read_log(0) if e.name == "Run.StepRecorded"]
        assert [s.number for s in steps] == [1, 2, 3, 4]
        assert all(s.screenshot and blobs.has(s.screenshot) and blobs.has(s.elements) for s in steps)
        assert runtime.record.get_run(run_id).status == "finished"


async def test_the_observation_carried_as_one_json_string_is_the_one_read_as_objects(
        browser: PlaywrightBrowser, lab: LabServer) -> None:
    url = lab.url_for("s01", "/products/aero-run-2")
    session = await browser.session(url)
    try:
        await session.open(url)
        seen = await session.observe()
        as_objects = await session._page.evaluate(observe_script(), [MAX_TEXT, MAX_ELEMENTS])  # noqa: SLF001
        assert seen.elements and msgspec.to_builtins(seen.elements) == msgspec.to_builtins(
            msgspec.convert(as_objects["elements"], list[Element]))
        assert (seen.text, seen.title, seen.structured) == (
            as_objects["text"], as_objects["title"], as_objects["structured"])

        # A page whose arrays no longer stringify as arrays (old libraries set Array.prototype.toJSON) is still read.
        await session.evaluate("() => { Array.prototype.toJSON = function () { return 'not a list'; }; }")
        again = await session.observe()
        assert [e.id for e in again.elements] == [e.id for e in seen.elements]
    finally:
        await session.close()
