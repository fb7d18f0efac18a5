"""The contract of a rate function ``U(n, delta')``, shared by Python experts and compiled families.

A rate bounds an expert's cumulative regret after ``n`` updates: vectorised over an array of
counts, finite, ``>= 0`` (``> 0`` from ``n = 2``), non-decreasing in ``n``, and at most ``n``
when the expert declares it valid (not ``heuristic``). :func:`_counts` gives the counts the checks
evaluate it at (dense up to 64, then geometric up to a million).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlcb.testing._common import _fail


def _counts() -> np.ndarray:
    dense = np.arange(1, 65)
    sparse = np.round(np.geomspace(64, 1e6, 60)).astype(np.int64)
    return np.unique(np.concatenate([dense, sparse])).astype(np.int64)


def _check_rate_values(who: str, values: Any, n: np.ndarray, valid: bool, where: str) -> None:
    """A rate function's values at counts ``n``: finite, >= 0 (> 0 from n = 2), non-decreasing,
    and at most ``n`` when declared valid."""
    values = np.asarray(values, dtype=float)
    if values.shape != n.shape:
        _fail(
            who,
            f"{where} has shape {values.shape} for {n.shape[0]} counts; a rate function is vectorised "
            "over an array of counts n",
        )
    bad = ~np.isfinite(values) | (values < 0) | ((values <= 0) & (n >= 2))
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        _fail(
            who, f"{where} at n = {int(n[i])} is {float(values[i])!r}; a rate U(n, delta') is finite and > 0"
        )
    drops = np.flatnonzero(np.diff(values) < -1e-9 * np.maximum(1.0, np.abs(values[:-1])))
    if drops.size:
        i = int(drops[0])
        _fail(
            who,
            f"{where} decreases: U({int(n[i])}) = {float(values[i])!r} > U({int(n[i + 1])}) = "
            f"{float(values[i + 1])!r}; "
            "a regret bound U(n, delta') must be non-decreasing in n",
        )
    if valid:
        over = np.flatnonzero(values > n * (1 + 1e-12))
        if over.size:
            i = int(over[0])
            _fail(
                who,
                f"{where} at n = {int(n[i])} is {float(values[i])!r} > n while declared valid "
                "(heuristic False); cap it with min(n, ...)",
            )
