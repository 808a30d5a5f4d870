"""Every browser run of the course keeps a Playwright trace and a video in the blob store, named on the run by
Run.MediaKept; the recording page offers both with their sizes; a private run's never open publicly; the check
of the store verifies them; CANITBUY_TRACES=off keeps neither. Real Chromium, the real lab, SQLite."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import anyio
import jsonschema
import msgspec
import pytest

from adapters.settings import Settings, SettingsError
from adapters.wiring import Runtime, build_runtime
from domain.agent.runs import Run
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.eventlog.store_check import StoreProblem, check_store
from lab.server import LabServer
from web.app import create_app
from web.public.recording import load_recording
from workers.executor import execute_run
from workers.leases import open_leases
from workers.resources import MEDIA_FOLDER, build_resources

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

WEEK = "2026-W49"


@pytest.fixture(scope="module")
def lab() -> Iterator[LabServer]:
    with LabServer() as server:
        yield server


def run_on_lab(runtime: Runtime, settings: Settings, lab: LabServer, org: str | None = None) -> UUID:
    """Schedule one built-in agent's run on s01 (an organisation's private test when `org` is given), execute it."""
    command = ScheduleRun.on_course(station="s01", model="baseline-robust", requested_by="test", week=WEEK)
    if org is None:
        [run_id] = schedule_runs(runtime.record, [command])
    else:
        private = Run.schedule(**msgspec.structs.asdict(msgspec.structs.replace(command, org=org)),
                               at=runtime.record.clock())
        runtime.record.save(private)
        run_id = private.id
    resources = build_resources(runtime, open_leases(settings), lab_url=lab.url_for(None), directory_url=None)
    resources.agents.think_seconds = 0.0

    async def go() -> str:
        try:
            return await execute_run({"resources": resources}, str(run_id))
        finally:
            await resources.aclose()

    assert anyio.run(go) in ("passed", "failed")
    return run_id


def media_of(runtime: Runtime, run_id: UUID) -> list[Run.MediaKept]:
    return [e for e in runtime.record.repository.event_store.get(run_id) if isinstance(e, Run.MediaKept)]


def size_words(size: int) -> str:
    """A size as the page writes it (decimal units, one decimal)."""
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"


def playable_seconds(video: bytes, tmp_path: Path) -> float:
    """The video's duration as ffprobe reads it after decoding every frame (an unreadable file fails)."""
    path = tmp_path / "video.webm"
    path.write_bytes(video)
    probe = shutil.which("ffprobe")
    assert probe, "ffprobe (Debian's ffmpeg) is needed to read the videos"
    out = subprocess.run([probe, "-v", "error", "-count_frames", "-show_entries",
                          "format=format_name,duration:stream=codec_name,nb_read_frames", "-of", "json", str(path)],
                         capture_output=True, check=True, timeout=60)
    found = json.loads(out.stdout)
    assert "webm" in found["format"]["format_name"]
    assert found["streams"][0]["codec_name"] in ("vp8", "vp9") and int(found["streams"][0]["nb_read_frames"]) > 0
    return float(found["format"]["duration"])


@pytest.fixture(scope="module")
def traced(lab: LabServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, UUID, UUID]]:
    """A store with two course runs kept with trace and video: a public one, and acme's private test."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("traced") / "var", site_secret="test secret " * 4)
    assert settings.traces  # on unless turned off
    with build_runtime(settings) as runtime:
        runtime.record.register_organisation(slug="acme", name="Acme Shoes", by="staff@canitbuy.com")
        public = run_on_lab(runtime, settings, lab)
        private = run_on_lab(runtime, settings, lab, org="acme")
    yield settings, public, private


def test_a_course_run_keeps_a_trace_zip_and_a_playable_video_in_the_blob_store(traced, tmp_path) -> None:
    settings, public, _ = traced
    with build_runtime(settings) as runtime:
        [kept] = media_of(runtime, public)
        assert kept.trace and kept.video
        trace, video = runtime.blobs.get(kept.trace), runtime.blobs.get(kept.video)
    assert (len(trace), len(video)) == (kept.trace_bytes, kept.video_bytes)
    with zipfile.ZipFile(io.BytesIO(trace)) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        assert "trace.trace" in names and "trace.network" in names
        events = [json.loads(line) for line in archive.read("trace.trace").splitlines() if line.strip()]
    assert any(e.get("type") == "frame-snapshot" for e in events)  # DOM snapshots, for the trace viewer
    # No screencast: reading back every frame Chromium drew cost the course a fifth of its CPU; the video is made
    # of the screens the agent was shown instead.
    assert not any(e.get("type") == "screencast-frame" for e in events)
    assert any(n.startswith("resources/") for n in names)
    assert playable_seconds(video, tmp_path) > 0.3
    assert not any((settings.data_dir / MEDIA_FOLDER).iterdir())  # the files moved into the store, none left


def video_stream(video: bytes, tmp_path: Path) -> dict[str, str]:
    """ffprobe's reading of the video's stream after decoding every frame, with the file's duration."""
    path = tmp_path / "frames.webm"
    path.write_bytes(video)
    out = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-show_entries",
                          "format=duration:stream=width,height,nb_read_frames", "-of", "json", str(path)],
                         capture_output=True, check=True, timeout=60)
    found = json.loads(out.stdout)
    return {**found["streams"][0], "duration": found["format"]["duration"]}


