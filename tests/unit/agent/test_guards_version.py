"""The guards' version (guards_sha256 of the agent release) is their code, not where the modules they import live."""

from __future__ import annotations

import hashlib
from pathlib import Path

from adapters.models.release import current_agent, guards_code
from domain.agent import guards

# domain-move: keep (the import lines as the flat domain/ spelled them, and as sub-packages spell them)
FLAT = "from domain.actions import Action, Click\nfrom domain.observation import Element\n\nRULE = 1\n"
GROUPED = "from domain.agent.actions import Action, Click\nfrom domain.x.y.observation import Element\n\nRULE = 1\n"
ALIASED = ("import domain.actions as a\n", "import domain.actions as b\n")
FLAT_LINES = ("from domain.actions import", "from domain.observation import")
# domain-move: end keep


def test_modules_of_the_domain_moved_into_sub_packages_read_as_the_flat_domain_did():
    assert guards_code(GROUPED) == guards_code(FLAT) == FLAT


def test_a_change_of_the_guards_rules_is_a_new_version():
    assert guards_code(FLAT.replace("RULE = 1", "RULE = 2")) != guards_code(FLAT)
    assert guards_code(ALIASED[0]) != guards_code(ALIASED[1])


def test_the_release_names_the_guards_code_of_this_checkout():
    code = guards_code(Path(guards.__file__).read_text(encoding="utf-8"))
    assert all(line in code for line in FLAT_LINES)
    assert current_agent().guards_sha256 == hashlib.sha256(code.encode()).hexdigest()
