"""Conformance checks for one's own environments, policies and experts.

In the spirit of Gymnasium's ``check_env`` and scikit-learn's ``check_estimator``, each check
drives an object through the contract of :mod:`mlcb.contracts` (and of :mod:`mlcb.kernels` for
compiled code) and raises a :class:`ConformanceError` (an ``AssertionError``) that names the
object, the method and what to fix at the first violation; when all is well it returns a
:class:`CheckReport` of what it ran (``print(report)`` lists every check).

:func:`check_env`
    an :class:`~mlcb.contracts.Environment`: ``n_experts``, ``build``, ``optimal_loss`` and
    ``round_data`` as the engines use them, then Gymnasium's own checker.
:func:`check_policy`
    a :class:`~mlcb.contracts.Policy`: its ``build``, its compiled ``select`` / ``observe`` /
    ``end_round`` kernels driven by a compiled probe on synthetic losses (sizes, indices, widths,
    determinism), then short simulations on both engines.
:func:`check_expert`
    a :class:`~mlcb.contracts.PythonExpert` (``learn`` / ``deploy`` / ``spawn`` / ``rate`` /
    ``heuristic``, driven directly on an environment's round data), or an expert specification
    of a compiled :class:`~mlcb.contracts.ExpertFamily` (every member of the family, then a short
    simulation of a pool of it).

Each contract has its module: :mod:`mlcb.testing.environments` (``check_env``),
:mod:`mlcb.testing.policies` (``check_policy``), :mod:`mlcb.testing.experts` (``check_expert``,
which hands a Python learner to :mod:`mlcb.testing.python_experts` and an expert specification
to :mod:`mlcb.testing.families`), :mod:`mlcb.testing.rates` (the rate functions both kinds of
expert declare) and ``mlcb.testing._common`` (the error and the comparisons they share). The
names above are re-exported here.

Examples
--------
>>> from mlcb.testing import ConformanceError
>>> issubclass(ConformanceError, AssertionError)
True
"""

from __future__ import annotations

from mlcb.testing._common import DELTA as DELTA  # the confidence level the checks evaluate rates at
from mlcb.testing._common import CheckReport, ConformanceError
from mlcb.testing.environments import check_env
from mlcb.testing.experts import check_expert
from mlcb.testing.policies import check_policy

__all__ = ["CheckReport", "ConformanceError", "check_env", "check_expert", "check_policy"]
