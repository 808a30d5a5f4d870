"""The lab's receipt key: made once into a private file, and the same key (and kid) after every restart."""

from __future__ import annotations

import stat

import pytest

from lab.receipts import ReceiptKey, load_or_create_seed


def test_a_missing_key_file_is_made_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "var" / "lab-receipt.key"
    seed = load_or_create_seed(path)
    assert len(seed) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_key_file_gives_the_same_key_after_a_restart(tmp_path):
    path = tmp_path / "lab-receipt.key"
    first = ReceiptKey(load_or_create_seed(path))
    again = ReceiptKey(load_or_create_seed(path))
    assert first.kid == again.kid and first.jwks() == again.jwks()


def test_without_a_seed_each_process_has_its_own_key():
    assert ReceiptKey().kid != ReceiptKey().kid


def test_a_key_file_that_holds_no_seed_is_refused(tmp_path):
    path = tmp_path / "lab-receipt.key"
    path.write_text("not a seed\n")
    with pytest.raises(ValueError, match="32-byte"):
        load_or_create_seed(path)


def test_a_seed_must_be_32_bytes():
    with pytest.raises(ValueError):
        ReceiptKey(b"short")
