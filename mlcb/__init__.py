"""mlcb: fast simulation of budgeted expert selection (M-LCB and related policies)."""

from __future__ import annotations

from mlcb import _jit  # noqa: F401  (configures Numba's cache before any kernel is defined)

__version__ = "0.1.0"
