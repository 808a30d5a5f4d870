"""pyproject.toml as setuptools reads it: installing must print no deprecation warning (issue #12 item 9)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.licenses import canonicalize_license_expression
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_licence_is_an_spdx_expression() -> None:
    # A TOML table ({text = ...}) is deprecated by setuptools 77 and warns on every install.
    licence = _pyproject()["project"]["license"]
    assert isinstance(licence, str)
    assert canonicalize_license_expression(licence) == licence == "Apache-2.0 AND CC-BY-4.0"
    assert not any("License ::" in c for c in _pyproject()["project"].get("classifiers", [])), \
        "setuptools refuses licence classifiers beside an SPDX expression"


def test_the_build_backend_reads_spdx_expressions() -> None:
    requirement = Requirement(next(r for r in _pyproject()["build-system"]["requires"] if r.startswith("setuptools")))
    assert not requirement.specifier.contains("76.9"), "setuptools before 77 cannot read an SPDX licence string"
