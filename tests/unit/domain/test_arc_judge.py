"""ARC's task judged by code: checkout_reached, added_to_cart, blocked, no_cart; receipts kept in the verdict."""

from __future__ import annotations

import msgspec
import pytest

from domain.agent.actions import Click, Stop
from domain.agent.agent_ports import Decision
from domain.agent.episode import Episode
from domain.agent.judge import judge_probe
from domain.agent.observation import Dialog, Element, Observation, PageProbe
from domain.agent.verdicts import OrderLine, OrderSummary, Verdict
from domain.leaderboards.arc_export import RunEnd, arc_outcome
from domain.leaderboards.arc_judge import arc_task, holds_product, judge_arc_end, judge_arc_probe, product_slug
from tests.unit.agent.agent_fakes import ListRecorder, MemoryBlobs, ScriptedAgent, ScriptedSession, TickingClock

URL = "http://s01.lab.localhost:8700"
PRODUCT = f"{URL}/products/aero-run-2"
TASK = arc_task(PRODUCT)
AERO = OrderLine(kind="shoes", product="aero-run-2", name="Aero Run 2", colour="black", size="EU 42",
                 unit_price_cents=13900)
OTHER = OrderLine(kind="shoes", product="trail-grip", name="Trail Grip", unit_price_cents=9900)
RECEIPT = "eyJhbGciOiJFZERTQSJ9.eyJzdGF0aW9uIjoiczAxIn0.c2ln"


def marker(*lines: OrderLine) -> str:
    total = sum(line.unit_price_cents for line in lines)
    return msgspec.json.encode(OrderSummary(items=list(lines), delivery_cents=999, total_cents=total)).decode()


def seen(path: str = "/cart", status: int = 200, text: str = "", title: str = "") -> Observation:
    return Observation(url=f"{URL}{path}", status=status, text=text, title=title)


def test_the_task_is_arcs_sentence_and_starts_on_the_product_page() -> None:
    assert TASK.kind == "arc" and TASK.start_url == PRODUCT
    assert TASK.text == f"Add this product to the cart: {PRODUCT}"


def test_the_product_is_named_by_the_last_segment_of_its_address() -> None:
    assert product_slug("https://shop.example/en/products/Aero-Run-2/?colour=black") == "aero-run-2"
    assert holds_product(OrderSummary(items=[AERO], delivery_cents=0, total_cents=0), PRODUCT)
    assert not holds_product(OrderSummary(items=[OTHER], delivery_cents=0, total_cents=0), PRODUCT)


def test_an_open_checkout_with_the_product_is_checkout_reached_and_keeps_the_receipt() -> None:
    probe = PageProbe(url=f"{URL}/checkout", checkout_open=True, order_json=marker(AERO), receipt=RECEIPT)
    verdict = judge_arc_probe(probe, TASK, 4)
    assert verdict is not None and verdict.passed and verdict.arc == "checkout_reached"
    assert verdict.receipt == RECEIPT and verdict.step == 4


def test_a_checkout_with_another_product_only_is_no_cart() -> None:
    probe = PageProbe(url=f"{URL}/checkout", checkout_open=True, order_json=marker(OTHER))
    verdict = judge_arc_probe(probe, TASK, 5)
    assert verdict is not None and not verdict.passed and verdict.arc == "no_cart"


def test_a_page_without_an_open_checkout_lets_the_run_go_on() -> None:
    assert judge_arc_probe(PageProbe(url=f"{URL}/cart", cart_json=marker(AERO)), TASK, 3) is None


def test_a_cart_holding_the_product_when_the_run_ends_is_added_to_cart() -> None:
    verdict = judge_arc_end("stopped", seen(), TASK, 3, "the agent stopped: done", marker(AERO))
    assert verdict.passed and verdict.arc == "added_to_cart" and verdict.stage == "cart"


@pytest.mark.parametrize("cart", [None, marker(), marker(OTHER), "not json"])
def test_without_the_product_in_a_readable_cart_the_outcome_is_no_cart(cart: str | None) -> None:
    verdict = judge_arc_end("step_limit", seen("/products/aero-run-2"), TASK, 16, "no checkout", cart)
    assert not verdict.passed and verdict.arc == "no_cart" and verdict.outcome == "step_limit"


@pytest.mark.parametrize(("status", "text"), [
    (403, "Access denied"),
    (429, "Too many requests"),
    (200, "Please complete the CAPTCHA to continue"),
    (403, "Verify you are human: this is a bot gate"),
])
def test_a_verification_page_a_refusing_status_or_a_captcha_is_blocked(status: int, text: str) -> None:
    verdict = judge_arc_end("verification_page", seen("/", status=status, text=text), TASK, 1, "stopped", None)
    assert not verdict.passed and verdict.arc == "blocked" and verdict.stage == "entry"


SHOPIFY_CHALLENGE = ("Your connection needs to be verified\nTo continue, let us know you\u2019re not a robot.\n"
                     "Submit\nThis site is protected by reCAPTCHA and the Google Privacy Policy and Terms of Service "
                     "apply.")
CART_PAGE = ("Free shipping over $50\nShop  Men  Women  Sale\nYour cart\nAero Run 2 - Black / EU 42  $139.00  Qty 1\n"
             "Subtotal $139.00\nCheck out\n" + "Customer care  Returns  Shipping  Stores  Gift cards\n" * 20
             + "This site is protected by reCAPTCHA and the Google Privacy Policy and Terms of Service apply.\n"
             "reCAPTCHA\nPrivacy - Terms")


