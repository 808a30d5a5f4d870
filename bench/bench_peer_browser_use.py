"""Peer figure: browser-use 0.13's own per-step state with a screenshot, against our harness step and the floor.

Once, outside the repository (browser-use is not a dependency of the project and must not become one):

    python3 -m venv /tmp/bu-venv && /tmp/bu-venv/bin/pip install 'browser-use==0.13.*'

Then, with the project's own Python:

    python bench/bench_peer_browser_use.py [--steps 16] [--rounds 3] [--bu-python /tmp/bu-venv/bin/python]

(--bu-python defaults to $BU_PYTHON, then /tmp/bu-venv/bin/python, then this interpreter if it has browser-use.
Without browser-use 0.13 the script exits 2 and names the install command.)

What is measured, in one run, on the same lab pages (bench_agent_step.PAGES on station s01) and one lab server:
- floor and harness step: bench_agent_step's own functions, unchanged, in this process (our PlaywrightBrowser);
- browser-use: `BrowserSession.get_browser_state_summary(include_screenshot=True)`, the call its Agent makes at the
  start of every step (agent/service.py), timed around the call, in a worker process started from the browser-use
  venv (this same file with --worker). Its defaults are kept (DOM tree with paint-order filtering, PNG screenshot);
  what is set: Debian's Chromium by executable path, headless, the 1280x800 viewport our harness uses, no default
  extensions (they are downloaded), a proxy that goes nowhere for every host but the lab's, and every
  telemetry/cloud/version-check switch off (ANONYMIZED_TELEMETRY, BROWSER_USE_CLOUD_SYNC, BROWSER_USE_VERSION_CHECK,
  BROWSER_USE_CLOUD_HINTS) with its config directory in a temporary folder. Before each capture the page is scrolled
  (untimed, alternately down and up, one raw CDP evaluate), as our harness scrolls before each observation.
The three measurements alternate page by page, in an order that rotates, so that load from other work on the
machine falls on all three alike. Ratios are of medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INSTALL = "python3 -m venv /tmp/bu-venv && /tmp/bu-venv/bin/pip install 'browser-use==0.13.*'"
DEFAULT_BU_PYTHON = "/tmp/bu-venv/bin/python"
CHROMIUM = "/usr/lib/chromium/chromium"
NOWHERE = "http://127.0.0.1:9"
QUIET_ENV = {
    "ANONYMIZED_TELEMETRY": "false",
    "BROWSER_USE_CLOUD_SYNC": "false",
    "BROWSER_USE_VERSION_CHECK": "false",
    "BROWSER_USE_CLOUD_HINTS": "false",
    "BROWSER_USE_DISABLE_EXTENSIONS": "1",
    "BROWSER_USE_HEADLESS": "true",
    "BROWSER_USE_LOGGING_LEVEL": "warning",
}
_VERSION_PROBE = "import importlib.metadata as m, browser_use; print(m.version('browser-use'))"


# ---------------------------------------------------------------- the worker (runs in browser-use's venv) ----


async def _worker(chromium: str, bypass: str) -> None:
    """Reads {"url", "n"} lines on stdin, answers one JSON line each on the original stdout."""
    answer = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever browser-use prints goes to stderr, never into the answers
    sys.stdout = sys.stderr
    from importlib.metadata import version

    from browser_use import BrowserProfile, BrowserSession
    from browser_use.browser.profile import ProxySettings

    work = Path(tempfile.mkdtemp(prefix="bu-bench-"))
    profile = BrowserProfile(
        executable_path=chromium, headless=True, user_data_dir=str(work / "profile"),
        viewport={"width": 1280, "height": 800}, enable_default_extensions=False,
        proxy=ProxySettings(server=NOWHERE, bypass=bypass),
    )
    session = BrowserSession(browser_profile=profile)
    await session.start()
    try:
        print(json.dumps({"ready": True, "browser_use": version("browser-use")}), file=answer)
        loop = asyncio.get_running_loop()
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            request = json.loads(line)
            await session.navigate_to(request["url"])
            cdp = await session.get_or_create_cdp_session()
            times, elements, shot = [], 0, 0
            for i in range(request["n"]):
                top = 0 if i % 2 else 600
                await cdp.cdp_client.send.Runtime.evaluate(
                    params={"expression": f"window.scrollTo({{top: {top}, behavior: 'instant'}})"},
                    session_id=cdp.session_id)
                began = time.perf_counter()
                state = await session.get_browser_state_summary(include_screenshot=True)
                times.append((time.perf_counter() - began) * 1000)
                if not state.screenshot or state.dom_state is None:
                    raise RuntimeError(f"browser-use returned no screenshot or DOM for {request['url']}")
                elements = len(state.dom_state.selector_map)
                shot = len(state.screenshot)
            print(json.dumps({"times": times, "elements": elements, "screenshot_b64": shot}), file=answer)
    finally:
        await session.kill()
        shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------- the driver (runs in the project's Python) --


def _browser_use_python(given: str | None) -> tuple[str, str]:
    """The interpreter that has browser-use 0.13 and its version; exits 2 when there is none."""
    candidates = [given] if given else [os.environ.get("BU_PYTHON"), DEFAULT_BU_PYTHON, sys.executable]
    found = []
    for python in filter(None, candidates):
        if not Path(python).exists():
            continue
        probe = subprocess.run([python, "-c", _VERSION_PROBE], capture_output=True, text=True,
                               env={**os.environ, **QUIET_ENV}, cwd=tempfile.gettempdir())
        if probe.returncode == 0:
            release = probe.stdout.strip().splitlines()[-1]
            if release.startswith("0.13."):
                return python, release
            found.append(f"{python} has browser-use {release}")
    detail = f" ({'; '.join(found)})" if found else ""
    print(f"browser-use 0.13 is not installed{detail}. Install it outside the repository:\n    {INSTALL}\n"
          "or pass --bu-python PATH (a Python that has browser-use 0.13).", file=sys.stderr)
    sys.exit(2)


class Peer:
    """The browser-use worker: one Chromium for the whole run, as our harness keeps one."""

    def __init__(self, python: str, bypass: str) -> None:
        self.python, self.bypass = python, bypass
        self.version = ""
        self.elements: dict[str, int] = {}
        self.screenshot_b64: dict[str, int] = {}

    async def __aenter__(self) -> Peer:
        self._cwd = tempfile.mkdtemp(prefix="bu-bench-cwd-")  # no .env of ours is read by its settings
        env = {**os.environ, **QUIET_ENV, "BROWSER_USE_CONFIG_DIR": str(Path(self._cwd) / "config")}
        self._process = await asyncio.create_subprocess_exec(
            self.python, str(Path(__file__).resolve()), "--worker", "--chromium", CHROMIUM, "--bypass", self.bypass,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=self._log(), cwd=self._cwd, env=env,
            limit=2**20)
        self.version = (await self._read())["browser_use"]
        return self

    def _log(self) -> int:
        self._log_file = open(Path(self._cwd) / "worker.log", "wb")  # noqa: SIM115 - closed in __aexit__
        return self._log_file.fileno()

    async def _read(self) -> dict[str, object]:
        assert self._process.stdout is not None
        line = await asyncio.wait_for(self._process.stdout.readline(), timeout=120)
        if not line:
            self._log_file.flush()
            log = (Path(self._cwd) / "worker.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the browser-use worker stopped:\n{log}")
        return json.loads(line)  # type: ignore[no-any-return]

    async def measure(self, url: str, n: int) -> list[float]:
        assert self._process.stdin is not None
        self._process.stdin.write((json.dumps({"url": url, "n": n}) + "\n").encode())
        await self._process.stdin.drain()
        answer = await self._read()
        self.elements[url] = answer["elements"]  # type: ignore[assignment]
        self.screenshot_b64[url] = answer["screenshot_b64"]  # type: ignore[assignment]
        return answer["times"]  # type: ignore[return-value]

    async def __aexit__(self, *exc: object) -> None:
        if self._process.stdin:
            self._process.stdin.close()
        try:
            await asyncio.wait_for(self._process.wait(), timeout=30)
        except TimeoutError:
            self._process.kill()
            await self._process.wait()
        self._log_file.close()
        shutil.rmtree(self._cwd, ignore_errors=True)


async def main(steps: int, rounds: int, bu_python: str, bu_version: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_agent_step as ours

    from adapters.botauth import BotAuthSigner, load_or_create_key
    from adapters.browser.playwright_browser import PlaywrightBrowser
    from adapters.settings import Settings
    from adapters.wiring import build_runtime
    from domain.agent.agent_ports import station_task
    from domain.courses.course import load_course
    from lab.server import LabServer

    work = Path(tempfile.mkdtemp(prefix="canitbuy-bench-peer-"))
    key = load_or_create_key(None, work)
    course = load_course()
    figures: dict[str, list[float]] = {"floor": [], "harness": [], "browser-use": []}
    load_before = os.getloadavg()
    with LabServer() as lab, build_runtime(Settings(data_dir=work)) as runtime:
        bypass = f"<-loopback>,{lab.host_for('s01').split(':')[0]}"
        async with PlaywrightBrowser(BotAuthSigner(key, "https://agent.canitbuy.com")) as browser, \
                Peer(bu_python, bypass) as peer:
            print(f"browser-use {peer.version} ({bu_python}) against {browser.version}; {os.cpu_count()} cores; "
                  f"{rounds} rounds x {len(ours.PAGES)} pages x {steps} steps", flush=True)
            turn = 0
            for round_no in range(rounds):
                for path in ours.PAGES:
                    url = lab.url_for("s01", path)
                    jobs = {
                        "floor": lambda url=url: ours.floor(browser, url, steps),
                        "harness": lambda url=url: ours.harness(browser, runtime, station_task(course, "s01", url),
                                                                steps),
                        "browser-use": lambda url=url: peer.measure(url, steps),
                    }
                    order = list(jobs)[turn % 3:] + list(jobs)[:turn % 3]
                    turn += 1
                    for name in order:
                        figures[name] += await jobs[name]()
                print(f"  round {round_no + 1}/{rounds}: p50 so far "
                      + ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in figures.items()), flush=True)
            elements = ", ".join(f"{p} {peer.elements[lab.url_for('s01', p)]}" for p in ours.PAGES)
    shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()

    p50 = {name: statistics.median(times) for name, times in figures.items()}
    print()
    print(ours.summary("browser-use 0.13 state+shot", figures["browser-use"]))
    print(ours.summary("harness step (ours)", figures["harness"]))
    print(ours.summary("floor (CDP JPEG + evaluate)", figures["floor"]))
    print(f"ratio p50 ours / browser-use:        {p50['harness'] / p50['browser-use']:.2f} (goal < 1)")
    print(f"ratio p50 ours / floor:              {p50['harness'] / p50['floor']:.2f} (goal <= 1.5)")
    print(f"ratio p50 browser-use / floor:       {p50['browser-use'] / p50['floor']:.2f}")
    print(f"browser-use interactive elements per page: {elements}")
    print(f"load average 1/5/15 min: before {'/'.join(f'{x:.1f}' for x in load_before)}, "
          f"after {'/'.join(f'{x:.1f}' for x in load_after)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bu-python", help="a Python with browser-use 0.13 (default: $BU_PYTHON, /tmp/bu-venv)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--chromium", default=CHROMIUM, help=argparse.SUPPRESS)
    parser.add_argument("--bypass", default="<-loopback>", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        os.environ.update(QUIET_ENV)  # before browser_use is imported: its CONFIG reads them
        asyncio.run(_worker(options.chromium, options.bypass))
    else:
        python, release = _browser_use_python(options.bu_python)
        asyncio.run(main(options.steps, options.rounds, python, release))
