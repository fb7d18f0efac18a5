"""The engine: runs a setting's replications on one of two round loops (one contract).

:mod:`mlcb.engine.compiled_loop`
    The compiled round loop shared by every environment, expert pool and policy: the whole
    replications x rounds loop in compiled code, when every part has compiled kernels.
:mod:`mlcb.engine.python_loop`
    The Python round loop: any :class:`~mlcb.contracts.BatchedPool` (a Python learner, a river
    model, a torch network), every replication in lockstep, the policy still compiled.
:mod:`mlcb.engine.replications`
    The compiled path's Python side: build one replication's arrays, run the compiled loop and
    collect it. Its names are re-exported here, with the record of a finished replication and its
    resumable part file (:mod:`mlcb.storage.replications`).

:func:`mlcb.simulate` chooses the loop (:func:`mlcb.simulation.choose_engine`); both give the same
results for the same seed where both apply.
"""

from __future__ import annotations

from mlcb.engine.replications import (
    Built,
    build_common,
    build_replication,
    checkpoint_grid,
    collect,
    finish,
    full_order,
    identity_order,
    raise_for_error,
    run_replication,
    run_replications,
    selection_size,
    top_m_best,
)
from mlcb.errors import CorruptPartWarning
from mlcb.storage.replications import Replication, load_parts, part_path

__all__ = [
    "Built",
    "CorruptPartWarning",
    "Replication",
    "build_common",
    "build_replication",
    "checkpoint_grid",
    "collect",
    "finish",
    "full_order",
    "identity_order",
    "load_parts",
    "part_path",
    "raise_for_error",
    "run_replication",
    "run_replications",
    "selection_size",
    "top_m_best",
]
