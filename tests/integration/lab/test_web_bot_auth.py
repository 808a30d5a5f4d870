"""s13: named bots meet the gate unless they sign with Web Bot Auth; browsers pass untouched."""

from __future__ import annotations

import datetime as dt
import secrets

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

AGENT_UA = "CanItBuyAgent/1.0"


def gated(response) -> bool:
    return response.status_code == 403 and "Verify you are human" in response.text


def test_a_plain_browser_passes(client):
    assert client("s13").get("/").status_code == 200


def test_an_unsigned_agent_that_names_itself_meets_the_gate_on_every_page(client):
    agent = client("s13", AGENT_UA)
    for path in ("/", "/products/aero-run-2", "/cart", "/checkout", "/sitemap.xml", "/static/lab.css"):
        assert gated(agent.get(path)), path


def test_the_control_store_has_no_gate(client):
    assert client("s01", AGENT_UA).get("/").status_code == 200


def test_a_validly_signed_agent_passes(client, agent_keys, sign):
    agent = client("s13", AGENT_UA)
    response = agent.get("/products/aero-run-2", headers=sign(agent_keys, agent.host))
    assert response.status_code == 200
    assert "Aero Run 2" in response.text


def test_a_signature_without_nonce_is_valid_for_its_whole_window(client, agent_keys, sign):
    agent = client("s13", AGENT_UA)
    headers = sign(agent_keys, agent.host)
    assert [agent.get(p, headers=headers).status_code for p in ("/", "/cart", "/")] == [200, 200, 200]


def test_a_nonce_works_once(client, agent_keys, sign):
    agent = client("s13", AGENT_UA)
    headers = sign(agent_keys, agent.host, nonce=secrets.token_urlsafe(8))
    assert agent.get("/", headers=headers).status_code == 200
    assert gated(agent.get("/", headers=headers))


BAD_SIGNATURES = {
    "wrong key": lambda sign, keys, host: sign(keys, host, private=Ed25519PrivateKey.generate()),
    "expired": lambda sign, keys, host: sign(
        keys, host, created=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=200), lifetime_s=100
    ),
    "window too long": lambda sign, keys, host: sign(keys, host, lifetime_s=3600),
    "created in the future": lambda sign, keys, host: sign(
        keys, host, created=dt.datetime.now(dt.UTC) + dt.timedelta(seconds=120)
    ),
    "missing tag": lambda sign, keys, host: sign(keys, host, tag=None),
    "other tag": lambda sign, keys, host: sign(keys, host, tag="something-else"),
    "wrong authority": lambda sign, keys, host: sign(keys, host.replace("s13.", "s01.")),
    "unknown directory": lambda sign, keys, host: sign(keys, host, agent="http://127.0.0.1:9"),
    "directory over http on a public host": lambda sign, keys, host: sign(keys, host, agent="http://agent.example"),
}


@pytest.mark.parametrize("kind", sorted(BAD_SIGNATURES))
def test_a_bad_signature_meets_the_gate(client, agent_keys, kind, sign):
    agent = client("s13", AGENT_UA)
    assert gated(agent.get("/", headers=BAD_SIGNATURES[kind](sign, agent_keys, agent.host)))


def test_a_tampered_signature_agent_header_meets_the_gate(client, agent_keys, sign):
    agent = client("s13", AGENT_UA)
    headers = sign(agent_keys, agent.host)
    headers["Signature-Agent"] = headers["Signature-Agent"].replace("127.0.0.1", "localhost")
    assert gated(agent.get("/", headers=headers))


def test_the_dictionary_form_of_signature_agent_is_accepted(client, agent_keys, sign):
    agent = client("s13", AGENT_UA)
    headers = sign(agent_keys, agent.host, dictionary_form=True)
    assert headers["Signature-Agent"].startswith("sig1=")
    assert agent.get("/", headers=headers).status_code == 200


def test_garbage_signature_headers_meet_the_gate_not_an_error(client):
    agent = client("s13", AGENT_UA)
    headers = {"Signature-Input": 'sig1=("@authority"', "Signature": "sig1=:!!:", "Signature-Agent": "nonsense"}
    assert gated(agent.get("/", headers=headers))


def test_a_signed_chromium_passes_with_extra_headers(browser, lab, agent_keys, sign):
    context = browser.new_context(user_agent=AGENT_UA)
    page = context.new_page()
    try:
        assert page.goto(lab.url_for("s13")).status == 403
        context.set_extra_http_headers(sign(agent_keys, lab.host_for("s13")))
        assert page.goto(lab.url_for("s13", "/products/aero-run-2")).status == 200
        assert page.get_by_role("heading", name="Aero Run 2").is_visible()
    finally:
        context.close()


# RFC 9421 lets a signature cover more than Web Bot Auth requires; each extra component must hold too.

EXTRA_COMPONENTS = {
    "method and path": (("@method", "@path", "@authority", "signature-agent"), "/cart"),
    "target uri": (("@target-uri", "@authority", "signature-agent"), "/products/aero-run-2?colour=black"),
    "request target and query": (
        ("@request-target", "@query", "@scheme", "@authority", "signature-agent"),
        "/products/aero-run-2?colour=black",
    ),
    "a plain header field": (("@authority", "signature-agent", "user-agent"), "/"),
}


@pytest.mark.parametrize("kind", sorted(EXTRA_COMPONENTS))
def test_a_signature_covering_more_components_passes(client, agent_keys, sign, kind):
    components, target = EXTRA_COMPONENTS[kind]
    agent = client("s13", AGENT_UA)
    headers = sign(agent_keys, agent.host, components=components, target=target, headers={"User-Agent": AGENT_UA})
    assert agent.get(target, headers=headers).status_code == 200


def test_a_signed_path_holds_only_for_that_path(client, agent_keys, sign):
    agent = client("s13", AGENT_UA)
    headers = sign(agent_keys, agent.host, components=("@method", "@path", "@authority", "signature-agent"))
    assert agent.get("/", headers=headers).status_code == 200
    assert gated(agent.get("/cart", headers=headers))


def test_a_signed_method_holds_only_for_that_method(client, agent_keys, sign):
    agent = client("s13", AGENT_UA)
    headers = sign(agent_keys, agent.host, components=("@method", "@authority", "signature-agent"), method="POST")
    assert gated(agent.get("/", headers=headers))


def test_a_signed_query_holds_only_for_that_query(client, agent_keys, sign):
    agent = client("s13", AGENT_UA)
    components = ("@query", "@authority", "signature-agent")
    headers = sign(agent_keys, agent.host, components=components, target="/products/aero-run-2?colour=black")
    assert agent.get("/products/aero-run-2?colour=black", headers=headers).status_code == 200
    assert gated(agent.get("/products/aero-run-2?colour=white", headers=headers))


def test_a_signed_header_field_must_be_sent_unchanged(client, agent_keys, sign):
    agent = client("s13", AGENT_UA)
    components = ("@authority", "signature-agent", "user-agent")
    headers = sign(agent_keys, agent.host, components=components, headers={"User-Agent": "OtherAgent/2.0"})
    del headers["User-Agent"]  # the client sends its own CanItBuyAgent/1.0 instead of the signed value
    assert gated(agent.get("/", headers=headers))


def test_a_signature_without_the_required_components_meets_the_gate(client, agent_keys, sign):
    agent = client("s13", AGENT_UA)
    headers = sign(agent_keys, agent.host, components=("@method", "@path", "signature-agent"))
    assert gated(agent.get("/", headers=headers))
