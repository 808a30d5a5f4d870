"""A lab receipt is accepted only when its shape, key, signature, order digest and station all hold.

Receipts here are signed by the lab's own code (lab.receipts), so the two implementations check each other.
"""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.receipts import cryptography_ed25519_check
from domain.leaderboards.receipts import ReceiptRefused, ReceiptVerified, jwk_thumbprint, order_digest, verify_receipt
from lab.receipts import ReceiptKey, order_sha256

ORDER = {
    "station": "s05",
    "items": [
        {
            "kind": "shoes",
            "product": "aero-run-2",
            "name": "Aero Run 2",
            "colour": "black",
            "size": "EU 42",
            "quantity": 1,
            "unit_price_cents": 13900,
        }
    ],
    "delivery_cents": 999,
    "total_cents": 14899,
    "currency": "USD",
    "consent": None,
}
LAB = ReceiptKey(bytes(range(32)))
OTHER = ReceiptKey(bytes(range(1, 33)))


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def receipt(key: ReceiptKey = LAB, agent: str | None = None, order: dict | None = None) -> str:
    return key.receipt("s05", "s05.lab.localhost:8700", order or ORDER, agent)


def check(compact: str, station: str | None = None, jwks: dict | None = None):
    return verify_receipt(compact, jwks or LAB.jwks(), cryptography_ed25519_check, station)


def with_payload(compact: str, change) -> str:
    head, body, sig = compact.split(".")
    payload = json.loads(unb64(body))
    change(payload)
    return f"{head}.{b64(json.dumps(payload).encode())}.{sig}"


def reason(result) -> str:
    assert isinstance(result, ReceiptRefused), result
    return result.reason


def test_a_receipt_signed_by_the_lab_verifies_with_its_order_and_station():
    result = check(receipt(agent="agent-key-thumbprint"), station="s05")
    assert isinstance(result, ReceiptVerified)
    assert (result.station, result.order, result.agent_keyid) == ("s05", ORDER, "agent-key-thumbprint")
    assert result.kid == LAB.kid and result.host == "s05.lab.localhost:8700" and result.course == "2.1"


def test_an_unsigned_agent_is_recorded_as_none():
    result = check(receipt())
    assert isinstance(result, ReceiptVerified) and result.agent_keyid is None


def test_the_order_digest_is_the_same_in_the_lab_and_the_domain():
    unicode_order = {**ORDER, "items": [{**ORDER["items"][0], "name": "Fjäll Trail Ø"}]}
    assert order_digest(unicode_order) == order_sha256(unicode_order)


def test_the_kid_is_the_rfc_7638_thumbprint_of_the_lab_key():
    assert jwk_thumbprint(LAB.x) == LAB.kid


def test_a_flipped_payload_byte_is_refused():
    head, body, sig = receipt().split(".")
    flipped = body[:40] + ("A" if body[40] != "A" else "B") + body[41:]
    assert reason(check(f"{head}.{flipped}.{sig}")) in ("bad_signature", "malformed")


def test_a_changed_order_is_refused_as_a_bad_signature():
    tampered = with_payload(receipt(), lambda p: p["order"].update(total_cents=100))
    assert reason(check(tampered)) == "bad_signature"


def test_a_changed_order_with_its_digest_recomputed_is_still_a_bad_signature():
    def change(payload: dict) -> None:
        payload["order"]["total_cents"] = 100
        payload["order_sha256"] = order_digest(payload["order"])

    assert reason(check(with_payload(receipt(), change))) == "bad_signature"


def test_a_receipt_signed_by_another_key_is_refused_as_unknown():
    assert reason(check(receipt(OTHER))) == "unknown_key"


def test_another_keys_signature_under_the_lab_kid_is_a_bad_signature():
    head, body, _ = receipt().split(".")
    forged = OTHER.sign(json.loads(unb64(body))).split(".")[2]
    assert reason(check(f"{head}.{body}.{forged}")) == "bad_signature"


def test_a_wrong_kid_is_an_unknown_key():
    head, body, sig = receipt().split(".")
    header = {**json.loads(unb64(head)), "kid": OTHER.kid}
    assert reason(check(f"{b64(json.dumps(header).encode())}.{body}.{sig}")) == "unknown_key"


def test_a_jwks_kid_member_is_not_trusted_over_the_key_itself():
    lying = {"keys": [{**OTHER.jwks()["keys"][0], "kid": LAB.kid}]}
    assert reason(check(receipt(), jwks=lying)) == "unknown_key"


def test_a_digest_that_does_not_match_the_order_is_refused_even_when_signed():
    payload = json.loads(unb64(receipt().split(".")[1]))
    payload["order_sha256"] = "0" * 64
    assert reason(check(LAB.sign(payload))) == "order_digest_mismatch"


def test_a_receipt_for_another_station_is_refused():
    assert reason(check(receipt(), station="s01")) == "station_mismatch"


def test_an_order_of_another_station_inside_the_receipt_is_refused():
    order = {**ORDER, "station": "s01"}
    assert reason(check(LAB.receipt("s05", "s05.lab.localhost", order, None))) == "station_mismatch"


@pytest.mark.parametrize(
    "compact",
    [
        "",
        "a.b",
        "a.b.c.d",
        "!!.!!.!!",
        "e30.e30.AA",  # {} header and payload
        "x" * 20_000,
    ],
)
def test_malformed_receipts_are_refused_as_malformed(compact):
    assert reason(check(compact)) == "malformed"


@pytest.mark.parametrize(
    "header",
    [{"alg": "none", "kid": LAB.kid, "typ": "nordlys-receipt+jws"}, {"alg": "EdDSA", "kid": LAB.kid, "typ": "JWT"}],
)
def test_another_algorithm_or_type_is_malformed(header):
    _, body, sig = receipt().split(".")
    assert reason(check(f"{b64(json.dumps(header).encode())}.{body}.{sig}")) == "malformed"


def test_another_issuer_is_malformed():
    payload = json.loads(unb64(receipt().split(".")[1]))
    assert reason(check(LAB.sign({**payload, "iss": "someone-else"}))) == "malformed"


@given(st.text(max_size=300))
def test_any_text_is_verified_or_refused_never_an_error(text):
    assert isinstance(check(text), ReceiptRefused)


@given(st.integers(min_value=0, max_value=3), st.integers(min_value=0, max_value=255), st.integers(0, 400))
def test_any_single_byte_change_to_a_receipt_is_refused(part, value, position):
    parts = receipt().split(".")
    raw = bytearray(unb64(parts[min(part, 2)]))
    index = 0 if part == 3 else position % len(raw)
    if raw[index] == value:
        return
    raw[index] = value
    parts[min(part, 2)] = b64(bytes(raw))
    assert isinstance(check(".".join(parts)), ReceiptRefused)
