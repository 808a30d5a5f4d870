"""A browser run's trace and video: where Playwright writes them, and the encoder its video needs.

Playwright records video through an ffmpeg it expects at its own registry path (`ffmpeg-<revision>/ffmpeg-linux`
under ms-playwright), normally downloaded by `playwright install ffmpeg`. Debian's ffmpeg (which ops/dev installs)
takes the same arguments (WebM from a pipe of JPEG frames), so it is linked there when Playwright's own
is missing: no download, and one encoder for the whole machine.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path


class VideoEncoderMissingError(RuntimeError):
    """No ffmpeg for Playwright's video: neither its own nor one on the PATH."""


@dataclass(frozen=True)
class MediaFiles:
    """The files a closed browser run left behind (either may be missing: a crashed browser writes neither)."""

    trace: Path | None
    video: Path | None


DEFAULT_REGISTRY = Path.home() / ".cache" / "ms-playwright"
"""Where Playwright keeps what it downloads on Linux, unless PLAYWRIGHT_BROWSERS_PATH says otherwise (Settings)."""


def _ffmpeg_revision() -> str:
    import playwright  # here, not above: the settings read DEFAULT_REGISTRY without loading Playwright

    listing = Path(playwright.__file__).parent / "driver" / "package" / "browsers.json"
    browsers = json.loads(listing.read_text())["browsers"]
    return str(next(b["revision"] for b in browsers if b["name"] == "ffmpeg"))


def ensure_video_encoder(registry: Path = DEFAULT_REGISTRY) -> Path:
    """Where Playwright finds its ffmpeg, linked to the system's when Playwright's own is not installed."""
    target = registry / f"ffmpeg-{_ffmpeg_revision()}" / "ffmpeg-linux"
    if target.exists():
        return target
    system = shutil.which("ffmpeg")
    if system is None:
        raise VideoEncoderMissingError(
            "no ffmpeg for the runs' videos: install Debian's ffmpeg (bash ops/dev does) or set CANITBUY_TRACES=off")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        target.unlink(missing_ok=True)  # a dangling link left by a removed ffmpeg
        target.symlink_to(system)
    except FileExistsError:
        pass  # another process linked it at the same moment
    return target
