"""The pages that explain the 150 seconds name the bound the episode keeps on waits for our own limit on calls at
once: the /method page, the course page and the operations guide say the same number as MAX_OUR_WAIT."""

from __future__ import annotations

import re
from pathlib import Path

from domain.agent.episode import MAX_OUR_WAIT

ROOT = Path(__file__).resolve().parents[3]


def test_the_method_course_and_operations_pages_name_the_episodes_bound_on_our_wait() -> None:
    method = " ".join((ROOT / "web/templates/method.html").read_text().split())
    course = " ".join((ROOT / "web/templates/course.html").read_text().split())
    operations = " ".join((ROOT / "docs/operations.md").read_text().split())
    said = f"more than {MAX_OUR_WAIT:g} seconds beyond"
    assert said in method and said in course
    assert re.search(rf"more than {MAX_OUR_WAIT:g} s beyond them \(`MAX_OUR_WAIT`\)", operations)
