"""The reader, without JavaScript, on the control store (structured data present) and on s12 (none)."""

from __future__ import annotations

import pytest

from adapters.reader import BuiltinReader
from domain.agent_ports import station_task
from domain.course import load_course
from domain.judge import judge_answer
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
