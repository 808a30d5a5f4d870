"""Audit files as an auditor and a forger handle them: `canitbuy audit verify` in its own process, its one-line
refusals, and a file's lines read and resealed (every `prev` and `sha256` recomputed, so a changed file agrees
with itself). For the tests of a file against its publication, here and in tests/integration/web."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from domain.projections.canonical import canonical_struct_bytes, sha256_hex
from domain.week.audit import GENESIS

ROOT = Path(__file__).resolve().parents[3]
Lines = list[dict[str, Any]]


def verify(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """`canitbuy audit verify ...` in its own process, as an auditor runs it (no database named)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_")}
    return subprocess.run(
        [sys.executable, "-m", "ops.cli", "audit", "verify", *map(str, args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def refused(done: subprocess.CompletedProcess[str], code: int = 1) -> str:
    """The one line (no traceback) on stderr of a verify that exited `code`."""
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    return done.stderr


def lines_of(path: Path) -> Lines:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def resealed(lines: Lines, path: Path) -> Path:
    """The lines with every `prev` and `sha256` recomputed, as a forger reseals a file."""
    prev, out = GENESIS, []
    for line in lines:
        content = {k: v for k, v in line.items() if k not in ("sha256", "prev")} | {"prev": prev}
        prev = sha256_hex(canonical_struct_bytes(content))
        out.append(canonical_struct_bytes(content | {"sha256": prev}))
    path.write_bytes(b"\n".join(out) + b"\n")
    return path
