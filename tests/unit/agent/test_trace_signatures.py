"""A kept trace holds no live Web Bot Auth signature: the values of `Signature` and `Signature-Input` are redacted
wherever headers appear in its JSON lines, `Signature-Agent` and every other line stay byte for byte, the other
entries keep their compressed bytes, and a trace still holding a signature the run sent is refused."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from adapters.browser.trace_file import (
    CALL_STACKS,
    REDACTED,
    SignatureLeft,
    make_publishable,
    redact_signatures,
)
from tests.unit.agent.test_trace_file import contents, raw, write_zip

SIGNATURE = "sig1=:VdkoprxxiwFe9uTQ5OvCz0D7T6lyGYJtSEkp5J4hq2AXOXX/aeAcd8QEE8NJlNlrdU7gLzzeDeU3xjhSpmNhCg==:"
SIGNATURE_INPUT = (
    'sig1=("@authority" "signature-agent");created=1796635810;expires=1796635870;'
    'keyid="LDHNp5ao8OYqxx6vDA2vSB5m6SCtV3nvMmRQjIyQkOY";alg="ed25519";tag="web-bot-auth"'
)
AGENT = '"https://canitbuy.example"'
SENT = {SIGNATURE, SIGNATURE_INPUT}


def line(event: object) -> bytes:
    return json.dumps(event, separators=(",", ":")).encode()


SET_HEADERS = line(
    {
        "type": "before",
        "callId": "c@1",
        "class": "BrowserContext",
        "method": "setExtraHTTPHeaders",
        "params": {
            "headers": [
                {"name": "Signature-Agent", "value": AGENT},
                {"name": "Signature-Input", "value": SIGNATURE_INPUT},
                {"name": "Signature", "value": SIGNATURE},
            ]
        },
    }
)
OPTIONS = line(
    {
        "version": 10,
        "type": "context-options",
        "options": {
            "extraHTTPHeaders": {"signature": SIGNATURE, "SIGNATURE-INPUT": SIGNATURE_INPUT, "Signature-Agent": AGENT}
        },
    }
)
GOTO = line({"type": "before", "callId": "c@2", "method": "goto", "params": {"url": "http://s13.lab.localhost/"}})
SNAPSHOT = line({"type": "frame-snapshot", "snapshot": {"html": ["P", {}, "Signatures: we sign every request"]}})
REQUEST = line(
    {
        "type": "resource-snapshot",
        "snapshot": {
            "request": {
                "method": "GET",
                "headers": [
                    {"name": "Host", "value": "s13.lab.localhost"},
                    {"name": "signature", "value": SIGNATURE},
                    {"name": "Signature-Agent", "value": AGENT},
                    {"name": "signature-input", "value": SIGNATURE_INPUT},
                ],
            },
            "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "text/html"}]},
        },
    }
)
PLAIN = line(
    {
        "type": "resource-snapshot",
        "snapshot": {"request": {"method": "GET", "headers": [{"name": "Host", "value": "s13.lab.localhost"}]}},
    }
)
TRACE = {
    "trace.trace": b"\n".join([OPTIONS, GOTO, SET_HEADERS, SNAPSHOT, GOTO]) + b"\n",
    CALL_STACKS: b'{"files":["/srv/worker.py"]}',
    "trace.network": b"\n".join([PLAIN, REQUEST, PLAIN]) + b"\n",
    "resources/page.html": b"<p>Signature-Agent is how a bot names its key directory</p>" * 20,
}


def holds_a_signature(entries: dict[str, bytes]) -> bool:
    return any(value.encode() in content for content in entries.values() for value in SENT)


@pytest.mark.parametrize("descriptors", [False, True], ids=["sizes-in-headers", "data-descriptors"])
def test_no_signature_value_is_left_in_any_entry_and_the_rest_stays_as_written(
    tmp_path: Path, descriptors: bool
) -> None:
    trace = tmp_path / "trace.zip"
    write_zip(trace, TRACE, descriptors=descriptors)
    before = raw(trace)
    make_publishable(trace, SENT)
    after = contents(trace)  # every entry's CRC checks
    assert list(after) == ["trace.trace", "trace.network", "resources/page.html"]
    assert not holds_a_signature(after)
    assert raw(trace)["resources/page.html"] == before["resources/page.html"]  # not compressed again
    old_lines, new_lines = TRACE["trace.trace"].split(b"\n"), after["trace.trace"].split(b"\n")
    assert [new for old, new in zip(old_lines, new_lines, strict=True) if old == new] == [
        GOTO,
        SNAPSHOT,
        GOTO,
        b"",
    ]  # the lines without a signature header are the same bytes
    options, _, set_headers, _, _ = (json.loads(text) for text in new_lines[:5])
    assert options["options"]["extraHTTPHeaders"] == {
        "signature": REDACTED,
        "SIGNATURE-INPUT": REDACTED,
        "Signature-Agent": AGENT,
    }
    assert set_headers["params"]["headers"] == [
        {"name": "Signature-Agent", "value": AGENT},
        {"name": "Signature-Input", "value": REDACTED},
        {"name": "Signature", "value": REDACTED},
    ]
    plain, request, _, end = after["trace.network"].split(b"\n")
    assert plain == PLAIN and end == b""
    assert [header["value"] for header in json.loads(request)["snapshot"]["request"]["headers"]] == [
        "s13.lab.localhost",
        REDACTED,
        AGENT,
        REDACTED,
    ]
    assert not list(tmp_path.glob("*.tmp"))


def test_a_redacted_line_is_the_same_json_but_for_the_values(tmp_path: Path) -> None:
    redacted = redact_signatures(REQUEST)
    assert redacted is not None
    expected = json.loads(REQUEST)
    for header in expected["snapshot"]["request"]["headers"]:
        if header["name"].lower() in ("signature", "signature-input"):
            header["value"] = REDACTED
    assert json.loads(redacted) == expected


def test_a_trace_made_publishable_again_is_left_as_it_is(tmp_path: Path) -> None:
    trace = tmp_path / "trace.zip"
    write_zip(trace, TRACE)
    make_publishable(trace, SENT)
    once = trace.read_bytes()
    make_publishable(trace, SENT)
    assert trace.read_bytes() == once


def test_lines_that_only_mention_signatures_are_not_written_again() -> None:
    assert redact_signatures(b"\n".join([GOTO, SNAPSHOT, PLAIN])) is None
    assert redact_signatures(b"not json, Signature: x\n" + GOTO) is None


def test_a_line_with_a_lone_surrogate_stays_valid_utf8_json() -> None:
    text = b'{"name":"Signature","value":"' + SIGNATURE.encode() + b'","note":"\\ud800"}'
    redacted = redact_signatures(text)
    assert redacted is not None
    assert json.loads(redacted.decode("utf-8")) == {"name": "Signature", "value": REDACTED, "note": "\ud800"}


def test_a_signature_the_run_sent_still_found_after_the_rewrite_refuses_the_trace(tmp_path: Path) -> None:
    trace = tmp_path / "trace.zip"
    echoed = b"<pre>signature: " + SIGNATURE.encode() + b"</pre>"  # a page echoing the request's headers
    write_zip(trace, {**TRACE, "resources/echo.html": echoed})
    with pytest.raises(SignatureLeft, match="resources/echo.html"):
        make_publishable(trace, SENT)


def test_a_zip64_trace_is_redacted_too(tmp_path: Path) -> None:
    trace = tmp_path / "trace.zip"
    many = {f"resources/{number}": b"" for number in range(0x10000)}  # more entries than a plain zip counts
    write_zip(trace, {**TRACE, **many})
    make_publishable(trace, SENT)
    with zipfile.ZipFile(trace) as archive:
        kept = {name: archive.read(name) for name in ("trace.trace", "trace.network")}
        assert CALL_STACKS not in archive.namelist() and len(archive.namelist()) == len(TRACE) - 1 + len(many)
    assert not holds_a_signature(kept) and REDACTED.encode() in kept["trace.network"]
