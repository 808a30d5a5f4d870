"""A browser run's trace and video: what a closed run leaves, and the encoder its video is made with.

The trace is Playwright's (`tracing.start`: DOM snapshots, network and actions); the video is made once the run has
ended from the screens its agent was shown (`adapters/browser/video.py`), by the system's ffmpeg (Debian's:
`bash ops/dev` and the image install it).
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from adapters.browser.video import Screen, VideoEncoderError, video_from_screens

log = logging.getLogger("canitbuy.browser")


@dataclass(frozen=True)
class RunMedia:
    """What a closed browser run leaves for its trace and video: the run's media folder, the trace written there
    (None when the browser could not write it: a crashed Chromium writes none) and the run's screens in order."""

    folder: Path
    trace: Path | None
    screens: tuple[Screen, ...]

    @property
    def empty(self) -> bool:
        return self.trace is None and not self.screens


@dataclass(frozen=True)
class MediaFiles:
    """The files made of a closed run's media (either may be missing: a crashed browser writes no trace, a run
    with no screen or no encoder has no video)."""

    trace: Path | None
    video: Path | None


def find_video_encoder(search_path: str | None = None) -> str | None:
    """The ffmpeg that makes the runs' videos: the one on the PATH (or `search_path`), else None (runs then keep
    their trace alone, and the worker says so once)."""
    return shutil.which("ffmpeg", path=search_path)


def finish_media(media: RunMedia, encoder: str | None) -> MediaFiles:
    """The ended run's trace and the video made of its screens, beside it (blocking: call it in a thread). A video
    that cannot be made (no encoder, ffmpeg failing) leaves the trace alone, logged; so does a run with no screen."""
    if encoder is None:
        return MediaFiles(trace=media.trace, video=None)
    try:
        video = video_from_screens(media.screens, media.folder / "video.webm", encoder)
    except (OSError, ValueError, VideoEncoderError):
        log.warning("the video of %s could not be made; the trace is kept alone", media.folder, exc_info=True)
        video = None
    return MediaFiles(trace=media.trace, video=video)
