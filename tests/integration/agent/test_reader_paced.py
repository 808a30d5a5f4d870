"""The reading station at a store that paces it (the lab's rate limit, or a store's): a 429 is waited for as its
Retry-After asks, never a page the reader reads past. Read past, the pages refused were missing from what the
reader answered from, and the run was graded: a wrong answer counted against the model for our crawl's pace.
A store that asks for more waiting than the crawl gives (20 s in all) could not be read: our error.

Real lab servers on loopback: one without limits, one whose budget for our unsigned reader is a burst of 4 requests
and 2 a second (a deployed lab not told our workers' addresses gives the reader the public budget), one that allows
a request a minute after the first 3."""

from __future__ import annotations

import time

import pytest

from adapters.agents.reading import BuiltinReader
from adapters.fetcher import PACE_WAIT_SECONDS, StoreUnreachableError, crawl_store
from domain.agent.agent_ports import Task, station_task
from domain.courses.course import load_course
from lab.ratelimit import Budget, LabLimits
from lab.server import LabServer

pytestmark = pytest.mark.anyio


def _task(lab: LabServer) -> Task:
    return station_task(load_course(), "s12", lab.url_for("s12"))


async def test_a_paced_crawl_reads_every_page_an_unpaced_one_reads_and_the_reader_answers_the_same() -> None:
    with LabServer() as free, LabServer(limits=LabLimits(public=Budget(rate=2.0, burst=4))) as paced:
        unpaced = await crawl_store(_task(free).start_url, _task(free).text)
        began = time.monotonic()
        crawl = await crawl_store(_task(paced).start_url, _task(paced).text)
        waited = time.monotonic() - began
        assert len(unpaced.pages) > 4, "the store has more pages than the burst allows"
        refused = [f for f in crawl.fetched if f.status == 429]
        assert refused, "the paced lab refused some requests"
        assert [p.url.replace(str(paced.port), "P") for p in crawl.pages] == \
            [p.url.replace(str(free.port), "P") for p in unpaced.pages]
        assert 1.0 <= waited <= PACE_WAIT_SECONDS + 10
        for reads_text in (False, True):
            expected = await BuiltinReader(reads_text).answer(_task(free))
            assert await BuiltinReader(reads_text).answer(_task(paced)) == expected


async def test_a_store_asking_for_more_waiting_than_the_crawl_gives_is_not_read_and_says_why() -> None:
    with LabServer(limits=LabLimits(public=Budget(rate=1 / 60, burst=3))) as slow:
        began = time.monotonic()
        with pytest.raises(StoreUnreachableError) as raised:
            await crawl_store(_task(slow).start_url, _task(slow).text)
        assert time.monotonic() - began < 5, "a wait longer than the crawl gives is not begun"
    said = str(raised.value)
    assert said.startswith("the reading station could not reach the store: ")
    assert "answered 429 Too Many Requests, asking to wait" in said and "\n" not in said
    assert raised.value.fetched[-1].status == 429
