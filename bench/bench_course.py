"""The whole course on the embedded default: 5 built-in agents x 18 stations, k = 1, against the floor.

The course: schedule the 90 runs, execute them in the in-process pool (SQLite, blobs, leases, events as they
happen), built-in agents without their think pause (so the harness is measured, not the pause).

The floor, measured in the same run on the same lab with the same concurrency: Chromium doing the same steps
with nothing recorded. Each browser run of the course is replayed from its own recorded steps in a fresh context:
the start page, then per step the observation (screenshot + element list), the step's own action where the run
carried one out (the same click, typing or scroll on the same element), and the judge's probe. Requests are
signed as the course signs them (Web Bot Auth; s13's gate refuses unsigned ones), so the floor reaches the same
pages. No agent, no events, no blobs, no leases, no trace. The replay is faithful while each step meets the page
the course met. A step whose element list differs from the one recorded (s03's pop-up came a moment later, since
the replay runs faster than the course) or whose action ended otherwise takes the replay of that run off script:
its remaining steps are still taken (the observation, the recorded action where its element is on the page, the
probe), so that the floor does as many steps in as many runs as the course and each run's opening and closing is
spread over the same steps on both sides. A run whose off-script action waited out its time-out (which the course
never did) ends there. How many steps went off script, and how many runs ended early, is printed.

Until 2 December 2026 a run's replay ended at its first differing step: the floor then replayed 157-181 of 212
steps, the tails of long runs left out, and its steps/s (and with it the ratio, 0.81-0.95 in four rounds of one
command) moved with how many were left out more than with anything the harness did.

Until 1 December 2026 the floor reloaded the station's start page at every step instead of replaying the step:
Chromium spent about a third less CPU on that than on the pages and actions the runs really take (50-57 s
against 72-75 s of Chromium's CPU for the same 196-208 steps, `--models 2`), so it measured the lab's lightest
page rather than the same steps. `--floor reload` still measures it, for comparison with earlier figures.

    python bench/bench_course.py [--concurrency 4] [--models 5] [--traces on|off] [--floor replay|reload|both]
                                 [--rounds 1] [--no-warm-up]

The course's own wall time moves by a fifth between identical runs on a quiet 2-core machine, and so does its
floor's: `--rounds N` measures a course and its floor N times in turn, each on a fresh store, and the figure is the
median of the rounds' ratios. Each phase also prints the CPU each kind of process spent in it (Chromium's browser,
renderer and GPU processes, Playwright's driver, ffmpeg, ours; `process_cpu.py`): on two cores that is where the
time goes.

Under other work (the test suite's load changes from one test folder to the next within a minute) a course and
its floor measured one after the other meet different loads, and the wall-clock ratio says which parts of that
work each met. So each round also gives the CPU a step of each side, exact (`tree_cpu`: our process and every
process under it, Chromium's and the driver's included, each phase starting and stopping its own), and their
ratio: other work slows a step's wall-clock, hardly the CPU the step takes, so the CPU ratio is the figure to
compare under load. (Running the course in chunks, each chunk's floor right after it, was tried on 2 December
2026: each chunk's end drains its runs' concurrency, both sides took half as long again and the ratio rose to
0.93-0.95 against 0.89 for the same course whole, a measure of draining rather than of the harness.)

`--models 2` runs the first two built-in agents only (36 runs): shorter, for a loaded machine. The load average
is printed with the figures, since a busy machine moves both sides of the ratio. The course keeps each run's
Playwright trace and its video's screens, as it does by default (`--traces off`: as with CANITBUY_TRACES=off); the
floor never. Since 2 December 2026 a video is made when it is first played, not in the course: each round also
makes every video of its course after the floor and prints the CPU that took (what the course would have spent
on them before), outside both the course and the floor.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from uuid import UUID

import anyio
import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from process_cpu import ProcessCpu  # noqa: E402

from adapters.botauth import BotAuthSigner  # noqa: E402
from adapters.browser.playwright_browser import PlaywrightBrowser  # noqa: E402
from adapters.models.lineup import BASELINES  # noqa: E402
from adapters.settings import Settings  # noqa: E402
from adapters.wiring import Runtime, build_runtime  # noqa: E402
from domain.agent.actions import Action  # noqa: E402
from domain.agent.observation import Observation  # noqa: E402
from domain.agent.runs import Run  # noqa: E402
from ops.local_services import local_services  # noqa: E402
from web.videos import VIDEO_NOTES, RunVideos  # noqa: E402
from workers.leases import open_leases  # noqa: E402
from workers.ledger import RunLedger, RunState  # noqa: E402
from workers.plan import schedule_course  # noqa: E402
from workers.pool import EmbeddedPool  # noqa: E402
from workers.resources import Lab, build_resources  # noqa: E402

WEEK = "2026-W48"


async def course(settings: Settings, lab_url: str, directory: str | None, concurrency: int,
                 models: int) -> tuple[float, list[RunState], list[ReplayPlan], BotAuthSigner | None]:
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
        plans = [replay_plan(runtime, run) for run in runs if run.kind == "browser"]
    return seconds, runs, plans, res.agents.signer  # the floor signs with the course's own signer


_elements = msgspec.json.Encoder().encode
"""The element list's bytes as the episode stores them (its digest names the blob)."""
NOT_CARRIED_OUT = ("invalid reply", "refused:", "stopped:", "verification page")
"""How a step's recorded result begins when the episode carried out no action (episode.py's wording)."""
NOT_PROBED = ("stopped:", "verification page")
"""...and when it did not probe the page after the step either (the run ended there)."""


