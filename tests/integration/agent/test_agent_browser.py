"""The browser session in real Chromium on the real lab: what it observes, what it blocks, how it acts."""

from __future__ import annotations

import json
import re
import time
import zipfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, StreamingResponse
from starlette.routing import Route

from adapters.botauth import BotAuthSigner
from adapters.browser.playwright_browser import UNSHOWN_UI_FEATURES, USER_AGENT, PlaywrightBrowser
from adapters.browser.session import SETTLE_SECONDS
from adapters.browser.trace_file import REDACTED
from domain.agent.actions import Action, Click, Goto, Select, Stop, Type
from domain.agent.agent_ports import Decision, Task, station_task
from domain.agent.episode import Episode
from domain.agent.observation import Observation
from domain.agent.ports import StepRecord
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from tests.unit.agent.agent_fakes import ListRecorder, MemoryBlobs

pytestmark = [pytest.mark.anyio, pytest.mark.chromium]


async def test_the_observation_lists_elements_with_ids_names_state_and_structured_data(
        browser: PlaywrightBrowser, lab: LabServer) -> None:
    session = await browser.session(lab.url_for("s06"))
    try:
        await session.open(lab.url_for("s06", "/products/aero-run-2"))
        seen = await session.observe()
    finally:
        await session.close()
    assert seen.screenshot[:2] == b"\xff\xd8" and seen.status == 200 and "Aero Run 2" in seen.title
    assert len({e.id for e in seen.elements}) == len(seen.elements)
    hidden_select = next(e for e in seen.elements if e.role == "combobox")
    assert not hidden_select.visible and "EU 44 (disabled)" in hidden_select.options
    add = next(e for e in seen.elements if e.name == "Add to cart")
    assert add.disabled and add.form
    # Since observation rule 2 the decorative list is not listed (test_agent_observation.py says more).
    assert not any("Choose size" in e.name for e in seen.elements if e.role != "combobox")
    assert seen.structured


async def test_only_the_store_host_is_reachable_and_the_agent_names_itself(
        browser: PlaywrightBrowser, lab: LabServer) -> None:
    session = await browser.session(lab.url_for("s01"))
    try:
        await session.open(lab.url_for("s01"))
        assert await session.evaluate("navigator.userAgent") == USER_AGENT
        observation = await session.observe()
        result = await session.act(Goto(url=lab.url_for("s02")), observation)
    finally:
        await session.close()
    assert result == "blocked: another host is not reachable"


async def test_a_hidden_select_is_set_the_way_its_own_script_would(browser: PlaywrightBrowser, lab: LabServer) -> None:
    session = await browser.session(lab.url_for("s06"))
    try:
        await session.open(lab.url_for("s06", "/products/aero-run-2"))
        seen = await session.observe()
        select = next(e for e in seen.elements if e.role == "combobox")
        assert await session.act(Select(id=select.id, option="EU 44"), seen) == "blocked: that option is disabled"
        assert await session.act(Select(id=select.id, option="EU 42"), seen) == "ok"
        after = await session.observe()
    finally:
        await session.close()
    assert not next(e for e in after.elements if e.name == "Add to cart").disabled



async def test_a_run_window_builds_no_address_bar_ui_and_keeps_playwrights_own_switches(
        browser: PlaywrightBrowser, lab: LabServer) -> None:
    # Chromium's headless windows each built the address bar's pop-ups as two WebUI pages (a renderer each) that no
    # run can see. Chromium keeps only the last --disable-features switch, so turning them off must not turn
    # Playwright's own list (PaintHolding, HttpsUpgrades, ...) back on.
    session = await browser.session(lab.url_for("s01"))
    try:
        await session.open(lab.url_for("s01"))
        assert _browser_ui_pages(await _targets(browser)) == []
        await session.open("chrome://version")
        command_line = str(await session.evaluate("document.getElementById('command_line').innerText")).split()
    finally:
        await session.close()
    switches = [arg.split("=", 1)[1].split(",") for arg in command_line if arg.startswith("--disable-features=")]
    assert len(switches) == 2, switches  # Playwright's, then ours: the one Chromium keeps
    playwrights, kept = switches
    assert "PaintHolding" in playwrights
    assert set(playwrights) <= set(kept)
    assert set(UNSHOWN_UI_FEATURES) <= set(kept)


async def _targets(browser: PlaywrightBrowser) -> list[dict[str, str]]:
    assert browser._browser is not None
    cdp = await browser._browser.new_browser_cdp_session()
    try:
        found: list[dict[str, str]] = (await cdp.send("Target.getTargets"))["targetInfos"]
        return found
    finally:
        await cdp.detach()


def _browser_ui_pages(targets: list[dict[str, str]]) -> list[str]:
    return [target["url"] for target in targets if target["type"] == "browser_ui"]


