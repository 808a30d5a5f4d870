"""Every browser run of the course keeps a Playwright trace and the screens of its video in the blob store, named
on the run by Run.MediaKept; the worker makes no video: the site makes it of the screens the first time it is
played (once, however many ask at once), and serves a video an older run named as it is; the recording page offers
both; a private run's never open publicly; the check of the store verifies them; CANITBUY_TRACES=off keeps
neither. Real Chromium, the real lab, the real ffmpeg (behind a script that counts its calls), SQLite."""

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

from adapters.blobs import Blobs
from adapters.settings import Settings, SettingsError
from adapters.wiring import Runtime, build_runtime
from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.eventlog.store_check import StoreProblem, check_store
from lab.server import LabServer
from web.app import create_app
from web.public.recording import load_recording
from web.videos import VIDEO_NOTES, RunVideos
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


def counting_encoder(folder: Path) -> tuple[str, Path]:
    """The system's ffmpeg behind a script that notes each call: the script's path, and the file of its calls."""
    ffmpeg = shutil.which("ffmpeg")
    assert ffmpeg, "ffmpeg (Debian's) makes the videos"
    calls = folder / "ffmpeg-calls"
    script = folder / "ffmpeg"
    script.write_text(f'#!/bin/sh\necho call >> "{calls}"\nexec "{ffmpeg}" "$@"\n')
    script.chmod(0o755)
    return str(script), calls


def calls_of(calls: Path) -> int:
    return len(calls.read_text().splitlines()) if calls.exists() else 0


@pytest.fixture(scope="module")
def traced(lab: LabServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, UUID, UUID, Path]]:
    """A store with two course runs kept with trace and screens: a public one, and acme's private test; and the
    file where the encoder notes its calls."""
    folder = tmp_path_factory.mktemp("traced")
    encoder, calls = counting_encoder(folder)
    settings = Settings(data_dir=folder / "var", site_secret="test secret " * 4, video_encoder=encoder)
    assert settings.traces  # on unless turned off
    with build_runtime(settings) as runtime:
        runtime.record.register_organisation(slug="acme", name="Acme Shoes", by="staff@canitbuy.com")
        public = run_on_lab(runtime, settings, lab)
        private = run_on_lab(runtime, settings, lab, org="acme")
    yield settings, public, private, calls


def test_a_course_run_keeps_a_trace_zip_and_its_videos_screens_and_makes_no_video(traced) -> None:
    settings, public, _, calls = traced
    assert calls_of(calls) == 0  # the worker ran no ffmpeg: the video is made when it is first played
    with build_runtime(settings) as runtime:
        [kept] = media_of(runtime, public)
        assert kept.trace and (kept.video, kept.video_bytes) == (None, 0)
        trace = runtime.blobs.get(kept.trace)
        recording = load_recording(runtime.record, public, lambda org: False)
        shots = [step.screenshot for step in recording.steps if step.screenshot]
        assert all(runtime.blobs.has(screen.screenshot) for screen in kept.screens)
    assert len(trace) == kept.trace_bytes
    # Each step's screenshot in order, then the screen as the run left it (after its last action), a second.
    assert [screen.screenshot for screen in kept.screens[:-1]] == shots and len(shots) >= 2
    assert kept.screens[-1].screenshot not in shots and kept.screens[-1].seconds == 1.0
    assert all(screen.seconds > 0 for screen in kept.screens)
    with zipfile.ZipFile(io.BytesIO(trace)) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        assert "trace.trace" in names and "trace.network" in names
        assert "trace.stacks" not in names  # the call stacks of every run on the connection (trace_file.py)
        events = [json.loads(line) for line in archive.read("trace.trace").splitlines() if line.strip()]
    assert any(e.get("type") == "frame-snapshot" for e in events)  # DOM snapshots, for the trace viewer
    # No screencast: reading back every frame Chromium drew cost the course a fifth of its CPU; the video is made
    # of the screens the agent was shown instead.
    assert not any(e.get("type") == "screencast-frame" for e in events)
    assert any(n.startswith("resources/") for n in names)
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


def test_the_video_is_made_of_its_screens_when_first_played_and_once(traced, tmp_path) -> None:
    """One video frame for each step's screenshot, in order, then the screen after the last action (listed twice
    for ffmpeg to show it): the video's frames are the recorded screenshots, not a capture of its own. It is made
    at the first request; later ones, and a site started anew, serve the same blob."""
    settings, public, _, calls = traced
    before = calls_of(calls)
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        first = client.get(f"/runs/{public}/video.webm")
        again = client.get(f"/runs/{public}/video.webm")
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        restarted = client.get(f"/runs/{public}/video.webm", headers={"Range": "bytes=0-99"})
    assert first.status_code == 200 and first.headers["content-type"] == "video/webm"
    assert again.content == first.content and calls_of(calls) == before + 1
    assert restarted.status_code == 206 and restarted.content == first.content[:100]
    assert restarted.headers["content-range"] == f"bytes 0-99/{len(first.content)}"
    video = first.content
    with build_runtime(settings) as runtime:
        recording = load_recording(runtime.record, public, lambda org: False)
        shots = [runtime.blobs.get(step.screenshot) for step in recording.steps if step.screenshot]
    assert playable_seconds(video, tmp_path) > 0.3
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


