"""Web Bot Auth: our signature checked by an independent implementation, the directory served, the key private.

The lab's own gate letting us through is shown by the s13 cells of the expected-results table."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from http_message_signatures import HTTPMessageVerifier, HTTPSignatureKeyResolver, algorithms
from http_message_signatures.exceptions import InvalidSignature

from adapters.agents.rule_agent import builtin_agent
from adapters.botauth import DIRECTORY_PATH, DIRECTORY_TYPE, BotAuthSigner, load_or_create_key, thumbprint
from adapters.browser.playwright_browser import PlaywrightBrowser
from domain.agent.agent_ports import station_task
from domain.agent.episode import CutShort, Episode
from domain.courses.course import load_course
from lab.server import LabServer
from tests.unit.agent.agent_fakes import ListRecorder, MemoryBlobs

pytestmark = pytest.mark.anyio


def test_the_key_is_made_once_and_readable_by_us_alone(tmp_path: Path) -> None:
    first = load_or_create_key(None, tmp_path)
    mode = stat.S_IMODE(os.stat(tmp_path / "agent-signing-key").st_mode)
    assert mode == 0o600
    assert load_or_create_key(None, tmp_path).private_bytes_raw() == first.private_bytes_raw()


async def test_the_directory_is_served_with_its_media_type_and_our_thumbprint(signer: BotAuthSigner) -> None:
    origin = signer.headers("x")["Signature-Agent"].strip('"')
    response = httpx.get(origin + DIRECTORY_PATH)
    assert response.headers["content-type"].startswith(DIRECTORY_TYPE)
    (key,) = response.json()["keys"]
    assert key["kid"] == thumbprint(key) == signer.keyid


class OurKey(HTTPSignatureKeyResolver):
    def __init__(self, key: Ed25519PublicKey) -> None:
        self.key = key

    def resolve_public_key(self, key_id: str) -> Ed25519PublicKey:
        return self.key


def test_an_independent_implementation_verifies_our_signature_for_our_host_only(tmp_path: Path) -> None:
    key = load_or_create_key(None, tmp_path)
    signer = BotAuthSigner(key, "https://agent.example")
    verifier = HTTPMessageVerifier(signature_algorithm=algorithms.ED25519, key_resolver=OurKey(key.public_key()))
    signed = signer.headers("s13.lab.localhost:8700")
    (result,) = verifier.verify(httpx.Request("GET", "http://s13.lab.localhost:8700/", headers=signed))
    assert result.parameters["tag"] == "web-bot-auth" and result.parameters["keyid"] == signer.keyid
    assert result.parameters["expires"] - result.parameters["created"] == 60 and "nonce" not in result.parameters
    assert signed["Signature-Agent"] == '"https://agent.example"'
    with pytest.raises(InvalidSignature):
        verifier.verify(httpx.Request("GET", "http://s14.lab.localhost:8700/", headers=signed))


@pytest.mark.chromium
async def test_a_run_that_meets_s13s_gate_unsigned_by_our_configuration_is_our_error(lab: LabServer) -> None:
    # Unsigned because no key directory the lab can reach was configured: not the model's failure (issue #10).
    task = station_task(load_course(), "s13", lab.url_for("s13"))
    async with PlaywrightBrowser(None) as unsigned:
        results = []
        for signed in (False, True):
            session = await unsigned.session(task.start_url)
            try:
                results.append(await Episode(session=session, agent=builtin_agent("baseline-robust"), task=task,
                                             recorder=ListRecorder(), blobs=MemoryBlobs(), clock=time.monotonic,
                                             signed=signed).run())
            finally:
                await session.close()
    told, believed = results
    assert isinstance(told, CutShort) and told.cause == "our_error" and "could not sign" in told.detail
    # A run that believes it signs is refused by our own gate all the same: our error too, never the model's
    # verification_page result (recorded so before).
    assert isinstance(believed, CutShort) and believed.cause == "our_error", believed
    assert believed.detail.startswith("our lab's bot gate refused our signed requests")