def traced_calls(trace: Path) -> list[str]:
    """The Playwright API calls on the page a run's trace recorded, in order (each one with its DOM snapshots;
    the signature's headers, set on the context before each step, take none)."""
    with zipfile.ZipFile(trace) as archive:
        lines = [json.loads(line) for name in archive.namelist() if name.endswith(".trace")
                 for line in archive.read(name).splitlines()]
    return [e["method"] for e in lines if e.get("type") == "before" and not e["method"].startswith("__")
            and e["method"] != "setExtraHTTPHeaders"]


async def test_a_page_still_arriving_is_observed_once_its_document_has_loaded(
        browser: PlaywrightBrowser, tmp_path: Path) -> None:
    """The page a click leads to sends its first bytes at once and the rest after longer than the settling after
    an action lasts: the step waits for its DOMContentLoaded, so the observation is of the whole page, not of
    the part that had arrived (the agent would be shown a page without its link, and the run would move on)."""

    async def home(request: Request) -> HTMLResponse:
        return HTMLResponse('<html><body><h1>Home</h1><a href="/slow">Slow page</a></body></html>')

    async def slow(request: Request) -> StreamingResponse:
        async def body() -> AsyncIterator[bytes]:
            yield b"<html><body><h1>Arriving</h1>" + b" " * 2048
            await anyio.sleep(SETTLE_SECONDS + 0.8)
            yield b'<a href="/">Done</a></body></html>'
        return StreamingResponse(body(), media_type="text/html")

    with ThreadedApp(Starlette(routes=[Route("/", home), Route("/slow", slow)])) as site:
        session = await browser.session(site.url, media_dir=tmp_path)
        try:
            await session.open(site.url)
            seen = await session.observe()
            result = await session.act(Click(id=next(e.id for e in seen.elements if e.name == "Slow page")), seen)
            arrived = await session.observe()
            kept = await session.close_keeping_media()
            calls = traced_calls(kept.trace) if kept and kept.trace else []
        finally:
            session.discard_media()
    assert result == "ok" and arrived.url.endswith("/slow")
    assert [e.name for e in arrived.elements if e.tag == "a"] == ["Done"]
    assert calls == ["newCDPSession", "goto", "click"]


async def test_a_click_under_an_overlay_is_reported_as_covered_and_the_check_stays_out_of_the_trace(
        browser: PlaywrightBrowser, lab: LabServer, tmp_path: Path) -> None:
    session = await browser.session(lab.url_for("s02"), media_dir=tmp_path)
    try:
        await session.open(lab.url_for("s02"))
        seen = await session.observe()
        under_the_wall = next(e for e in seen.elements if e.name == "Running")
        covered = await session.act(Click(id=under_the_wall.id), seen)
        accept = next(e for e in seen.elements if e.name == "Accept all")
        accepted = await session.act(Click(id=accept.id), seen)
        after = await session.observe()
        kept = await session.close_keeping_media()
        calls = traced_calls(kept.trace) if kept is not None and kept.trace is not None else []
    finally:
        session.discard_media()
    assert covered == "blocked: another element covers it (div#consent-wall.overlay)"
    assert accepted == "ok" and not any(e.name == "Accept all" for e in after.elements)
    # The trace holds what the agent did (one page opened, one click made), not the harness's check before each
    # click: as a traced call it cost two DOM snapshots of its own, in Chromium and in Playwright's driver.
    assert calls == ["newCDPSession", "goto", "click"]


async def test_a_kept_trace_holds_its_own_run_only_when_runs_share_the_browser(
        browser: PlaywrightBrowser, lab: LabServer, tmp_path: Path) -> None:
    """Playwright sends the call stack of every API call to every trace open on the connection (`trace.stacks`):
    a run's kept trace would tell the kinds of the actions of the runs beside it, possibly private ones, and the
    worker's file paths. Kept, it has none of that, and still its own actions and DOM snapshots."""
    browsing = await browser.session(lab.url_for("s01"), media_dir=tmp_path)
    clicking = await browser.session(lab.url_for("s02"), media_dir=tmp_path)

    async def browse() -> None:
        await browsing.open(lab.url_for("s01"))
        for path in ("/products/aero-run-2", "/help/delivery"):
            await browsing.act(Goto(url=lab.url_for("s01", path)), await browsing.observe())

    async def click() -> None:
        await clicking.open(lab.url_for("s02"))
        for name in ("Accept all", "Running"):
            seen = await clicking.observe()
            await clicking.act(Click(id=next(e for e in seen.elements if e.name == name).id), seen)

    try:
        async with anyio.create_task_group() as both:  # the two runs' calls interleave on one connection
            both.start_soon(browse)
            both.start_soon(click)
        kept = [await browsing.close_keeping_media(), await clicking.close_keeping_media()]
        traces = [{name: archive.read(name) for name in archive.namelist()}
                  for archive in (zipfile.ZipFile(media.trace) for media in kept if media and media.trace)]
        calls = [traced_calls(media.trace) for media in kept if media and media.trace]
    finally:
        browsing.discard_media()
        clicking.discard_media()
    assert len(traces) == 2
    assert calls == [["newCDPSession", "goto", "goto", "goto"], ["newCDPSession", "goto", "click", "click"]]
    here = str(Path(__file__).resolve().parents[3]).encode()
    for entries in traces:
        assert "trace.stacks" not in entries
        assert {name for name in entries if not name.startswith("resources/")} == {"trace.trace", "trace.network"}
        assert not any(here in content for content in entries.values())  # no file of the worker named
        events = [json.loads(line) for line in entries["trace.trace"].splitlines() if line.strip()]
        assert {"before", "after", "frame-snapshot"} <= {e.get("type") for e in events}

