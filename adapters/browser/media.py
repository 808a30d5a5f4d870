"""A browser run's trace and video: what a closed run leaves, and the encoder its video is made with.

The trace is Playwright's (`tracing.start`: DOM snapshots, network and actions), without the call stacks Playwright
adds of the other runs on the connection and with the values of the agent's signature headers redacted
(`trace_file.py`); the run keeps the screens its agent was shown, each
with how long it stayed the agent's view, and the video is made of them by the system's ffmpeg (Debian's:
`bash ops/dev` and the image install it) the first time it is watched (`web/videos.py`).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from adapters.browser.video import Screen, shown


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

    def shown(self) -> list[tuple[bytes, float]]:
        """The video's screens: each JPEG with the seconds it stayed the agent's view (`video.shown`)."""
        return [(screen.jpeg, seconds) for screen, seconds in shown(self.screens)]


def find_video_encoder(search_path: str | None = None) -> str | None:
    """The ffmpeg that makes the runs' videos when they are first watched: the one on the PATH (or
    `search_path`), else None (the site then offers each run's screenshots without a video, and says so once)."""
    return shutil.which("ffmpeg", path=search_path)