@pytest.mark.parametrize(("status", "title", "text"), [
    (200, "Your cart", CART_PAGE),  # a footer notice on an ordinary page
    (200, "Contact", "Contact us\nThis site is protected by hCaptcha and its Privacy Policy and Terms apply."),
    (200, "Aero Run 2", "Aero Run 2  $139\nAdd to cart\n" + "Reviews " * 200 + "\nNewsletter (captcha below)"),
    (503, "Down for maintenance", "We are down for maintenance; back soon."),  # an outage asks for nothing
    (404, "Not found", "Page not found"),
])
def test_a_page_that_neither_refuses_nor_challenges_is_not_blocked(status: int, title: str, text: str) -> None:
    observation = seen("/cart", status=status, text=text, title=title)
    verdict = judge_arc_end("stopped", observation, TASK, 4, "the agent stopped: added", None)
    assert verdict.arc == "no_cart"


@pytest.mark.parametrize(("status", "title", "text"), [
    (200, "Challenge", SHOPIFY_CHALLENGE),  # a short page: the challenge is all of it
    (200, "Verify you are human", CART_PAGE),  # the title says it
    (200, "Shop", "Security check\nPlease complete the CAPTCHA to continue\n" + CART_PAGE),  # it opens the page
    (503, "Just a moment...", "x" * 1500 + " Checking your browser before accessing the store."),
])
def test_a_challenge_page_is_blocked_at_any_status(status: int, title: str, text: str) -> None:
    verdict = judge_arc_end("stopped", seen("/challenge", status=status, text=text, title=title), TASK, 2, "x", None)
    assert verdict.arc == "blocked" and verdict.reason.startswith("the store blocked the agent: a challenge page")


def test_a_captcha_in_a_modal_dialog_over_the_page_is_blocked() -> None:
    dialog = Dialog(id="d0", name="Please verify you are human", modal=True)
    observation = Observation(url=f"{URL}/cart", text=CART_PAGE, dialogs=[dialog])
    assert judge_arc_end("stopped", observation, TASK, 3, "x", None).arc == "blocked"
    aside = Dialog(id="d0", name="Please verify you are human", modal=False)
    assert judge_arc_end("stopped", msgspec.structs.replace(observation, dialogs=[aside]), TASK, 3, "x",
                         None).arc == "no_cart"


def test_a_product_already_in_the_cart_outweighs_a_later_block() -> None:
    verdict = judge_arc_end("verification_page", seen("/", status=403), TASK, 6, "stopped", marker(AERO))
    assert verdict.arc == "added_to_cart"


def test_a_foreign_store_without_markers_can_only_be_no_cart_or_blocked() -> None:
    task = arc_task("https://www.apc.fr/en/products/cap")
    ended = Observation(url="https://www.apc.fr/en/cart", text="Your bag: 1 item")
    assert judge_arc_end("stopped", ended, task, 5, "the agent stopped: added", None).arc == "no_cart"


def test_the_course_judge_keeps_the_receipt_of_a_passed_checkout() -> None:
    probe = PageProbe(url=f"{URL}/checkout", checkout_open=True, order_json=marker(AERO), receipt=RECEIPT)
    shop = msgspec.structs.replace(TASK, kind="shop")
    verdict = judge_probe(probe, shop, 3)
    assert verdict is not None and verdict.passed and verdict.receipt == RECEIPT and verdict.arc is None


@pytest.mark.parametrize(("end", "outcome"), [
    (None, "not_attempted"),
    (RunEnd(status="scheduled"), "not_attempted"),
    (RunEnd(status="cut_short", reason="store unreachable"), "error"),
    (RunEnd(status="finished", verdict=Verdict(passed=False, outcome="stopped", arc="blocked")), "blocked"),
    (RunEnd(status="finished", verdict=Verdict(passed=True, outcome="passed", arc="added_to_cart")), "added_to_cart"),
])
def test_a_row_is_exported_with_arcs_outcome(end: RunEnd | None, outcome: str) -> None:
    assert arc_outcome(end) == outcome


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_an_episode_on_arcs_task_ends_on_the_cart_it_read_last() -> None:
    go = Element(id="e1", role="button", tag="button", name="Add to cart")
    pages = [
        (seen("/products/aero-run-2"), PageProbe(url=PRODUCT)),
        (seen("/cart"), PageProbe(url=f"{URL}/cart", cart_json=marker(AERO))),
    ]
    pages = [(msgspec.structs.replace(o, elements=[go]), p) for o, p in pages]
    decisions: list[Decision | Exception] = [Decision(action=Click(id="e1")), Decision(action=Stop(reason="done"))]
    recorder = ListRecorder()
    verdict = await Episode(session=ScriptedSession(pages), agent=ScriptedAgent(decisions), task=TASK,
                            recorder=recorder, blobs=MemoryBlobs(), clock=TickingClock(0.0)).run()
    assert isinstance(verdict, Verdict) and verdict.arc == "added_to_cart" and verdict.step == 2
    assert recorder.verdict == verdict


def test_the_course_test_set_file_is_the_course_in_arcs_shape() -> None:
    import csv
    import io
    from importlib import resources

    from domain.leaderboards.arc import course_test_set

    text = (resources.files("domain") / "testsets" / "canitbuy-course-2.1.csv").read_text(encoding="utf-8")
    rows = [(r["id"], r["host"], r["product_url"]) for r in csv.DictReader(io.StringIO(text))]
    assert rows == [(i.id, i.host, i.product_url) for i in course_test_set().items]
    assert rows[0] == ("s01", "s01.lab.canitbuy.com", "https://s01.lab.canitbuy.com/products/aero-run-2")
