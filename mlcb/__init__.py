"""mlcb: fast simulation of budgeted expert selection (M-LCB and related policies).

>>> import mlcb
>>> result = mlcb.simulate(preset="trap", budget=2, horizon=2_000, replications=2)
>>> sorted(result.summary()["budget"].tolist())
[2]

The package is arranged in rooms by layer (docs/design.md): :mod:`mlcb.kernels` (the compiled
toolkit), :mod:`mlcb.policies`, :mod:`mlcb.storage` (results on disk), :mod:`mlcb.engine`,
:mod:`mlcb.sweeps`, and the application above them; ``tests/test_architecture.py`` states which
layer may import which.

``import mlcb`` is light (a few milliseconds, no NumPy): the names of :data:`__all__` and the
public modules (``mlcb.theory``, ``mlcb.plot``, ...) are imported on first use (PEP 562), so that
the command line and a script pay only for what they use. Two settings still take effect from
``import mlcb`` on, whenever the package they concern is imported: Numba's on-disk cache lives
under ``~/.cache/mlcb`` (:mod:`mlcb.kernels.jit`), and Gymnasium knows the environment
``mlcb/BudgetedSelection-v0`` (:mod:`mlcb.selection_env`).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mlcb._version import __version__

if TYPE_CHECKING:  # what the lazy attributes below resolve to, for type checkers and the docs
    from mlcb.compare import compare
    from mlcb.config import SimulationConfig
    from mlcb.simulation import simulate
    from mlcb.storage.results import Result, load
    from mlcb.sweeps import sweep

__all__ = ["Result", "SimulationConfig", "compare", "load", "simulate", "sweep", "__version__"]

#: The public modules of the package, imported on first access as attributes of ``mlcb``
#: (``mlcb.theory.theorem_rate`` after a plain ``import mlcb``).
MODULES = (
    "cli",
    "config",
    "contracts",
    "engine",
    "errors",
    "kernels",
    "learners",
    "paper",
    "plot",
    "policies",
    "presets",
    "registry",
    "report",
    "river",
    "selection_env",
    "simulation",
    "storage",
    "sweeps",
    "testing",
    "theory",
    "validation",
)

#: The Gymnasium id registered for :class:`mlcb.selection_env.BudgetedSelectionEnv` (the same
#: string as ``mlcb.selection_env.ENV_ID``, which this module does not import: it needs Numba).
GYM_ID = "mlcb/BudgetedSelection-v0"


def _lookup(name: str) -> Any:
    """The object a lazy name of :data:`__all__` stands for (each import spelled out, so that the
    architecture test reads them)."""
    if name == "simulate":
        from mlcb.simulation import simulate

        return simulate
    if name == "compare":
        from mlcb.compare import compare

        return compare
    if name == "SimulationConfig":
        from mlcb.config import SimulationConfig

        return SimulationConfig
    if name == "Result":
        from mlcb.storage.results import Result

        return Result
    if name == "load":
        from mlcb.storage.results import load

        return load
    from mlcb.sweeps import sweep

    return sweep


def __getattr__(name: str) -> Any:
    """PEP 562: the names of :data:`__all__` and the modules of :data:`MODULES`, on first use."""
    if name in __all__:
        value = _lookup(name)
    elif name in MODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | set(MODULES))


class _Package(types.ModuleType):
    """The module class of ``mlcb``: importing the module ``mlcb.compare`` leaves the attribute
    ``mlcb.compare`` the function :func:`mlcb.compare.compare` (Python sets a submodule as an
    attribute of its package when it is first imported; the function was bound first when the
    package imported it eagerly, and stays bound now that the import is lazy)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in __all__ and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


# The finder and loader below follow importlib's protocols without deriving from importlib.abc,
# whose import pulls in importlib.resources (some 20 ms of `import mlcb`).
class _AfterImport:
    """Runs a function right after a module's first import, wherever it is imported from: the
    module is found and loaded as usual (by the finders after this one), then the function gets
    it. A module imported already gets it at once (:func:`_after_import`)."""

    def __init__(self) -> None:
        self.hooks: dict[str, Callable[[types.ModuleType], None]] = {}

    def find_spec(self, name, path=None, target=None):
        hook = self.hooks.pop(name, None)
        if hook is None:
            return None
        spec = importlib.util.find_spec(name)  # the finders' own answer (this hook is spent)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_then_hook(module: types.ModuleType) -> None:
            exec_module(module)
            hook(module)

        # Only this load goes through the hook; the module keeps its own loader.
        spec.loader = _HookedLoader(loader, exec_then_hook)
        return spec


class _HookedLoader:
    """A loader that delegates to ``loader`` and runs ``exec_module`` in its place; the module's
    spec and ``__loader__`` are given back the original loader once it has run."""

    def __init__(self, loader: Any, exec_module: Callable[[types.ModuleType], None]) -> None:
        self.loader = loader
        self.run = exec_module

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.run(module)


def _after_import(name: str, hook: Callable[[types.ModuleType], None]) -> None:
    """Call ``hook(module)`` once module ``name`` is imported: now if it is, else right after its
    first import."""
    if name in sys.modules:
        hook(sys.modules[name])
        return
    finder = next((f for f in sys.meta_path if isinstance(f, _AfterImport)), None)
    if finder is None:
        finder = _AfterImport()
        sys.meta_path.insert(0, finder)
    finder.hooks.setdefault(name, hook)


def _configure_numba(numba: types.ModuleType) -> None:
    """Numba's on-disk cache in mlcb's directory (:mod:`mlcb.kernels.jit`), set before any kernel is
    defined."""
    from mlcb.kernels import jit  # noqa: F401  (configures the cache when imported)


def _register_gym_id(gymnasium: types.ModuleType) -> None:
    """``gym.make("mlcb/BudgetedSelection-v0")`` finds :class:`mlcb.selection_env.BudgetedSelectionEnv`
    (imported only when made)."""
    if GYM_ID not in gymnasium.registry:
        gymnasium.register(
            id=GYM_ID, entry_point="mlcb.selection_env:BudgetedSelectionEnv", disable_env_checker=True
        )


_after_import("numba", _configure_numba)
_after_import("gymnasium", _register_gym_id)
