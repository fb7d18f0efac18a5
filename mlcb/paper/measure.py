"""Numbers the paper's sections report, read from a :class:`~mlcb.storage.results.Result`, and the
rows of the tests that set them against the paper's claims.

Every function reads the tidy frames only. Means come with their standard error over
replications and its degrees of freedom; a difference between two policies of one comparison is
taken replication by replication (both faced the same stream, common random numbers), so its
standard error is that of the paired differences. A slope of a mean curve gets its standard error
by the jackknife over replications (:func:`jackknife`). The rules that turn a number into a
verdict are :mod:`mlcb.paper.rules`' (re-exported here: :func:`judge`, :func:`claim_row`, ...).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from mlcb.paper.rules import LEVEL as LEVEL
from mlcb.paper.rules import RULES as RULES
from mlcb.paper.rules import SAME_VALUE as SAME_VALUE
from mlcb.paper.rules import TOLERANCE as TOLERANCE
from mlcb.paper.rules import Test as Test
from mlcb.paper.rules import Z as Z
from mlcb.paper.rules import claim_row as claim_row
from mlcb.paper.rules import critical as critical
from mlcb.paper.rules import describe as describe
from mlcb.paper.rules import distance as distance
from mlcb.paper.rules import estimate as estimate
from mlcb.paper.rules import judge as judge
from mlcb.paper.rules import judge_value as judge_value
from mlcb.paper.rules import mean_and_error as mean_and_error
from mlcb.paper.rules import published_row as published_row
from mlcb.paper.rules import verdict as verdict
from mlcb.paper.section import Row
from mlcb.plot import last_decade_slope
from mlcb.storage.results import Result
from mlcb.validation import InputError


# --- numbers of a result --------------------------------------------------------------------------
def final(result: Result, setting: str, metric: str = "regret") -> pd.Series:
    """``metric`` at the horizon of every replication of ``setting``, indexed by replication."""
    curves = result.curves[result.curves["setting"] == setting]
    if curves.empty:
        raise InputError(f"setting {setting!r} is not in the result; settings: {', '.join(result.settings)}")
    last = curves[curves["round"] == curves["round"].max()]
    return last.set_index("replication")[metric].sort_index()


def at_round(result: Result, setting: str, metric: str, fraction: float) -> pd.Series:
    """``metric`` of every replication of ``setting`` at the recorded round nearest to
    ``fraction`` of the horizon, indexed by replication."""
    curves = result.curves[result.curves["setting"] == setting]
    if curves.empty:
        raise InputError(f"setting {setting!r} is not in the result; settings: {', '.join(result.settings)}")
    rounds = np.sort(curves["round"].unique())
    chosen = rounds[int(np.argmin(np.abs(rounds - fraction * rounds.max())))]
    return curves[curves["round"] == chosen].set_index("replication")[metric].sort_index()


def group_share(result: Result, setting: str, experts: Any, column: str = "trained") -> tuple[float, float]:
    """Mean and standard error over replications of the share of ``column`` (``"trained"`` or
    ``"deployed"`` rounds, to the horizon) that went to the experts ``experts`` (indices)."""
    frame = result.experts[result.experts["setting"] == setting]
    if frame.empty:
        raise InputError(f"setting {setting!r} is not in the result; settings: {', '.join(result.settings)}")
    last = frame[frame["round"] == frame["round"].max()]
    totals = last.groupby("replication")[column].sum()
    chosen = last[last["expert"].isin(list(experts))].groupby("replication")[column].sum()
    return mean_and_error((chosen.reindex(totals.index, fill_value=0) / totals).to_numpy(float))


def final_mean(result: Result, setting: str, metric: str = "regret") -> tuple[float, float]:
    """Mean and standard error over replications of ``metric`` at the horizon."""
    return mean_and_error(final(result, setting, metric).to_numpy())


def paired(first: pd.Series, second: pd.Series) -> tuple[float, float]:
    """Mean and standard error of ``first - second`` over the replications (index) both share.

    Examples
    --------
    >>> paired(pd.Series([3.0, 5.0, 7.0]), pd.Series([1.0, 2.0, 3.0, 9.0]))
    (3.0, 0.5773502691896258)
    """
    return paired_estimate(first, second)[:2]


def paired_estimate(first: pd.Series, second: pd.Series) -> tuple[float, float, float]:
    """:func:`paired` and the degrees of freedom of its error (the shared replications less one).

    Examples
    --------
    >>> paired_estimate(pd.Series([3.0, 5.0, 7.0]), pd.Series([1.0, 2.0, 3.0, 9.0]))
    (3.0, 0.5773502691896258, 2.0)
    """
    shared = first.index.intersection(second.index)
    return estimate((first[shared] - second[shared]).to_numpy())


def degrees(result: Result, *settings: str) -> float:
    """The degrees of freedom of a standard error over the replications that ``settings`` share
    (a jackknife's, a paired difference's): their number less one."""
    frame = result.replications
    shared = None
    for setting in settings:
        mine = set(frame.loc[frame["setting"] == setting, "replication"].tolist())
        shared = mine if shared is None else shared & mine
    return float(max(len(shared or ()) - 1, 0))


def paired_difference(result: Result, first: str, second: str, metric: str = "regret") -> tuple[float, float]:
    """Mean and standard error of ``metric(first) - metric(second)`` at the horizon, replication by
    replication (the replications both settings share)."""
    return paired(final(result, first, metric), final(result, second, metric))


def jackknife(values: np.ndarray, statistic: Callable[[np.ndarray], float]) -> tuple[float, float]:
    """``statistic`` of the rows of ``values`` (one per replication) and its jackknife standard
    error: ``sqrt((n - 1) / n * sum_i (s_(-i) - mean_j s_(-j))^2)`` over the ``n`` leave-one-out
    statistics ``s_(-i)`` (``nan`` with fewer than two rows or a non-finite one).

    Examples
    --------
    >>> value, error = jackknife(np.array([[1.0], [2.0], [3.0]]), lambda rows: float(rows.mean()))
    >>> value, round(error, 6)  # for the mean, the usual standard error
    (2.0, 0.57735)
    """
    values = np.asarray(values, dtype=float)
    value = float(statistic(values))
    n = values.shape[0]
    if n < 2:
        return value, math.nan
    leave_out = np.array([statistic(np.delete(values, i, axis=0)) for i in range(n)])
    if not np.all(np.isfinite(leave_out)):
        return value, math.nan
    return value, float(math.sqrt((n - 1) / n * np.sum((leave_out - leave_out.mean()) ** 2)))


def _curves(result: Result, setting: str, metric: str) -> tuple[np.ndarray, pd.DataFrame]:
    """Rounds and the (replication x round) table of ``metric`` of ``setting``."""
    curves = result.curves[result.curves["setting"] == setting]
    if curves.empty:
        raise InputError(f"setting {setting!r} is not in the result; settings: {', '.join(result.settings)}")
    table = curves.pivot(index="replication", columns="round", values=metric).sort_index()
    return table.columns.to_numpy(float), table


def slope(result: Result, setting: str, metric: str = "regret") -> float:
    """The log-log slope of the mean ``metric`` of ``setting`` over the last decade of rounds."""
    curves = result.curves[result.curves["setting"] == setting]
    mean = curves.groupby("round")[metric].mean()
    return last_decade_slope(mean.index.to_numpy(float), mean.to_numpy(float))


def slope_and_error(result: Result, setting: str, metric: str = "regret") -> tuple[float, float]:
    """:func:`slope` and its jackknife standard error over replications."""
    rounds, table = _curves(result, setting, metric)
    _, error = jackknife(table.to_numpy(), lambda rows: last_decade_slope(rounds, rows.mean(axis=0)))
    return slope(result, setting, metric), error


def slope_difference(result: Result, first: str, second: str, metric: str = "regret") -> tuple[float, float]:
    """``slope(first) - slope(second)`` and its jackknife standard error, leaving one shared
    replication out of both settings at a time (paired, as the streams are)."""
    rounds, a = _curves(result, first, metric)
    other_rounds, b = _curves(result, second, metric)
    if not np.array_equal(rounds, other_rounds):
        raise InputError(f"settings {first!r} and {second!r} are recorded at different rounds")
    shared = a.index.intersection(b.index)
    both = np.concatenate([a.loc[shared].to_numpy(), b.loc[shared].to_numpy()], axis=1)
    width = rounds.size

    def difference(rows: np.ndarray) -> float:
        mean = rows.mean(axis=0)
        return last_decade_slope(rounds, mean[:width]) - last_decade_slope(rounds, mean[width:])

    return jackknife(both, difference)


def shares(result: Result, setting: str, column: str = "deployed") -> pd.Series:
    """Per replication, the share of ``column`` (``"deployed"`` or ``"trained"`` rounds, counted to
    the horizon) that went to the replication's best expert k*."""
    experts = result.experts[result.experts["setting"] == setting]
    if experts.empty:
        raise InputError(f"setting {setting!r} is not in the result; settings: {', '.join(result.settings)}")
    last = experts[experts["round"] == experts["round"].max()]
    best = result.replications[result.replications["setting"] == setting].set_index("replication")[
        "best_expert"
    ]
    totals = last.groupby("replication")[column].sum()
    on_best = last[last["expert"].to_numpy() == best.reindex(last["replication"]).to_numpy()]
    return on_best.groupby("replication")[column].sum().reindex(totals.index, fill_value=0) / totals


