"""The per-expert statistics every policy kernel reads (``stats`` in :mod:`mlcb.kernels`' contract).

The engines keep them (:mod:`mlcb.engine.compiled_loop`); a policy's ``select``, ``observe`` and
``end_round`` read them, and so do tests and examples that drive a policy's kernels by hand.
"""

from __future__ import annotations

import numpy as np

#: Per-expert statistics the policies read (docs/theory.md §1): a record array of shape ``(K,)``.
#: ``n`` training count (warm start included), ``loss_sum`` sum of training losses
#: (``L_k = loss_sum / n``), ``rate`` ``U_k(n_k, delta / 2K)`` after the last update, ``deployed``
#: rounds in which the expert was deployed.
STATS_DTYPE = np.dtype(
    [("n", np.int64), ("loss_sum", np.float64), ("rate", np.float64), ("deployed", np.int64)],
    align=True,
)


def new_stats(n_experts: int) -> np.ndarray:
    """Zeroed statistics for ``n_experts`` experts."""
    return np.zeros(n_experts, dtype=STATS_DTYPE)
