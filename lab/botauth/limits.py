"""What s13's verifier accepts, read from its own constants, so the gate page states exactly what the code does.

A signing agent can check itself against these before it meets the gate; the page cannot drift from the code.
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.botauth import directory, verifier


@dataclass(frozen=True)
class Limits:
    tag: str
    algorithm: str
    max_window_s: int
    """The longest created..expires window accepted."""
    skew_s: int
    """The clock skew allowed on created and on expires."""
    required: tuple[str, ...]
    """Components every signature must cover, each once."""
    allowed_derived: tuple[str, ...]
    """Derived components a signature may cover besides the required; any other derived component is refused."""
    max_components: int
    directory_path: str
    directory_max_bytes: int
    directory_timeout_s: float
    directory_cache_s: int


def limits() -> Limits:
    return Limits(
        tag=verifier.TAG,
        algorithm=verifier.ALGORITHM,
        max_window_s=verifier.MAX_WINDOW_S,
        skew_s=verifier.SKEW_S,
        required=tuple(sorted(verifier.REQUIRED)),
        allowed_derived=tuple(d for d in verifier.DERIVED if d not in verifier.REQUIRED),
        max_components=verifier.MAX_COMPONENTS,
        directory_path=directory.WELL_KNOWN,
        directory_max_bytes=directory.MAX_BYTES,
        directory_timeout_s=directory.TIMEOUT_S,
        directory_cache_s=int(directory.TTL_S),
    )
