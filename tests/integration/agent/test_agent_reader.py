"""The reader, without JavaScript, on the control store (structured data present) and on s12 (none)."""

from __future__ import annotations

import pytest

from adapters.agents.reading import BuiltinReader
from domain.agent.agent_ports import station_task
from domain.agent.judge import judge_answer
from domain.courses.course import load_course
from lab.server import LabServer

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("reads_text", [False, True])
async def test_on_s01_the_structured_data_holds_all_five_facts(lab: LabServer, reads_text: bool) -> None:
    task = station_task(load_course(), "s12", lab.url_for("s01"))  # the read question, asked of the control
    result = await BuiltinReader(reads_text).read(task)
    assert judge_answer(result.answer).facts_right == 5
    assert len(result.pages) <= 20


async def test_on_s12_a_reader_of_structured_data_alone_finds_nothing(lab: LabServer) -> None:
    task = station_task(load_course(), "s12", lab.url_for("s12"))
    verdict = judge_answer(await BuiltinReader(reads_text=False).answer(task))
    assert verdict.outcome == "wrong_answer" and verdict.facts_right == 0


async def test_on_s12_a_reader_of_the_visible_text_passes(lab: LabServer) -> None:
    task = station_task(load_course(), "s12", lab.url_for("s12"))
    verdict = judge_answer(await BuiltinReader(reads_text=True).answer(task))
    assert verdict.passed and verdict.facts_right == 5


async def test_every_fetch_is_recorded_with_its_status_and_the_body_sha256(lab: LabServer) -> None:
    import hashlib

    import httpx

    task = station_task(load_course(), "s12", lab.url_for("s12"))
    result = await BuiltinReader(reads_text=True).read(task)
    assert result.pages and [f.url for f in result.fetched if f.status == 200] == result.pages
    assert any(f.url.endswith("/sitemap.xml") for f in result.fetched), "every request is recorded"
    async with httpx.AsyncClient(base_url=lab.loopback_url(), headers={"Host": lab.host_for("s12")}) as http:
        for fetched in result.fetched[:3]:
            body = (await http.get(fetched.url.split(lab.host_for("s12"), 1)[1])).content
            assert fetched.sha256 == hashlib.sha256(body).hexdigest(), fetched.url
    verdict = judge_answer(result.answer, pages=result.fetched)
    assert verdict.pages == result.fetched
    assert [(g.fact, g.right) for g in verdict.facts] == [
        ("price_cents", True), ("eu42_available", True), ("eu44_available", True), ("delivery_cents", True),
        ("return_days", True)]
    assert verdict.facts[0].given == verdict.facts[0].expected == 13900
