"""Commands given what the world refuses them (a port that does not exist or is taken, a host that is not this
machine's, a database or a Redis that does not answer or stops answering, a data folder or an embedded database
that cannot be used, no terminal to type a password at) say so in one line on
stderr starting with "canitbuy", exit 1 (2 for a usage error), never a traceback or a library's log.

Before: `web serve --port 99999` announced 99999 and listened on 34463; a busy port or a bad host was uvicorn's
log and exit 3; a dead database was 71 lines after 50 s; `lab serve` with a dead Redis started and answered 500
to every request; a dead Redis was five arq retry warnings before the error; `worker --check` said
"TimeoutError: " of a database it could not reach; `staff add` with no terminal was a GetPassWarning and a bare
EOFError; a worker whose Redis went silent idled forever; a data folder that is a file, or a SQLite file that is not
a database, was web serve's traceback. Each case runs the command as typed, in its own process (its own session:
no terminal to fall back on), against a fresh data dir.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
import redis
from served_commands import answers, serving

from lab.ratelimit import PUBLIC, RETRY_REDIS_SECONDS
from tests.conftest import OwnRedis

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "a long enough password 42"
DEAD_POSTGRES = "postgresql://someone:hunter2secret@127.0.0.1:1/x"
DEAD_REDIS = "redis://:hunter2secret@127.0.0.1:1"
LOOPBACK_LAB = {"CANITBUY_LAB_URL": "http://127.0.0.1:9", "CANITBUY_AGENT_DIRECTORY_URL": "http://127.0.0.1:9"}
"""Enough for a worker or a queued week to get as far as Redis (both on loopback, so runs could be signed)."""


def environment(data_dir: Path, **extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_") and k != "AI_GATEWAY_API_KEY"}
    clean.update({"CANITBUY_DATA_DIR": str(data_dir), "PYTHONPATH": str(REPO), "CANITBUY_CONCURRENCY": "2", **extra})
    return clean


def canitbuy(args: list[str], data_dir: Path, *, stdin: str = "", timeout: float = 60,
             **extra: str) -> subprocess.CompletedProcess[str]:
    """The command in its own session, so it has no controlling terminal (getpass cannot open /dev/tty)."""
    return subprocess.run([sys.executable, "-m", "ops.cli", *args], cwd=data_dir, env=environment(data_dir, **extra),
                          input=stdin, capture_output=True, text=True, timeout=timeout, start_new_session=True)


def one_line(done: subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("canitbuy"), done.stderr
    return lines[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A port that accepts connections and never answers: a database or Redis that hangs."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield int(server.getsockname()[1])


SERVERS = ["web", "lab"]


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("port", ["99999", "0", "65536"])
def test_a_port_that_does_not_exist_is_a_usage_error(server: str, port: str, tmp_path: Path) -> None:
    line = one_line(canitbuy([server, "serve", "--port", port], tmp_path, timeout=30), 2)
    assert line.startswith(f"canitbuy {server} serve: argument --port: '{port}' is not a port number from 1 to "
                           "65535"), line


@pytest.mark.parametrize("server", SERVERS)
def test_a_busy_port_is_one_line(server: str, tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        line = one_line(canitbuy([server, "serve", "--port", str(port)], tmp_path), 1)
    assert line == f"canitbuy: {server} serve: cannot listen on 127.0.0.1:{port}: address already in use"


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("host", ["no.such.host.invalid", "192.0.2.1"])
def test_a_host_that_is_not_this_machines_is_one_line(server: str, host: str, tmp_path: Path) -> None:
    port = free_port()
    line = one_line(canitbuy([server, "serve", "--host", host, "--port", str(port)], tmp_path), 1)
    assert line.startswith(f"canitbuy: {server} serve: cannot listen on {host}:{port}: "), line


@pytest.mark.parametrize("server", SERVERS)
def test_ctrl_c_stops_a_server_cleanly(server: str, tmp_path: Path) -> None:
    port = free_port()
    with serving([server, "serve", "--port", str(port)], environment(tmp_path)) as process:
        host = f"s01.lab.localhost:{port}" if server == "lab" else None
        assert answers(f"http://127.0.0.1:{port}/", host=host).status_code == 200
    assert process.returncode == 0
    stdout, stderr = process.communicate()
    assert f"canitbuy {server}: http://" in stdout, stdout
    assert "Traceback" not in stderr and "interrupted" not in stderr, stderr


def test_web_serve_with_a_database_that_refuses_is_one_line(tmp_path: Path) -> None:
    started = time.monotonic()
    line = one_line(canitbuy(["web", "serve", "--port", str(free_port())], tmp_path,
                             CANITBUY_DATABASE_URL=DEAD_POSTGRES), 1)
    assert line == "canitbuy: web serve: cannot reach the database (PostgreSQL at 127.0.0.1:1): connection refused"
    assert time.monotonic() - started < 30, "said at once, not after the record's pool waited 10 s five times"


def test_web_serve_with_a_database_that_hangs_is_one_line(tmp_path: Path) -> None:
    with silent_server() as port:
        line = one_line(canitbuy(["web", "serve", "--port", str(free_port())], tmp_path,
                                 CANITBUY_DATABASE_URL=f"postgresql://someone:hunter2secret@127.0.0.1:{port}/x"), 1)
    assert line == (f"canitbuy: web serve: cannot reach the database (PostgreSQL at 127.0.0.1:{port}): no answer "
                    "within 5 s")


RECORD_COMMANDS = [
    (["check"], "check"),
    (["week", "show", "--week", "2026-W49"], "week"),
    (["week", "publish", "--week", "2026-W48", "--by", "staff"], "week"),
    (["audit", "export", "--week", "2026-W49", "--out", "../week.jsonl"], "audit"),
    (["dataset", "export", "--all", "--out", "../dataset"], "dataset"),
    (["traces", "clean"], "traces"),
    (["db", "rebuild"], "db"),
]
"""Commands that open the record, with the name their failure line gives."""


@pytest.mark.parametrize(("command", "name"), RECORD_COMMANDS, ids=[" ".join(c[:2]) for c, _ in RECORD_COMMANDS])
def test_a_command_opening_the_record_in_a_database_that_refuses_says_so_at_once(
        command: list[str], name: str, tmp_path: Path) -> None:
    """Before, each waited the pool's 10 s connect time-out five times over (about 50 s) for the same line."""
    started = time.monotonic()
    line = one_line(canitbuy(command, tmp_path, CANITBUY_DATABASE_URL=DEAD_POSTGRES), 1)
    assert line == f"canitbuy: {name}: cannot reach the database (PostgreSQL at 127.0.0.1:1): connection refused"
    assert time.monotonic() - started < 20, "said at once, not after the record's pool waited 10 s five times"


