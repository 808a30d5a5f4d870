"""The JSON Schemas of the public documents, generated from their Structs (docs/schemas/*.json).

A field's description is its docstring (the string under it in the class body), the way events document their
fields, so the Struct is the one place a field is written down and the published schema cannot drift from the
code: `python -m domain.projections.schemas docs/schemas` writes them and a test fails when one is stale.
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
import textwrap
from functools import cache
from pathlib import Path
from typing import Any

import msgspec

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
BASE = "https://canitbuy.com/schemas/"


@cache
def field_docs(cls: type) -> dict[str, str]:
    """Field name to its docstring, read from the class body (inherited fields included)."""
    docs: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        if base is object or not issubclass(base, msgspec.Struct) or base is msgspec.Struct:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(base)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in zip(body, body[1:], strict=False):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[node.target.id] = " ".join(inspect.cleandoc(after.value.value).split())
    return docs


def _describe(schema: dict[str, Any], cls: type) -> None:
    docs = field_docs(cls)
    for name, prop in schema.get("properties", {}).items():
        if name in docs:  # beside a $ref too: 2020-12 allows it
            prop.setdefault("description", docs[name])
    if cls.__doc__ and "description" not in schema:
        schema["description"] = " ".join(inspect.cleandoc(cls.__doc__).split())


def _structs(cls: type) -> dict[str, type]:
    """Every Struct reachable from `cls`, by the name msgspec gives its $defs entry."""
    found: dict[str, type] = {}

    def walk(info: Any) -> None:
        if isinstance(info, msgspec.inspect.StructType):
            if info.cls.__name__ not in found:
                found[info.cls.__name__] = info.cls
                for f in info.fields:
                    walk(f.type)
            return
        for attr in ("item_type", "key_type", "value_type"):
            if (inner := getattr(info, attr, None)) is not None:
                walk(inner)
        for inner in (getattr(info, "types", None) or ()) + (getattr(info, "item_types", None) or ()):
            walk(inner)

    walk(msgspec.inspect.type_info(cls))
    return found


def document_schema(cls: type, name: str, title: str) -> dict[str, Any]:
    """The JSON Schema of a document Struct: msgspec's, with field docstrings as descriptions."""
    schema = msgspec.json.schema(cls)
    defs: dict[str, Any] = schema.get("$defs", {})
    for def_name, struct in _structs(cls).items():
        if def_name in defs:
            _describe(defs[def_name], struct)
    return {
        "$schema": SCHEMA_DIALECT, "$id": f"{BASE}{name}.json", "title": title,
        **{k: v for k, v in schema.items() if k != "$defs"}, "$defs": defs,
    }


def schema_text(cls: type, name: str, title: str) -> str:
    return json.dumps(document_schema(cls, name, title), indent=2, ensure_ascii=False) + "\n"


def published() -> dict[str, str]:
    """File name to text of every generated schema."""
    from domain.projections.documents import Matrix, Ranking
    from domain.projections.logs import CorrectionsLog
    from domain.projections.repeats import Repeats
    from domain.week.anchors import WeekPublications

    return {
        "ranking.json": schema_text(Ranking, "ranking", "CanItBuy ranking"),
        "matrix.json": schema_text(Matrix, "matrix", "CanItBuy Matrix"),
        "corrections.json": schema_text(CorrectionsLog, "corrections", "CanItBuy corrections log"),
        "repeats.json": schema_text(Repeats, "repeats", "CanItBuy repeat runs of a week"),
        "week.json": schema_text(WeekPublications, "week", "CanItBuy publications of a week"),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m domain.projections.schemas FOLDER", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    for name, text in published().items():
        (folder / name).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
