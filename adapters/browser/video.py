"""A run's video, made from its trace's screencast frames once the run has ended.

Playwright's own video (the context's `record_video_dir`) keeps an ffmpeg encoding 25 frames a second beside the
browser for the context's whole life, and makes Chromium send it a frame for every change: in
bench/PROFILE-media.md that was most of what the media cost a step. The trace holds the same screen already: a
JPEG each time it changed (at most five a second at rest, every change for half a second around each action),
each with its time. So the video is made from those, after the browser context is closed: each frame shown for as
long as it stayed on screen (ffmpeg's concat demuxer with a duration per frame), encoded once as VP8 WebM. What it
costs follows the number of frames, not how long the run took, and no browser waits for it.
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

HOLD_LAST_SECONDS = 1.0
"""How long the last frame stays: the screen as the run left it (Playwright's own video held it at least 1 s)."""
ENCODE_SECONDS = 120.0
"""At most this long for one video's encoding; a hung encoder loses the video, never the run or its trace."""
FRAME_WIDTH, FRAME_HEIGHT = 480, 300
"""The video's frame, and the size Chromium encodes each screencast frame at for the trace (see
`PlaywrightBrowser.session`): the viewport scaled to 480 pixels wide. Each step's full-size screenshot is in the
recording, and the trace holds the pages themselves (DOM snapshots); the video shows how the run went."""


class VideoEncoderError(RuntimeError):
    """ffmpeg could not make the video (it failed, or took longer than ENCODE_SECONDS)."""


@dataclass(frozen=True)
class ScreencastFrame:
    """One frame of the trace's screencast: its file in the trace zip and when it was on screen (ms, monotonic)."""

    name: str
    at_ms: float


def screencast_frames(trace: zipfile.ZipFile) -> list[ScreencastFrame]:
    """The run's page's frames in the trace, in time order (a page the run opened besides it is left out, as
    Playwright's video was of the first page only)."""
    names = set(trace.namelist())
    page: str | None = None
    frames: list[ScreencastFrame] = []
    for line in trace.read("trace.trace").splitlines():
        if b'"screencast-frame"' not in line:  # most lines are snapshots and actions: skip them undecoded
            continue
        event = json.loads(line)
        if event.get("type") != "screencast-frame" or event.get("file") not in names:
            continue
        page = page or event["pageId"]
        if event["pageId"] == page:
            frames.append(ScreencastFrame(name=event["file"], at_ms=float(event["timestamp"])))
    frames.sort(key=lambda frame: frame.at_ms)
    return frames


def shown(frames: list[ScreencastFrame]) -> list[tuple[ScreencastFrame, float]]:
    """Each frame with the seconds it stayed on screen, to the millisecond (the WebM's time base); a frame
    replaced within the same millisecond was never seen and is left out."""
    timed: list[tuple[ScreencastFrame, float]] = []
    for frame, following in itertools.zip_longest(frames, frames[1:]):
        seconds = HOLD_LAST_SECONDS if following is None else round((following.at_ms - frame.at_ms) / 1000, 3)
        if seconds > 0:
            timed.append((frame, seconds))
    return timed


def video_from_trace(trace: Path, video: Path, encoder: str) -> Path | None:
    """Write `video` (WebM) from the screencast frames in `trace`; None when the trace holds no frame. The frames
    are unpacked beside the video (the run's media folder, removed with it)."""
    with zipfile.ZipFile(trace) as archive:
        timed = shown(screencast_frames(archive))
        if not timed:
            return None
        folder = video.parent / "frames"
        folder.mkdir(exist_ok=True)
        listing = ["ffconcat version 1.0"]
        for index, (frame, seconds) in enumerate(timed):
            path = folder / f"{index:05d}.jpeg"
            path.write_bytes(archive.read(frame.name))
            listing += [f"file '{path.name}'", f"duration {seconds:.3f}"]
    listing.append(listing[-2])  # the concat demuxer shows the last file for its duration only when listed again
    (folder / "frames.txt").write_text("\n".join(listing) + "\n")
    width, height = FRAME_WIDTH, FRAME_HEIGHT
    command = [
        encoder, "-loglevel", "error", "-nostdin", "-y", "-f", "concat", "-safe", "0", "-i", str(folder / "frames.txt"),
        "-an", "-vf", f"scale={width}:{height}:force_original_aspect_ratio=decrease,pad={width}:{height}:-1:-1:gray",
        "-pix_fmt", "yuv420p", "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-crf", "10",
        "-b:v", "1M", "-threads", "1", str(video),
    ]
    try:
        subprocess.run(command, capture_output=True, check=True, timeout=ENCODE_SECONDS)
    except subprocess.CalledProcessError as error:
        raise VideoEncoderError(f"ffmpeg failed: {error.stderr.decode(errors='replace').strip()[-500:]}") from None
    except subprocess.TimeoutExpired:
        raise VideoEncoderError(f"ffmpeg took more than {ENCODE_SECONDS:.0f} s") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return video
