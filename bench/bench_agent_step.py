"""Harness overhead per step against the floor, on lab pages, in one run.

    python bench/bench_agent_step.py [--steps 16] [--rounds 3]

Floor: Chromium doing the same step, sent raw: a CDP JPEG screenshot (the harness's parameters), one evaluate of
the element list (the harness's script, evaluated as the harness does, through the CDP session, its result one JSON
string), the same scroll the agent asks for (Playwright's mouse wheel, as the harness carries it out) and the
judge's probe (the harness's expression, through the CDP session). Until 1 December 2026 the floor was the
observation alone, so the scroll and the probe, which Chromium does whoever drives it, counted as harness cost.
Harness step: everything between two decisions of a scripted agent that answers at once (so model time is
excluded): the action (a scroll, which loads nothing), the judge's probe, recording (blobs on disk, events in
SQLite through the lead's recorder), signing, and the next observation. It is measured twice: with the run's
Playwright trace being kept (as the course does unless CANITBUY_TRACES=off) and without. All three are measured on
the same pages, interleaved, with the same browser. Once per traced run, what keeping its media costs after the
run is timed too: closing the context with its trace, putting the trace and the video's screens in the blob store
(no step waits on it; the course does it beside the next runs; the video itself is made when first watched).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from adapters.botauth import BotAuthSigner, load_or_create_key
from adapters.browser.actions import carry_out
from adapters.browser.playwright_browser import PlaywrightBrowser
from adapters.browser.session import PROBE_EXPRESSION, capture_screenshot, observe_expression
from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.agent.actions import Scroll
from domain.agent.agent_ports import Decision, Task, station_task
from domain.agent.episode import Episode
from domain.agent.observation import Observation
from domain.agent.ports import StepRecord
from domain.courses.course import load_course
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from lab.server import LabServer
from workers.executor import put_media

PAGES = ("/", "/products/aero-run-2", "/products/aero-run-2?colour=black&size=42", "/help/delivery")


class Stopwatch:
    """A scripted agent: scrolls at once and notes the time of each decision."""

    name, version = "bench", "1"

    def __init__(self) -> None:
        self.marks: list[float] = []

    async def decide(self, observation: Observation, task: Task, history: list[StepRecord]) -> Decision:
        self.marks.append(time.perf_counter())
        return Decision(action=Scroll(direction="down" if len(self.marks) % 2 else "up"))


async def floor(browser: PlaywrightBrowser, url: str, n: int) -> list[float]:
    session = await browser.session(url)
    await session.open(url)
    page = session._page  # noqa: SLF001 - the floor is measured on the raw page, below the harness
    cdp = await page.context.new_cdp_session(page)
    times = []
    for number in range(1, n + 1):
        began = time.perf_counter()
        await capture_screenshot(cdp)  # with the harness's bounded retry of Chromium's transient failure
        await cdp.send("Runtime.evaluate", {"expression": observe_expression(), "returnByValue": True,
                                            "awaitPromise": True})
        # the Stopwatch's scrolls
        await carry_out(page, Scroll(direction="down" if number % 2 else "up"), session.harness_read)
        await cdp.send("Runtime.evaluate", {"expression": PROBE_EXPRESSION, "returnByValue": True})
        times.append((time.perf_counter() - began) * 1000)
    await session.close()
    return times


async def harness(browser: PlaywrightBrowser, runtime: object, task: Task, steps: int,
                  media: Path | None, finishing: list[tuple[float, float]]) -> list[float]:
    [run_id] = schedule_runs(runtime.record, [ScheduleRun.on_course(
        station="s01", model="baseline-robust", requested_by="bench", week=week_of(runtime.record.clock()))])
    recorder = runtime.recorder(run_id)  # type: ignore[attr-defined]
    await recorder.started(worker="bench", browser_version=browser.version, agent_version="bench")
    agent = Stopwatch()
    session = await browser.session(task.start_url, media_dir=media)
    await Episode(session=session, agent=agent, task=task, recorder=recorder, blobs=runtime.blobs,  # type: ignore[attr-defined]
                  clock=time.monotonic, max_steps=steps).run()
    began = time.perf_counter()
    kept = await session.close_keeping_media()  # as the worker does once the run has ended (not in a step)
    closed = time.perf_counter()
    if kept is not None:
        await asyncio.to_thread(put_media, runtime.blobs, kept)  # type: ignore[attr-defined]
    session.discard_media()
    if media is not None:
        finishing.append(((closed - began) * 1000, (time.perf_counter() - closed) * 1000))
    return [(b - a) * 1000 for a, b in zip(agent.marks, agent.marks[1:], strict=False)]


def summary(name: str, times: list[float]) -> str:
    q = statistics.quantiles(times, n=10)
    return f"{name:<28} p50 {statistics.median(times):6.1f} ms   p90 {q[8]:6.1f} ms   n={len(times)}"


async def main(steps: int, rounds: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="canitbuy-bench-"))
    key = load_or_create_key(None, work)
    with LabServer() as lab, build_runtime(Settings(data_dir=work)) as runtime:
        async with PlaywrightBrowser(BotAuthSigner(key, "https://agent.canitbuy.com")) as browser:
            floors: list[float] = []
            plain: list[float] = []
            traced: list[float] = []
            finishing: list[tuple[float, float]] = []
            for _ in range(rounds):
                for path in PAGES:
                    url = lab.url_for("s01", path)
                    floors += await floor(browser, url, steps)
                    task = station_task(load_course(), "s01", url)
                    plain += await harness(browser, runtime, task, steps, None, finishing)
                    traced += await harness(browser, runtime, task, steps, work / "media", finishing)
    print(summary("floor (same step, raw)", floors))
    print(summary("harness step, traces off", plain))
    print(summary("harness step, traces on", traced))
    print(f"after each traced run: close with its trace p50 {statistics.median(c for c, _ in finishing):.1f} ms, "
          f"trace and screens put p50 {statistics.median(f for _, f in finishing):.1f} ms   n={len(finishing)}")
    base = statistics.median(floors)
    print(f"ratio p50 harness / floor: traces off {statistics.median(plain) / base:.2f} (goal <= 1.2), "
          f"traces on {statistics.median(traced) / base:.2f} (goals <= 1.2, issue 17; <= 1.5, issue 13); "
          f"traces add {statistics.median(traced) - statistics.median(plain):+.1f} ms a step"
          f"   load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main(options.steps, options.rounds))
