"""mlcb: fast simulation of budgeted expert selection (M-LCB and related policies).

>>> import mlcb
>>> result = mlcb.simulate(preset="trap", budget=2, horizon=2_000, replications=2)
>>> sorted(result.summary()["budget"].tolist())
[2]
"""

from __future__ import annotations

from mlcb import _jit  # noqa: F401  (configures Numba's cache before any kernel is defined)

__version__ = "0.1.0"

from mlcb import selection_env  # noqa: E402, F401  (registers mlcb/BudgetedSelection-v0)
from mlcb.compare import compare  # noqa: E402
from mlcb.config import SimulationConfig  # noqa: E402
from mlcb.results import Result, load  # noqa: E402
from mlcb.simulation import simulate  # noqa: E402
from mlcb.sweeps import sweep  # noqa: E402

__all__ = ["Result", "SimulationConfig", "compare", "load", "simulate", "sweep", "__version__"]