def test_requests_for_the_same_video_at_once_make_it_once(traced, tmp_path) -> None:
    settings, public, _, _ = traced
    encoder, calls = counting_encoder(tmp_path)
    with build_runtime(settings) as runtime:
        [kept] = media_of(runtime, public)
        videos = RunVideos(runtime.blobs, tmp_path / VIDEO_NOTES, encoder)

        async def four() -> list[str]:
            made: list[str] = []

            async def one() -> None:
                made.append(await videos.video(kept.screens))

            async with anyio.create_task_group() as group:
                for _ in range(4):
                    group.start_soon(one)
            return made

        made = anyio.run(four)
    assert len(set(made)) == 1 and len(made) == 4 and calls_of(calls) == 1


def test_the_recording_page_offers_the_trace_and_the_video(traced) -> None:
    settings, public, _, _ = traced
    with build_runtime(settings) as runtime:
        [kept] = media_of(runtime, public)
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        page = client.get(f"/runs/{public}")
        recording = client.get(f"/api/runs/{public}.json").json()
        jsonschema.validate(recording, client.get("/api/schemas/run.json").json())
        trace = client.get(f"/runs/{public}/blobs/{kept.trace}")
        last_screen = client.get(f"/runs/{public}/blobs/{kept.screens[-1].screenshot}")
        head = client.head(f"/runs/{public}/video.webm")
    assert page.status_code == 200
    html = page.text
    assert "Trace and video" in html
    assert f'src="/runs/{public}/video.webm"' in html and 'preload="none"' in html  # reading the page makes none
    assert f'poster="/runs/{public}/blobs/{kept.screens[0].screenshot}"' in html
    assert f'href="/runs/{public}/blobs/{kept.trace}"' in html
    assert f"trace.zip, {size_words(kept.trace_bytes)})" in html
    assert "not the call stacks of our harness" in html  # why the viewer's Source tab is empty
    assert f"WebM, {len(kept.screens)} screens, made when first played)" in html
    assert recording["media"] == {"trace": kept.trace, "trace_bytes": kept.trace_bytes, "video": None,
                                  "video_bytes": 0, "screens": [{"screenshot": s.screenshot, "seconds": s.seconds}
                                                                for s in kept.screens]}
    assert trace.status_code == 200 and trace.headers["content-type"] == "application/zip"
    assert f'filename="trace-{public}.zip"' in trace.headers["content-disposition"]
    assert len(trace.content) == kept.trace_bytes
    assert last_screen.status_code == 200 and last_screen.headers["content-type"] == "image/jpeg"
    assert head.status_code == 200 and head.headers["content-type"] == "video/webm" and not head.content


def test_a_video_an_older_run_named_is_served_as_it_is(traced, tmp_path) -> None:
    """Runs until 2 December 2026 named a video made as they ended: it is served, nothing is made anew."""
    settings, _, _, calls = traced
    before = calls_of(calls)
    older = b"\x1aE\xdf\xa3" + b"an older run's video " * 100
    with build_runtime(settings) as runtime:
        at = runtime.record.clock()
        run = Run.schedule(station="s01", model="baseline-robust", course_version="2.1", week=WEEK,
                           kind="browser", requested_by="test", at=at)
        run.start(worker="w", browser_version="chromium", agent_version="a", at=at)
        run.finish(Verdict(passed=False, outcome="stopped"), steps=0, seconds=1.0, at=at)
        digest = runtime.blobs.put(older)
        run.keep_media(trace=None, trace_bytes=0, video=digest, video_bytes=len(older), at=at)
        runtime.record.save(run)
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        page = client.get(f"/runs/{run.id}")
        video = client.get(f"/runs/{run.id}/video.webm")
        by_digest = client.get(f"/runs/{run.id}/blobs/{digest}")
        recording = client.get(f"/api/runs/{run.id}.json").json()
    assert video.content == older == by_digest.content and calls_of(calls) == before
    assert f"WebM, {size_words(len(older))})" in page.text and "poster=" not in page.text
    assert recording["media"] == {"trace": None, "trace_bytes": 0, "video": digest, "video_bytes": len(older)}


