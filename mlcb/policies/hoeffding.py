"""The Hoeffding width of M-LCB's upper confidence bound, and its tables (docs/theory.md §2).

::

    UCB_k = L_k + s * hoeffding_width(K, delta, n_k),   hoeffding_width = sqrt(2 log(4 K n^2 / delta) / n)

The width depends on the count ``n`` only, so a run tabulates it once per ``(K, delta)``
(:func:`hoeffding_table`, cut at :data:`mlcb.kernels.tables.TABLE_BUDGET_BYTES` and shared by every
horizon it covers) and continues the table in compressed form up to the horizon
(:func:`hoeffding_tail`, :mod:`mlcb.kernels.tables`). M-LCB reads both; the ``full-budget`` reference,
which deploys M-LCB's smallest upper bound, reads the table.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from mlcb.kernels import tables
from mlcb.kernels.jit import cold_kernel, njit


@cold_kernel
def hoeffding_width(n_experts, delta, n):
    """Width of M-LCB's upper bound: ``sqrt(2 log(4 K n^2 / delta) / n)``.

    Examples
    --------
    >>> round(hoeffding_width(10, 0.1, 100), 4)
    0.5514
    """
    return math.sqrt(2.0 * math.log(4.0 * n_experts * n * n / delta) / n)


def hoeffding_upper_bounds(stats: np.ndarray, delta: float, scale: float = 1.0) -> np.ndarray:
    """``L_k + scale * hoeffding_width(K, delta, n_k)`` of every expert of ``stats`` (the engine's
    statistics, :data:`mlcb.kernels.stats.STATS_DTYPE`), ``inf`` where ``n_k = 0``: M-LCB's
    upper bounds, the default of a policy that states none of its own.

    Examples
    --------
    >>> from mlcb.kernels.stats import new_stats
    >>> stats = new_stats(2)
    >>> stats["n"], stats["loss_sum"] = [100, 0], [20.0, 0.0]
    >>> [round(float(u), 4) for u in hoeffding_upper_bounds(stats, 0.1)]
    [0.7214, inf]
    """
    n = stats["n"].astype(np.float64)
    seen = n > 0
    out = np.full(n.shape, np.inf)
    count = n[seen]
    width = np.sqrt(2.0 * np.log(4.0 * n.shape[0] * count * count / delta) / count)
    out[seen] = stats["loss_sum"][seen] / count + scale * width
    return out


@njit
def _fill(n_experts, delta, start, out):
    for i in range(out.shape[0]):
        out[i] = hoeffding_width(n_experts, delta, start + i)


def _tabulate(n_experts, delta, length):
    table = np.zeros(length)
    if length > 1:
        _fill(n_experts, delta, 1, table[1:])
    return table


def hoeffding_table(n_experts: int, delta: float, horizon: int, budget: int) -> np.ndarray:
    """``hoeffding_width(n)`` for the counts ``n`` a run of ``horizon`` rounds reaches, at most
    ``budget`` bytes of them (entry 0 unused; read-only, shared between calls).

    Examples
    --------
    >>> table = hoeffding_table(10, 0.1, 1_000, 1 << 20)
    >>> table.shape, float(table[100]) == hoeffding_width(10, 0.1, 100)
    ((1002,), True)
    """
    # Cached by length: every horizon whose table is cut at the budget shares one.
    return _table_of_length(n_experts, delta, tables.table_length(horizon, 1, budget))


@functools.lru_cache(maxsize=16)
def _table_of_length(n_experts: int, delta: float, length: int) -> np.ndarray:
    table = _tabulate(n_experts, delta, length) if length else np.zeros(0)
    table.setflags(write=False)
    return table


def hoeffding_tail(n_experts: int, delta: float, table: np.ndarray, horizon: int) -> tables.Tail:
    """The continuation of ``table`` (:mod:`mlcb.kernels.tables`) up to count ``horizon + 1``, or an
    empty one when the table reaches it.

    Examples
    --------
    >>> table = hoeffding_table(10, 0.1, 1_000, 1 << 20)
    >>> hoeffding_tail(10, 0.1, table, 1_000).codes.shape[1]
    0
    """
    size = tables.tail_length(horizon, table.shape[0], 1)
    if size == 0:
        return tables.empty_tail(1)
    return _tail_of_size(n_experts, delta, table.shape[0], size)


@functools.lru_cache(maxsize=2)  # up to TAIL_BUDGET_BYTES each
def _tail_of_size(n_experts: int, delta: float, length: int, size: int) -> tables.Tail:
    table = _table_of_length(n_experts, delta, length)
    return tables.encode(table[None, :], lambda row, start, out: _fill(n_experts, delta, start, out), size)
