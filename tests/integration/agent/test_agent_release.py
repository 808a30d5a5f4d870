"""Points 2 and 9 of issue #10: the agent is a published, versioned instrument, and a model run's recording shows
everything the model was given and said. A real record (SQLite), the real executor, real Chromium on the real lab,
and a real local server speaking the OpenAI protocol where the gateway would be."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from adapters.models.lineup import WEEKLY
from adapters.models.prompt import SYSTEM, tool_schema_sha256
from adapters.models.release import OBSERVATION_RULE, current_agent
from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.agent.agent_releases import AgentReleases
from domain.agent.runs import Run
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import OpenAIServer
from web.app import create_app
from web.public.recording import load_recording
from workers.executor import execute_run
from workers.leases import open_leases
from workers.resources import build_resources

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

KEY = "sk-test-never-recorded-9f3a"
LUNA = WEEKLY[0]


@pytest.fixture(scope="module")
def gateway() -> Iterator[str]:
    with ThreadedApp(OpenAIServer().app) as running:
        yield f"{running.url}/v1"


def settings_for(tmp_path: Path, gateway: str = "http://127.0.0.1:9/v1") -> Settings:
    return Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4, model_base_url=gateway,
                    model_api_key=KEY)


def test_a_changed_prompt_is_a_new_release_never_an_edit(tmp_path: Path) -> None:
    current = current_agent()
    changed = msgspec.structs.replace(current, system_prompt=current.system_prompt + "\nBe brief.")
    with build_runtime(settings_for(tmp_path)) as runtime:
        record = runtime.record
        assert runtime.agent_release() == 1
        assert record.ensure_agent_released(current) == 1  # the same content is the same release
        assert record.ensure_agent_released(changed) == 2
        assert record.ensure_agent_released(current) == 1
        releases = record.agent_releases()
        assert releases is not None
        assert [(r.number, r.spec.system_prompt) for r in releases.releases] == [
            (1, SYSTEM), (2, SYSTEM + "\nBe brief.")]
        released = [e for e in record.read_log() if e.name == "AgentReleases.Released"]
        assert len(released) == 2 and released[0].payload.spec == current  # the release in full, in the log
    assert isinstance(releases, AgentReleases)


@pytest.mark.anyio
@pytest.mark.chromium
async def test_a_model_run_records_its_release_and_its_recording_shows_what_the_model_was_given(
        tmp_path: Path, gateway: str, lab: LabServer) -> None:
    settings = settings_for(tmp_path, gateway)
    with build_runtime(settings) as runtime:
        [run_id] = schedule_runs(runtime.record, [ScheduleRun.on_course(
            station="s01", model=LUNA.model, requested_by="test", week=week_of(runtime.record.clock()))])
        resources = build_resources(runtime, open_leases(settings), lab_url=lab.url_for(None), directory_url=None)
        try:
            assert await execute_run({"resources": resources}, str(run_id)) in ("passed", "failed")
        finally:
            await resources.aclose()
        started = next(e for e in runtime.record.repository.event_store.get(run_id) if isinstance(e, Run.Started))
        assert started.agent_release == runtime.agent_release() == 1
        recording = load_recording(runtime.record, run_id)
        assert recording.run.agent_release == 1 and recording.steps[0].exchange
        week = recording.run.week
        exchange = runtime.blobs.get(recording.steps[0].exchange)
    assert KEY.encode() not in exchange and b"base64" not in exchange  # the screenshot is named, not repeated

    with TestClient(create_app(settings), base_url="https://testserver") as client:
        page = client.get(f"/runs/{run_id}").text
        blob = client.get(f"/runs/{run_id}/blobs/{recording.steps[0].exchange}")
        agent = client.get("/agent").text
        week_page = client.get(f"/weeks/{week}").text
        agent_json = client.get("/api/agent.json").json()
    step_one = page[page.index('id="step-1"'):page.index('id="step-2"')]
    assert "You are a shopping agent driving a web browser for a shopper" in step_one  # the system prompt
    assert "STEPS SO FAR:" in step_one and "ELEMENTS:" in step_one and "Aero Run 2" in step_one  # the message
    assert "chatcmpl-1" in step_one and "open the first product" in step_one  # the raw reply
    assert tool_schema_sha256() in step_one and "agent release 1" in page
    assert KEY not in page and blob.status_code == 200 and KEY not in blob.text

    assert "You are a shopping agent driving a web browser for a shopper" in agent
    assert tool_schema_sha256() in agent and current_agent().observe_sha256 in agent
    assert "Nothing is listed for its pointer cursor" in agent and OBSERVATION_RULE[:40] in agent
    assert re.search(r"Steps per run</dt><dd>16<", agent) and LUNA.route in agent  # limits, the line-up
    assert "Release 1, current" in agent and week in agent
    assert agent_json["weeks"][week] == {"1": 1} and agent_json["current"]["number"] == 1
    assert "release 1</a> (1 run)" in week_page
