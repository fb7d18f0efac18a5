"""mlcb: fast simulation of budgeted expert selection (M-LCB and related policies).

>>> import mlcb
>>> result = mlcb.simulate(preset="trap", budget=2, horizon=2_000, replications=2)
>>> sorted(result.summary()["budget"].tolist())
[2]

The package is arranged in rooms by layer (docs/design.md): :mod:`mlcb.kernels` (the compiled
toolkit), :mod:`mlcb.policies`, :mod:`mlcb.storage` (results on disk), :mod:`mlcb.engine`,
:mod:`mlcb.sweeps`, and the application above them; ``tests/test_architecture.py`` states which
layer may import which.

``import mlcb`` is light (a few milliseconds, no NumPy) and changes nothing in the process: the
names of :data:`__all__` and the public modules (``mlcb.theory``, ``mlcb.plot``, ...) are imported
on first use (PEP 562), so that the command line and a script pay only for what they use. What a
module sets up, it sets up when it is imported, for itself: mlcb's compiled kernels are cached
under ``~/.cache/mlcb`` by a cache of their own (:mod:`mlcb.kernels.jit`), and Gymnasium knows the
environment ``mlcb/BudgetedSelection-v0`` once :mod:`mlcb.selection_env` is imported.
"""

from __future__ import annotations

import importlib
import sys
import types
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