def test_a_command_opening_the_record_in_a_database_that_hangs_waits_5_s(tmp_path: Path) -> None:
    with silent_server() as port:
        started = time.monotonic()
        line = one_line(canitbuy(["week", "show", "--week", "2026-W49"], tmp_path,
                                 CANITBUY_DATABASE_URL=f"postgresql://someone:hunter2secret@127.0.0.1:{port}/x"), 1)
    assert line == f"canitbuy: week: cannot reach the database (PostgreSQL at 127.0.0.1:{port}): no answer within 5 s"
    assert time.monotonic() - started < 25, "the pool's 10 s five times over is not waited"


@pytest.mark.postgres
def test_web_serve_whose_database_user_may_not_make_the_tables_is_one_line(tmp_path: Path, postgres_url: str) -> None:
    """The database answers, so the check before uvicorn passes; the site's own start (migrations) then fails.
    That was Starlette's traceback in uvicorn's log and exit 3."""
    import psycopg

    role = f"reader_{os.getpid()}_{free_port()}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'hunter2secret'")
        admin.execute(f"REVOKE CREATE ON SCHEMA public FROM PUBLIC, {role}")
    try:
        parts = urlsplit(postgres_url)
        url = urlunsplit(parts._replace(netloc=f"{role}:hunter2secret@{parts.hostname}:{parts.port or 5432}"))
        done = canitbuy(["web", "serve", "--port", str(free_port())], tmp_path, timeout=60, CANITBUY_DATABASE_URL=url)
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(f"DROP OWNED BY {role}")
            admin.execute(f"DROP ROLE {role}")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "hunter2secret" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1] == ("canitbuy: web serve: the site could not start: permission "
                                                    "denied for schema public"), done.stderr