def grey_frames(image: bytes, tmp_path: Path, name: str) -> list[bytes]:
    """Every frame of a video or picture decoded by ffmpeg as 480x300 grey pixels, a byte each."""
    path = tmp_path / name
    path.write_bytes(image)
    command = ["ffmpeg", "-v", "error", "-i", str(path), "-fps_mode", "passthrough",  # each frame once
               "-vf", "scale=480:300", "-f", "rawvideo", "-pix_fmt", "gray", "-"]
    out = subprocess.run(command, capture_output=True, check=True, timeout=60).stdout
    size = 480 * 300
    return [out[at:at + size] for at in range(0, len(out), size)]


def difference(a: bytes, b: bytes) -> float:
    """Mean absolute difference of two grey frames, 0 to 255."""
    return sum(abs(x - y) for x, y in zip(a, b, strict=True)) / len(a)


def test_the_video_shows_each_screen_the_agent_was_shown_then_the_screen_as_the_run_left_it(traced, tmp_path) -> None:
    """One video frame for each step's screenshot, in order, then the screen after the last action (listed twice
    for ffmpeg to show it): the video's frames are the recorded screenshots, not a capture of its own."""
    settings, public, _ = traced
    with build_runtime(settings) as runtime:
        [kept] = media_of(runtime, public)
        assert kept.video
        video = runtime.blobs.get(kept.video)
        recording = load_recording(runtime.record, public, lambda org: False)
        shots = [runtime.blobs.get(step.screenshot) for step in recording.steps if step.screenshot]
    assert len(shots) >= 2
    stream = video_stream(video, tmp_path)
    assert (stream["width"], stream["height"]) == (480, 300)
    assert int(stream["nb_read_frames"]) == len(shots) + 1 + 1
    frames = grey_frames(video, tmp_path, "run.webm")
    for index, shot in enumerate(shots):
        [picture] = grey_frames(shot, tmp_path, f"step-{index}.jpeg")
        closest = min(range(len(frames)), key=lambda i: difference(frames[i], picture))
        assert difference(frames[index], picture) < 3.0, f"step {index + 1}'s screen is not the video's frame"
        assert difference(frames[index], picture) == difference(frames[closest], picture)
    # The run ended on a page the last step's screenshot does not show: its last action was carried out after it.
    assert difference(frames[-1], frames[len(shots) - 1]) > 0.5
    assert 1.0 < float(stream["duration"]) < 60


def test_the_recording_page_offers_the_trace_and_the_video_with_their_sizes(traced) -> None:
    settings, public, _ = traced
    with build_runtime(settings) as runtime:
        [kept] = media_of(runtime, public)
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        page = client.get(f"/runs/{public}")
        recording = client.get(f"/api/runs/{public}.json").json()
        jsonschema.validate(recording, client.get("/api/schemas/run.json").json())
        trace = client.get(f"/runs/{public}/blobs/{kept.trace}")
        video_part = client.get(f"/runs/{public}/blobs/{kept.video}", headers={"Range": "bytes=0-99"})
    assert page.status_code == 200
    html = page.text
    assert "Trace and video" in html
    assert f'src="/runs/{public}/blobs/{kept.video}"' in html
    assert f'href="/runs/{public}/blobs/{kept.trace}"' in html
    assert f"trace.zip, {size_words(kept.trace_bytes)})" in html
    assert f"WebM, {size_words(kept.video_bytes)})" in html
    assert recording["media"] == {"trace": kept.trace, "trace_bytes": kept.trace_bytes, "video": kept.video,
                                  "video_bytes": kept.video_bytes}
    assert trace.status_code == 200 and trace.headers["content-type"] == "application/zip"
    assert f'filename="trace-{public}.zip"' in trace.headers["content-disposition"]
    assert len(trace.content) == kept.trace_bytes
    assert video_part.status_code == 206 and video_part.headers["content-type"] == "video/webm"
    assert video_part.headers["content-range"] == f"bytes 0-99/{kept.video_bytes}" and len(video_part.content) == 100


