"""A browser run's trace and video: the files a closed run leaves, and the encoder its video is made with.

The trace is Playwright's (`tracing.start`); the video is made from the trace's screencast frames once the run has
ended (`adapters/browser/video.py`), by the system's ffmpeg (Debian's: `bash ops/dev` and the image install it).
"""

from __future__ import annotations

import logging
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

from adapters.browser.video import VideoEncoderError, video_from_trace

log = logging.getLogger("canitbuy.browser")


@dataclass(frozen=True)
class MediaFiles:
    """The files a closed browser run left behind (either may be missing: a crashed browser writes no trace, and
    the video is made from the trace)."""

    trace: Path | None
    video: Path | None


def find_video_encoder(search_path: str | None = None) -> str | None:
    """The ffmpeg that makes the runs' videos: the one on the PATH (or `search_path`), else None (runs then keep
    their trace alone, and the worker says so once)."""
    return shutil.which("ffmpeg", path=search_path)


def finish_media(trace: Path | None, encoder: str | None) -> MediaFiles:
    """The ended run's trace and the video made from its frames, beside it (blocking: call it in a thread). A video
    that cannot be made (no encoder, ffmpeg failing) leaves the trace alone, logged; so does a trace with no frame."""
    if trace is None or encoder is None:
        return MediaFiles(trace=trace, video=None)
    try:
        video = video_from_trace(trace, trace.with_name("video.webm"), encoder)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, VideoEncoderError):
        log.warning("the video of trace %s could not be made; the trace is kept alone", trace, exc_info=True)
        video = None
    return MediaFiles(trace=trace, video=video)