def best_share(result: Result, setting: str, column: str = "deployed") -> tuple[float, float]:
    """Mean and standard error over replications of :func:`shares`."""
    return mean_and_error(shares(result, setting, column).to_numpy())


def expert_shares(result: Result, setting: str, column: str = "trained") -> pd.Series:
    """The mean over replications of each expert's share of ``column`` at the horizon, by expert."""
    experts = result.experts[result.experts["setting"] == setting]
    last = experts[experts["round"] == experts["round"].max()]
    table = last.pivot(index="replication", columns="expert", values=column)
    return (table.div(table.sum(axis=1), axis=0)).mean(axis=0)


# --- rows of a comparison ------------------------------------------------------------------------
#: Why a test does not hold, per budget (``{M: reason}``), or one reason for every budget.
Reasons = dict[int, str] | str


def _reason(reasons: Reasons | None, budget: int) -> str:
    if reasons is None:
        return ""
    return reasons if isinstance(reasons, str) else reasons.get(budget, "")


def _where(where: str, *parts: str) -> str:
    """A test's condition: ``where`` (e.g. the calibration) and ``parts``, joined by ``"; "``."""
    return "; ".join(part for part in (where, *parts) if part)


def difference_row(
    result: Result,
    quantity: str,
    paper: str,
    first: str,
    second: str,
    metric: str,
    *,
    claim: str = "",
    condition: str = "",
    reason: str = "",
    note: str = "",
) -> Row:
    """The row of a claim that ``first`` is below ``second``: their paired difference in ``metric``
    at the horizon, its standard error and verdict."""
    diff, error, df = paired_estimate(final(result, first, metric), final(result, second, metric))
    return claim_row(
        quantity, paper, diff, error, high=0.0, claim=claim, condition=condition, reason=reason, note=note,
        df=df,
    )  # fmt: skip


