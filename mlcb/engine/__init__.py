"""The engine: runs a setting's replications on one of two round loops (one contract).

:mod:`mlcb.engine.compiled_loop`
    The compiled round loop shared by every environment, expert pool and policy: the whole
    replications x rounds loop in compiled code, when every part has compiled kernels.
:mod:`mlcb.engine.python_loop`
    The Python round loop: any :class:`~mlcb.contracts.BatchedPool` (a Python learner, a river
    model, a torch network), every replication in lockstep, the policy still compiled.
:mod:`mlcb.engine.replications`
    The compiled path's Python side: build one replication's arguments (a
    :class:`CompiledReplication`, by name), run the compiled loop and collect it. Its names are
    re-exported here, with the record of a finished replication and its resumable part file
    (:mod:`mlcb.storage.replications`).
:mod:`mlcb.engine.problem`
    :func:`build`, the one place a setting (:class:`~mlcb.config.SimulationConfig`) is built and
    checked, into the :class:`Problem` every engine function takes; :func:`choose_engine`.
:mod:`mlcb.engine.sizes`
    Size before work: the memory a setting will hold, refused in one line when it cannot fit.
:mod:`mlcb.engine.runner`
    :func:`run`, the one entry point of :func:`mlcb.simulate` and the sweep workers: the loop
    chosen, the replications run or resumed on the problem's checkpoint grid.
:mod:`mlcb.engine.collect`
    The replications of a setting gathered into a :class:`~mlcb.storage.results.Result`.

Both loops give the same results for the same seed where both apply.
"""

from __future__ import annotations

from mlcb.engine.problem import ENGINES, Problem, build, choose_engine
from mlcb.engine.replications import (
    Built,
    CompiledReplication,
    build_common,
    build_replication,
    collect_replication,
    finish,
    full_order,
    identity_order,
    raise_for_error,
    run_replication,
    run_replications,
    selection_size,
    top_m_best,
)
from mlcb.engine.runner import Run, run
from mlcb.errors import CorruptPartWarning
from mlcb.storage.replications import Replication, load_parts, part_path

__all__ = [
    "ENGINES",
    "Built",
    "CompiledReplication",
    "Problem",
    "Run",
    "build",
    "choose_engine",
    "run",
    "CorruptPartWarning",
    "Replication",
    "build_common",
    "build_replication",
    "collect_replication",
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
