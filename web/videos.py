"""Runs' videos, made from their screens the first time each is watched, then kept in the blob store.

A browser run names its video's screens on Run.MediaKept: each step's screenshot, then the screen as the run left
it, each with the seconds it stayed the agent's view. The video is a view of them, as a page of the site is a
view of the record: ffmpeg makes it (`adapters/browser/video.py`) on its first request, it goes into the blob
store, and a note under the data folder (`VIDEO_NOTES`, one file a video, named by the digest of what the video
is made of: the screens, their seconds and `VIDEO_FORMAT`) finds it again. Two requests for the same video at
once make it once. A site without ffmpeg offers the runs' screenshots without their videos.

Until 2 December 2026 each run's video was made as the run ended, by the worker: one ffmpeg a run cost the course
about 4 % of its CPU (most of it ffmpeg's own start, bench/PROFILE-course.md), and most videos are never watched.
Those runs name their video; it is served as it is.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import anyio
import anyio.to_thread

from adapters.blobs import Blobs
from adapters.browser.video import VIDEO_FORMAT, VideoEncoderError, encode_video
from domain.agent.runs import ShownScreen

log = logging.getLogger(__name__)

VIDEO_NOTES = "videos"
"""Under the data folder: which blob holds the video made of which screens."""
VIDEOS_AT_ONCE = 1
"""Videos made at once by one site process (each an ffmpeg of its own)."""


class NoVideoEncoder(LookupError):
    """The site has no ffmpeg to make a video with."""


class VideoNotMade(RuntimeError):
    """The video could not be made: a screen is missing from the blob store, or ffmpeg failed."""


def video_key(screens: Sequence[ShownScreen]) -> str:
    """The name of the video made of `screens`: the digest of the screens, their seconds and the encoding."""
    lines = [VIDEO_FORMAT, *(f"{screen.screenshot} {screen.seconds:.3f}" for screen in screens)]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


class RunVideos:
    """The videos of runs that name their screens: found in the blob store, or made there on first request."""

    def __init__(self, blobs: Blobs, folder: Path, encoder: str | None, at_once: int = VIDEOS_AT_ONCE) -> None:
        self._blobs = blobs
        self._folder = folder
        self.encoder = encoder
        self._limiter = anyio.CapacityLimiter(at_once)
        self._making: dict[str, anyio.Lock] = {}

    async def video(self, screens: Sequence[ShownScreen]) -> str:
        """The blob digest of the video made of `screens`, making it first when it was never made. Raises
        NoVideoEncoder (no ffmpeg here) or VideoNotMade."""
        key = video_key(screens)
        found = await anyio.to_thread.run_sync(self._known, key)
        if found is not None:
            return found
        if self.encoder is None:
            raise NoVideoEncoder("this site has no ffmpeg to make videos with")
        lock = self._making.setdefault(key, anyio.Lock())
        try:
            async with lock:  # a second request for the same video waits for the first one's
                found = await anyio.to_thread.run_sync(self._known, key)
                if found is None:
                    found = await anyio.to_thread.run_sync(self._make, key, screens, self.encoder,
                                                           limiter=self._limiter)
        finally:
            if not lock.statistics().tasks_waiting:
                self._making.pop(key, None)
        return found

    def _note(self, key: str) -> Path:
        return self._folder / key[:2] / key

    def _known(self, key: str) -> str | None:
        try:
            digest = self._note(key).read_text().strip()
        except OSError:
            return None
        return digest if digest and self._blobs.has(digest) else None

    def _make(self, key: str, screens: Sequence[ShownScreen], encoder: str) -> str:
        try:
            timed = [(self._blobs.get(screen.screenshot), screen.seconds) for screen in screens]
        except KeyError as missing:
            raise VideoNotMade(f"a screen of the video is missing from the blob store: {missing}") from None
        note = self._note(key)
        note.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".making-", dir=note.parent))
        try:
            made = encode_video(timed, work / "video.webm", encoder)
            if made is None:
                raise VideoNotMade("the run kept no screen to make a video of")
            digest = self._blobs.put_file(made)
        except (OSError, VideoEncoderError) as error:
            log.warning("the video %s could not be made", key, exc_info=True)
            raise VideoNotMade(str(error)) from None
        finally:
            shutil.rmtree(work, ignore_errors=True)
        fd, tmp = tempfile.mkstemp(prefix=".note-", dir=note.parent)
        with os.fdopen(fd, "w") as handle:
            handle.write(digest + "\n")
        os.replace(tmp, note)
        return digest
