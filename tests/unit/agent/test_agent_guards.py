from __future__ import annotations

from domain.agent.actions import Check, Click, Goto, Press, Select, Type, decode_action
from domain.agent.guards import is_personal_field, is_verification_page, refusal
from domain.agent.observation import Element, Observation

STORE = "s01.lab.localhost:8700"
SEARCH = Element(id="e1", role="textbox", tag="input", type="search", field_name="q", label="Search")
EMAIL = Element(id="e2", role="textbox", tag="input", type="email", field_name="email", label="E-mail", form="f1")
CARD = Element(id="e3", role="textbox", tag="input", type="text", field_name="cc", autocomplete="cc-number",
               label="Card number", form="f1")
PAY = Element(id="e4", role="button", tag="button", type="submit", name="Place order", form="f1")
QTY = Element(id="e5", role="spinbutton", tag="input", type="number", field_name="quantity", label="Quantity")
TERMS = Element(id="e6", role="checkbox", tag="input", type="checkbox", field_name="terms", form="f1")
CHECKOUT = Observation(url=f"http://{STORE}/checkout", elements=[EMAIL, CARD, PAY, TERMS])
PRODUCT = Observation(url=f"http://{STORE}/products/aero-run-2", elements=[SEARCH, QTY])


def test_fields_for_personal_or_payment_data_are_recognised() -> None:
    assert is_personal_field(EMAIL) and is_personal_field(CARD)
    assert is_personal_field(Element(id="x", role="textbox", tag="input", field_name="postal_code"))
    assert is_personal_field(Element(id="x", role="textbox", tag="input", label="Full name"))
    assert not is_personal_field(SEARCH) and not is_personal_field(QTY)


def test_typing_an_email_address_or_card_number_is_refused() -> None:
    assert refusal(Type(id="e2", text="ann@example.com"), CHECKOUT, STORE) == "no typing on the checkout page"
    assert refusal(Type(id="e3", text="4111 1111 1111 1111"), CHECKOUT, STORE) is not None
    lone_email = Observation(url=f"http://{STORE}/", elements=[msgspec_replace(EMAIL)])
    assert refusal(Type(id="e2", text="x"), lone_email, STORE) == "field for personal or payment data"
    assert refusal(Type(id="e1", text="ann@example.com"), PRODUCT, STORE) is not None


def test_harmless_typing_and_choices_pass() -> None:
    assert refusal(Type(id="e1", text="running shoes"), PRODUCT, STORE) is None
    assert refusal(Select(id="e5", option="1"), PRODUCT, STORE) is None


def test_submitting_the_order_form_is_refused_but_ticking_a_box_in_it_is_not() -> None:
    assert refusal(Click(id="e4"), CHECKOUT, STORE) == "would submit the order form"
    assert refusal(Press(key="Enter"), CHECKOUT, STORE) == "would submit the order form"
    assert refusal(Check(id="e6"), CHECKOUT, STORE) is None


def test_other_hosts_and_unknown_ids_are_refused() -> None:
    assert refusal(Goto(url="https://evil.example/"), PRODUCT, STORE) == "another host"
    assert refusal(Goto(url="http://s02.lab.localhost:8700/"), PRODUCT, STORE) == "another host"
    assert refusal(Goto(url="/sitemap.xml"), PRODUCT, STORE) is None
    assert refusal(Click(id="e99"), PRODUCT, STORE) == "unknown element id 'e99'"


def test_a_gate_that_asks_for_proof_of_a_human_is_a_verification_page() -> None:
    gate = Observation(url=f"http://{STORE}/", status=403, title="Verification required",
                       text="Please verify you are human to continue.")
    assert is_verification_page(gate)
    assert not is_verification_page(Observation(url=f"http://{STORE}/", status=404, text="Not found"))
    assert not is_verification_page(Observation(url=f"http://{STORE}/", text="Aero Run 2 $139"))


def test_a_wait_longer_than_five_seconds_is_not_an_action() -> None:
    import pytest

    from domain.agent.actions import ActionError

    with pytest.raises(ActionError):
        decode_action('{"type": "wait", "seconds": 30}')


def msgspec_replace(element: Element) -> Element:
    import msgspec

    return msgspec.structs.replace(element, form="")
