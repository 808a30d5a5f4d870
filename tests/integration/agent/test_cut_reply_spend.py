"""A reply cut by our own token limit is charged by the provider all the same. Through the real executor, a real
record (SQLite), the real lab over HTTP, real Chromium for the browser run and a real local server speaking the
OpenAI protocol: a browser run (s01) and a reader run (s12) whose reply ends with finish_reason "length" before it
holds an action (an answer) are cut short as our error with the detail they always had, and the call is recorded
as the run's last step with its tokens and cost. The week's spend (spend.json) counts it, the weekly cap reached by
it holds the next model run, and the run page labels the step as our limit's cut. A run cut short that way before
the call was recorded (no step) reads as it did."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.models.lineup import WEEKLY, cost_usd
from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.agent.runs import Run
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import USAGE, OpenAIServer, reply
from web.app import create_app
from workers.executor import execute_run
from workers.leases import open_leases
from workers.resources import build_resources

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

pytestmark = pytest.mark.anyio
LUNA = WEEKLY[0]
PROMPT, REASONING = 40000, 300


@pytest.fixture(scope="module")
def gateway() -> Iterator[tuple[OpenAIServer, str]]:
    fake = OpenAIServer()
    with ThreadedApp(fake.app) as running:
        yield fake, f"{running.url}/v1"


def cut_reply() -> dict[str, Any]:
    """Every completion token our limit allows spent (some of them reasoning), and no action or answer in it."""
    cut = reply({"content": ""})
    cut["choices"][0]["finish_reason"] = "length"
    cut["usage"] = {**USAGE, "prompt_tokens": PROMPT, "completion_tokens": LUNA.max_tokens,
                    "total_tokens": PROMPT + LUNA.max_tokens,
                    "completion_tokens_details": {"reasoning_tokens": REASONING}}
    return cut


@pytest.mark.parametrize(("station", "held_back"), [
    pytest.param("s01", "action", marks=pytest.mark.chromium, id="browser"),
    pytest.param("s12", "answer", id="reader"),
])
async def test_a_reply_cut_by_our_token_limit_is_recorded_with_its_cost_the_spend_counts_it_and_the_cap_holds(
    tmp_path: Path, gateway: tuple[OpenAIServer, str], lab: LabServer, station: str, held_back: str
) -> None:
    fake, base = gateway
    cost = cost_usd(LUNA, PROMPT, LUNA.max_tokens)
    settings = Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4, model_base_url=base,
                        model_api_key="sk-test", weekly_cap_usd=round(cost, 6))
    fake.reply_to_all = cut_reply()
    try:
        with build_runtime(settings) as runtime:
            record = runtime.record
            week = week_of(record.clock())
            first, second = schedule_runs(record, [
                ScheduleRun.on_course(station=station, model=LUNA.model, requested_by="test", week=week, repeat=r)
                for r in (0, 1)])
            resources = build_resources(runtime, open_leases(settings), lab_url=lab.url_for(None), directory_url=None)
            ctx: dict[str, Any] = {"resources": resources}
            try:
                ran = await execute_run(ctx, str(first))
                held = await execute_run(ctx, str(second))  # the cut call spent the cap
            finally:
                await resources.aclose()
            events = list(record.repository.event_store.get(first))
            steps = [e.step for e in events if isinstance(e, Run.StepRecorded)]
            [cut] = [e for e in events if isinstance(e, Run.CutShort)]
            waiting = record.get_run(second).status
            stored = bool(steps) and runtime.blobs.has(steps[-1].exchange or "")
            with TestClient(create_app(runtime.settings), base_url="https://testserver") as client:
                spend = client.get(f"/api/weeks/{week}/spend.json").json()
                page = " ".join(client.get(f"/runs/{first}").text.split())
                recording = client.get(f"/api/runs/{first}.json").json()
    finally:
        fake.reply_to_all = None
    # The run is cut short as our error, as it always was, with the same detail.
    assert ran == "cut_short" and cut.cause == "our_error"
    assert cut.detail == (f"BudgetCutError: the reply was cut by our limit of {LUNA.max_tokens} completion tokens "
                          f"({REASONING} spent reasoning) before it held an {held_back}")
    # The charged call is its last step, with the tokens and cost, and no action; the steps count it.
    assert steps, "the cut call was recorded in no step"
    last = steps[-1]
    assert last.result == f"reply cut by our token limit: no {held_back}" and last.action is None
    assert (last.tokens_in, last.tokens_out, last.tokens_reasoning, last.cost_usd) == (
        PROMPT, LUNA.max_tokens, REASONING, cost)
    assert last.exchange is not None and stored and last.model_ms > 0
    assert last.number == len(steps) == cut.steps == recording["run"]["steps"] == 1
    assert (last.screenshot is not None) == (station == "s01")  # the browser's step keeps the page it saw
    # The week's spend counts it, and the cap it reached holds the next run of the line-up (still scheduled).
    assert spend["actual_usd"] == cost and spend["cap_reached"] is True
    luna = next(m for m in spend["models"] if m["model"] == LUNA.model)
    assert (luna["runs_ended"], luna["runs_to_start"], luna["actual_usd"]) == (1, 1, cost)
    assert held == f"skipped: weekly spending cap reached (${cost:.2f} of ${cost:.2f})"
    assert waiting == "scheduled"
    # The run page says where and why it was cut, and what the cut call cost.
    assert "Cut short: not a result" in page and "<dd>1 step in " in page
    assert f"{PROMPT + LUNA.max_tokens} tokens · ${cost:.4f}" in page
    assert f"Result:</strong> reply cut by our token limit: no {held_back}" in page
    assert "The run was cut short here: our token limit cut the reply" in page
    assert (f'The call whose reply our limit cut is <a href="#step-1">step 1</a>, with no {held_back}: the '
            "provider charged for it") in page
    assert "no valid action" not in page  # the model is not blamed for our limit
    assert [s["cost_usd"] for s in recording["steps"]] == [cost]


def test_a_run_cut_short_by_our_token_limit_before_its_call_was_recorded_reads_as_it_did(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4)
    with build_runtime(settings) as runtime:
        record = runtime.record
        week = week_of(record.clock())
        [run_id] = schedule_runs(record, [ScheduleRun.on_course(station="s12", model=LUNA.model, requested_by="test",
                                                                week=week)])
        record.start_run(run_id, worker="test", browser_version="", agent_version=LUNA.route)
        detail = f"BudgetCutError: the reply was cut by our limit of {LUNA.max_tokens} completion tokens"
        record.cut_short_run(run_id, "our_error", detail, steps=0, seconds=1.0)
        with TestClient(create_app(settings), base_url="https://testserver") as client:
            spend = client.get(f"/api/weeks/{week}/spend.json").json()
            page = " ".join(client.get(f"/runs/{run_id}").text.split())
            recording = client.get(f"/api/runs/{run_id}.json").json()
    assert spend["actual_usd"] == 0.0 and recording["steps"] == [] and recording["run"]["steps"] == 0
    assert f"our error: {detail}. A run cut short is not a result; it is logged and left out.</p></section>" in page
    assert "0 steps" in page and "No steps recorded." in page and "whose reply our limit cut" not in page
