"""Receipts end to end: a scripted Chromium reaches a real lab's checkout, and the project checks the receipt
against the keys the lab publishes, with no re-run. Tampered receipts are refused with their reason."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import anyio
import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from adapters.receipts import HttpxReceiptVerifier, ReceiptKeysError, fetch_receipt_keys
from domain.leaderboards.receipts import ReceiptRefused, ReceiptVerified
from lab.botauth.directory import thumbprint
from lab.receipts import ReceiptKey
from lab.server import LabServer

AGENT_UA = "CanItBuyAgent/1.0"
BROWSER_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36"


def run(function, *args):
    """An async call from a sync test: Playwright's sync API already runs an event loop on this thread."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, function, *args).result()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    made = browser.new_context(user_agent=BROWSER_UA)
    made.set_default_timeout(8000)
    yield made
    made.close()


def verifier(lab: LabServer) -> HttpxReceiptVerifier:
    return HttpxReceiptVerifier(lab.url_for(None))  # the bare lab domain we trust, not the receipt's own host


def verify(lab: LabServer, compact: str, station: str | None = None):
    return run(verifier(lab).verify, compact, station)


def walk_to_checkout(page: Page, lab: LabServer, station: str) -> tuple[str, str]:
    """The control store's way to the open checkout; (receipt in the page, receipt in the response header)."""
    page.goto(lab.url_for(station))
    page.get_by_role("link", name="Aero Run 2").click()
    page.get_by_role("button", name="EU 42", exact=True).click()
    page.get_by_role("button", name="Add to cart").click()
    page.wait_for_url("**/cart")
    with page.expect_response(lambda r: r.url.split("?")[0].endswith("/checkout")) as checkout:
        page.get_by_role("button", name="Go to checkout").click()
    page.wait_for_selector("meta[name='nordlys:checkout'][content='open']", state="attached")
    return json.loads(page.locator("#nordlys-receipt").text_content()), checkout.value.headers["nordlys-receipt"]


def test_a_receipt_from_a_scripted_checkout_verifies_against_the_published_keys(context, lab):
    page = context.new_page()
    in_page, in_header = walk_to_checkout(page, lab, "s01")
    assert in_page == in_header
    result = verify(lab, in_page, station="s01")
    assert isinstance(result, ReceiptVerified)
    assert result.station == "s01" and result.agent_keyid is None
    assert result.order == json.loads(page.locator("#nordlys-order").text_content())
    assert result.order["total_cents"] == 14899 and result.host == lab.host_for("s01")


def test_a_browser_that_signs_its_requests_is_named_in_the_receipt(context, lab, agent_keys, sign):
    context.set_extra_http_headers(sign(agent_keys, lab.host_for("s01")))
    in_page, _ = walk_to_checkout(context.new_page(), lab, "s01")
    result = verify(lab, in_page)
    assert isinstance(result, ReceiptVerified) and result.agent_keyid == thumbprint(agent_keys.x)


def test_a_signed_agent_past_s13s_gate_is_named_in_the_receipt(browser, lab, agent_keys, sign):
    context = browser.new_context(user_agent=AGENT_UA)
    try:
        context.set_extra_http_headers(sign(agent_keys, lab.host_for("s13")))
        in_page, _ = walk_to_checkout(context.new_page(), lab, "s13")
    finally:
        context.close()
    result = verify(lab, in_page, station="s13")
    assert isinstance(result, ReceiptVerified) and result.agent_keyid == thumbprint(agent_keys.x)


def test_a_receipt_is_refused_for_another_station(context, lab):
    in_page, _ = walk_to_checkout(context.new_page(), lab, "s01")
    result = verify(lab, in_page, station="s02")
    assert isinstance(result, ReceiptRefused) and result.reason == "station_mismatch"


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _flip_payload_byte(compact: str) -> str:
    head, body, sig = compact.split(".")
    raw = bytearray(_unb64(body))
    raw[raw.index(b'"total_cents":14899') + len(b'"total_cents":1489')] ^= 0x01  # 14899 becomes 14898
    return f"{head}.{_b64(bytes(raw))}.{sig}"


def _change_order(compact: str) -> str:
    head, body, sig = compact.split(".")
    payload = json.loads(_unb64(body))
    payload["order"]["items"][0]["quantity"] = 2
    return f"{head}.{_b64(json.dumps(payload).encode())}.{sig}"


def _sign_with_another_key(compact: str) -> str:
    return ReceiptKey().sign(json.loads(_unb64(compact.split(".")[1])))


def _another_signature_under_the_lab_kid(compact: str) -> str:
    head, body, _ = compact.split(".")
    return f"{head}.{body}.{_sign_with_another_key(compact).split('.')[2]}"


def _wrong_kid(compact: str) -> str:
    head, body, sig = compact.split(".")
    header = {**json.loads(_unb64(head)), "kid": ReceiptKey().kid}
    return f"{_b64(json.dumps(header).encode())}.{body}.{sig}"


TAMPERINGS = {
    "payload byte flipped": (_flip_payload_byte, "bad_signature"),
    "order changed": (_change_order, "bad_signature"),
    "signed by another key": (_sign_with_another_key, "unknown_key"),
    "another key's signature under the lab's kid": (_another_signature_under_the_lab_kid, "bad_signature"),
    "wrong kid": (_wrong_kid, "unknown_key"),
    "truncated": (lambda c: c.rsplit(".", 1)[0], "malformed"),
}


@pytest.fixture(scope="module")
def real_receipt(browser: Browser, lab: LabServer) -> str:
    context = browser.new_context(user_agent=BROWSER_UA)
    try:
        return walk_to_checkout(context.new_page(), lab, "s01")[0]
    finally:
        context.close()


@pytest.mark.parametrize("kind", sorted(TAMPERINGS))
def test_a_tampered_receipt_is_refused_with_its_reason(lab, real_receipt, kind):
    tamper, expected = TAMPERINGS[kind]
    assert isinstance(verify(lab, real_receipt), ReceiptVerified)
    result = verify(lab, tamper(real_receipt))
    assert isinstance(result, ReceiptRefused) and result.reason == expected, result


def test_a_receipt_from_another_lab_is_refused_by_ours(lab, real_receipt):
    with LabServer() as other:  # another process, its own key: its receipts do not verify under ours
        assert isinstance(verify(other, real_receipt), ReceiptRefused)


def test_receipts_outlive_a_restart_when_the_lab_keeps_its_key(browser):
    seed = bytes(range(32))
    with LabServer(receipt_key=seed) as first:
        context = browser.new_context(user_agent=BROWSER_UA)
        try:
            compact = walk_to_checkout(context.new_page(), first, "s01")[0]
        finally:
            context.close()
    with LabServer(receipt_key=seed) as restarted:
        result = run(HttpxReceiptVerifier(restarted.url_for("s07")).verify, compact)
    assert isinstance(result, ReceiptVerified)


def test_fetching_keys_is_bounded_and_refuses_what_is_not_a_jwks(lab):
    with pytest.raises(ReceiptKeysError, match="more than"):
        run(lambda: fetch_receipt_keys(lab.url_for("s01"), max_bytes=10))
    with pytest.raises(ReceiptKeysError):
        run(fetch_receipt_keys, "ftp://lab.localhost")
    with pytest.raises(ReceiptKeysError):
        run(lambda: fetch_receipt_keys("http://127.0.0.1:9", timeout_s=1))
