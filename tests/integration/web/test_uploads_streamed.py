"""Issue 15 item 3: a 200 MB manual-test video goes into the blob store in pieces: the web process (`canitbuy web
serve`, a process of its own so its peak memory can be read from /proc) grows by less than 100 MB; an over-size
upload is refused before it is all read, and a refused one leaves nothing behind."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from adapters.settings import Settings
from adapters.sqldb import SqlDb
from adapters.staff_accounts import StaffAccounts
from web.staff.manual import MAX_VIDEO_BYTES

ROOT = Path(__file__).resolve().parents[3]
SECRET = "a site secret long enough to sign sessions with"
EMAIL, PASSWORD = "editor@canitbuy.com", "a long staff password"
MB = 1024 * 1024


@dataclass
class Served:
    url: str
    port: int
    process: subprocess.Popen[bytes]
    data_dir: Path

    def memory(self, field: str = "VmRSS") -> int:
        """A memory figure of the server process from /proc, in bytes (VmRSS now, VmHWM its peak so far)."""
        text = Path(f"/proc/{self.process.pid}/status").read_text()
        match = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
        assert match, text
        return int(match.group(1)) * 1024


class Sampler(threading.Thread):
    """The process's resident memory every 20 ms while an upload runs: its highest, against what it was before."""

    def __init__(self, served: Served) -> None:
        super().__init__(daemon=True)
        self.served, self.highest, self.done = served, served.memory(), threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.02):
            self.highest = max(self.highest, self.served.memory())


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    data_dir = tmp_path / "var"
    accounts = StaffAccounts(SqlDb(Settings(data_dir=data_dir)))
    accounts.db.migrate()
    accounts.add(EMAIL, PASSWORD, "staff")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_")}
    env.update(PYTHONPATH=str(ROOT), CANITBUY_DATA_DIR=str(data_dir), CANITBUY_SITE_SECRET=SECRET)
    log = (tmp_path / "site.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "ops.cli", "web", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, (tmp_path / "site.log").read_text()
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "the site did not start"
                time.sleep(0.2)
        yield Served(url, port, process, data_dir)
    finally:
        process.terminate()
        process.wait(timeout=20)


def _signed_in(served: Served) -> tuple[httpx.Client, str, str]:
    client = httpx.Client(base_url=served.url, timeout=300, follow_redirects=False)
    token = secrets.token_urlsafe(16)
    answer = client.post("/staff/sign-in", data={"csrf": token, "email": EMAIL, "password": PASSWORD},
                         headers={"cookie": f"cib_sign_in={token}"})
    assert answer.status_code == 303, answer.text
    cookie = f"cib_staff={answer.cookies['cib_staff']}"
    page = client.get("/staff/manual", headers={"cookie": cookie}).text
    return client, cookie, page.split('name="csrf" value="', 1)[1].split('"', 1)[0]


def _blobs(served: Served) -> list[Path]:
    return [p for p in (served.data_dir / "blobs").rglob("*") if p.is_file()]


def test_a_200_mb_video_is_stored_in_pieces_and_the_process_grows_by_less_than_100_mb(
    served: Served, tmp_path: Path
) -> None:
    video = tmp_path / "walkthrough.mp4"
    with video.open("wb") as out:  # an mp4's ftyp box, then 200 MB less its header of varied bytes
        out.write(b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom")
        block = os.urandom(MB)
        while out.tell() < MAX_VIDEO_BYTES - MB:
            out.write(block)
        out.write(block[: MAX_VIDEO_BYTES - out.tell()])
    assert video.stat().st_size == MAX_VIDEO_BYTES
    client, cookie, csrf = _signed_in(served)
    form = {"csrf": csrf, "agent_name": "Comet", "tested_on": "2026-11-25", "outcome_s01": "passed"}
    before, peak_before = served.memory(), served.memory("VmHWM")
    sampler = Sampler(served)
    sampler.start()
    with video.open("rb") as handle:
        answer = client.post("/staff/manual", data=form, files={"video": ("walkthrough.mp4", handle, "video/mp4")},
                             headers={"cookie": cookie})
    sampler.done.set()
    sampler.join()
    grown = max(sampler.highest, served.memory()) - before
    assert served.memory("VmHWM") - peak_before < 100 * MB  # no peak between two samples either
    print(f"\n200 MB upload: the web process's resident memory was {before / MB:.0f} MB and at most "
          f"{(before + grown) / MB:.0f} MB during the upload (+{grown / MB:.1f} MB)")
    assert answer.status_code == 303, answer.text
    assert grown < 100 * MB, f"the site grew by {grown // MB} MB for a 200 MB upload"
    digest = hashlib.sha256()
    with video.open("rb") as handle:
        while chunk := handle.read(MB):
            digest.update(chunk)
    (stored,) = _blobs(served)
    assert stored.name == digest.hexdigest() and stored.stat().st_size == MAX_VIDEO_BYTES
    assert list((served.data_dir / "uploads").iterdir()) == []  # no temporary file left


def test_an_over_size_upload_is_refused_before_it_is_all_read_and_a_refused_one_leaves_nothing(
    served: Served,
) -> None:
    client, cookie, csrf = _signed_in(served)
    # 300 MB announced, 1 MB sent: the answer comes while 299 MB are still unsent.
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as raw:
        raw.sendall(
            f"POST /staff/manual HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n"
            f"Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: {300 * MB}\r\n\r\n".encode()
        )
        raw.sendall(b"--xyz\r\n" + b"\0" * MB)
        head = raw.recv(4096).decode("latin-1")
    assert head.startswith("HTTP/1.1 413"), head
    # A video whose bytes are no video: refused, nothing stored, no temporary file left.
    form = {"csrf": csrf, "agent_name": "Comet", "tested_on": "2026-11-25", "outcome_s01": "passed"}
    fake = client.post("/staff/manual", data=form, files={"video": ("v.mp4", b"\x89PNG" + b"\0" * 3 * MB,
                                                                    "video/mp4")}, headers={"cookie": cookie})
    assert fake.status_code == 400 and "not the video type" in fake.text
    assert _blobs(served) == [] and list((served.data_dir / "uploads").iterdir()) == []
