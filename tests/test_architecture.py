"""The shape of the code: no import circle between the modules of mlcb/, agents/ and envs/ (the
imports inside functions included), no module over 800 lines, and the results store below the
results it stores."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mlcb", "agents", "envs")
MAX_LINES = 800


def _modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The module of ours that ``name`` (a module, or a name inside one) belongs to."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> set[str]:
    """The modules of ours that ``module`` imports anywhere, except under ``if TYPE_CHECKING``."""
    tree = ast.parse(path.read_text())
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    skipped = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {owner for name in names if (owner := _owner(name)) not in (None, module)}
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """Each module's imports of ours (parsed when a test asks: not at collection)."""
    return {module: _imports(module, path) for module, path in MODULES.items()}


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return circles


def test_the_graph_is_read(graph):
    assert len(MODULES) > 50
    assert "mlcb.result_files" in graph["mlcb.store"]
    assert "agents.bandits" in graph["mlcb.paper.lower_bound"]


def test_no_import_circle(graph):
    assert _circles(graph) == []


def test_the_check_finds_a_circle(graph):
    """A back-edge from the file layout to the results closes results -> store -> result_files."""
    planted = {**graph, "mlcb.result_files": graph["mlcb.result_files"] | {"mlcb.results"}}
    assert _circles(planted) == [["mlcb.result_files", "mlcb.results", "mlcb.store"]]


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [("mlcb.store", "mlcb.results"), ("mlcb.results", "mlcb"), ("mlcb.results", "mlcb.theory")],
)
def test_the_store_and_results_do_not_reach_back(graph, module, forbidden):
    assert forbidden not in graph[module]


def test_no_module_over_800_lines():
    long = {
        name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
