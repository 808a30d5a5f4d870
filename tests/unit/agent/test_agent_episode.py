from __future__ import annotations

import msgspec
import pytest

from domain.agent.actions import Click, Stop, Type
from domain.agent.agent_ports import Decision, ModelConnectionError, Task
from domain.agent.episode import CutShort, Episode
from domain.agent.observation import Element, Observation, PageProbe
from domain.agent.verdicts import OrderLine, OrderSummary, Verdict
from tests.unit.agent.agent_fakes import ListRecorder, MemoryBlobs, ScriptedAgent, ScriptedSession, TickingClock

pytestmark = pytest.mark.anyio
URL = "http://s01.lab.localhost:8700"
TASK = Task(kind="shop", text="Pick an in-stock product ...", start_url=f"{URL}/")
GO = Element(id="e1", role="link", tag="a", name="Go on", href=f"{URL}/next")
EMAIL = Element(id="e2", role="textbox", tag="input", type="email", field_name="email", form="f1")
CARD = Element(id="e3", role="textbox", tag="input", field_name="card", autocomplete="cc-number", form="f1")
PLACE = Element(id="e4", role="button", tag="button", type="submit", name="Place order", form="f1")
ORDER = OrderSummary(items=[OrderLine(kind="shoes", product="aero-run-2", name="Aero Run 2", unit_price_cents=13900)],
                     delivery_cents=999, total_cents=14899)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def page(path: str, *elements: Element, status: int = 200, text: str = "") -> tuple[Observation, PageProbe]:
    return Observation(url=f"{URL}{path}", elements=list(elements), status=status, text=text,
                       screenshot=b"\xff\xd8jpeg"), PageProbe(url=f"{URL}{path}")


def checkout_page() -> tuple[Observation, PageProbe]:
    observation, _ = page("/checkout", EMAIL, CARD, PLACE)
    return observation, PageProbe(url=observation.url, checkout_open=True,
                                  order_json=msgspec.json.encode(ORDER).decode())


async def run(pages: list[tuple[Observation, PageProbe]], decisions: list[Decision | Exception],
              tick: float = 0.0) -> tuple[Verdict | CutShort, ListRecorder, ScriptedSession]:
    session, recorder = ScriptedSession(pages), ListRecorder()
    episode = Episode(session=session, agent=ScriptedAgent(decisions), task=TASK, recorder=recorder,
                      blobs=MemoryBlobs(), clock=TickingClock(tick))
    return await episode.run(), recorder, session


async def test_reaching_the_checkout_passes_and_every_step_is_recorded() -> None:
    result, recorder, _ = await run([page("/", GO), page("/next", GO), checkout_page()],
                                    [Decision(action=Click(id="e1"), notes="on")])
    assert isinstance(result, Verdict) and result.passed and result.step == 2
    assert [s.result for s in recorder.steps] == ["ok", "ok"]
    assert recorder.steps[0].screenshot and recorder.steps[0].elements and recorder.verdict == result


async def test_typing_an_email_or_card_number_or_submitting_is_refused_and_recorded() -> None:
    # The order form is open only to the judge's probe; the agent lingers on it and the guards refuse.
    observation, _ = checkout_page()
    lingering = (observation, PageProbe(url=observation.url))
    decisions: list[Decision | Exception] = [
        Decision(action=Type(id="e2", text="ann@example.com")),
        Decision(action=Type(id="e3", text="4111111111111111")),
        Decision(action=Click(id="e4")),
        Decision(action=Stop(reason="done")),
    ]
    result, recorder, session = await run([lingering], decisions)
    assert [s.result for s in recorder.steps] == [
        "refused: no typing on the checkout page",
        "refused: no typing on the checkout page",
        "refused: would submit the order form",
        "stopped: done",
    ]
    assert session.acted == [] and isinstance(result, Verdict) and result.outcome == "stopped"


async def test_a_malformed_reply_costs_a_step_and_the_run_goes_on() -> None:
    result, recorder, _ = await run([page("/", GO), checkout_page()],
                                    [Decision(action=None, error="not JSON"), Decision(action=Click(id="e1"))])
    assert recorder.steps[0].result == "invalid reply: not JSON"
    assert isinstance(result, Verdict) and result.passed and result.step == 2


async def test_sixteen_steps_without_checkout_is_the_step_limit() -> None:
    result, recorder, _ = await run([page("/", GO)], [Decision(action=Click(id="e1"))])
    assert isinstance(result, Verdict) and result.outcome == "step_limit" and len(recorder.steps) == 16


async def test_the_time_limit_ends_the_run() -> None:
    result, recorder, _ = await run([page("/", GO)], [Decision(action=Click(id="e1"))], tick=10.0)
    assert isinstance(result, Verdict) and result.outcome == "time_limit" and len(recorder.steps) < 16


async def test_a_verification_page_of_a_store_not_ours_stops_the_run_as_a_valid_result() -> None:
    gate = page("/", status=403, text="Please verify you are human. Challenge below.")
    for ours in (False, True):
        recorder = ListRecorder()
        result = await Episode(session=ScriptedSession([gate]), agent=ScriptedAgent([Decision(action=Click(id="e1"))]),
                               task=TASK, recorder=recorder, blobs=MemoryBlobs(), clock=TickingClock(),
                               stores_ours=ours).run()
        assert recorder.steps[0].action is None
        if ours:  # our own lab's gate refusing a signed run: our outage, not a result
            assert isinstance(result, CutShort) and result.cause == "our_error", result
        else:
            assert isinstance(result, Verdict) and result.outcome == "verification_page" and result.stage == "entry"


async def test_a_model_that_cannot_be_reached_cuts_the_run_short() -> None:
    result, recorder, _ = await run([page("/", GO)], [ModelConnectionError("refused 5 times")])
    assert result == CutShort("model_connection", "refused 5 times")
    assert recorder.cut == ("model_connection", "refused 5 times") and recorder.verdict is None