def trend_rows(
    values: dict[int, pd.Series],
    label: str,
    paper: str,
    *,
    grows: bool,
    unit: str = "",
    digits: int = 3,
    claim: str = "",
    where: str = "",
    reason: str = "",
) -> list[Row]:
    """The rows of a claim that a quantity grows (``grows=True``) or falls with the budget: for each
    budget after the first, its paired difference from the budget before (``values``: budget ->
    per-replication values), with both levels in the note (and in ``reason`` where it does not
    hold); the condition ``where; M = a to b``."""
    budgets = sorted(values)
    rows = []
    for before, after in zip(budgets, budgets[1:]):
        mean, error, df = paired_estimate(values[after], values[before])
        levels = ", ".join(
            f"M = {m}: {_level(*mean_and_error(values[m].to_numpy()), digits)}" for m in (before, after)
        )
        bounds = {"low": 0.0} if grows else {"high": 0.0}
        rows.append(
            claim_row(
                f"{label}, M = {after} minus M = {before}",
                paper,
                mean,
                error,
                unit=unit,
                note=levels,
                claim=claim,
                condition=_where(where, f"M = {before} to {after}"),
                reason=reason or f"the levels: {levels}",
                df=df,
                **bounds,
            )
        )
    return rows


def _level(mean: float, error: float, digits: int) -> str:
    if abs(mean) >= 100:
        return f"{mean:,.0f} ± {error:,.0f}"
    return f"{mean:.{digits}f} ± {error:.{digits}f}"


