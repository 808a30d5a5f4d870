"""A key or secret made on first start is made once, however many processes start on one data directory at the
same moment: every process gets the same one, none fails, and the file is its owner's alone."""

from __future__ import annotations

import multiprocessing
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from adapters.botauth import KEY_FILE, keyid_of, load_or_create_key
from adapters.private_files import write_once
from lab.receipts import load_or_create_seed
from web.staff.session import SECRET_FILE, load_or_create_secret

PROCESSES = 16
ROUNDS = 5


def _agent_key(folder: str) -> str:
    return keyid_of(load_or_create_key(None, Path(folder)))


def _site_secret(folder: str) -> str:
    return load_or_create_secret(None, Path(folder)).decode()


def _lab_seed(folder: str) -> str:
    return load_or_create_seed(Path(folder) / "lab-seed").hex()


def _at_once(make: Callable[[str], str], folder: str, barrier: multiprocessing.synchronize.Barrier,
             out: multiprocessing.queues.Queue[str]) -> None:
    barrier.wait()
    try:
        out.put(make(folder))
    except Exception as error:  # noqa: BLE001 - the test reports what any process met
        out.put(f"failed: {type(error).__name__}: {error}")


@pytest.mark.parametrize(("make", "name"), [(_agent_key, KEY_FILE), (_site_secret, SECRET_FILE),
                                            (_lab_seed, "lab-seed")])
def test_processes_starting_together_share_one_file(make: Callable[[str], str], name: str, tmp_path: Path) -> None:
    for round_ in range(ROUNDS):
        _race(make, name, tmp_path / f"var-{round_}")


def _race(make: Callable[[str], str], name: str, folder: Path) -> None:
    context = multiprocessing.get_context("fork")
    barrier, out = context.Barrier(PROCESSES), context.Queue()
    workers = [context.Process(target=_at_once, args=(make, str(folder), barrier, out)) for _ in range(PROCESSES)]
    for worker in workers:
        worker.start()
    got = [out.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    assert not [g for g in got if g.startswith("failed")], got
    assert len(set(got)) == 1, "every process uses the one kept"
    assert make(str(folder)) == got[0], "and a later start reads the same"
    assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == [], "no temporary file is left"


def test_a_file_made_meanwhile_by_another_process_is_kept_and_read(tmp_path: Path) -> None:
    """The moment the race is lost: the file appeared after this process found none."""
    path = tmp_path / "var" / "secret"
    assert write_once(path, b"first") == b"first"
    assert write_once(path, b"second") == b"first" and path.read_bytes() == b"first"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and sorted(p.name for p in path.parent.iterdir()) == ["secret"]
