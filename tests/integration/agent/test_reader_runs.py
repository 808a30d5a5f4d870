"""A line-up model's s12 run through the real executor, a real record (SQLite), the real lab over HTTP and a real
local server speaking the OpenAI protocol: the answer is graded fact by fact, and a reply cut by our own token
limit ends the run cut short as our error, with no verdict, as the same cut does to a browser run (the cut call,
charged all the same, recorded as its step; tests/integration/agent/test_cut_reply_spend.py). The model's call
is recorded as the run's one step with its tokens and cost, as a browser run's calls are: the week's spend counts
it, and the weekly cap holds the next model run once the week's reader runs have spent it."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from adapters.models.lineup import WEEKLY, cost_usd
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.runs import Run
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import READ_ANSWER, USAGE, OpenAIServer, cut_read_reply, read_reply
from web.app import create_app
from workers.executor import execute_run
from workers.leases import open_leases
from workers.resources import build_resources

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

pytestmark = pytest.mark.anyio
LUNA = WEEKLY[0]


@pytest.fixture(scope="module")
def gateway() -> Iterator[tuple[OpenAIServer, str]]:
    fake = OpenAIServer()
    with ThreadedApp(fake.app) as running:
        yield fake, f"{running.url}/v1"


@asynccontextmanager
async def read_run(
    tmp_path: Path, fake: OpenAIServer, base: str, lab: LabServer, answer: dict[str, Any]
) -> AsyncIterator[tuple[str, Runtime, UUID]]:
    """An s12 run of a line-up model executed as a worker executes it, the gateway giving `answer`."""
    settings = Settings(
        data_dir=tmp_path / "var", site_secret="test secret " * 4, model_base_url=base, model_api_key="sk-test"
    )
    fake.reply_to_all = answer
    try:
        with build_runtime(settings) as runtime:
            [run_id] = schedule_runs(
                runtime.record,
                [
                    ScheduleRun.on_course(
                        station="s12", model=LUNA.model, requested_by="test", week=week_of(runtime.record.clock())
                    )
                ],
            )
            resources = build_resources(runtime, open_leases(settings), lab_url=lab.url_for(None), directory_url=None)
            try:
                outcome = await execute_run({"resources": resources}, str(run_id))
            finally:
                await resources.aclose()
            yield outcome, runtime, run_id
    finally:
        fake.reply_to_all = None


async def test_a_read_answer_with_one_mistyped_fact_passes_on_the_four_others(
    tmp_path: Path, gateway: tuple[OpenAIServer, str], lab: LabServer
) -> None:
    fake, base = gateway
    async with read_run(tmp_path, fake, base, lab, read_reply({**READ_ANSWER, "price_cents": 13900.0})) as ran:
        outcome, runtime, run_id = ran
        run = runtime.record.get_run(run_id)
    assert outcome == "passed" and run.status == "finished" and run.verdict is not None
    assert run.verdict.facts_right == 4 and run.verdict.reason == "4 of 5 facts right (4 needed)"
    assert [(g.fact, g.given) for g in run.verdict.facts or [] if not g.right] == [("price_cents", None)]
    with TestClient(create_app(runtime.settings), base_url="https://testserver") as client:
        page = " ".join(client.get(f"/runs/{run_id}").text.split())
    assert page.count("✓ </span>right") == 4 and page.count("✗ </span>wrong") == 1
    assert "or stated in a form that cannot be read" in page and "the other facts still count" in page


async def test_a_read_answer_cut_by_our_token_limit_cuts_the_run_short_as_our_error_with_no_verdict(
    tmp_path: Path, gateway: tuple[OpenAIServer, str], lab: LabServer
) -> None:
    fake, base = gateway
    async with read_run(tmp_path, fake, base, lab, cut_read_reply({"max_tokens": LUNA.max_tokens})) as ran:
        outcome, runtime, run_id = ran
        run = runtime.record.get_run(run_id)
        events = list(runtime.record.repository.event_store.get(run_id))
        [cut] = [e for e in events if isinstance(e, Run.CutShort)]
        steps = [e.step for e in events if isinstance(e, Run.StepRecorded)]
    assert fake.requests[-1]["max_tokens"] == LUNA.max_tokens
    assert outcome == "cut_short" and run.status == "cut_short" and run.verdict is None
    assert cut.cause == "our_error"
    assert cut.detail.startswith(f"BudgetCutError: the reply was cut by our limit of {LUNA.max_tokens} completion")
    # The provider charged for the cut call: it is the run's one step, and the cut-short run counts it.
    assert [(s.number, s.result, s.tokens_out, s.cost_usd) for s in steps] == [
        (1, "reply cut by our token limit: no answer", LUNA.max_tokens, cost_usd(LUNA, 1200, LUNA.max_tokens))]
    assert cut.steps == 1


async def test_a_model_reader_run_records_its_tokens_and_cost_so_the_spend_counts_it_and_the_cap_holds(
    tmp_path: Path, gateway: tuple[OpenAIServer, str], lab: LabServer
) -> None:
    fake, base = gateway
    answer = read_reply(READ_ANSWER)
    answer["usage"] = {**USAGE, "prompt_tokens": 40000, "completion_tokens": 1000, "total_tokens": 41000,
                       "completion_tokens_details": {"reasoning_tokens": 600},
                       "prompt_tokens_details": {"cached_tokens": 0}}
    cost = cost_usd(LUNA, 40000, 1000)
    assert cost == 0.012
    settings = Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4, model_base_url=base,
                        model_api_key="sk-test", weekly_cap_usd=0.01)
    fake.reply_to_all = answer
    try:
        with build_runtime(settings) as runtime:
            record = runtime.record
            week = week_of(record.clock())
            first, second = schedule_runs(record, [
                ScheduleRun.on_course(station="s12", model=LUNA.model, requested_by="test", week=week, repeat=r)
                for r in (0, 1)])
            resources = build_resources(runtime, open_leases(settings), lab_url=lab.url_for(None), directory_url=None)
            ctx: dict[str, Any] = {"resources": resources}
            try:
                ran = await execute_run(ctx, str(first))
                held = await execute_run(ctx, str(second))  # the first reader run spent the cap
            finally:
                await resources.aclose()
            steps = [e.step for e in record.repository.event_store.get(first) if isinstance(e, Run.StepRecorded)]
            finished = [e for e in record.repository.event_store.get(first) if isinstance(e, Run.Finished)]
            with TestClient(create_app(runtime.settings), base_url="https://testserver") as client:
                spend = client.get(f"/api/weeks/{week}/spend.json").json()
                page = " ".join(client.get(f"/runs/{first}").text.split())
                recording = client.get(f"/api/runs/{first}.json").json()
            assert ran == "passed"
            assert held == "skipped: weekly spending cap reached ($0.01 of $0.01)"
            assert record.get_run(second).status == "scheduled"  # held, not started: raising the cap starts it
            [step] = steps
            assert step.number == 1 and "//s12." in step.url and step.screenshot is None
            assert (step.tokens_in, step.tokens_out, step.tokens_reasoning, step.cost_usd) == (40000, 1000, 600, cost)
            assert step.model_ms > 0 and step.exchange is not None and runtime.blobs.has(step.exchange)
            assert finished[0].steps == 1
    finally:
        fake.reply_to_all = None
    assert spend["actual_usd"] == cost and spend["cap_reached"] is True
    luna = next(m for m in spend["models"] if m["model"] == LUNA.model)
    assert (luna["runs_ended"], luna["runs_to_start"], luna["projected_usd"]) == (1, 1, 2 * cost)
    assert "41000 tokens · $0.0120" in page and "40000 in / 1000 out tokens" in page
    assert "Result:</strong> answered" in page and "No tools: the reply is the answer" in page
    assert "no valid action" not in page  # a reader chooses no action: it answers
    assert "Film strip" not in page and "the checkout was reached" not in page  # a reader has no screens
    assert [s["cost_usd"] for s in recording["steps"]] == [cost]
