"""Issue 15 item 1: a real flood client (wrk) hammers station s01 of `canitbuy lab serve` from the address our
Chromium run comes from, while the run of ours, signed with our agent's key, still passes s01. The flood's rate
and what it was answered are printed for the closing note."""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
from pathlib import Path

import pytest

from adapters.agents.rule_agent import builtin_agent
from adapters.botauth import BotAuthSigner
from adapters.browser.playwright_browser import PlaywrightBrowser
from domain.agent.agent_ports import station_task
from domain.agent.episode import Episode
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from tests.integration.lab.lab_process import lab_process
from tests.unit.agent.agent_fakes import ListRecorder, MemoryBlobs

pytestmark = [pytest.mark.anyio, pytest.mark.chromium]
FLOOD_SECONDS = 60


def _figure(pattern: str, text: str) -> float:
    match = re.search(pattern, text)
    assert match, text
    return float(match.group(1))


async def test_our_chromium_run_passes_s01_while_a_flood_hammers_it(
    tmp_path: Path, signer: BotAuthSigner, browser: PlaywrightBrowser
) -> None:
    with lab_process(tmp_path / "var", "--trust-local-directories", "--own-key-id", signer.keyid) as lab:
        flood = subprocess.Popen(
            ["wrk", "-t2", "-c32", f"-d{FLOOD_SECONDS}s", "-H", f"Host: {lab.host_for('s01')}",
             "-H", "User-Agent: flood/1.0", lab.loopback_url("/products/aero-run-2")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        try:
            await asyncio.sleep(2)  # the flood is well under way before the run starts
            started = time.monotonic()
            task = station_task(load_course(), "s01", lab.url_for("s01"))
            session = await browser.session(task.start_url)
            try:
                result = await Episode(session=session, agent=builtin_agent("baseline-robust"), task=task,
                                       recorder=ListRecorder(), blobs=MemoryBlobs(), clock=time.monotonic).run()
            finally:
                await session.close()
            took = time.monotonic() - started
            report, _ = await asyncio.to_thread(flood.communicate, timeout=FLOOD_SECONDS + 30)
        finally:
            flood.kill()
    assert took < FLOOD_SECONDS - 2, "the flood must last the whole run"
    rate = _figure(r"Requests/sec:\s+([\d.]+)", report)
    total = _figure(r"(\d+) requests in", report)
    refused = _figure(r"Non-2xx or 3xx responses:\s+(\d+)", report)
    print(f"\nflood: {rate:.0f} requests/s, {total:.0f} requests, {refused:.0f} refused (429); "
          f"our s01 run: {result.outcome if isinstance(result, Verdict) else result} in {took:.1f} s")
    assert rate > 50, report  # a flood, not a trickle
    assert total - refused <= 30 + FLOOD_SECONDS + 2  # the flood got its burst and one a second, no more
    assert isinstance(result, Verdict) and result.passed, result
