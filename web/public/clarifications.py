"""Our clarifications of the released course: shown beside the released text, never written into it.

A released course spec never changes (domain/courses/<version>.json equals what was released); what we add later
to help readers lives here, on the course and station pages, marked as ours.
"""

from __future__ import annotations

from typing import Final

S13_VERIFIER: Final = {
    # The lab's verifier (lab/botauth/verifier.py, directory.py) is the source; the site cannot import the lab,
    # so tests/integration/web/test_course_fidelity.py checks these equal the lab's constants.
    "tag": "web-bot-auth",
    "algorithm": "ed25519",
    "max_window_s": 300,
    "skew_s": 30,
    "required": ("@authority", "signature-agent"),
    "allowed_derived": ("@method", "@scheme", "@path", "@query", "@request-target", "@target-uri"),
    "max_components": 16,
    "directory_path": "/.well-known/http-message-signatures-directory",
}

CLARIFICATIONS: Final[dict[str, str]] = {
    "s06": "The decorative list opens from a “Choose size ▾” control and holds plain list items.",
}
"""Per station, a sentence we added after the release; s13's verifier limits are rendered from S13_VERIFIER."""
