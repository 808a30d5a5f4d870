"""The blob store's two backends pass the same tests: the folder, and S3 through a real S3 API server (issue 15
item 4). The site serves their blobs the same way: ranges for videos, immutable caching for everything."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from adapters.blobs import Blobs, FileBlobStore, S3BlobStore, open_blobs
from adapters.settings import Settings, SettingsError
from adapters.wiring import build_runtime
from domain.courses.course import CURRENT_VERSION
from domain.eventlog.commands import RecordManualTest
from domain.eventlog.handlers import record_manual_test
from tests.integration.store.conftest import S3Server
from web.app import create_app

MB = 1024 * 1024
WEBM = b"\x1a\x45\xdf\xa3"


@pytest.fixture(params=["folder", "s3"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    if request.param == "folder":
        return Settings(data_dir=tmp_path / "var")
    s3: S3Server = request.getfixturevalue("s3_server")
    return s3.settings(s3.new_bucket(), data_dir=tmp_path / "var")


@pytest.fixture
def blobs(settings: Settings) -> Blobs:
    return open_blobs(settings)


def test_the_setting_chooses_the_backend(settings: Settings, blobs: Blobs) -> None:
    assert isinstance(blobs, S3BlobStore if settings.blob_url else FileBlobStore)


def test_blobs_are_named_by_their_sha256_and_read_back(blobs: Blobs) -> None:
    data = os.urandom(1000)
    digest = blobs.put(data)
    assert digest == hashlib.sha256(data).hexdigest()
    assert blobs.get(digest) == data and blobs.has(digest) and blobs.size(digest) == 1000
    assert blobs.put(data) == digest  # the same bytes twice: one blob
    assert list(blobs.digests()) == [digest]


def test_an_upload_moves_in_from_a_file_read_in_pieces(blobs: Blobs, tmp_path: Path) -> None:
    data = os.urandom(3 * 1024 * 1024 + 5)
    (source := tmp_path / "upload.part").write_bytes(data)
    digest = blobs.put_file(source)
    assert digest == hashlib.sha256(data).hexdigest() and blobs.get(digest) == data
    assert not source.exists()  # moved in, never left behind
    (again := tmp_path / "again.part").write_bytes(data)
    assert blobs.put_file(again) == digest and not again.exists() and list(blobs.digests()) == [digest]


def test_an_unknown_or_malformed_name_is_a_key_error(blobs: Blobs) -> None:
    unknown = hashlib.sha256(b"never stored").hexdigest()
    assert not blobs.has(unknown) and not blobs.has("../../etc/passwd")
    for name in (unknown, "../../etc/passwd"):
        with pytest.raises(KeyError):
            blobs.get(name)
        with pytest.raises(KeyError):
            blobs.size(name)


def test_a_range_is_read_in_pieces_without_the_whole_blob(blobs: Blobs) -> None:
    data = os.urandom(3 * MB)
    digest = blobs.put(data)
    pieces = list(blobs.chunks(digest, 1000, 2 * MB))
    assert b"".join(pieces) == data[1000:2 * MB + 1]
    assert max(len(p) for p in pieces) <= 64 * 1024
    assert blobs.head(digest, 4) == data[:4]


def test_a_blob_is_never_half_written(blobs: Blobs, settings: Settings) -> None:
    # The folder writes a temporary file and renames it; S3 checks the PUT against the sha256 before the object
    # appears. Either way, concurrent writers of the same bytes leave one whole blob.
    data = os.urandom(2 * MB)
    digests: list[str] = []
    threads = [threading.Thread(target=lambda: digests.append(blobs.put(data))) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(digests)) == 1 and blobs.get(digests[0]) == data


def test_the_blob_url_is_checked_at_start() -> None:
    for bad in ("s3:/bucket", "http://bucket", "s3://UPPER", "/var/blobs"):
        with pytest.raises(SettingsError, match="CANITBUY_BLOB_URL"):
            Settings.from_env({"CANITBUY_BLOB_URL": bad})
    read = Settings.from_env({"CANITBUY_BLOB_URL": "s3://canitbuy-blobs/prod", "CANITBUY_S3_SECRET_ACCESS_KEY": "x"})
    assert read.s3_bucket == ("canitbuy-blobs", "prod") and "x'" not in repr(read)


# -- the site serves the blobs of either backend ------------------------------------------------------------------


@pytest.fixture
def served(settings: Settings) -> Iterator[str]:
    settings = Settings(**{**{f: getattr(settings, f) for f in settings.__struct_fields__},
                           "site_secret": "s" * 40})
    app = create_app(settings)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the site did not start"
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _wait_for(url: str) -> None:
    deadline = time.monotonic() + 20
    while httpx.head(url).status_code == 404:  # the site reads manual tests from the log as it moves
        assert time.monotonic() < deadline, url
        time.sleep(0.2)


def test_the_site_streams_a_video_with_ranges_and_caching_from_either_backend(settings: Settings,
                                                                              served: str) -> None:
    video = WEBM + os.urandom(5 * MB)
    with build_runtime(settings) as runtime:
        digest = runtime.blobs.put(video)
        [test_id] = record_manual_test(runtime.record, RecordManualTest(
            agent_name="Comet", tested_on=date(2026, 11, 24), outcomes={"s01": "stopped"},
            course_version=CURRENT_VERSION, video=digest, by="ann@example.com"))
    url = f"{served}/manual-tests/{test_id}/video"
    _wait_for(url)
    whole = httpx.get(url)
    assert whole.status_code == 200 and whole.content == video
    assert whole.headers["content-type"] == "video/webm" and whole.headers["accept-ranges"] == "bytes"
    assert whole.headers["cache-control"] == "public, max-age=31536000, immutable"
    part = httpx.get(url, headers={"range": "bytes=1000-1999"})
    assert part.status_code == 206 and part.content == video[1000:2000]
    assert part.headers["content-range"] == f"bytes 1000-1999/{len(video)}"
    tail = httpx.get(url, headers={"range": "bytes=-10"})
    assert tail.status_code == 206 and tail.content == video[-10:]
    beyond = httpx.get(url, headers={"range": f"bytes={len(video)}-"})
    assert beyond.status_code == 416 and beyond.headers["content-range"] == f"bytes */{len(video)}"
    again = httpx.get(url, headers={"if-none-match": whole.headers["etag"]})
    assert again.status_code == 304 and not again.content


def test_a_video_missing_from_the_store_is_a_404(settings: Settings, served: str) -> None:
    with build_runtime(settings) as runtime:
        [test_id] = record_manual_test(runtime.record, RecordManualTest(
            agent_name="Comet", tested_on=date(2026, 11, 24), outcomes={"s01": "stopped"},
            course_version=CURRENT_VERSION, video=hashlib.sha256(b"lost").hexdigest(), by="ann@example.com"))
    url = f"{served}/manual-tests/{test_id}/video"
    deadline = time.monotonic() + 20
    got: Any = None
    while time.monotonic() < deadline:
        got = httpx.get(url)
        if "missing from the store" in got.text:
            break
        time.sleep(0.2)
    assert got.status_code == 404 and "missing from the store" in got.text
