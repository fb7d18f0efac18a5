"""The worst-case certificate ``B_num(t)`` of a setting, tabulated for its result's metadata.

``B_num(t)`` is the largest certificate any allocation of the budget could produce over ``t``
rounds (:func:`mlcb.theory.numeric_worst_case`, docs/theory.md §5). Tabulating it means the pool's
rate functions at every count up to the horizon: :func:`worst_case_curve` does it for one setting
at about :data:`THEORY_POINTS` rounds, selecting the ``M t`` largest widths by bisection where the
widths are sorted, and :func:`worst_case_of` remembers recent curves, which depend neither on the
policy nor on the number of replications.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

import numpy as np

from mlcb import theory
from mlcb.kernels.jit import kernel

#: The worst-case curve is tabulated up to this horizon, at this many rounds, for pools whose
#: rates fit in this many numbers (K T).
THEORY_HORIZON = 2_000_000
THEORY_POINTS = 24
THEORY_ENTRIES = 20_000_000


#: Recent worst-case curves by setting (the curve depends neither on the policy nor on the number
#: of replications: a comparison or a repeated run computes it once).
_CURVES: dict[str, dict[str, list] | None] = {}


def worst_case_of(config: Any, family: Any, experts: list, env: Any, best_expert: int) -> dict | None:
    """:func:`worst_case_curve` of ``config``, remembered when the setting is plain data."""
    key = _setting_key(config, experts, best_expert)
    if key is not None and key in _CURVES:
        curve = _CURVES[key]
    else:
        budget, horizon = config.budget, config.horizon
        curve = worst_case_curve(family, experts, env, config.delta, budget, horizon, best_expert)
        if key is not None:
            while len(_CURVES) >= 16:
                _CURVES.pop(next(iter(_CURVES)))
            _CURVES[key] = curve
    return None if curve is None else {name: list(values) for name, values in curve.items()}


def _setting_key(config: Any, experts: list, best_expert: int) -> str | None:
    """What the curve depends on, as exact JSON; ``None`` unless every part of it is plain data
    (dataclass experts whose fields are JSON, JSON environment parameters)."""
    described = []
    for expert in experts:
        if not dataclasses.is_dataclass(expert) or isinstance(expert, type):
            return None
        cls = type(expert)
        fields = {f.name: getattr(expert, f.name) for f in dataclasses.fields(expert)}
        described.append([f"{cls.__module__}:{cls.__qualname__}", fields])
    setting = [config.env, config.env_params, described, config.delta, config.budget, config.horizon]
    try:
        return json.dumps([setting, best_expert], sort_keys=True)
    except (TypeError, ValueError):
        return None


def worst_case_curve(
    family: Any, experts: list, env: Any, delta: float, budget: int, horizon: int, best_expert: int
) -> dict[str, list] | None:
    """``B_num(t)`` at about :data:`THEORY_POINTS` rounds up to ``horizon``, as plain lists
    ``{"rounds": [...], "worst_case": [...]}``; ``None`` when some rate depends on more than the
    count (``family.rates`` gives ``None``), the horizon is over :data:`THEORY_HORIZON` or the
    pool's rates would hold over :data:`THEORY_ENTRIES` numbers.

    ``B_num(t) = sum_{n <= t} w_{k*}(n) + (1/M) (sum of the M t largest w_k(n), n <= t)`` with
    ``w_k(n) = sqrt(2 log(4 K n^2 / delta) / n) + U_k(n, delta / 2K) / n``: the largest certificate
    any allocation of the budget could produce (:func:`mlcb.theory.numeric_worst_case`). Experts
    with equal rates are counted once, with their multiplicity.

    Examples
    --------
    >>> import envs
    >>> from agents.bandits import BANDITS, UCB1
    >>> curve = worst_case_curve(BANDITS, [UCB1()] * 10, envs.make("mlcb/Trap-v0"), 0.1, 2, 1_000, 0)
    >>> curve["rounds"][:3], len(curve["rounds"]) == len(curve["worst_case"])
    ([10, 12, 14], True)
    """
    n_experts, horizon = len(experts), int(horizon)
    if horizon > THEORY_HORIZON or n_experts * horizon > THEORY_ENTRIES:
        return None
    counts = np.arange(1, horizon + 1, dtype=np.float64)
    try:
        rates = family.rates(experts, env, np.arange(1, horizon + 1), delta / (2 * n_experts))
        if rates is None:
            return None
        rates = np.asarray(rates, dtype=float)
        if rates.shape != (n_experts, horizon) or not np.all(np.isfinite(rates) & (rates >= 0)):
            return None
        rows: dict[bytes, int] = {}
        inverse = np.array(
            [
                rows.setdefault(hashlib.blake2b(np.ascontiguousarray(row).data).digest(), k)
                for k, row in enumerate(rates)
            ]
        )
        firsts, inverse = np.unique(inverse, return_inverse=True)
        multiplicity = np.bincount(inverse, minlength=len(firsts))
        widths = np.asarray(theory.confidence_width(counts, n_experts, delta, rates[firsts]))
    except (ValueError, TypeError, ArithmeticError, MemoryError):  # no curve rather than no result
        return None
    del rates
    own = np.cumsum(widths[inverse[best_expert]])
    start = min(10, horizon)
    rounds = np.unique(np.geomspace(start, horizon, THEORY_POINTS).astype(np.int64))
    sizes = [budget * int(t) for t in rounds]
    if len(widths) <= _SORTED_ROWS and np.all(np.diff(widths, axis=1) <= 0):
        largest = _largest_sums_of_sorted(widths, multiplicity, rounds, sizes)
    else:
        largest = [_largest_sum(widths[:, :t], multiplicity, size) for t, size in zip(rounds, sizes)]
    values = [own[t - 1] + top / budget for t, top in zip(rounds, largest)]
    return {"rounds": [int(t) for t in rounds], "worst_case": [float(v) for v in values]}


#: Up to this many distinct rates, non-increasing widths are selected by bisection.
_SORTED_ROWS = 32


def _largest_sums_of_sorted(
    widths: np.ndarray, multiplicity: np.ndarray, rounds: np.ndarray, sizes: list[int]
) -> list[float]:
    """:func:`_largest_sum` of ``widths[:, :t]`` for every ``t`` of ``rounds``, for rows that are
    non-increasing and >= 0: the ``size`` largest entries are a prefix of every row, cut at the
    ``size``-th largest value, found by bisection on the bits of the (ordered) positive floats."""
    widths = np.ascontiguousarray(widths + 0.0)  # no -0.0: the bits of floats >= 0 are ordered
    prefix = np.concatenate([np.zeros((len(widths), 1)), np.cumsum(widths, axis=1)], axis=1)
    weights = multiplicity.astype(np.int64)
    rounds = np.asarray(rounds, dtype=np.int64)
    cuts = np.empty(len(rounds), dtype=np.int64)
    above = np.empty((len(rounds), len(widths)), dtype=np.int64)
    _sorted_cuts(widths.view(np.int64), weights, rounds, np.asarray(sizes, dtype=np.int64), cuts, above)
    out = []
    for p, size in enumerate(sizes):
        cut = float(np.int64(cuts[p]).view(np.float64))  # the size-th largest entry
        taken = float(weights @ prefix[np.arange(len(widths)), above[p]])
        out.append(taken + (size - int(weights @ above[p])) * cut)
    return out


@kernel
def _count_at_least(row, t, bits):
    """How many of ``row[:t]`` (non-increasing bit patterns) are ``>= bits``."""
    low, high = 0, t
    while low < high:
        middle = (low + high) // 2
        if row[middle] >= bits:
            low = middle + 1
        else:
            high = middle
    return low


@kernel
def _sorted_cuts(bits, weights, rounds, sizes, cuts, above):
    """For each ``t`` of ``rounds``, into ``cuts``: the bits of the ``size``-th largest of the
    rows' first ``t`` entries (row ``j`` counted ``weights[j]`` times; bisection on the bit
    patterns of floats >= 0, which order as the floats do); into ``above``: each row's count of
    entries above it."""
    n_rows = bits.shape[0]
    for p in range(len(rounds)):
        t = rounds[p]
        low = bits[0, t - 1]  # every entry is >= it
        high = bits[0, 0]
        for j in range(1, n_rows):
            low = min(low, bits[j, t - 1])
            high = max(high, bits[j, 0])
        high += 1  # no entry is >= it
        while high - low > 1:
            middle = low + (high - low) // 2  # low + high would overflow past 2.0
            total = 0
            for j in range(n_rows):
                total += weights[j] * _count_at_least(bits[j], t, middle)
            if total >= sizes[p]:
                low = middle
            else:
                high = middle
        cuts[p] = low
        for j in range(n_rows):
            above[p, j] = _count_at_least(bits[j], t, low + 1)


def _largest_sum(values: np.ndarray, multiplicity: np.ndarray, size: int) -> float:
    """Sum of the ``size`` largest numbers of ``values`` (J, t), row ``j`` counted
    ``multiplicity[j]`` times: a weighted selection, ``O(J t)`` per step on a shrinking array."""
    flat = values.ravel()
    if np.all(multiplicity == 1):
        first = flat.size - size
        return float(np.partition(flat, first)[first:].sum())
    weights = np.repeat(multiplicity.astype(np.int64), values.shape[1])
    total, need = 0.0, int(size)
    while True:
        # A pivot at the unweighted rank of the weighted target: exact whatever it is.
        share = need / float(weights.sum())
        rank = min(max(int((1.0 - share) * flat.size), 0), flat.size - 1)
        pivot = np.partition(flat, rank)[rank]
        above = flat > pivot
        above_weight = int(weights[above].sum())
        if above_weight >= need:
            flat, weights = flat[above], weights[above]
            continue
        equal_weight = int(weights[flat == pivot].sum())
        above_sum = float(flat[above] @ weights[above])
        if above_weight + equal_weight >= need:
            return total + above_sum + (need - above_weight) * float(pivot)
        total += above_sum + equal_weight * float(pivot)
        need -= above_weight + equal_weight
        below = flat < pivot
        flat, weights = flat[below], weights[below]
