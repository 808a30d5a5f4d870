"""Documents format 2: how weeks published before the Matrix carried its stage order were written, so they replay
to their bytes.

Format 3 put the order of stations by stage into the Matrix, so no page sorts them again: its `stations` are in
the course's stage order (control first) and its `stages` list the groups of columns. Format 2 is exactly format
3 less that:

- the Matrix's `stations` were in the course's order (s01 first), and it had no `stages`;
- it named itself `canitbuy-matrix/2`. The ranking did not change: format 3 writes it as format 2 did.

This module is frozen: it changes only if a format-2 publication is found not to replay, never to move one.
"""

from __future__ import annotations

from typing import Any

from domain.courses.course import CourseSpec


def matrix_two(doc: dict[str, Any], course: CourseSpec) -> dict[str, Any]:
    by_code = {s["code"]: s for s in doc["stations"]}
    kept = {k: v for k, v in doc.items() if k != "stages"}
    return {**kept, "format": "canitbuy-matrix/2", "stations": [by_code[code] for code in course.codes]}
