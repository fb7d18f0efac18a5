"""mlcb: fast simulation of budgeted expert selection (M-LCB and related policies).

>>> import mlcb
>>> result = mlcb.simulate(preset="trap", budget=2, horizon=2_000, replications=2)
>>> sorted(result.summary()["budget"].tolist())
[2]

The package is arranged in rooms by layer (docs/design.md): :mod:`mlcb.kernels` (the compiled
toolkit), :mod:`mlcb.policies`, :mod:`mlcb.storage` (results on disk), :mod:`mlcb.engine`,
:mod:`mlcb.sweeps`, and the application above them; ``tests/test_architecture.py`` states which
layer may import which.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings

from mlcb import selection_env  # noqa: F401  (registers mlcb/BudgetedSelection-v0)
from mlcb._version import __version__
from mlcb.compare import compare
from mlcb.config import SimulationConfig
from mlcb.kernels import jit as _jit  # noqa: F401  (configures Numba's cache before any kernel is defined)
from mlcb.simulation import simulate
from mlcb.storage.results import Result, load
from mlcb.sweeps import sweep

__all__ = ["Result", "SimulationConfig", "compare", "load", "simulate", "sweep", "__version__"]

#: Public modules that moved into a room in 0.2, by their old path: the old path still imports
#: (the same module object), with a DeprecationWarning naming the new one.
MOVED = {
    "mlcb.random": "mlcb.kernels.random",
    "mlcb.seeding": "mlcb.kernels.seeding",
    "mlcb.smoothing": "mlcb.kernels.smoothing",
    "mlcb.tables": "mlcb.kernels.tables",
    "mlcb.results": "mlcb.storage.results",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports a module of :data:`MOVED` by its old path as the module at its new one."""

    def find_spec(self, name, path=None, target=None):
        if name not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec):
        warnings.warn(
            f"{spec.name} moved to {MOVED[spec.name]}; import it from there", DeprecationWarning, stacklevel=2
        )
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module):
        """Nothing to run: the module at the new path is already imported."""


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedModules())
