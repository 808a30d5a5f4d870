"""A week that ranks a built-in agent (embedded mode, no model key) says on the ranking, the Matrix and the front
page that it is a built-in reference agent and not an AI model; its documents stay as they were, byte for byte
the shape already published (no field was added for it). A real record (SQLite), a published week, the site over
HTTP."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).parent))

from site_data import make_week  # noqa: E402

from adapters.settings import Settings  # noqa: E402
from adapters.wiring import build_runtime  # noqa: E402
from domain.projections.documents import MatrixModel, RankingEntry  # noqa: E402
from web.app import create_app  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

TAG = "(built-in reference agent, not an AI model)"
SHORT = "(built-in, not an AI model)"


def test_a_built_in_agent_is_labelled_where_a_reader_meets_it_and_an_ai_model_is_not(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4)
    with build_runtime(settings) as runtime:
        week = make_week(runtime, models=("baseline-robust", "model-alpha", "model-delta")).week
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        pages = {path: " ".join(client.get(f"{path}?week={week}").text.split()) for path in ("/ranking", "/matrix")}
        pages["/"] = " ".join(client.get("/").text.split())
        ranking = client.get(f"/api/ranking.json?week={week}").json()
        matrix = client.get(f"/api/matrix.json?week={week}").json()
    for path, page in pages.items():
        tag = SHORT if path == "/matrix" else TAG  # the Matrix's first column is narrow
        name = "baseline-robust" if path == "/matrix" else "baseline-robust</a>"
        assert f'{name} <span class="small muted">{tag}</span>' in page, path
        assert page.count(tag) == 1, path  # model-alpha (ranked) and model-delta (unranked) are AI models
        assert "Built-in reference agents.</strong> baseline-robust is not an AI model: CanItBuy’s own" in page, path
        assert 'href="/agent#builtin"' in page and "They get no screenshot" in page, path
    # The documents keep the fields they were published with: the label is the pages' alone.
    assert {e["model"] for e in ranking["entries"]} == {"baseline-robust", "model-alpha", "model-delta"}
    assert all(set(e) == {f.name for f in msgspec.structs.fields(RankingEntry)} for e in ranking["entries"])
    assert all(set(m) == {f.name for f in msgspec.structs.fields(MatrixModel)} for m in matrix["models"])
