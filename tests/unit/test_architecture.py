"""The import arrows of DESIGN.md, checked on the source (import-linter checks the project-internal ones too)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOMAIN_MAY_IMPORT = {"domain", "eventsourcing", "msgspec"}
PROJECT = {"domain", "adapters", "lab", "web", "workers", "ops"}


def imported_top_levels(folder: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (ROOT / folder).rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def test_domain_imports_only_the_standard_library_eventsourcing_and_msgspec() -> None:
    outside = {
        name: files for name, files in imported_top_levels("domain").items()
        if name not in DOMAIN_MAY_IMPORT and name not in sys.stdlib_module_names and name != "__future__"
    }
    assert outside == {}


def test_the_lab_imports_nothing_of_the_project() -> None:
    assert set(imported_top_levels("lab")) & (PROJECT - {"lab"}) == set()


def test_nothing_but_ops_imports_the_top() -> None:
    for folder in ("domain", "adapters", "lab", "web", "workers"):
        assert "ops" not in imported_top_levels(folder), folder


def test_operations_never_import_the_site() -> None:
    assert "web" not in imported_top_levels("ops"), "canitbuy web serve hands its process to python -m web"


def test_only_the_composition_root_opens_the_record_and_its_read_models() -> None:
    openers = set()
    for folder in ("adapters", "web", "workers", "ops"):
        for path in (ROOT / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                    "open_record", "ReadModels"
                ):
                    openers.add(str(path.relative_to(ROOT)))
    assert openers == {"adapters/wiring.py"}


def test_the_site_keeps_no_untyped_bag_of_services() -> None:
    from web.site import Site

    assert "services" not in Site.__dataclass_fields__


def test_only_settings_reads_the_environment() -> None:
    readers = []
    for folder in ("domain", "adapters", "web", "workers"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            if "os.environ" in text or "os.getenv" in text:
                readers.append(str(path.relative_to(ROOT)))
    assert readers == ["adapters/settings.py"]


def import_cycles(package: str) -> list[list[str]]:
    """Groups of modules inside `package` that import each other, directly or round about (Tarjan's strongly
    connected components on grimp's graph, which sees imports inside functions too, so none can hide there)."""
    import grimp

    graph = grimp.build_graph(package)
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m) & set(modules)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in edges[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1 or module in edges[module]:
                cycles.append(sorted(group))

    for module in modules:
        if module not in index:
            visit(module)
    return cycles


def test_the_adapters_import_one_way() -> None:
    # The fetcher, the built-in reader and the model reader once imported each other through function-level
    # imports; a cycle anywhere in adapters/ fails here, wherever its import statements stand.
    assert import_cycles("adapters") == []