@dataclass
class ReplayStep:
    elements: str | None
    """sha256 of the element list the run observed (the blob the step names): the page to meet again."""
    action: Action | None
    """The action to carry out again; None where the run carried none out."""
    result: str
    probe: bool


@dataclass
class ReplayPlan:
    station: str
    steps: list[ReplayStep] = field(default_factory=list)


def replay_plan(runtime: Runtime, run: RunState) -> ReplayPlan:
    """A course run's recorded steps, as the floor replays them."""
    plan = ReplayPlan(station=run.station)
    for event in runtime.record.repository.event_store.get(UUID(run.run_id)):
        if isinstance(event, Run.StepRecorded):
            step = event.step
            acted = step.action is not None and not step.result.startswith(NOT_CARRIED_OUT)
            plan.steps.append(ReplayStep(elements=step.elements, action=step.action if acted else None,
                                         result=step.result,
                                         probe=not step.result.startswith(NOT_PROBED)))
    return plan


async def reload_floor(runs: list[RunState], lab: Lab, concurrency: int) -> float:
    """The floor before 1 December 2026: each step reloads the station's start page (see the module's text)."""
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

    return await timed(browser, [partial(one, r.station, max(r.steps, 1)) for r in runs if r.kind == "browser"])


async def timed(browser: PlaywrightBrowser, jobs: list[Callable[[], Coroutine[Any, Any, None]]]) -> float:
    """Seconds until every job has ended, all started at once (each waits for its slot), the browser closed."""
    began = time.perf_counter()
    try:
        async with anyio.create_task_group() as group:
            for job in jobs:
                group.start_soon(job)
    finally:
        await browser.stop()
    return time.perf_counter() - began


@dataclass
class FloorTally:
    """What the replay floor did: the steps it took, how many of them off script, the runs that ended early."""

    steps: int = 0
    off_script: int = 0
    ended_early: int = 0


def replayable(action: Action, observation: Observation) -> bool:
    """Whether an action can be carried out again on the page observed: one aimed at an element needs that element
    (by its id) on the page; the others (scroll, press, back, go to, wait) always can."""
    target = getattr(action, "id", None)
    return target is None or observation.element(target) is not None


async def replay_floor(plans: list[ReplayPlan], lab: Lab, concurrency: int,
                       signer: BotAuthSigner | None) -> tuple[float, FloorTally]:
    """The course's browser runs replayed step by step with nothing recorded; seconds, and what was replayed
    (see the module's text for the steps that met another page than the course's)."""
    browser = await PlaywrightBrowser(signer).start()
    limiter = anyio.CapacityLimiter(concurrency)
    tally = FloorTally()

    async def one(plan: ReplayPlan) -> None:
        async with limiter:
            url = lab.station_url(plan.station)
            session = await browser.session(url)
            off_script = False
            try:
                await session.open(url)
                for step in plan.steps:
                    observation = await session.observe()
                    if hashlib.sha256(_elements(observation.elements)).hexdigest() != step.elements:
                        off_script = True
                    action = step.action
                    if action is not None and (not off_script or replayable(action, observation)):
                        result = await session.act(action, observation)
                        if result != step.result:
                            if off_script and result.startswith("error: timed out"):
                                tally.ended_early += 1
                                return
                            off_script = True
                    if step.probe:
                        await session.probe()
                    tally.steps += 1
                    tally.off_script += off_script
            except Exception:  # noqa: BLE001 - a page that cannot be captured: the replay of this run ends
                tally.ended_early += 1
                return
            finally:
                await session.close()

    seconds = await timed(browser, [partial(one, plan) for plan in plans])
    return seconds, tally


