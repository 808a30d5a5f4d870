"""The data folder made at start is its owner's alone, whatever the umask: it holds the site secret, password
hashes and keys (the site's first check of it used to make it 0755 before the site's own 0700 could apply)."""

from __future__ import annotations

import os
from pathlib import Path

from adapters.listening import data_dir_problem


def test_a_missing_data_folder_is_made_for_its_owner_only(tmp_path: Path) -> None:
    before = os.umask(0o022)
    try:
        folder = tmp_path / "fresh" / "var"
        assert data_dir_problem(folder) is None
    finally:
        os.umask(before)
    assert folder.stat().st_mode & 0o777 == 0o700


def test_a_file_where_the_folder_should_be_is_named(tmp_path: Path) -> None:
    (tmp_path / "var").write_text("")
    problem = data_dir_problem(tmp_path / "var")
    assert problem is not None and problem.endswith("is not a folder") and str(tmp_path / "var") in problem
