"""A run's video, made from the screens its agent was shown.

Each step's observation is a screenshot of the whole viewport (the JPEG the model is given); the session keeps
each with its time, and one more when the run is over (the screen as the run left it). The video shows each for
as long as it stayed the agent's view, until the next step's (ffmpeg's concat demuxer with a duration per frame),
encoded as VP8 WebM. So it costs no browser work: no frame is drawn or read back that the run did not take anyway.
Chromium's screencast, which the video was made from before, cost the course about a fifth of Chromium's CPU
(bench/PROFILE-course.md, "A video of the screens the agent saw"): every frame the compositor drew while it ran
was read back and scaled, whatever it was asked to deliver. What the screencast showed between two steps (a scroll
as it moved, a page as it loaded) the trace still holds, as the DOM snapshots before and after each action.

Since 2 December 2026 a run keeps its screens (`shown`: each with its seconds) and the video is made the first
time it is watched (`web/videos.py`), not as the run ends: an ffmpeg a run cost the course about 4 % of its CPU
(most of it ffmpeg's own start), and most videos are never watched.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HOLD_LAST_SECONDS = 1.0
"""How long the last frame stays: the screen as the run left it."""
ENCODE_SECONDS = 120.0
"""At most this long for one video's encoding; a hung encoder loses the video, never the run or its trace."""
FRAME_WIDTH, FRAME_HEIGHT = 480, 300
"""The video's frame: the viewport (1280x800) scaled to 480 pixels wide. Each step's full-size screenshot is in
the recording, and the trace holds the pages themselves (DOM snapshots); the video shows how the run went."""


LOWRES = 1
"""Each screenshot is decoded at half its size (640x400, JPEG's own reduced decoding) before it is scaled to the
frame: the frame is smaller still, and decoding the full 1280x800 was a fifth of what a video cost ffmpeg."""


ENCODING = (
    "-an", "-vf", f"scale={FRAME_WIDTH}:{FRAME_HEIGHT}:force_original_aspect_ratio=decrease,"
                  f"pad={FRAME_WIDTH}:{FRAME_HEIGHT}:-1:-1:gray",
    "-pix_fmt", "yuv420p", "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-crf", "10",
    "-b:v", "1M", "-threads", "1", "-fflags", "+bitexact",
)
"""ffmpeg's output options: the frame, the codec and its settings."""
VIDEO_FORMAT = " ".join(("-lowres", str(LOWRES), *ENCODING))
"""How a video is made of its screens, as a name: part of a made video's key (`web/videos.py`), so a change of
encoding makes the videos anew."""


class VideoEncoderError(RuntimeError):
    """ffmpeg could not make the video (it failed, or took longer than ENCODE_SECONDS)."""


@dataclass(frozen=True)
class Screen:
    """One screen of the run: a JPEG of the viewport and when it was taken (seconds, monotonic)."""

    jpeg: bytes
    at: float


def shown(screens: Sequence[Screen]) -> list[tuple[Screen, float]]:
    """Each screen with the seconds it stayed the agent's view, to the millisecond (the WebM's time base); a
    screen replaced within the same millisecond was never seen and is left out."""
    timed: list[tuple[Screen, float]] = []
    for screen, following in itertools.zip_longest(screens, screens[1:]):
        seconds = HOLD_LAST_SECONDS if following is None else round(following.at - screen.at, 3)
        if seconds > 0:
            timed.append((screen, seconds))
    return timed


def encode_video(timed: Sequence[tuple[bytes, float]], video: Path, encoder: str) -> Path | None:
    """Write `video` (WebM) from JPEGs each shown for its seconds, in order; None when there is none. The frames
    are written beside the video (in a folder removed when it is made)."""
    if not timed:
        return None
    folder = video.parent / f"{video.stem}.frames"
    folder.mkdir(exist_ok=True)
    listing = ["ffconcat version 1.0"]
    for index, (jpeg, seconds) in enumerate(timed):
        path = folder / f"{index:05d}.jpeg"
        path.write_bytes(jpeg)
        listing += [f"file '{path.name}'", f"duration {seconds:.3f}"]
    listing.append(listing[-2])  # the concat demuxer shows the last file for its duration only when listed again
    (folder / "frames.txt").write_text("\n".join(listing) + "\n")
    command = [
        encoder, "-loglevel", "error", "-nostdin", "-y", "-f", "concat", "-safe", "0", "-lowres", str(LOWRES),
        "-i", str(folder / "frames.txt"), *ENCODING, str(video),
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