@dataclass
class Round:
    seconds: float
    runs: list[RunState]
    browser_steps: int
    floor: tuple[float, FloorTally] | None
    """The replay floor's seconds and what it replayed."""
    reloaded: float | None
    cpu: tuple[float, float]
    """CPU seconds of the course and of its floor: our process and every process under it, exact (see
    `tree_cpu`)."""
    videos: tuple[int, float]
    """Videos made of the course's screens after the floor, and the CPU seconds their ffmpeg took."""

    def ratio(self) -> float | None:
        if self.floor is None:
            return None
        floor_seconds, tally = self.floor
        return (self.browser_steps / self.seconds) / (tally.steps / floor_seconds)

    def cpu_ratio(self) -> float | None:
        """The floor's CPU a step over the course's: what the harness costs in CPU, whatever else the machine
        runs (other work moves wall-clock, hardly the CPU a step takes)."""
        if self.floor is None:
            return None
        course_cpu, floor_cpu = self.cpu
        return (floor_cpu / self.floor[1].steps) / (course_cpu / self.browser_steps)


def one_round(data: Path, traces: bool, concurrency: int, models: int, floor: str, cpu: ProcessCpu,
              number: int) -> Round:
    """A course on a fresh store and lab, then its floor, each phase's CPU sampled as `course N` and `floor N`."""
    settings = Settings(data_dir=data / f"round-{number}", traces=traces)
    with local_services(settings) as services:
        began = tree_cpu()
        with cpu.phase(f"course {number}"):
            seconds, runs, plans, signer = anyio.run(course, settings, services.lab_url, services.directory_url,
                                                     concurrency, models)
        course_cpu = tree_cpu() - began
        lab = Lab(services.lab_url, settings.lab_domain)
        replayed = None
        began = tree_cpu()
        if floor in ("replay", "both"):
            with cpu.phase(f"floor {number}"):
                replayed = anyio.run(replay_floor, plans, lab, concurrency, signer)
        floor_cpu = tree_cpu() - began
        reloaded = anyio.run(reload_floor, runs, lab, concurrency) if floor in ("reload", "both") else None
    return Round(seconds, runs, sum(len(plan.steps) for plan in plans), replayed, reloaded, (course_cpu, floor_cpu),
                 make_videos(settings))


