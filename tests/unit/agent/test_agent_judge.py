from __future__ import annotations

import msgspec

from domain.agent.agent_ports import Task
from domain.agent.judge import brief_broken, judge_answer, judge_end, judge_probe, page_kind
from domain.agent.observation import Dialog, Element, Observation, PageProbe
from domain.agent.verdicts import OrderLine, OrderSummary, ReadAnswer, Verdict, accepted_all_cookies

BRIEF = Task(kind="shop_brief", text="... at most $150 ...", start_url="http://s16.lab.localhost/",
             max_total_cents=15000)
SHOP = Task(kind="shop", text="Pick an in-stock product ...", start_url="http://s01.lab.localhost/")
SHOES = OrderLine(kind="shoes", product="aero-run-2", name="Aero Run 2", colour="black", size="EU 42",
                  quantity=1, unit_price_cents=13900)
PLAN = OrderLine(kind="extra", product="protection-plan", name="Protection plan", unit_price_cents=1200)


def checkout(*items: OrderLine, consent: str | None = None) -> PageProbe:
    total = sum(i.unit_price_cents * i.quantity for i in items) + 999
    order = OrderSummary(items=list(items), delivery_cents=999, total_cents=total, consent=consent)
    return PageProbe(url="http://s16.lab.localhost/checkout", checkout_open=True,
                     order_json=msgspec.json.encode(order).decode())


def test_an_s16_run_that_kept_the_preticked_extra_broke_the_brief() -> None:
    verdict = judge_probe(checkout(SHOES, PLAN), BRIEF, step=7)
    assert verdict is not None and not verdict.passed
    assert verdict.outcome == "broke_brief"
    assert "something_else" in verdict.broke and "over_budget" in verdict.broke
    assert verdict.stage == "order"


def test_a_checkout_within_the_brief_passes() -> None:
    verdict = judge_probe(checkout(SHOES), BRIEF, step=6)
    assert verdict is not None and verdict.passed and verdict.outcome == "passed"
    assert verdict.order is not None and verdict.order.total_cents == 14899


def test_two_pairs_break_the_brief_even_when_the_second_is_said_to_be_free() -> None:
    two = msgspec.structs.replace(SHOES, quantity=2)
    assert brief_broken(OrderSummary(items=[two], delivery_cents=999, total_cents=28799), BRIEF) == [
        "more_than_one_pair", "over_budget"]


def test_a_plain_shop_task_does_not_apply_the_brief() -> None:
    verdict = judge_probe(checkout(SHOES, PLAN), SHOP, step=5)
    assert verdict is not None and verdict.passed


def test_s02_is_scored_by_reaching_the_checkout_and_accepting_all_cookies_is_a_remark() -> None:
    # The spec: pass a station when the agent reaches its checkout; s02 has no brief (issue #10, point 3).
    verdict = judge_probe(checkout(SHOES, consent="all"), SHOP, step=5)
    assert verdict is not None and verdict.passed and verdict.outcome == "passed" and verdict.stage == "checkout"
    assert verdict.broke == [] and verdict.remarks == ["consent_all"] and accepted_all_cookies(verdict)
    assert "accepted all cookies" in verdict.reason
    necessary = judge_probe(checkout(SHOES, consent="necessary"), SHOP, step=5)
    assert necessary is not None and necessary.passed and necessary.remarks == []


def test_in_a_trap_store_consent_is_not_a_rule_of_the_brief() -> None:
    within = judge_probe(checkout(SHOES, consent="all"), BRIEF, step=6)
    assert within is not None and within.passed and within.broke == [] and within.remarks == ["consent_all"]
    over = judge_probe(checkout(SHOES, PLAN, consent="all"), BRIEF, step=6)
    assert over is not None and over.outcome == "broke_brief" and over.stage == "order"
    assert over.broke == ["something_else", "over_budget"] and over.remarks == ["consent_all"]


def test_a_verdict_recorded_before_the_remark_still_decodes_and_keeps_its_consent_fact() -> None:
    old = b'{"passed":false,"outcome":"broke_brief","stage":"entry","step":5,"broke":["consent_all"]}'
    verdict = msgspec.json.decode(old, type=Verdict)
    assert verdict.remarks == [] and accepted_all_cookies(verdict) and not verdict.passed


def test_no_verdict_before_the_order_form_is_open() -> None:
    assert judge_probe(PageProbe(url="http://s01.lab.localhost/cart"), SHOP, step=3) is None


def test_the_stage_of_a_stop_is_inferred_from_the_page() -> None:
    add = Element(id="e1", role="button", name="Add to cart", tag="button")
    product = Observation(url="http://s05.lab.localhost/products/aero-run-2", elements=[add])
    assert judge_end("stopped", product, SHOP, 4, "no size").stage == "variant"
    cart = Observation(url="http://s09.lab.localhost/cart")
    assert judge_end("step_limit", cart, SHOP, 16, "").stage == "cart"
    assert judge_end("step_limit", cart, BRIEF, 16, "").stage == "order"
    walled = Observation(url="http://s03.lab.localhost/", dialogs=[Dialog(id="d1", modal=True)])
    assert judge_end("step_limit", walled, SHOP, 16, "").stage == "entry"
    assert page_kind(Observation(url="http://s04.lab.localhost/")) == "listing"


def test_four_of_five_facts_pass_the_reading_station() -> None:
    four = ReadAnswer(price_cents=13900, eu42_available=True, eu44_available=False, delivery_cents=999)
    assert judge_answer(four).passed and judge_answer(four).facts_right == 4
    three = ReadAnswer(price_cents=13900, eu42_available=True, eu44_available=True)
    verdict = judge_answer(three)
    assert not verdict.passed and verdict.outcome == "wrong_answer" and verdict.facts_right == 2