def deploy_rows(
    result: Result, budgets: tuple[int, ...], best: str, paper: str, *, claim: str = "", where: str = ""
) -> list[Row]:
    """The claim that M-LCB deploys the best expert (called ``best`` in the labels) more often as
    the budget grows: :func:`trend_rows` of its per-replication deployment share."""
    values = {m: shares(result, f"mlcb M={m}", "deployed") for m in budgets}
    label = f"share of rounds M-LCB deploys {best}"
    return trend_rows(values, label, paper, grows=True, claim=claim, where=where)


def identify_rows(
    result: Result,
    budgets: tuple[int, ...],
    best: str,
    paper: str,
    n_experts: int,
    *,
    claim: str = "",
    where: str = "",
    reasons: Reasons | None = None,
) -> list[Row]:
    """The claim that M-LCB identifies the best expert (called ``best``): at every budget, the
    share of rounds it deploys it lies above 1/2 (a majority of rounds), beside a uniform choice's
    1/K in the note."""
    rows = []
    for budget in budgets:
        mean, error, df = estimate(shares(result, f"mlcb M={budget}", "deployed").to_numpy())
        rows.append(
            claim_row(
                f"share of rounds M-LCB deploys {best}, M = {budget}",
                paper,
                mean,
                error,
                low=0.5,
                note=f"read as: in more than half of the rounds; a uniform choice: 1/K = {1 / n_experts:.2f}",
                claim=claim,
                condition=_where(where, f"M = {budget}"),
                reason=_reason(reasons, budget),
                df=df,
            )
        )
    return rows


def share_rows(
    result: Result,
    budgets: tuple[int, ...],
    paper: str,
    other: str = "limited-advice",
    *,
    name: str = "LimitedAdvice",
    claim: str = "",
    where: str = "",
    reasons: Reasons | None = None,
) -> list[Row]:
    """The claim that M-LCB spends more of its training on k* than ``other`` (called ``name``)
    does: at every budget, the paired difference of their shares of training rounds on k*, both
    levels in the note."""
    rows = []
    for budget in budgets:
        mine, theirs = (shares(result, f"{p} M={budget}", "trained") for p in ("mlcb", other))
        mean, error, df = paired_estimate(mine, theirs)
        levels = (
            f"M-LCB {_level(*mean_and_error(mine.to_numpy()), 3)}, "
            f"{name} {_level(*mean_and_error(theirs.to_numpy()), 3)}"
        )
        if theirs.mean() > 0:
            levels += f": {mine.mean() / theirs.mean():.1f} times as much"
        rows.append(
            claim_row(
                f"share of training rounds on k*: M-LCB minus {name}, M = {budget}",
                paper,
                mean,
                error,
                low=0.0,
                note=levels,
                claim=claim,
                condition=_where(where, f"M = {budget}"),
                reason=_reason(reasons, budget),
                df=df,
            )
        )
    return rows


def _setting_parts(result: Result, setting: str) -> tuple[str, int]:
    """The policy and budget of ``setting``, as recorded."""
    rows = result.replications[result.replications["setting"] == setting]
    return str(rows["policy"].iloc[0]), int(rows["budget"].iloc[0])


