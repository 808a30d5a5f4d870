"""A setting or a file at fault is one line naming it: the command, run as a user types it in its own process,
says which database, which variable or which file is wrong (exit 1), never a library's words alone.

Before, a PostgreSQL that did not answer was `OperationalError: couldn't get a connection after 10.00 sec` or
psycopg's raw wording, depending on the command.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_usage_errors import canitbuy, one_line

NOWHERE = "postgresql://127.0.0.1:1/x"


@pytest.mark.parametrize("args", [["db", "migrate"], ["week", "show", "--week", "2026-W49"]])
def test_a_database_that_does_not_answer_is_named_with_why(args: list[str], tmp_path: Path) -> None:
    line = one_line(canitbuy(args, tmp_path, CANITBUY_DATABASE_URL=NOWHERE), 1)
    assert "cannot reach the database (PostgreSQL at 127.0.0.1:1): connection refused" in line, line
