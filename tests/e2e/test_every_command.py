"""Every subcommand `canitbuy --help` lists, tried as a new user would (issue #12 item 6): `--help`, a bad
argument, and real arguments against a real store (SQLite in a fresh data dir; Redis and the lab for the worker),
each in its own process. Errors must be one line on stderr with exit 1 or 2, never a traceback.

The subcommands come from the help itself, so a command added later without a case here fails this test.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from served_commands import answers, serving

from domain.week.weeks import week_of
from ops.cli import build_parser

pytestmark = [pytest.mark.chromium, pytest.mark.redis]
REPO = Path(__file__).resolve().parents[2]
PASSWORD = "a long enough password 42"


def help_of(path: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        build_parser().parse_args([*path, "--help"])
    return out.getvalue()


def listed(path: list[str]) -> list[str]:
    """The subcommands a help page lists under its COMMAND heading (none for a leaf)."""
    text = help_of(path)
    block = re.search(r"positional arguments:\n  [A-Z_]*COMMAND\n((?:    .*\n)+)", text)
    return re.findall(r"^    (\S+)", block.group(1), re.M) if block else []


def leaves(path: list[str] | None = None) -> list[str]:
    path = path or []
    found = []
    for name in listed(path):
        below = leaves([*path, name])
        found += below or [" ".join([*path, name])]
    return found


LEAVES = leaves()

# A usage error (2) or a failure the user can act on (1), one per leaf command.
BAD = {
    "arc run": (["arc", "run", "--test-set", "canitbuy-course-2.1.csv"], 2),
    "arc export": (["arc", "export", "not-a-batch"], 2),
    "audit export": (["audit", "export", "--week", "last week", "--out", "x.jsonl"], 2),
    "audit verify": (["audit", "verify", "no-such-file.jsonl"], 1),
    "audit replay": (["audit", "replay", "--week", "2026-W60"], 2),
    "check": (["check", "--deep"], 2),
    "dataset export": (["dataset", "export", "--week", "2026-W60"], 2),
    "db migrate": (["db", "migrate", "--all"], 2),
    "db rebuild": (["db", "rebuild", "now"], 2),
    "db catch-up": (["db", "catch-up", "--from", "3"], 2),
    "lab serve": (["lab", "serve", "--port", "eighty"], 2),
    "models check": (["models", "check", "--timeout", "soon"], 2),
    "run": (["run", "--station", "s99", "--model", "baseline-robust"], 2),
    "staff add": (["staff", "add", "someone@example.org", "--role", "king"], 2),
    "traces clean": (["traces", "clean", "--all"], 2),
    "web serve": (["web", "serve", "--port", "-"], 2),
    "week run": (["week", "run", "--repeats", "0"], 2),
    "week schedule": (["week", "schedule", "--now", "yesterday"], 2),
    "week publish": (["week", "publish", "--week", "2026-W48"], 2),
    "week show": (["week", "show", "--week", "W48"], 2),
    "worker": (["worker", "--lease-seconds", "soon"], 2),
}


def canitbuy(args: list[str], env: dict[str, str], *, stdin: str = "", timeout: float = 300
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ops.cli", *args], cwd=env["CANITBUY_DATA_DIR"], env=env,
                          input=stdin, capture_output=True, text=True, timeout=timeout)


def assert_one_line_error(done: subprocess.CompletedProcess[str], code: int, what: str) -> None:
    assert done.returncode == code, (what, done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, (what, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("canitbuy"), (what, done.stderr)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_") and k != "AI_GATEWAY_API_KEY"}
    clean.update({"CANITBUY_DATA_DIR": str(tmp_path), "PYTHONPATH": str(REPO), "CANITBUY_CONCURRENCY": "2"})
    return clean


def test_the_help_lists_every_command_we_try() -> None:
    assert set(LEAVES) == set(BAD), "a command without a case here, or a case for a command that is gone"
    assert "week publish" in LEAVES and "worker" in LEAVES


def test_the_help_as_typed_lists_what_the_whole_parser_lists(env: dict[str, str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """`canitbuy --help` builds each area's parser only when it is named; the listing is the same."""
    monkeypatch.setenv("COLUMNS", "100")
    done = canitbuy(["--help"], {**env, "COLUMNS": "100"}, timeout=60)
    assert done.returncode == 0 and done.stdout == help_of([])
    assert all(f"    {name}" in done.stdout for name in ("arc", "check", "dataset", "week", "worker"))


