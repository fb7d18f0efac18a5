"""Numbers the paper's sections report, read from a :class:`~mlcb.storage.results.Result`.

Every function reads the tidy frames only. Means come with their standard error over
replications; a difference between two policies of one comparison is taken replication by
replication (both faced the same stream, common random numbers), so its standard error is that of
the paired differences.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mlcb.paper.section import Row
from mlcb.plot import last_decade_slope
from mlcb.storage.results import Result


def mean_and_error(values: np.ndarray) -> tuple[float, float]:
    """The mean of ``values`` and its standard error (``nan`` with fewer than two values).

    Examples
    --------
    >>> mean_and_error(np.array([1.0, 2.0, 3.0]))
    (2.0, 0.5773502691896258)
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return math.nan, math.nan
    error = float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else math.nan
    return float(values.mean()), error


def final(result: Result, setting: str, metric: str = "regret") -> pd.Series:
    """``metric`` at the horizon of every replication of ``setting``, indexed by replication."""
    curves = result.curves[result.curves["setting"] == setting]
    if curves.empty:
        raise ValueError(f"setting {setting!r} is not in the result; settings: {', '.join(result.settings)}")
    last = curves[curves["round"] == curves["round"].max()]
    return last.set_index("replication")[metric].sort_index()


def final_mean(result: Result, setting: str, metric: str = "regret") -> tuple[float, float]:
    """Mean and standard error over replications of ``metric`` at the horizon."""
    return mean_and_error(final(result, setting, metric).to_numpy())


def paired_difference(result: Result, first: str, second: str, metric: str = "regret") -> tuple[float, float]:
    """Mean and standard error of ``metric(first) - metric(second)`` at the horizon, replication by
    replication (the replications both settings share)."""
    a, b = final(result, first, metric), final(result, second, metric)
    shared = a.index.intersection(b.index)
    return mean_and_error((a[shared] - b[shared]).to_numpy())


def slope(result: Result, setting: str, metric: str = "regret") -> float:
    """The log-log slope of the mean ``metric`` of ``setting`` over the last decade of rounds."""
    curves = result.curves[result.curves["setting"] == setting]
    mean = curves.groupby("round")[metric].mean()
    return last_decade_slope(mean.index.to_numpy(float), mean.to_numpy(float))


def best_share(result: Result, setting: str, column: str = "deployed") -> tuple[float, float]:
    """Mean and standard error over replications of the share of ``column`` (``"deployed"`` or
    ``"trained"`` rounds, counted to the horizon) that went to the replication's best expert k*."""
    experts = result.experts[result.experts["setting"] == setting]
    last = experts[experts["round"] == experts["round"].max()]
    best = result.replications[result.replications["setting"] == setting].set_index("replication")[
        "best_expert"
    ]
    totals = last.groupby("replication")[column].sum()
    on_best = last[last["expert"].to_numpy() == best.reindex(last["replication"]).to_numpy()]
    shares = on_best.groupby("replication")[column].sum().reindex(totals.index, fill_value=0) / totals
    return mean_and_error(shares.to_numpy())


def verdict(mean: float, error: float, below: bool = True) -> str:
    """Whether a difference is below (``below=True``) or above zero, in standard errors: the note a
    claim's row carries.

    Examples
    --------
    >>> verdict(-30.0, 10.0)
    'holds: 3.0 s.e. below 0'
    >>> verdict(5.0, 10.0)
    'not shown: 0.5 s.e. above 0'
    >>> verdict(40.0, 10.0)
    'does not hold: 4.0 s.e. above 0'
    """
    if not (math.isfinite(mean) and math.isfinite(error)) or error <= 0:
        return ""
    z = mean / error
    side = "below" if z < 0 else "above"
    agrees = (z < 0) == below
    if abs(z) >= 2:
        return f"{'holds' if agrees else 'does not hold'}: {abs(z):.1f} s.e. {side} 0"
    return f"not shown: {abs(z):.1f} s.e. {side} 0"


def difference_row(result: Result, quantity: str, claim: str, first: str, second: str, metric: str) -> Row:
    """The row of a claim that ``first`` is below ``second``: their paired difference in ``metric``
    at the horizon, its standard error and :func:`verdict`."""
    diff, error = paired_difference(result, first, second, metric)
    return Row(quantity, claim, diff, error, note=verdict(diff, error))


def deploy_rows(result: Result, budgets: tuple[int, ...], best: str, claim: str) -> list[Row]:
    """For every budget: the share of rounds in which M-LCB deployed the best expert (called
    ``best`` in the row's label), as a row stating ``claim``."""
    rows = []
    for budget in budgets:
        mean, error = best_share(result, f"mlcb M={budget}", "deployed")
        rows.append(Row(f"share of rounds M-LCB deploys {best}, M = {budget}", claim, mean, error))
    return rows


def share_rows(result: Result, budgets: tuple[int, ...], claims: tuple[tuple[str, str], ...]) -> list[Row]:
    """For every budget and every ``(policy, claim)``: the share of the policy's training rounds
    that went to k*, as a row stating the claim."""
    rows = []
    for budget in budgets:
        for policy, claim in claims:
            mean, error = best_share(result, f"{policy} M={budget}", "trained")
            rows.append(Row(f"share of training rounds on k*, {policy} M = {budget}", claim, mean, error))
    return rows


def slope_rows(result: Result, metric: str, label: str) -> list[Row]:
    """For every setting: the log-log slope of its mean ``metric`` (called ``label``) over the last
    decade of rounds, against the claim that the curve is sublinear."""
    return [
        Row(f"log-log slope of the mean {label}, {s}", "sublinear (< 1)", slope(result, s, metric))
        for s in result.settings
    ]