def tree_cpu() -> float:
    """CPU seconds of our process and of every process under it that has ended: each phase starts and stops its
    own browser and Playwright driver, and each process is reaped by its parent (Chromium's renderers by its
    zygote, the browser by the driver, the driver and ffmpeg by us), so across a phase this is exact, where the
    sampler misses the last tenth of a second of every process that ends between two samples."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + ended_cpu()


def ended_cpu() -> float:
    """CPU seconds of every process under ours that has ended and been reaped (see `tree_cpu`)."""
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ended.ru_utime + ended.ru_stime


def make_videos(settings: Settings) -> tuple[int, float]:
    """Every video of the course's runs made as the site makes one when it is first played; how many, and the
    CPU seconds of their ffmpeg."""
    with build_runtime(settings) as runtime:
        screens, after = [], 0
        while page := runtime.record.read_log(after, skim=("Run.StepRecorded",)):
            screens += [e.payload.screens for e in page if e.name == "Run.MediaKept" and e.payload.screens]
            after = page[-1].position
        videos = RunVideos(runtime.blobs, settings.data_dir / VIDEO_NOTES, settings.video_encoder)
        before = ended_cpu()
        for shown in screens:
            anyio.run(videos.video, shown)
        return len(screens), ended_cpu() - before


def warm_up(data: Path, traces: bool, concurrency: int) -> float:
    """A course of the first built-in agent, measured by nothing, before the first round; returns its seconds.

    The first course in a process paid for what any first course pays once: every module it reaches imported (and,
    where Python keeps no bytecode, PYTHONDONTWRITEBYTECODE, compiled: 0.7-1.0 s of CPU), Playwright's driver and
    Chromium started for the first time (their files read into memory). The floor after it, in the same process,
    paid none of that, and the first round's ratio was the lowest of its command in each of two commands on
    2 December 2026 (0.83 and 0.78, against 0.83-0.97 for the rounds after, the course's CPU a step 240 ms
    against 204-225)."""
    began = time.perf_counter()
    settings = Settings(data_dir=data / "warm-up", traces=traces)
    with local_services(settings) as services:
        anyio.run(course, settings, services.lab_url, services.directory_url, concurrency, 1)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--models", type=int, default=len(BASELINES), help="the first N built-in agents")
    parser.add_argument("--traces", choices=("on", "off"), default="on", help="keep each run's trace and video")
    parser.add_argument("--floor", choices=("replay", "reload", "both"), default="replay",
                        help="replay: the runs' own steps again (the goal's floor); reload: the earlier floor")
    parser.add_argument("--rounds", type=int, default=1,
                        help="a course and its floor this many times in turn; the figure is the median ratio")
    parser.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                        help="start the first round at once (its course then pays the process's first course)")
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-course-"))
    if args.warm_up:
        print(f"warm-up: a course of one built-in agent, measured by nothing, in "
              f"{warm_up(data, args.traces == 'on', args.concurrency):.1f} s")
    load = os.getloadavg()[0]
    rounds: list[Round] = []
    with ProcessCpu() as cpu:
        for number in range(1, args.rounds + 1):
            done = one_round(data, args.traces == "on", args.concurrency, args.models, args.floor, cpu, number)
            rounds.append(done)
            passed = sum(1 for r in done.runs if r.passed)
            cut = sum(1 for r in done.runs if r.status == "cut_short")
            print(f"round {number}: course: {len(done.runs)} runs ({passed} passed, {cut} cut short), "
                  f"{done.browser_steps} browser steps, concurrency {args.concurrency}, traces {args.traces}")
            print(f"  course wall-clock {done.seconds:.1f} s, {done.browser_steps / done.seconds:.2f} steps/s")
            print(f"  {cpu.report(f'course {number}')}")
            if done.floor is not None:
                floor_seconds, tally = done.floor
                print(f"  floor  wall-clock {floor_seconds:.1f} s, {tally.steps / floor_seconds:.2f} steps/s (the "
                      f"same steps replayed, nothing recorded: {tally.steps} of {done.browser_steps}, "
                      f"{tally.off_script} of them off script after a page that differed from the course's; "
                      f"{tally.ended_early} run{'' if tally.ended_early == 1 else 's'} ended early)")
                print(f"  {cpu.report(f'floor {number}')}")
                course_cpu, floor_cpu = done.cpu
                print(f"  round ratio {done.ratio():.2f}; CPU a step (our process and all under it, exact): "
                      f"course {course_cpu / done.browser_steps * 1000:.0f} ms, floor "
                      f"{floor_cpu / tally.steps * 1000:.0f} ms, CPU ratio {done.cpu_ratio():.2f}")
            made, cpu_seconds = done.videos
            if made:
                print(f"  videos made on first play, after the floor (not in the course): {made}, "
                      f"{cpu_seconds:.1f} s of ffmpeg's CPU")
            if done.reloaded is not None:
                print(f"  reload floor wall-clock {done.reloaded:.1f} s (start page reloaded each step, the floor "
                      f"before 1 December 2026): ratio {done.reloaded / done.seconds:.2f}")
    ratios = [r for r in (done.ratio() for done in rounds) if r is not None]
    if ratios:
        print(f"ratio {statistics.median(ratios):.2f} of the floor (goal >= 0.9), median of {len(ratios)} "
              f"round{'s' if len(ratios) > 1 else ''}: {', '.join(f'{r:.2f}' for r in ratios)}")
        by_cpu = [r for r in (done.cpu_ratio() for done in rounds) if r is not None]
        print(f"CPU ratio {statistics.median(by_cpu):.2f} (the floor's CPU a step over the course's; it holds "
              f"under other work, where wall-clock does not): {', '.join(f'{r:.2f}' for r in by_cpu)}")
    print(f"load average {load:.2f} -> {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