def test_a_private_runs_trace_and_video_are_never_served_publicly(traced) -> None:
    settings, public, private, _ = traced
    with build_runtime(settings) as runtime:
        [kept] = media_of(runtime, private)
        assert kept.trace and kept.screens
        members_view = load_recording(runtime.record, private, lambda org: org == "acme")
        assert members_view.media is not None and members_view.blobs()[kept.screens[-1].screenshot] == "image/jpeg"
        # The same bytes under the public run are the public run's (both may end on the same screen).
        public_blobs = load_recording(runtime.record, public).blobs()
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        for digest in (kept.trace, *(s.screenshot for s in kept.screens if s.screenshot not in public_blobs)):
            assert client.get(f"/runs/{private}/blobs/{digest}").status_code == 404
            assert client.get(f"/runs/{public}/blobs/{digest}").status_code == 404  # not under another run
            assert client.get(f"/org/runs/{private}/blobs/{digest}").status_code == 404  # not signed in
        assert client.get(f"/runs/{private}/video.webm").status_code == 404
        assert client.get(f"/org/runs/{private}/video.webm").status_code == 404  # not signed in
        assert client.get(f"/runs/{private}").status_code == 404
        assert client.get(f"/api/runs/{private}.json").status_code == 404


def test_the_store_check_verifies_the_traces_and_the_videos_screens(traced) -> None:
    settings, public, _, _ = traced
    with build_runtime(settings) as runtime:
        report = check_store(runtime.record.read_log, runtime.blobs)
        [kept] = media_of(runtime, public)
        assert kept.trace is not None
        for digest in (kept.trace, kept.screens[-1].screenshot):  # the screen the run ended on is no step's
            path = runtime.blobs.file(digest)  # type: ignore[attr-defined]
            good = path.read_bytes()
            try:
                path.write_bytes(good[:-1])
                with pytest.raises(StoreProblem, match=f"blob {digest} .* is damaged"):
                    check_store(runtime.record.read_log, runtime.blobs)
            finally:
                path.write_bytes(good)
    assert report.blobs >= 4 + 2  # each run's trace and last screen besides the steps' blobs


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
        missing = client.get(f"/runs/{run_id}/video.webm")
    assert missing.status_code == 404 and "This run kept no video" in missing.text


def test_the_setting_reads_on_and_off_and_refuses_anything_else() -> None:
    assert Settings.from_env({}).traces is True
    assert Settings.from_env({"CANITBUY_TRACES": "on"}).traces is True
    assert Settings.from_env({"CANITBUY_TRACES": "OFF"}).traces is False
    with pytest.raises(SettingsError, match="CANITBUY_TRACES must be on or off, not 'sometimes'"):
        Settings.from_env({"CANITBUY_TRACES": "sometimes"})


def test_a_site_without_a_video_encoder_says_so_and_keeps_the_rest(traced, tmp_path) -> None:
    settings, public, _, _ = traced
    assert Settings.from_env({"PATH": str(tmp_path)}).video_encoder is None  # no ffmpeg there
    with build_runtime(settings) as runtime:
        [kept] = media_of(runtime, public)
        blobs: Blobs = runtime.blobs
        made = anyio.run(RunVideos(blobs, tmp_path / VIDEO_NOTES, settings.video_encoder).video, kept.screens)
        # A video made before is found without an encoder; only making one needs it.
        assert anyio.run(RunVideos(blobs, tmp_path / VIDEO_NOTES, None).video, kept.screens) == made
    bare = msgspec.structs.replace(settings, video_encoder=None, data_dir=tmp_path / "copy")
    shutil.copytree(settings.data_dir, bare.data_dir, ignore=shutil.ignore_patterns(VIDEO_NOTES))
    with TestClient(create_app(bare), base_url="https://testserver") as client:
        video = client.get(f"/runs/{public}/video.webm")
        page = client.get(f"/runs/{public}")
    assert video.status_code == 404 and "it has no ffmpeg" in video.text
    assert page.status_code == 200 and "Trace and video" in page.text


def test_a_broken_encoder_answers_a_clear_error_and_loses_nothing(traced, tmp_path) -> None:
    settings, public, _, _ = traced
    broken = msgspec.structs.replace(settings, video_encoder="/bin/false", data_dir=tmp_path / "copy")
    shutil.copytree(settings.data_dir, broken.data_dir, ignore=shutil.ignore_patterns(VIDEO_NOTES))
    with TestClient(create_app(broken), base_url="https://testserver") as client:
        video = client.get(f"/runs/{public}/video.webm")
        page = client.get(f"/runs/{public}")
    assert video.status_code == 503 and "could not be made" in video.text
    assert page.status_code == 200
    notes = broken.data_dir / VIDEO_NOTES
    assert not any(p.is_file() for p in notes.rglob("*"))  # nothing half made is left, nor noted
