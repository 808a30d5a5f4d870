"""Property tests: random header text never crashes the structured-field parsing, the verifier or the store."""

from __future__ import annotations

import base64
import contextlib
import json

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.datastructures import Headers
from starlette.testclient import TestClient

from lab.app import create_app
from lab.botauth import fields
from lab.botauth.directory import KeyDirectory
from lab.botauth.verifier import SignatureRejected, SignedRequest, Verifier

# Header values as a client could send them: visible ASCII, spaces and tabs, plus the characters that matter.
HEADER_TEXT = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from('\t"();=:,\\'))
# Text built from the pieces of real Signature-Input values, so the parser's deeper branches are reached.
PIECES = st.sampled_from(
    [
        "sig1=",
        "(",
        ")",
        '"@authority"',
        '"signature-agent"',
        ";",
        "created=",
        "1700000000",
        'tag="web-bot-auth"',
        "keyid=",
        '"',
        ",",
        " ",
        ":",
        "YWJj",
        "=",
        "\\",
        "-",
        "key=",
        "sig2",
    ]
)
FIELD_LIKE = st.lists(PIECES, max_size=30).map("".join) | HEADER_TEXT


@given(FIELD_LIKE)
def test_dictionary_parsing_raises_only_field_errors(text):
    try:
        members = fields.split_members(text)
    except fields.FieldError:
        return
    assert all(isinstance(key, str) and isinstance(value, str) for key, value in members.items())


@given(FIELD_LIKE)
def test_inner_list_parsing_raises_only_field_errors(text):
    try:
        parsed = fields.parse_inner_list(text)
    except fields.FieldError:
        return
    assert all(isinstance(name, str) for name, _ in parsed.items)


@given(FIELD_LIKE)
def test_string_and_byte_parsing_raise_only_field_errors(text):
    for parse in (fields.parse_string, fields.parse_bytes):
        with contextlib.suppress(fields.FieldError):
            parse(text)


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E)))
def test_a_string_round_trips_through_serialisation(value):
    assert fields.parse_string(fields.serialise_string(value)) == (value, "")


def _request(signature_input: str, signature: str, agent: str) -> SignedRequest:
    headers = Headers(
        raw=[
            (b"host", b"s13.lab.localhost"),
            (b"signature-input", signature_input.encode("latin-1")),
            (b"signature", signature.encode("latin-1")),
            (b"signature-agent", agent.encode("latin-1")),
        ]
    )
    return SignedRequest("GET", "http", "s13.lab.localhost", "/", "", headers)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(FIELD_LIKE, FIELD_LIKE, FIELD_LIKE)
def test_the_verifier_only_ever_rejects_random_signatures(signature_input, signature, agent):
    verifier = Verifier(KeyDirectory(trust_local=False))
    with pytest.raises(SignatureRejected):
        anyio.run(verifier.verify, _request(signature_input, signature, agent))


@pytest.fixture(scope="module")
def store():
    with TestClient(create_app(), base_url="http://s13.lab.localhost") as client:
        yield client


@pytest.fixture(scope="module")
def control_with_a_cart():
    with TestClient(create_app(), base_url="http://s01.lab.localhost") as client:
        form = {"product": "aero-run-2", "colour": "black", "size": "42", "pairs": "1"}
        assert client.post("/cart/add", data=form, follow_redirects=False).status_code == 303
        yield client


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(FIELD_LIKE, FIELD_LIKE, FIELD_LIKE)
def test_the_store_never_answers_random_signature_headers_with_a_server_error(store, signature_input, signature, agent):
    headers = {
        "User-Agent": "CanItBuyAgent/1.0",
        "Signature-Input": signature_input.strip(),
        "Signature": signature.strip(),
        "Signature-Agent": agent.strip(),
    }
    for path in ("/", "/checkout"):
        assert store.get(path, headers=headers).status_code in (200, 403)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(FIELD_LIKE, FIELD_LIKE, FIELD_LIKE)
def test_a_checkout_with_random_signature_headers_still_opens_with_an_unsigned_receipt(
    control_with_a_cart, signature_input, signature, agent
):
    headers = {
        "Signature-Input": signature_input.strip(),
        "Signature": signature.strip(),
        "Signature-Agent": agent.strip(),
    }
    response = control_with_a_cart.get("/checkout", headers=headers)
    assert response.status_code == 200
    payload = response.headers["Nordlys-Receipt"].split(".")[1]
    assert json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["agent_keyid"] is None
