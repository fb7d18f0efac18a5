"""Tables of functions of an integer count, shared by every replication of a run.

Most transcendental functions in M-LCB's bounds and in the experts depend on a count alone: the
Hoeffding width on ``n_k``, a theory rate ``U(n, delta')`` on the expert's own update count, the
epsilon-greedy schedule on its own round ``j``. A run of horizon ``T`` never sees a count above
``T + 1`` (warm start plus one update per round), so these functions are evaluated once for
``n = 0 .. L - 1`` by the *same* compiled scalar function the kernels would call, and the round
loop reads the table for counts below ``L`` and computes above (the reference path; tests hold
the two equal bit for bit). ``L = T + 2`` when the tables fit :data:`TABLE_BUDGET_BYTES`; at
longer horizons the tables keep the counts that fit, so the lookups still serve every count up
to ``L`` instead of none.
"""

from __future__ import annotations

import numpy as np

#: Largest total size of one set of tables; counts beyond it are computed.
TABLE_BUDGET_BYTES = 64 * 2**20

#: An empty table: "compute, do not look up".
EMPTY = np.zeros((0, 0))


def table_length(horizon: int, rows: int, budget: int | None = None) -> int:
    """Length of each of ``rows`` float64 rows within ``budget`` bytes (default
    :data:`TABLE_BUDGET_BYTES`): ``T + 2`` when they fit, else as many counts as fit; 0 (no
    tables) when not even two do.

    Examples
    --------
    >>> table_length(1_000, 2), table_length(10**9, 2, budget=800), table_length(10, 1, budget=8)
    (1002, 50, 0)
    """
    budget = TABLE_BUDGET_BYTES if budget is None else budget
    length = min(horizon + 2, budget // (8 * max(rows, 1)))
    return length if length >= 2 else 0