async def test_a_kept_trace_holds_no_signature_a_stranger_could_replay(
        browser: PlaywrightBrowser, signer: BotAuthSigner, lab: LabServer, tmp_path: Path) -> None:
    """The agent's Web Bot Auth headers, set on the context before each step, are recorded in the trace's calls
    and in every request it sent; a signature is good for a minute to whoever holds it, and the trace is public.
    Kept, the trace names our key directory (Signature-Agent) and holds no Signature or Signature-Input value in
    any entry, and every line of it is still JSON for the viewer."""
    session = await browser.session(lab.url_for("s13"), media_dir=tmp_path)
    try:
        await session.open(lab.url_for("s13"))
        seen = await session.observe()
        await session.act(Goto(url=lab.url_for("s13", "/products/aero-run-2")), seen)
        product = await session.observe()
        kept = await session.close_keeping_media()
        assert kept is not None and kept.trace is not None
        with zipfile.ZipFile(kept.trace) as archive:
            entries = {name: archive.read(name) for name in archive.namelist()}
    finally:
        session.discard_media()
    assert seen.status == 200 and product.status == 200  # the gate let the signed agent through, twice
    signatures = re.compile(rb"sig1=:[A-Za-z0-9+/]+=*:|sig1=\(|created=\d+;expires=\d+")
    assert [name for name, content in entries.items() if signatures.search(content)] == []
    lines = [json.loads(line) for name, content in entries.items() if name.endswith((".trace", ".network"))
             for line in content.splitlines() if line.strip()]
    headers = [header for event in lines for header in _headers(event)]
    assert {"Signature", "Signature-Input"} <= {header["name"] for header in headers}
    assert {header["value"] for header in headers if header["name"] in ("Signature", "Signature-Input")} == {
        REDACTED}
    assert {header["value"] for header in headers if header["name"] == "Signature-Agent"} == {
        signer.headers("s13")["Signature-Agent"]}


def _headers(node: object) -> list[dict[str, str]]:
    """Every {name, value} pair in a JSON value (a call's headers, a request's)."""
    if isinstance(node, list):
        return [header for item in node for header in _headers(item)]
    if not isinstance(node, dict):
        return []
    own = [node] if set(node) == {"name", "value"} and isinstance(node["value"], str) else []
    return own + [header for value in node.values() for header in _headers(value)]


@dataclass
class Scripted:
    """Goes to the account wall, then tries an e-mail address, a card number and the sign-in button."""

    name: str = "scripted"
    version: str = "1"
    steps: list[str] = field(default_factory=lambda: ["goto", "email", "card", "submit", "stop"])

    async def decide(self, observation: Observation, task: Task, history: list[StepRecord]) -> Decision:
        step = self.steps.pop(0)
        fields = [e for e in observation.elements if e.tag == "input"]
        action: Action = Stop(reason="done")
        if step == "goto":
            action = Goto(url="/account/sign-in")
        elif step == "email":
            action = Type(id=fields[0].id, text="ann@example.com")
        elif step == "card":
            action = Type(id=fields[1].id, text="4111 1111 1111 1111")
        elif step == "submit":
            action = Click(id=next(e.id for e in observation.elements if e.name == "Sign in" and e.form))
        return Decision(action=action, notes=step)


async def test_typing_personal_data_or_submitting_is_refused_and_recorded(
        browser: PlaywrightBrowser, lab: LabServer) -> None:
    task = station_task(load_course(), "s10", lab.url_for("s10"))
    recorder = ListRecorder()
    session = await browser.session(task.start_url)
    try:
        verdict = await Episode(session=session, agent=Scripted(), task=task, recorder=recorder,
                                blobs=MemoryBlobs(), clock=time.monotonic).run()
    finally:
        await session.close()
    assert [s.result for s in recorder.steps] == [
        "ok", "refused: no typing on the checkout page", "refused: no typing on the checkout page",
        "refused: would submit the order form", "stopped: done"]
    assert isinstance(verdict, Verdict) and verdict.outcome == "stopped" and verdict.stage == "checkout"
