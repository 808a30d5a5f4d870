"""`canitbuy traces clean`: traces kept until 3 December 2026 hold `trace.stacks`, the call stacks of every run on
the browser's connection (a private one's too); cleaned, each run offers its trace without them, recorded as
Run.TraceCleaned, and the old trace is served no more. Traces are written by Playwright on the real Chromium, two
contexts traced at once on one connection as the workers ran them; the store on SQLite and PostgreSQL, the site
through its app, the command through its entry point."""

from __future__ import annotations

import io
import json
import warnings
import zipfile
from pathlib import Path
from uuid import UUID

import anyio
import jsonschema
import pytest
from playwright.async_api import async_playwright

from adapters.browser.playwright_browser import DEBIAN_CHROMIUM
from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.eventlog.store_check import check_store
from lab.server import LabServer
from ops.cli import main
from web.app import create_app
from web.public.recording import load_recording

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

pytestmark = pytest.mark.chromium
WEEK = "2026-W49"
SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "web" / "schemas" / "run.json").read_text())


@pytest.fixture(scope="module")
def old_traces(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    """Two traces as Playwright writes them: two runs clicking on s01, traced at once."""
    folder = tmp_path_factory.mktemp("old-traces")

    async def write() -> tuple[bytes, bytes]:
        with LabServer() as lab:
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(executable_path=DEBIAN_CHROMIUM, headless=True)
                traces = []
                for station in ("s01", "s01"):
                    context = await browser.new_context()
                    await context.tracing.start(snapshots=True)
                    page = await context.new_page()
                    await page.goto(lab.url_for(station))
                    traces.append((context, page))
                for context, page in traces:  # the two contexts' calls interleave on the one connection
                    await page.locator("a[href^='/products/']").first.click()
                written = []
                for number, (context, _) in enumerate(traces):
                    path = folder / f"trace-{number}.zip"
                    await context.tracing.stop(path=str(path))
                    written.append(path.read_bytes())
                await browser.close()
        return written[0], written[1]

    traces = anyio.run(write)
    for trace in traces:
        assert "trace.stacks" in entries(trace)  # as every trace kept until 3 December 2026
    return traces


def entries(trace: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(trace)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def ended_run(settings: Settings, trace: str, size: int, org: str | None = None) -> UUID:
    """A finished course run that kept `trace` (a sha256, `size` bytes) as runs did until 3 December 2026."""
    with build_runtime(settings) as runtime:
        at = runtime.record.clock()
        run = Run.schedule(station="s01", model="baseline-robust", course_version="2.1", week=WEEK, kind="browser",
                           requested_by="test", at=at, org=org)
        run.start(worker="w", browser_version="chromium", agent_version="a", at=at)
        run.finish(Verdict(passed=False, outcome="stopped"), steps=0, seconds=1.0, at=at)
        run.keep_media(trace=trace, trace_bytes=size, video=None, video_bytes=0, at=at)
        runtime.record.save(run)
        return run.id


@pytest.fixture
def store(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("CANITBUY_DATA_DIR", str(settings.data_dir))
    if settings.database_url:
        monkeypatch.setenv("CANITBUY_DATABASE_URL", settings.database_url)
    return Settings(data_dir=settings.data_dir, database_url=settings.database_url, site_secret="test secret " * 4)


def command(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out.strip(), out.err.strip()


def test_old_traces_are_cleaned_once_and_the_old_ones_are_served_no_more(
        store: Settings, old_traces: tuple[bytes, bytes], capsys: pytest.CaptureFixture[str]) -> None:
    with build_runtime(store) as runtime:
        runtime.record.register_organisation(slug="acme", name="Acme Shoes", by="staff@canitbuy.com")
        public_trace, private_trace = (runtime.blobs.put(trace) for trace in old_traces)
        cut = b"PK\x03\x04 a trace cut short by a full disk"
        unreadable = runtime.blobs.put(cut)
    public = ended_run(store, public_trace, len(old_traces[0]))
    private = ended_run(store, private_trace, len(old_traces[1]), org="acme")
    broken = ended_run(store, unreadable, len(cut))
    with build_runtime(store) as runtime:
        positions = runtime.record.head_position()

    code, said, _ = command(["traces", "clean", "--dry-run"], capsys)
    assert (code, said) == (0, "dry run, nothing changed: 3 traces offered; 0 hold only their own run; 2 hold the "
                               "call stacks of the runs beside them; 1 are not readable zips and would be withheld")
    with build_runtime(store) as runtime:
        assert runtime.record.head_position() == positions

    code, said, _ = command(["traces", "clean"], capsys)
    assert (code, said) == (0, "ok: 3 traces offered; 0 hold only their own run; 2 cleaned (Run.TraceCleaned); 1 "
                               "not readable zips, withheld (Run.TraceCleaned, no trace)")
    with build_runtime(store) as runtime:
        for run_id, old, written in ((public, public_trace, old_traces[0]), (private, private_trace, old_traces[1])):
            media = load_recording(runtime.record, run_id, lambda org: True).media
            assert media is not None and media.trace not in (None, old)
            cleaned = runtime.blobs.get(media.trace)
            assert media.trace_bytes == len(cleaned)
            # The run's own entries, byte for byte; the other runs' call stacks gone.
            assert entries(cleaned) == {k: v for k, v in entries(written).items() if k != "trace.stacks"}
            [event] = [e for e in runtime.record.repository.event_store.get(run_id) if isinstance(e, Run.TraceCleaned)]
            assert (event.replaced, event.trace) == (old, media.trace)
        withheld = load_recording(runtime.record, broken).media
        assert withheld is not None and (withheld.trace, withheld.trace_bytes) == (None, 0)
        check_store(runtime.record.read_log, runtime.blobs)  # every blob an event names is whole, old and new
        positions = runtime.record.head_position()
        cleaned_public = load_recording(runtime.record, public).media.trace  # type: ignore[union-attr]

    with TestClient(create_app(store), base_url="https://testserver") as client:
        page = client.get(f"/runs/{public}")
        assert page.status_code == 200 and cleaned_public in page.text and public_trace not in page.text
        assert client.get(f"/runs/{public}/blobs/{cleaned_public}").content == runtime_blob(store, cleaned_public)
        assert client.get(f"/runs/{public}/blobs/{public_trace}").status_code == 404
        recording = client.get(f"/api/runs/{public}.json").json()
        jsonschema.validate(recording, SCHEMA)
        assert recording["media"]["trace"] == cleaned_public
        assert "trace.zip" not in client.get(f"/runs/{broken}").text
        assert client.get(f"/runs/{broken}/blobs/{unreadable}").status_code == 404
        assert client.get(f"/runs/{private}").status_code == 404  # a private test stays private

    code, said, _ = command(["traces", "clean"], capsys)  # nothing more to do
    assert (code, said) == (0, "ok: 2 traces offered; 2 hold only their own run; 0 cleaned (Run.TraceCleaned)")
    with build_runtime(store) as runtime:
        assert runtime.record.head_position() == positions


def runtime_blob(settings: Settings, digest: str) -> bytes:
    with build_runtime(settings) as runtime:
        return runtime.blobs.get(digest)


def test_a_trace_missing_from_the_store_fails_on_one_line_after_the_others_are_cleaned(
        store: Settings, old_traces: tuple[bytes, bytes], capsys: pytest.CaptureFixture[str]) -> None:
    with build_runtime(store) as runtime:
        kept = runtime.blobs.put(old_traces[0])
    gone = "0" * 64
    ended_run(store, gone, 1000)
    cleaned = ended_run(store, kept, len(old_traces[0]))
    code, said, err = command(["traces", "clean"], capsys)
    assert code == 1 and said.startswith("ok: 2 traces offered; 0 hold only their own run; 1 cleaned")
    assert len(err.splitlines()) == 1 and err.startswith("canitbuy: 1 traces are not in the blob store")
    with build_runtime(store) as runtime:
        assert load_recording(runtime.record, cleaned).media.trace != kept  # type: ignore[union-attr]