@pytest.mark.parametrize("given", ["environment", "option"])
def test_lab_serve_does_not_start_without_the_redis_it_keeps_budgets_in(given: str, tmp_path: Path) -> None:
    """The lab asks Redis for each request's budget: started without it, it answered 500 to every request."""
    args = ["lab", "serve", "--port", str(free_port())]
    done = (canitbuy(args, tmp_path, timeout=30, CANITBUY_REDIS_URL=DEAD_REDIS) if given == "environment"
            else canitbuy([*args, "--redis-url", DEAD_REDIS], tmp_path, timeout=30))
    line = one_line(done, 1)
    assert line == ("canitbuy: lab serve: cannot reach Redis at 127.0.0.1:1, where the request budgets are kept "
                    "(--redis-url, else CANITBUY_REDIS_URL): connection refused")


def test_lab_serve_with_a_redis_that_hangs_does_not_start(tmp_path: Path) -> None:
    with silent_server() as port:
        line = one_line(canitbuy(["lab", "serve", "--port", str(free_port()), "--redis-url",
                                  f"redis://127.0.0.1:{port}"], tmp_path, timeout=30), 1)
    assert line.startswith(f"canitbuy: lab serve: cannot reach Redis at 127.0.0.1:{port}, "), line
    assert line.endswith(": no answer within 5 s"), line


@pytest.mark.redis
def test_lab_serve_keeps_its_budgets_in_the_redis_it_reaches(tmp_path: Path, redis_url: str) -> None:
    port = free_port()
    with serving(["lab", "serve", "--port", str(port), "--redis-url", redis_url], environment(tmp_path)) as process:
        assert answers(f"http://127.0.0.1:{port}/", host=f"s01.lab.localhost:{port}").status_code == 200
        # the key lives until the client's budget is full again: about a second after one request
        assert redis.Redis.from_url(redis_url).keys("nordlys-lab:budget:*"), "the request was counted in Redis"
    assert process.returncode == 0, process.communicate()[1]


@pytest.mark.parametrize("command", [["worker"], ["week", "run", "--models", "baseline-robust", "--stations", "s01"]])
def test_a_dead_redis_is_one_line_at_once(command: list[str], tmp_path: Path) -> None:
    started = time.monotonic()
    line = one_line(canitbuy(command, tmp_path, timeout=120, CANITBUY_REDIS_URL=DEAD_REDIS, **LOOPBACK_LAB), 1)
    assert "cannot reach Redis at 127.0.0.1:1 (CANITBUY_REDIS_URL): connection refused" in line, line
    assert "hunter2secret" not in line
    assert time.monotonic() - started < 30, "no retries a second apart"


DATA_DIR_COMMANDS = [["web", "serve", "--port", "0"], ["lab", "serve", "--port", "0"],
                     ["week", "show", "--week", "2026-W49"], ["check"], ["db", "migrate"],
                     ["run", "--station", "s01", "--model", "baseline-robust"]]


