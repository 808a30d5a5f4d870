"""A line-up model's s12 run through the real executor, a real record (SQLite), the real lab over HTTP and a real
local server speaking the OpenAI protocol: the answer is graded fact by fact, and a reply cut by our own token
limit ends the run cut short as our error, with no verdict, as the same cut does to a browser run."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from adapters.models.lineup import WEEKLY
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.runs import Run
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import READ_ANSWER, OpenAIServer, cut_read_reply, read_reply
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
        [cut] = [e for e in runtime.record.repository.event_store.get(run_id) if isinstance(e, Run.CutShort)]
    assert fake.requests[-1]["max_tokens"] == LUNA.max_tokens
    assert outcome == "cut_short" and run.status == "cut_short" and run.verdict is None
    assert cut.cause == "our_error"
    assert cut.detail.startswith(f"BudgetCutError: the reply was cut by our limit of {LUNA.max_tokens} completion")
