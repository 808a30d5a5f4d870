"""The whole course on the embedded default: 5 built-in agents x 18 stations, k = 1, against the floor.

The course: schedule the 90 runs, execute them in the in-process pool (SQLite, blobs, leases, events as they
happen), built-in agents without their think pause (so the harness is measured, not the pause). The floor,
measured in the same run on the same lab: Chromium doing the same number of page steps, per run on the same
station with the same concurrency, each step an observation (screenshot + element list), the judge's probe and
a page load, with no recording, no events and no agent.

    python bench/bench_course.py [--concurrency 4] [--models 5] [--traces on|off]

`--models 2` runs the first two built-in agents only (36 runs): shorter, for a loaded machine. The load average
is printed with the figures, since a busy machine moves both sides of the ratio. The course keeps each run's
Playwright trace and video, as it does by default (`--traces off`: as with CANITBUY_TRACES=off); the floor never.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.browser.playwright_browser import PlaywrightBrowser  # noqa: E402
from adapters.models.lineup import BASELINES  # noqa: E402
from adapters.settings import Settings  # noqa: E402
from adapters.wiring import build_runtime  # noqa: E402
from ops.local_services import local_services  # noqa: E402
from workers.leases import open_leases  # noqa: E402
from workers.ledger import RunLedger  # noqa: E402
from workers.plan import schedule_course  # noqa: E402
from workers.pool import EmbeddedPool  # noqa: E402
from workers.resources import Lab, build_resources  # noqa: E402

WEEK = "2026-W48"


async def course(settings: Settings, lab_url: str, directory: str | None, concurrency: int,
                 models: int) -> tuple[float, list]:
    with build_runtime(settings) as runtime:
        ids = [str(i) for i in schedule_course(runtime, WEEK, list(BASELINES[:models]), requested_by="bench")]
        res = build_resources(runtime, open_leases(settings), lab_url=lab_url, directory_url=directory)
        res.agents.think_seconds = 0.0
        began = time.perf_counter()
        try:
            await EmbeddedPool(res, concurrency).run(ids)
        finally:
            await res.aclose()
        seconds = time.perf_counter() - began
        runs = RunLedger(runtime.record).refresh().of(ids)
    return seconds, runs


async def floor(runs: list, lab: Lab, concurrency: int) -> float:
    browser = await PlaywrightBrowser(None).start()
    limiter = anyio.CapacityLimiter(concurrency)
    failures: list[str] = []

    async def one(station: str, steps: int) -> None:
        async with limiter:
            url = lab.station_url(station)
            session = await browser.session(url)
            try:
                await session.open(url)
                for _ in range(steps):
                    try:
                        await session.observe()
                        await session.probe()
                        await session.open(url)
                    except Exception:  # a page that cannot be captured still cost its time, as in the course
                        failures.append(station)
            finally:
                await session.close()

    began = time.perf_counter()
    try:
        async with anyio.create_task_group() as group:
            for run in runs:
                if run.kind == "browser":
                    group.start_soon(one, run.station, max(run.steps, 1))
    finally:
        await browser.stop()
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--models", type=int, default=len(BASELINES), help="the first N built-in agents")
    parser.add_argument("--traces", choices=("on", "off"), default="on", help="keep each run's trace and video")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    data = Path(tempfile.mkdtemp(prefix="bench-course-"))
    settings = Settings(data_dir=data, traces=args.traces == "on")
    with local_services(settings) as services:
        seconds, runs = anyio.run(course, settings, services.lab_url, services.directory_url,
                                  args.concurrency, args.models)
        browser_steps = sum(r.steps for r in runs if r.kind == "browser")
        lab = Lab(services.lab_url, settings.lab_domain)
        floor_seconds = anyio.run(floor, runs, lab, args.concurrency)
    passed = sum(1 for r in runs if r.passed)
    cut = sum(1 for r in runs if r.status == "cut_short")
    rate, floor_rate = browser_steps / seconds, browser_steps / floor_seconds
    print(f"course: {len(runs)} runs ({passed} passed, {cut} cut short), {browser_steps} browser steps, "
          f"concurrency {args.concurrency}, traces {args.traces}")
    print(f"course wall-clock {seconds:.1f} s, {rate:.2f} steps/s")
    print(f"floor  wall-clock {floor_seconds:.1f} s, {floor_rate:.2f} steps/s (same steps, no recording)")
    print(f"ratio {rate / floor_rate:.2f} of the floor (goal >= 0.9)   load average {load:.2f} -> "
          f"{os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
