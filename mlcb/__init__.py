"""mlcb: fast simulation of budgeted expert selection (M-LCB and related policies).

>>> import mlcb
>>> result = mlcb.simulate(preset="trap", budget=2, horizon=2_000, replications=2)
>>> sorted(result.summary()["budget"].tolist())
[2]
"""

from __future__ import annotations

from mlcb import (
    _jit,  # noqa: F401  (configures Numba's cache before any kernel is defined)
    selection_env,  # noqa: F401  (registers mlcb/BudgetedSelection-v0)
)
from mlcb._version import __version__
from mlcb.compare import compare
from mlcb.config import SimulationConfig
from mlcb.results import Result, load
from mlcb.simulation import simulate
from mlcb.sweeps import sweep

__all__ = ["Result", "SimulationConfig", "compare", "load", "simulate", "sweep", "__version__"]
