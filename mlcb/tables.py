"""Tables of functions of an integer count, shared by every replication of a run.

Most transcendental functions in M-LCB's bounds and in the experts depend on a count alone: the
Hoeffding width on ``n_k``, a theory rate ``U(n, delta')`` on the expert's own update count, the
epsilon-greedy schedule on its own round ``j``. A run of horizon ``T`` never sees a count above
``T + 1`` (warm start plus one update per round), so when ``T`` is moderate these functions are
evaluated once for ``n = 0 .. T + 1`` by the *same* compiled scalar function the kernels would
call, and the round loop reads the table instead. Beyond :data:`TABLE_BUDGET_BYTES` the kernels
compute as usual (the reference path; a test holds the two equal bit for bit).
"""

from __future__ import annotations

import numpy as np

#: Largest total size of one run's tables; longer horizons use the computed path.
TABLE_BUDGET_BYTES = 64 * 2**20

#: An empty table: "compute, do not look up".
EMPTY = np.zeros((0, 0))


def table_length(horizon: int, rows: int, budget: int | None = None) -> int:
    """Length ``T + 2`` of each row when ``rows`` rows fit ``budget`` bytes (default
    :data:`TABLE_BUDGET_BYTES`), else 0 (no tables)."""
    length = horizon + 2
    budget = TABLE_BUDGET_BYTES if budget is None else budget
    return length if rows * length * 8 <= budget else 0
