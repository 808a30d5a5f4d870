"""A keyid is a base64url thumbprint, and one in 64 begins with "-": `canitbuy lab serve --own-key-id -3pB...`
must take it as the option's value, not fail as `expected one argument` (seen in CI, 2 December 2026)."""

from __future__ import annotations

import pytest

from ops.cli import build_parser, join_dashed_values, main

DASHED = "-3pBv6uVl6qEqVF0InjunOPk2m3HdcEQyFt1KM-dMKo"


def _parsed(*words: str):
    arguments = join_dashed_values(words)
    return build_parser(arguments).parse_args(arguments)


def test_a_keyid_that_begins_with_a_dash_is_the_options_value() -> None:
    args = _parsed("lab", "serve", "--own-key-id", DASHED, "--own-key-id", "plainKeyId", "--port", "8123")
    assert args.own_key_id == [DASHED, "plainKeyId"]
    assert args.port == 8123


def test_the_joined_form_and_other_words_are_left_as_they_are() -> None:
    words = ["lab", "serve", f"--own-key-id={DASHED}", "--no-rate-limit"]
    assert join_dashed_values(words) == words
    assert _parsed(*words).own_key_id == [DASHED]


def test_the_option_without_a_value_is_still_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["lab", "serve", "--own-key-id"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--own-key-id" in err and "see canitbuy lab serve --help" in err