def test_a_command_imports_only_its_own_area(env: dict[str, str]) -> None:
    probe = (
        "import contextlib, io, sys\n"
        "from ops import cli\n"
        "for argv in (['--help'], ['audit', 'verify', '--help']):\n"
        "    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "        cli.main(argv)\n"
        "    print(' '.join(sorted(m for m in ('playwright', 'pyarrow', 'ops.commands.dataset', 'ops.commands.worker',"
        " 'ops.commands.audit') if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=env["CANITBUY_DATA_DIR"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    after_help, after_audit = done.stdout.splitlines()
    assert after_help == "", "the list of commands imports none of them"
    assert after_audit == "ops.commands.audit", "an audit command imports the audit area, not the browser's"


@pytest.mark.parametrize("command", LEAVES)
def test_every_command_has_help_and_errs_on_one_line(command: str, env: dict[str, str]) -> None:
    done = canitbuy([*command.split(), "--help"], env, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith(f"usage: canitbuy {command}"), done.stderr
    args, code = BAD[command]
    assert_one_line_error(canitbuy(args, env, timeout=120), code, command)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Gateway(BaseHTTPRequestHandler):
    """A gateway speaking the chat completions protocol, where a model provider would be: every model it is asked
    for answers one valid action and names itself as the model it resolved."""

    def do_POST(self) -> None:  # noqa: N802 - the library's name
        asked = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        arguments = json.dumps({"notes": "open the first shoe", "action": {"type": "click", "id": "e0"}})
        body = json.dumps({
            "id": "chatcmpl-1", "object": "chat.completion", "model": asked["model"],
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None,
                "tool_calls": [{"id": "call_1", "type": "function",
                                "function": {"name": "act", "arguments": arguments}}]}}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def gateway() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Gateway)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_every_command_does_its_work_on_a_real_store(env: dict[str, str], tmp_path: Path, redis_url: str) -> None:
    tried: set[str] = set()

    def ok(command: str, *extra: str, stdin: str = "", extra_env: dict[str, str] | None = None) -> str:
        done = canitbuy([*command.split(), *extra], {**env, **(extra_env or {})}, stdin=stdin)
        assert done.returncode == 0, (command, extra, done.stdout[-2000:], done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (command, done.stderr)
        tried.add(command)
        return done.stdout

    week = week_of(datetime.now(UTC))
    assert "the read models" in ok("db migrate") or True
    ok("staff add", "admin@example.org", "--password-stdin", stdin=PASSWORD + "\n")
    assert json.loads(ok("run", "--station", "s05", "--model", "baseline-robust", "--json"))["passed"] is True
    # A short week: one built-in agent on two stations (s01 first, as always), published.
    summary = json.loads(ok("week run", "--models", "baseline-robust", "--stations", "s01,s05", "--json"))
    assert summary["week"] == week and summary["totals"]["runs"] == 2 and summary["totals"]["unfinished"] == 0
    assert f"published {week}" in ok("week publish", "--week", week, "--by", "admin@example.org")
    assert "publication 1" in ok("week show", "--week", week)
    audit_file = tmp_path.parent / f"{tmp_path.name}-week.jsonl"  # outside the data folder (tmp_path), as it must be
    ok("audit export", "--week", week, "--out", str(audit_file))
    assert "Self-consistent only" in ok("audit verify", str(audit_file))
    assert json.loads(ok("audit replay", "--week", week))["week"] == week
    assert "publications recompute" in ok("check")
    dataset = tmp_path.parent / f"{tmp_path.name}-dataset"  # outside the data folder (tmp_path), as it must be
    assert f"wrote {dataset / week}" in ok("dataset export", "--week", week, "--out", str(dataset))
    assert (dataset / week / "runs.parquet").exists()
    assert "log position" in ok("db catch-up")
    assert "log position" in ok("db rebuild")
    # ARC's schema wants at least ten results in a submission.
    ids = ",".join(f"s{n:02d}" for n in range(1, 11))
    arc = json.loads(ok("arc run", "--test-set", "canitbuy-course-2.1.csv", "--ids", ids, "--model",
                        "baseline-robust", "--json"))
    assert len(json.loads(ok("arc export", arc["batch"]))["results"]) == 10
    # Every run here kept its trace as its own already: nothing to clean (the traces kept before are cleaned in
    # tests/integration/workers/test_trace_cleaning.py).
    cleaned = re.fullmatch(r"ok: (\d+) traces offered; \1 hold only their own run; 0 cleaned \(Run.TraceCleaned\)",
                           ok("traces clean").strip())
    assert cleaned and int(cleaned.group(1)) >= 3, "the runs above kept their traces"
    with gateway() as url:
        checked = ok("models check", extra_env={"CANITBUY_MODEL_BASE_URL": url, "AI_GATEWAY_API_KEY": "test-key"})
        assert "available" in checked and "NOT AVAILABLE" not in checked
    # The schedule last: it schedules the week's whole line-up; --no-execute leaves the runs to workers.
    assert "scheduled" in ok("week schedule", "--no-execute")

    # The site serves our agent's key directory; a lab on this machine may fetch it over plain http, so workers
    # can sign runs that the lab verifies (a worker refuses to start when they could not be).
    web_port, lab_port = free_port(), free_port()
    with serving(["web", "serve", "--port", str(web_port)], env) as web:
        assert answers(f"http://127.0.0.1:{web_port}/ranking").status_code == 200
        with serving(["lab", "serve", "--port", str(lab_port), "--trust-local-directories"], env) as lab:
            assert answers(f"http://127.0.0.1:{lab_port}/", host=f"s01.lab.localhost:{lab_port}").status_code == 200
            queue = {"CANITBUY_REDIS_URL": redis_url, "CANITBUY_LAB_URL": f"http://127.0.0.1:{lab_port}",
                     "CANITBUY_AGENT_DIRECTORY_URL": f"http://127.0.0.1:{web_port}"}
            checked = ok("worker", "--check", extra_env=queue)
            assert "ok    redis" in checked and "signing" in checked
            ok("worker", "--burst", extra_env=queue)  # works through what is queued, then stops
        assert lab.returncode == 0, lab.stderr
    assert web.returncode == 0, web.stderr
    tried.update({"lab serve", "web serve"})
    assert tried == set(LEAVES)
