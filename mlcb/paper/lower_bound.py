"""The paper's minimax lower bound, reproduced: M-LCB on the hard instances, between the bounds.

The paper proves that on an alpha-hard class of instances every meta-procedure training ``M``
of ``K`` experts per round has ``sup E Reg(T) >= c1 sqrt(K T / M) + c2 T^alpha (K / M)^(1 - alpha)``
(Theorem "Minimax lower bound"), with constants it does not give. This section runs M-LCB on
the instances of that proof (``mlcb/LowerBound-v0``, :mod:`envs.lower_bound`), one instance per
budget and horizon, and sets its mean regret against

* the **lower bound** proved for those instances, in the paper's form with explicit ``c1`` and
  ``c2`` (:func:`envs.lower_bound.paper_constants`); it holds for every policy that does not know
  the game, whatever its experts;
* the **upper bound** ``B_num(T) + delta T (eps + 2 Delta)``: the certificate's worst case over
  every allocation of the budget (:func:`mlcb.theory.numeric_worst_case`), which bounds M-LCB's
  pseudo-regret with probability ``>= 1 - delta``, plus the most the other runs can lose (no
  decision loses more than ``eps + 2 Delta`` per round).

The paper publishes no number here: each row states the claim ``lower bound <= E Reg(T) <= upper
bound`` and gives M-LCB's mean pseudo-regret at the largest horizon (the pseudo-regret has the
regret's expectation, with less noise). docs/theory.md §5 derives the constants, and says why the
alpha > 1/2 part of the bound holds only over a range of horizons when losses lie in [0, 1].

Examples
--------
>>> from mlcb.paper import lower_bound
>>> sorted(lower_bound.SIZES)
['paper', 'quick']
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from agents.bandits import UCB1, EpsilonGreedy
from envs.lower_bound import (
    DEFAULT_C0,
    LowerBoundEnv,
    construction,
    paper_constants,
    regret_lower_bound,
)
from mlcb import plot, theory, validation
from mlcb.paper.measure import claim_row
from mlcb.paper.section import SIZES as SIZE_NAMES
from mlcb.paper.section import Section, Table, drawing, save_figure
from mlcb.paper.section import plan as sized_plan
from mlcb.paper.verdicts import Spec, finish
from mlcb.simulation import simulate
from mlcb.validation import InputError

#: The experiment at each size: horizons (each its own instance), replications per point, the
#: hardness exponents (one panel each), the budgets and the number of experts.
SIZES: dict[str, dict[str, Any]] = {
    "quick": {
        "horizons": (1_000, 10_000, 100_000, 1_000_000),
        "replications": 20,
        "alphas": (0.5, 2.0 / 3.0),
        "budgets": (1, 2, 4),
        "n_experts": 10,
    },
    "paper": {
        "horizons": (1_000, 3_162, 10_000, 31_623, 100_000, 316_228, 1_000_000),
        "replications": 100,
        "alphas": (0.5, 2.0 / 3.0),
        "budgets": (1, 2, 4),
        "n_experts": 10,
    },
}
#: M-LCB's confidence level (theory calibration: the experts' valid rates, bonus scale 1).
DELTA = 0.1
#: Points of the lower-bound curves (the constants hold at each of them).
CURVE_POINTS = 40
#: Points of the upper curve (each costs a selection over K T widths).
UPPER_POINTS = 8
#: The claim the section tests: the paper's theorem, with the package's constants.
CLAIMS = (
    Spec(
        "between",
        "lower bound <= E Reg(T) <= upper bound on the proof's hard instances (the minimax theorem)",
        "M-LCB's regret between the bounds",
    ),
)


def experts_for(alpha: float, n_experts: int) -> list:
    """The pool for exponent ``alpha``: UCB1 (``alpha = 1/2``) when ``alpha <= 1/2``, else
    epsilon-greedy with exponent ``alpha``, whose own regret has that exponent on every instance
    (docs/rates.md §2); every rate valid, so M-LCB's certificate holds.

    Examples
    --------
    >>> experts_for(2 / 3, 3)[0]
    EpsilonGreedy(c=1.0, alpha=0.6666666666666666, rate='theory', rate_coef=0.5, rate_scale=1.0)
    """
    expert = UCB1() if alpha <= 0.5 else EpsilonGreedy(alpha=float(alpha))
    return [expert] * int(n_experts)


def upper_bound(horizons: Any, n_experts: int, budget: int, alpha: float, delta: float = DELTA) -> np.ndarray:
    """``B_num(T) + delta T (eps + 2 Delta)`` at each horizon: an upper bound on M-LCB's expected
    regret on the hard instance of that horizon, with the pool :func:`experts_for`.

    ``B_num(T)`` (:func:`mlcb.theory.numeric_worst_case`) bounds the certificate, hence the
    pseudo-regret, with probability ``>= 1 - delta`` whatever the instance; on the other runs the
    regret is at most ``T (eps + 2 Delta)``, the largest excess loss of any decision.

    Examples
    --------
    >>> bound = upper_bound([1_000], 4, 1, 0.5)
    >>> bool(bound[0] > 1_000)  # the certificate cannot know the gaps are tiny
    True
    """
    t = np.asarray(horizons, dtype=np.int64)
    k = validation.integer("n_experts", n_experts, minimum=2)
    experts = experts_for(alpha, k)[:1]
    env = LowerBoundEnv(k, budget, int(t.max()), alpha)
    counts = np.arange(1, int(t.max()) + 1)
    rate = experts[0].family.rates(experts, env, counts, delta / (2 * k))[0]
    widths = np.asarray(theory.confidence_width(counts, k, delta, rate))
    values = []
    for horizon in t:
        worst = theory.numeric_worst_case(np.broadcast_to(widths[:horizon], (k, int(horizon))), 0, budget)
        gaps = construction(k, budget, int(horizon), alpha)
        values.append(worst + delta * horizon * (gaps.epsilon + 2.0 * gaps.gap))
    return np.asarray(values)


def measure(
    alpha: float,
    budget: int,
    horizon: int,
    replications: int,
    n_experts: int,
    seed: int = 0,
    threads: int | None = None,
) -> dict[str, float]:
    """M-LCB (theory calibration) on the hard instance of ``horizon``, the game drawn per
    replication: its mean final pseudo-regret and standard error, the instance's gaps and its own
    lower bound (:func:`envs.lower_bound.regret_lower_bound`)."""
    result = simulate(
        env="mlcb/LowerBound-v0",
        env_params={"n_experts": n_experts, "budget": budget, "horizon": horizon, "alpha": alpha},
        experts=experts_for(alpha, n_experts),
        budget=budget,
        horizon=horizon,
        replications=replications,
        seed=seed,
        delta=DELTA,
        checkpoints=2,
        calibration="theory",
        threads=threads,
    )
    final = result.final()["pseudo_regret"].to_numpy(float)
    gaps = construction(n_experts, budget, horizon, alpha)
    stderr = float(final.std(ddof=1) / math.sqrt(final.size)) if final.size > 1 else math.nan
    return {
        "alpha": float(alpha),
        "budget": int(budget),
        "horizon": int(horizon),
        "mean": float(final.mean()),
        "stderr": stderr,
        "replications": int(final.size),
        "epsilon": gaps.epsilon,
        "gap": gaps.gap,
        "lower_exact": float(regret_lower_bound(horizon, n_experts, budget, alpha)),
    }


def _grid(horizons: tuple, points: int) -> np.ndarray:
    low, high = min(horizons), max(horizons)
    grid = np.geomspace(low, high, points) if high > low else np.array([float(low)])
    return np.unique(np.concatenate([np.round(grid), np.asarray(horizons, dtype=float)]))


def _alpha_label(alpha: float) -> str:
    for top, bottom in ((1, 2), (2, 3), (3, 4), (1, 3), (1, 4)):
        if abs(alpha - top / bottom) < 1e-12:
            return f"{top}/{bottom}"
    return f"{alpha:g}"


def _bounds(alpha: float, budgets: tuple, horizons: tuple, n_experts: int) -> dict[int, dict[str, Any]]:
    """Per budget: the paper-form constants over the plotted horizons and both curves."""
    curves = {}
    grid = _grid(horizons, CURVE_POINTS)
    upper_grid = _grid(horizons, UPPER_POINTS).astype(np.int64)
    for budget in budgets:
        c1, c2 = paper_constants(n_experts, budget, alpha, grid)
        form = (
            theory.lower_bound(grid, n_experts, budget, alpha, c1, c2)
            if c1 > 0 and c2 > 0
            else np.full(grid.shape, np.nan)
        )
        curves[budget] = {
            "c1": c1,
            "c2": c2,
            "grid": grid,
            "lower": form,
            "upper_grid": upper_grid,
            "upper": upper_bound(upper_grid, n_experts, budget, alpha),
        }
    return curves


@drawing
def figure(frame: pd.DataFrame, bounds: dict[float, dict[int, dict[str, Any]]], n_experts: int) -> Any:
    """One panel per ``alpha``: M-LCB's mean pseudo-regret (points, +- 2 standard errors) against
    ``T``, the lower bound (solid, its constants in the legend) and the upper bound (dashed), one
    colour per budget; returns the matplotlib Figure."""
    alphas = sorted(bounds)
    fig, axes = plt.subplots(1, len(alphas), figsize=(6.2 * len(alphas), 5), squeeze=False)
    budgets = sorted(next(iter(bounds.values())))
    palette = dict(zip(budgets, plot.colours(len(budgets))))
    for ax, alpha in zip(axes[0], alphas):
        for budget in budgets:
            colour = palette[budget]
            curve = bounds[alpha][budget]
            rows = frame[(frame["alpha"] == alpha) & (frame["budget"] == budget)].sort_values("horizon")
            ax.errorbar(
                rows["horizon"],
                rows["mean"],
                yerr=2 * rows["stderr"].fillna(0.0),
                fmt="o-",
                color=colour,
                markersize=5,
                linewidth=1.2,
                capsize=3,
                label=f"M-LCB, M = {budget} (mean, error bars ± 2 s.e.)",
            )
            ax.plot(
                curve["grid"],
                curve["lower"],
                "-",
                color=colour,
                linewidth=2.2,
                alpha=0.45,
                label=f"lower bound, M = {budget}: c1 = {curve['c1']:.3g}, c2 = {curve['c2']:.3g}",
            )
            ax.plot(curve["upper_grid"], curve["upper"], "--", color=colour, linewidth=1)
        ax.plot(
            [],
            [],
            "--",
            color="grey",
            linewidth=1,
            label=f"upper: B_num(T) + delta T (eps + 2 Delta), delta = {DELTA}",
        )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("horizon T (each its own instance)")
        ax.set_ylabel("mean pseudo-regret at T")
        ax.set_title(f"alpha = {_alpha_label(alpha)}, K = {n_experts}")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7.5, loc="upper left")
    fig.suptitle(
        "M-LCB on the lower bound's hard instances; lower bound c1 sqrt(KT/M) + c2 T^alpha (K/M)^(1-alpha), "
        "proved for every policy that does not know the game"
    )
    fig.tight_layout()
    return fig


def _table(frame: pd.DataFrame, alpha: float, curves: dict[int, dict[str, Any]], n_experts: int) -> Table:
    rows = []
    horizon = int(frame["horizon"].max())
    for budget, curve in sorted(curves.items()):
        chosen = (frame["alpha"] == alpha) & (frame["budget"] == budget) & (frame["horizon"] == horizon)
        point = frame[chosen].iloc[0]
        mean, stderr = float(point["mean"]), float(point["stderr"])
        df = float(point["replications"]) - 1.0
        lower = float(curve["lower"][int(np.searchsorted(curve["grid"], horizon))])
        upper = float(curve["upper"][-1])
        rows.append(
            claim_row(
                f"M-LCB pseudo-regret at T = {horizon:,}, M = {budget}",
                "lower bound <= E Reg(T) <= upper bound",
                mean,
                stderr,
                low=lower,
                high=upper,
                note=(
                    f"lower bound {lower:,.1f} (c1 = {curve['c1']:.3g}, c2 = {curve['c2']:.3g}; the "
                    f"instance's own bound {float(point['lower_exact']):,.1f}); upper bound {upper:,.0f}"
                ),
                claim=CLAIMS[0].key,
                condition=f"alpha = {_alpha_label(alpha)}; M = {budget}; T = {horizon:,}",
                reason=f"M-LCB's {mean:,.1f} against the bounds {lower:,.1f} and {upper:,.0f}",
                df=df,
            )
        )
    return Table(
        f"Regret on the hard instances, alpha = {_alpha_label(alpha)}, K = {n_experts}",
        tuple(rows),
        note="Mean over replications of the pseudo-regret at T (the game drawn per replication), "
        "with its standard error.",
    )


def run(size: str, out: Path, seed: int = 0, threads: int | None = None, **overrides: Any) -> Section:
    """Run the experiment at ``size`` and write its figure under ``out``; the Section.

    Parameters
    ----------
    size : {"quick", "paper"}
        :data:`SIZES`.
    out : path
        Directory of the figure (``lower_bound.png``) and of the measured points
        (``lower_bound.csv``); created if missing.
    seed : int
        The simulations' seed.
    threads : int, optional
        Threads of the compiled engine.
    **overrides
        Replace entries of ``SIZES[size]`` (``horizons``, ``replications``, ``alphas``,
        ``budgets``, ``n_experts``), e.g. to run a smaller version.
    """
    validation.choice("size", size, SIZE_NAMES)
    plan = sized_plan(SIZES, size, overrides)
    n_experts = validation.integer("n_experts", plan["n_experts"], minimum=2)
    horizons = tuple(validation.integer("horizons", t) for t in plan["horizons"])
    budgets = tuple(validation.budgets("budgets", list(plan["budgets"])))
    replications = validation.integer("replications", plan["replications"], minimum=2)
    alphas = tuple(float(a) for a in plan["alphas"])
    for alpha in alphas:
        for budget in budgets:  # every instance is checked before anything runs
            for horizon in horizons:
                construction(n_experts, budget, horizon, alpha)
        if min(horizons) < n_experts / min(budgets):
            raise InputError(f"horizons must be >= K / M = {n_experts / min(budgets):g}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    points = [
        measure(alpha, budget, horizon, replications, n_experts, seed, threads)
        for alpha in alphas
        for budget in budgets
        for horizon in horizons
    ]
    frame = pd.DataFrame(points)
    bounds = {alpha: _bounds(alpha, budgets, horizons, n_experts) for alpha in alphas}
    frame.to_csv(out / "lower_bound.csv", index=False)
    matplotlib.use("Agg")  # files only, no display
    path = save_figure(figure(frame, bounds, n_experts), out / "lower_bound.png")
    text = (
        f"M-LCB (theory calibration, delta = {DELTA}) on the hard instances of the lower bound: K = "
        f"{n_experts} two-armed Bernoulli experts, expert h better than the others by eps + Delta, "
        "the game h drawn uniformly per replication; one instance per budget M and horizon T "
        f"(gamma = (1 - 1/K)/6, c0 = {DEFAULT_C0}), {replications} replications each. Experts: UCB1 "
        "for alpha = 1/2, epsilon-greedy with exponent alpha above. The lower curve is proved for "
        "every policy that does not know h, with the constants in the legend, at every horizon "
        "drawn; the upper curve is the certificate's worst case plus the runs it may miss. "
        "M-LCB cannot tell the experts apart within T rounds here (no policy can, which is what "
        "the lower bound says) and pays about (1 - 1/K) (eps + Delta) T plus its experts' own "
        "regret."
    )
    tables = tuple(_table(frame, alpha, bounds[alpha], n_experts) for alpha in alphas)
    return finish(
        "lower-bound",
        "The minimax lower bound",
        text,
        (path,),
        tables,
        CLAIMS,
        name="The lower bound",
        size=f"T up to {max(horizons):,}, {replications} runs",
    )