def test_a_private_runs_trace_and_video_are_never_served_publicly(traced) -> None:
    settings, public, private = traced
    with build_runtime(settings) as runtime:
        [kept] = media_of(runtime, private)
        assert kept.trace and kept.video
        members_view = load_recording(runtime.record, private, lambda org: org == "acme")
        assert members_view.media is not None and members_view.blobs()[kept.video] == "video/webm"
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        for digest in (kept.trace, kept.video):
            assert client.get(f"/runs/{private}/blobs/{digest}").status_code == 404
            assert client.get(f"/runs/{public}/blobs/{digest}").status_code == 404  # not under another run
            assert client.get(f"/org/runs/{private}/blobs/{digest}").status_code == 404  # not signed in
        assert client.get(f"/runs/{private}").status_code == 404
        assert client.get(f"/api/runs/{private}.json").status_code == 404


def test_the_store_check_verifies_the_traces_and_videos(traced) -> None:
    settings, public, _ = traced
    with build_runtime(settings) as runtime:
        report = check_store(runtime.record.read_log, runtime.blobs)
        [kept] = media_of(runtime, public)
        assert kept.trace is not None
        path = runtime.blobs.file(kept.trace)  # type: ignore[attr-defined]
        good = path.read_bytes()
        try:
            path.write_bytes(good[:-1])
            with pytest.raises(StoreProblem, match=f"blob {kept.trace} .* is damaged"):
                check_store(runtime.record.read_log, runtime.blobs)
        finally:
            path.write_bytes(good)
    assert report.blobs >= 4 + 2  # each run's trace and video besides the steps' blobs


def test_traces_off_keeps_no_trace_and_no_video(lab, tmp_path) -> None:
    settings = Settings.from_env({"CANITBUY_DATA_DIR": str(tmp_path / "var"), "CANITBUY_TRACES": "off"})
    assert settings.traces is False
    with build_runtime(settings) as runtime:
        run_id = run_on_lab(runtime, settings, lab)
        assert media_of(runtime, run_id) == []
        assert load_recording(runtime.record, run_id).media is None
        steps = load_recording(runtime.record, run_id).steps
    assert steps and all(s.screenshot for s in steps)  # the steps are recorded as ever
    assert not (settings.data_dir / MEDIA_FOLDER).exists()
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        assert "Trace and video" not in client.get(f"/runs/{run_id}").text
        assert "media" not in client.get(f"/api/runs/{run_id}.json").json()  # older runs' bytes, unchanged


def test_the_setting_reads_on_and_off_and_refuses_anything_else() -> None:
    assert Settings.from_env({}).traces is True
    assert Settings.from_env({"CANITBUY_TRACES": "on"}).traces is True
    assert Settings.from_env({"CANITBUY_TRACES": "OFF"}).traces is False
    with pytest.raises(SettingsError, match="CANITBUY_TRACES must be on or off, not 'sometimes'"):
        Settings.from_env({"CANITBUY_TRACES": "sometimes"})


def test_without_a_video_encoder_a_run_keeps_its_trace_alone_and_its_result(lab, tmp_path) -> None:
    assert Settings.from_env({"PATH": str(tmp_path)}).video_encoder is None  # no ffmpeg there
    settings = Settings(data_dir=tmp_path / "var", video_encoder=None)
    with build_runtime(settings) as runtime:
        run_id = run_on_lab(runtime, settings, lab)
        [kept] = media_of(runtime, run_id)
        assert kept.trace and kept.trace_bytes > 0 and (kept.video, kept.video_bytes) == (None, 0)
        assert runtime.record.get_run(run_id).status == "finished"


def test_a_broken_encoder_loses_the_video_alone(lab, tmp_path) -> None:
    settings = Settings(data_dir=tmp_path / "var", video_encoder="/bin/false")
    with build_runtime(settings) as runtime:
        run_id = run_on_lab(runtime, settings, lab)
        [kept] = media_of(runtime, run_id)
        assert kept.trace and (kept.video, kept.video_bytes) == (None, 0)
    assert not any((settings.data_dir / MEDIA_FOLDER).iterdir())  # the frames unpacked for it are gone too
