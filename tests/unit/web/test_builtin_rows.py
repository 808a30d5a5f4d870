"""The rows the ranking and the Matrix print know a built-in agent from an AI model, by its name alone: the week's
documents carry no field for it."""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).parents[1] / "domain"))

from rich_week import rich_facts  # noqa: E402

from adapters.models.lineup import BASELINES  # noqa: E402
from domain.projections.documents import Matrix, Ranking, week_documents  # noqa: E402
from web.public.week_views import is_builtin, matrix_rows, ranking_rows  # noqa: E402

DOCS = week_documents(rich_facts())
RANKING = msgspec.json.decode(DOCS.ranking, type=Ranking)
MATRIX = msgspec.json.decode(DOCS.matrix, type=Matrix)


def test_every_built_in_agent_and_no_line_up_model_is_built_in() -> None:
    assert all(is_builtin(name) for name in BASELINES)
    assert not any(is_builtin(name) for name in ("gpt-6-luna", "claude-haiku-5.5", "baseline", "baseline-robust2"))


def test_ranked_unranked_and_matrix_rows_carry_whether_the_entrant_is_built_in() -> None:
    first, second = RANKING.entries[0], RANKING.entries[-1]
    entries = [msgspec.structs.replace(first, model="baseline-robust"), second]
    ranked, unranked = ranking_rows(msgspec.structs.replace(RANKING, entries=entries))
    rows = ranked + unranked
    assert [(r.model, r.builtin) for r in rows] == [("baseline-robust", True), (second.model, False)]
    models = [msgspec.structs.replace(MATRIX.models[0], model="baseline-naive"), *MATRIX.models[1:]]
    matrix = matrix_rows(msgspec.structs.replace(MATRIX, models=models))
    assert [r.builtin for r in matrix] == [True] + [False] * (len(matrix) - 1)
