"""The shape of the code: the layers of mlcb/, agents/ and envs/ and what each may import (the
imports inside functions included), no import circle, no module over 800 lines, a root of mlcb/
that holds about a dozen modules, and the results store below the results it stores."""

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
    """The modules of ours that ``module`` imports anywhere: at the top, inside functions, under
    ``if TYPE_CHECKING`` and by name through ``importlib.import_module("...")`` or
    ``__import__("...")`` (a literal string: a name computed at run time cannot be read here)."""
    tree = ast.parse(path.read_text())
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Call) and _imports_by_name(node):
            names = [node.args[0].value]  # type: ignore[attr-defined]
        else:
            continue
        found |= {owner for name in names if (owner := _owner(name)) not in (None, module)}
    return found


def _imports_by_name(call: ast.Call) -> bool:
    """Whether ``call`` is ``importlib.import_module("name")`` or ``__import__("name")`` (or
    ``import_module("name")``) with a literal name."""
    function = call.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
    literal = (
        bool(call.args) and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)
    )
    return name in ("import_module", "__import__") and literal


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
    assert "mlcb.storage.result_files" in graph["mlcb.storage.store"]
    assert "agents.bandits" in graph["mlcb.paper.lower_bound"]


def test_every_kind_of_import_is_counted(tmp_path):
    """Imports under ``TYPE_CHECKING``, inside functions and by name through ``importlib`` all
    count: each kind can close a circle or reach up a layer as well as a plain import."""
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import importlib\n"
        "if TYPE_CHECKING:\n"
        "    from mlcb.config import SimulationConfig\n"
        "def f():\n"
        "    from mlcb.engine import runner\n"
        "    importlib.import_module('mlcb.sweeps.grid')\n"
        "    __import__('mlcb.plot')\n"
    )
    assert _imports("mlcb.probe", source) == {
        "mlcb.config",
        "mlcb.engine.runner",
        "mlcb.sweeps.grid",
        "mlcb.plot",
    }


def test_no_import_circle(graph):
    assert _circles(graph) == []


def test_the_check_finds_a_circle(graph):
    """A back-edge from the file layout to the results closes results -> store -> result_files
    (and store -> outputs -> result_files)."""
    planted = {
        **graph,
        "mlcb.storage.result_files": graph["mlcb.storage.result_files"] | {"mlcb.storage.results"},
    }
    assert _circles(planted) == [
        ["mlcb.storage.outputs", "mlcb.storage.result_files", "mlcb.storage.results", "mlcb.storage.store"]
    ]


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        ("mlcb.storage.store", "mlcb.storage.results"),
        ("mlcb.storage.results", "mlcb"),
        ("mlcb.storage.results", "mlcb.theory"),
    ],
)
def test_the_store_and_results_do_not_reach_back(graph, module, forbidden):
    assert forbidden not in graph[module]


#: The layers, lowest first, each a list of rooms (a module and everything below it). A module may
#: import from its own layer and the layers below it, never from a layer above (docs/design.md).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # the compiled toolkit and the checks every layer uses
    ("toolkit", ("mlcb._version", "mlcb.kernels", "mlcb.errors", "mlcb.validation", "mlcb.registry")),
    # what a simulation is made of, each room on the toolkit alone or the few rooms SIDE_ROOMS
    # names (a setting's description, mlcb.config, names its environment, policy and experts)
    (
        "models",
        (
            "mlcb.config",
            "mlcb.contracts",
            "mlcb.learners",
            "mlcb.policies",
            "mlcb.theory",
            "mlcb.storage",
            "envs",
            "agents",
        ),
    ),
    # a setting built once, its replications run and collected
    ("engine", ("mlcb.engine",)),
    # a setting read from a file, simulated, compared; adapters of the round protocol; conformance
    (
        "experiment",
        (
            "mlcb.config.toml",
            "mlcb.simulation",
            "mlcb.compare",
            "mlcb.presets",
            "mlcb.selection_env",
            "mlcb.river",
            "mlcb.testing",
        ),
    ),
    # many settings, their figures and reports
    ("services", ("mlcb.sweeps", "mlcb.plot", "mlcb.report")),
    # what `import mlcb` gives (the package's own namespace, not its rooms)
    ("api", ("mlcb",)),
    # the command line and the reproduced paper
    ("application", ("mlcb.cli", "mlcb.paper")),
)

#: Rooms of the models layer and the only rooms outside the toolkit each may import.
SIDE_ROOMS = {
    "mlcb.config": ("mlcb.contracts", "mlcb.learners", "mlcb.storage", "envs", "mlcb.policies"),
    "mlcb.policies": (),
    "mlcb.theory": (),
    "mlcb.storage": (),
    "envs": (),
    "mlcb.learners": (),
    "mlcb.contracts": ("mlcb.learners",),
    "agents": ("envs", "mlcb.contracts", "mlcb.learners"),
}

#: Most modules directly in mlcb/ (its rooms not counted).
MAX_ROOT_MODULES = 14


def _in(module: str, room: str) -> bool:
    return module == room or module.startswith(room + ".")


def _layer(module: str) -> tuple[int, str] | None:
    """``(layer index, room)`` of ``module``: the longest room that holds it (``mlcb`` only itself)."""
    found = None
    for index, (_, rooms) in enumerate(LAYERS):
        for room in rooms:
            holds = module == room if room == "mlcb" else _in(module, room)
            if holds and (found is None or len(room) > len(found[1])):
                found = (index, room)
    return found


def _upward(edges: dict[str, set[str]]) -> list[str]:
    """Every import that reaches into a higher layer, or out of a side room, as a line of text."""
    wrong = []
    for module, imported in sorted(edges.items()):
        here = _layer(module)
        assert here is not None, f"{module} is in no layer: add its room to LAYERS"
        for other in sorted(imported):
            there = _layer(other)
            assert there is not None, f"{other} is in no layer: add its room to LAYERS"
            if there[0] > here[0]:
                wrong.append(f"{module} ({LAYERS[here[0]][0]}) imports {other} ({LAYERS[there[0]][0]})")
            side = SIDE_ROOMS.get(here[1])
            if side is not None and there[0] == here[0] and there[1] != here[1] and there[1] not in side:
                wrong.append(f"{module} ({here[1]}) imports {other} ({there[1]}), not one of {side}")
    return wrong


def test_every_module_is_in_a_layer(graph):
    assert [m for m in graph if _layer(m) is None] == []


def test_no_import_reaches_up_a_layer(graph):
    assert _upward(graph) == []


def test_the_layer_check_finds_an_upward_import(graph):
    """A policy that imports the engine, the store that imports a policy: both named."""
    planted = {
        **graph,
        "mlcb.policies.m_lcb": graph["mlcb.policies.m_lcb"] | {"mlcb.engine.compiled_loop"},
        "mlcb.storage.store": graph["mlcb.storage.store"] | {"mlcb.policies.base"},
    }
    assert _upward(planted) == [
        "mlcb.policies.m_lcb (models) imports mlcb.engine.compiled_loop (engine)",
        "mlcb.storage.store (mlcb.storage) imports mlcb.policies.base (mlcb.policies), not one of ()",
    ]


def test_the_root_of_mlcb_holds_about_a_dozen_modules():
    root = sorted(path.name for path in (ROOT / "mlcb").glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, root


def test_no_module_over_800_lines():
    long = {
        name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
