"""Python experts and their pool: moved to :mod:`mlcb.engine.learners` (the Python engine's room).

This path keeps importing: every name of the engine's module is available here too.

>>> import mlcb.learners, mlcb.engine.learners
>>> mlcb.learners.LearnerPool is mlcb.engine.learners.LearnerPool
True
"""

from __future__ import annotations

from mlcb.engine.learners import (
    DEFAULT_RATE,
    LEARNERS,
    LearnerFamily,
    LearnerPool,
    _block_follows,
    _seed,
    power_rate,
    rate_values,
    spawn,
)

__all__ = [
    "DEFAULT_RATE",
    "LEARNERS",
    "LearnerFamily",
    "LearnerPool",
    "_block_follows",
    "_seed",
    "power_rate",
    "rate_values",
    "spawn",
]