def slope_rows(
    result: Result,
    metric: str,
    label: str,
    *,
    names: dict[str, str] | None = None,
    policies: tuple[str, ...] | None = None,
    claim: str = "",
    where: str = "",
    reasons: Reasons | None = None,
) -> list[Row]:
    """For every setting (of ``policies``, default all; named as in ``names``): the log-log slope
    of its mean ``metric`` (called ``label``) over the last decade of rounds, against the claim
    that the curve is sublinear (slope below 1)."""
    rows = []
    for setting in result.settings:
        policy, budget = _setting_parts(result, setting)
        if policies is not None and policy not in policies:
            continue
        name = (names or {}).get(policy, policy)
        mean, error = slope_and_error(result, setting, metric)
        growth = (
            f"the mean {label} still grows about linearly over the last decade of rounds: at T the "
            "policy is still exploring"
        )
        rows.append(
            claim_row(
                f"log-log slope of the mean {label}, {name}, M = {budget}",
                "sublinear (< 1)",
                mean,
                error,
                high=1.0,
                claim=claim,
                condition=_where(where, f"M = {budget}", "" if policies and len(policies) == 1 else name),
                reason=_reason(reasons, budget) or growth,
                df=degrees(result, setting),
            )
        )
    return rows


def growth_rows(
    result: Result,
    budgets: tuple[int, ...],
    other: str,
    metric: str,
    paper: str,
    *,
    name: str = "LimitedAdvice",
    claim: str = "",
    where: str = "",
    reasons: Reasons | None = None,
) -> list[Row]:
    """The claim that M-LCB's ``metric`` grows more slowly than ``other``'s (called ``name``): at
    every budget, the difference of their late log-log slopes (jackknife, paired)."""
    rows = []
    for budget in budgets:
        mine, theirs = f"mlcb M={budget}", f"{other} M={budget}"
        mean, error = slope_difference(result, mine, theirs, metric)
        rows.append(
            claim_row(
                f"late log-log slope: M-LCB minus {name}, M = {budget}",
                paper,
                mean,
                error,
                high=0.0,
                claim=claim,
                condition=_where(where, f"M = {budget}"),
                reason=_reason(reasons, budget),
                df=degrees(result, mine, theirs),
            )
        )
    return rows


# --- what a comparison ran ------------------------------------------------------------------------
#: How the page names the smoothing wrappers (:mod:`mlcb.kernels.smoothing`).
WRAPPERS = {
    "counts": "play counts (an action drawn from the expert's past plays: the uniform past iterate)",
    "average": "the average of its past iterates",
    "uniform": "one past iterate drawn uniformly",
    "last": "its current decision (last iterate)",
    "ema": "an exponential moving average of its iterates",
}


def wrappers(result: Result) -> dict[str, str]:
    """Each policy of ``result`` -> the smoothing wrapper its settings deployed with (several,
    comma-separated, if its settings differ), read from the recorded configurations."""
    found: dict[str, list[str]] = {}
    for meta in result.metadata.get("settings", {}).values():
        config = meta.get("config", {}) if isinstance(meta, dict) else {}
        policy, wrapper = config.get("policy"), config.get("smoothing")
        if (
            isinstance(policy, str)
            and isinstance(wrapper, str)
            and wrapper not in found.setdefault(policy, [])
        ):
            found[policy].append(wrapper)
    return {policy: ", ".join(names) for policy, names in found.items()}


def wrapper_note(result: Result, names: dict[str, str]) -> str:
    """A sentence saying how each policy of ``result`` (named as in ``names``) deploys."""
    used = wrappers(result)
    parts = [
        f"{names.get(policy, policy)} deploys {WRAPPERS.get(wrapper, wrapper)} ('{wrapper}')"
        for policy, wrapper in used.items()
    ]
    return "Deployment: " + "; ".join(parts) + "." if parts else ""
