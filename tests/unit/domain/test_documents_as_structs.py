"""The public documents are Structs: they encode to the very bytes the dict-built documents had, and their
published JSON Schemas are generated from them."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from rich_week import rich_facts, rich_runs

from domain.projections import logs
from domain.projections.documents import Matrix, Ranking, week_documents
from domain.projections.repeats import repeats_bytes
from domain.projections.schemas import published

ROOT = Path(__file__).parents[3]
BEFORE = ROOT / "tests" / "fixtures" / "documents-before-structs"


@pytest.mark.parametrize("documents_format", [1, 2])
def test_a_rich_week_encodes_to_the_bytes_the_dicts_gave(documents_format):
    docs = week_documents(rich_facts(), documents_format)
    assert docs.ranking == (BEFORE / f"ranking-{documents_format}.json").read_bytes()
    assert docs.matrix == (BEFORE / f"matrix-{documents_format}.json").read_bytes()


def test_the_logs_and_repeats_encode_to_the_bytes_the_dicts_gave():
    facts, runs = rich_facts(), rich_runs()
    # Version 2 names itself so (it counts by the start); the rich week's runs start in the order they end, so its
    # numbers are version 1's.
    before = (BEFORE / "repeats.json").read_bytes()
    assert before.count(b'"format":"canitbuy-repeats/1"') == 1
    assert repeats_bytes(facts) == before.replace(b'"format":"canitbuy-repeats/1"', b'"format":"canitbuy-repeats/2"')
    assert logs.corrections_log(facts.corrections, {r.run_id: r for r in runs}) == (
        BEFORE / "corrections.json").read_bytes()
    assert logs.runs_index(runs) == (BEFORE / "runs.json").read_bytes()


def test_published_documents_of_either_format_decode_into_the_structs():
    for documents_format in (1, 2):
        docs = week_documents(rich_facts(), documents_format)
        ranking = msgspec.json.decode(docs.ranking, type=Ranking)
        matrix = msgspec.json.decode(docs.matrix, type=Matrix)
        assert ranking.entries[0].label == "Alpha 1" and matrix.models[0].cells["s01"].status == "passed"
    assert ranking.entries[0].accepted_all_cookies == 5
    assert matrix.models[3].cells["s01"].cause == "model_connection"


@pytest.mark.parametrize("name", sorted(published()))
def test_the_published_schema_is_the_one_generated_from_the_structs(name):
    stale = (ROOT / "docs" / "schemas" / name).read_text(encoding="utf-8")
    assert stale == published()[name], (
        f"docs/schemas/{name} is stale: run `python -m domain.projections.schemas docs/schemas`")


def test_every_field_of_a_generated_schema_is_described():
    import json

    for name, text in published().items():
        schema = json.loads(text)
        for def_name, definition in schema["$defs"].items():
            assert definition.get("description"), (name, def_name)
            for field, prop in definition.get("properties", {}).items():
                assert prop.get("description"), (name, def_name, field)