@pytest.mark.parametrize("command", DATA_DIR_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("kind", ["a file", "under a file"])
def test_a_data_folder_that_cannot_be_used_is_one_line(command: list[str], kind: str, tmp_path: Path) -> None:
    """The servers wrote a traceback; the other commands, the first file they happened to open."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder")
    folder = a_file if kind == "a file" else a_file / "var"
    if command[-1] == "0":
        command = [*command[:-1], str(free_port())]
    line = one_line(canitbuy(command, tmp_path, timeout=60, CANITBUY_DATA_DIR=str(folder)), 1)
    said = "is not a folder" if kind == "a file" else "cannot be used: not a directory"
    assert line == f"canitbuy: {' '.join(command[:2]) if command[0] in ('web', 'lab') else command[0]}: " \
                   f"the data folder {folder} (CANITBUY_DATA_DIR) {said}", line
    assert a_file.read_text() == "not a folder"


RUN = ["run", "--station", "s01", "--model", "baseline-robust"]
BROKEN_DATABASES = [(c, "canitbuy.sqlite3") for c in DATA_DIR_COMMANDS if c[0] not in ("lab", "db")] + [
    (RUN, "leases.sqlite3"), (["db", "migrate"], "readmodels.sqlite3"), (["web", "serve", "--port", "0"],
                                                                        "readmodels.sqlite3")]


@pytest.mark.parametrize(("command", "name"), BROKEN_DATABASES,
                         ids=lambda v: v.split(".")[0] if isinstance(v, str) else v[0])
def test_an_embedded_database_that_is_not_one_is_one_line_naming_it(command: list[str], name: str,
                                                                      tmp_path: Path) -> None:
    """web serve wrote uvicorn's traceback from the app's start; the other commands 'DatabaseError: file is not a
    database', without saying which file. The file is left as it was, for whoever restores it."""
    broken = tmp_path / name
    broken.write_bytes(b"not a database, and longer than SQLite's header of one hundred bytes " * 3)
    before = broken.read_bytes()
    if command[-1] == "0":
        command = [*command[:-1], str(free_port())]
    line = one_line(canitbuy(command, tmp_path, timeout=60), 1)
    named = " ".join(command[:2]) if command[0] == "web" else command[0]
    assert line == f"canitbuy: {named}: the database {broken} (SQLite) cannot be read: file is not a database", line
    assert broken.read_bytes() == before


@pytest.mark.parametrize("command", [["worker"], ["week", "run", "--models", "baseline-robust", "--stations", "s01"]])
def test_a_redis_that_accepts_and_never_answers_is_one_line(command: list[str], tmp_path: Path) -> None:
    """arq pings with no read time-out: a Redis that accepted the connection and said nothing held both forever."""
    with silent_server() as port:
        line = one_line(canitbuy(command, tmp_path, timeout=120,
                                 CANITBUY_REDIS_URL=f"redis://:hunter2secret@127.0.0.1:{port}", **LOOPBACK_LAB), 1)
    assert f"cannot reach Redis at 127.0.0.1:{port} (CANITBUY_REDIS_URL): no answer within 5 s" in line, line
    assert "hunter2secret" not in line
    if command[0] == "week":
        assert line.endswith("the runs stay scheduled, and the same command runs them once it answers"), line


def _log_says(log: Path, text: str, process: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while text not in log.read_text(errors="replace"):
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, f"{text!r} not in {log.read_text()}"
        time.sleep(0.1)


def test_a_worker_whose_redis_stops_answering_ends_in_one_line(tmp_path: Path, own_redis: OwnRedis) -> None:
    """A worker polls Redis ten times a second; when it stops answering (paused, or a half-open connection) the
    worker ends, saying so last, for its supervisor to start it again, instead of idling forever looking alive."""
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        worker = subprocess.Popen([sys.executable, "-m", "ops.cli", "worker"], cwd=tmp_path, stdout=out, stderr=out,
                                  env=environment(tmp_path, CANITBUY_REDIS_URL=own_redis.url, **LOOPBACK_LAB),
                                  start_new_session=True)
    try:
        _log_says(log, "ready (lab http://127.0.0.1:9", worker)
        own_redis.pause()
        assert worker.wait(timeout=120) == 1, log.read_text()
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    last = log.read_text().strip().splitlines()[-1]
    assert last == (f"canitbuy: cannot reach Redis at 127.0.0.1:{own_redis.port} (CANITBUY_REDIS_URL): no answer "
                    "within 15 s"), log.read_text()


def test_lab_serve_keeps_answering_and_limiting_while_its_redis_is_out(tmp_path: Path, own_redis: OwnRedis) -> None:
    """Counted in Redis while it answers, in the lab's memory while it is silent (each page at most half a second
    late, once), in Redis again once it answers: never a 500 a run would be scored on."""
    port = free_port()
    args = ["lab", "serve", "--port", str(port), "--redis-url", own_redis.url, "--trusted-proxy", "127.0.0.1"]
    keys = redis.Redis.from_url(own_redis.url)
    with serving(args, environment(tmp_path)) as process:
        url, host = f"http://127.0.0.1:{port}/", f"s01.lab.localhost:{port}"
        assert answers(url, host=host).status_code == 200
        assert keys.keys("nordlys-lab:budget:*"), "counted in Redis while it answers"
        own_redis.pause()
        with httpx.Client(headers={"Host": host, "X-Forwarded-For": "2001:db8::77"}, timeout=10) as client:
            statuses = [client.get(url).status_code for _ in range(PUBLIC.burst + 5)]
        first = statuses.index(429)
        assert set(statuses[:first]) == {200} and set(statuses[first:]) == {429}, statuses
        assert PUBLIC.burst <= first <= PUBLIC.burst + 1, "the client's budget held, counted in memory"
        own_redis.resume()
        keys.flushdb()
        time.sleep(RETRY_REDIS_SECONDS + 0.5)
        assert answers(url, host=host).status_code == 200
        assert keys.keys("nordlys-lab:budget:*"), "counted in Redis again once it answers"
    stderr = process.communicate()[1]
    assert process.returncode == 0, stderr
    assert stderr.count("Redis does not answer (TimeoutError): request budgets are kept in this process's memory") \
        == 1, stderr
    assert stderr.count("Redis answers again") == 1, stderr


@pytest.mark.chromium
def test_worker_check_says_what_it_cannot_reach_where_and_why(tmp_path: Path) -> None:
    done = canitbuy(["worker", "--check"], tmp_path, timeout=120, CANITBUY_DATABASE_URL=DEAD_POSTGRES,
                    CANITBUY_REDIS_URL=DEAD_REDIS)
    assert done.returncode == 1, done.stderr
    assert "FAIL  database: cannot reach the database (PostgreSQL at 127.0.0.1:1): connection refused" in done.stdout
    assert "FAIL  redis: cannot reach Redis at 127.0.0.1:1 (CANITBUY_REDIS_URL): connection refused" in done.stdout
    assert "hunter2secret" not in done.stdout + done.stderr


@pytest.mark.chromium
def test_worker_check_says_how_long_it_waited_for_what_hangs(tmp_path: Path) -> None:
    with silent_server() as port:
        done = canitbuy(["worker", "--check"], tmp_path, timeout=120,
                        CANITBUY_DATABASE_URL=f"postgresql://someone:hunter2secret@127.0.0.1:{port}/x",
                        CANITBUY_REDIS_URL=f"redis://:hunter2secret@127.0.0.1:{port}")
    assert done.returncode == 1, done.stderr
    assert (f"FAIL  database: cannot reach the database (PostgreSQL at 127.0.0.1:{port}): no answer within 5 s"
            in done.stdout), done.stdout
    assert f"FAIL  redis: cannot reach Redis at 127.0.0.1:{port} (CANITBUY_REDIS_URL): no answer within 5 s" \
        in done.stdout, done.stdout
    assert "hunter2secret" not in done.stdout + done.stderr


def _verifies(data_dir: Path, email: str, password: str) -> bool:
    from adapters.settings import Settings
    from adapters.sqldb import SqlDb
    from adapters.staff_accounts import StaffAccounts

    return StaffAccounts(SqlDb(Settings(data_dir=data_dir))).verify(email, password) is not None


@pytest.mark.parametrize("flag", [[], ["--password-stdin"]])
def test_staff_add_with_no_terminal_and_nothing_on_stdin_is_one_line(flag: list[str], tmp_path: Path) -> None:
    line = one_line(canitbuy(["staff", "add", "someone@example.org", *flag], tmp_path, stdin=""), 1)
    assert line == "canitbuy: staff add: no password given (type it at a terminal or pipe it on stdin)"


def test_staff_add_with_no_terminal_reads_the_password_piped_to_it(tmp_path: Path) -> None:
    done = canitbuy(["staff", "add", "someone@example.org"], tmp_path, stdin=PASSWORD + "\n")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "staff account someone@example.org (staff) made" in done.stdout
    assert _verifies(tmp_path, "someone@example.org", PASSWORD)
    # --password-stdin, as documented, still does the same
    done = canitbuy(["staff", "add", "someone@example.org", "--password-stdin", "--replace"], tmp_path,
                    stdin="another long password 43\r\n")
    assert done.returncode == 0, done.stderr
    assert _verifies(tmp_path, "someone@example.org", "another long password 43")
