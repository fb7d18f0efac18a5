"""Slopes against the exponent: M-LCB's pseudo-regret grows like T^max(1/2, alpha).

For each exponent alpha in {1/2, 2/3, 3/4, 5/6}, a pool of K = 2 experts with that exponent runs under
M-LCB with budget M = 1 (theory calibration, the family's default smoothing) for T rounds and R
replications; the script fits the log-log slope of the mean pseudo-regret over the *last decade*
of rounds (the checkpoints in [T/10, T]) and prints it next to the theory's max(1/2, alpha):

    alpha  experts                      family (alpha)
    1/2    Hedge                        exponential weights, full information (1/2)
    2/3    epsilon-greedy, alpha = 2/3  decaying exploration (2/3)
    2/3    robust UCB, eps = 1/2        truncated means (1/(1+eps) = 2/3)
    3/4    epsilon-greedy, alpha = 3/4  decaying exploration (3/4)
    3/4    robust UCB, eps = 1/3        truncated means (3/4)
    3/4    BCO, Lipschitz case          one-point gradient descent (3/4)
    5/6    BCO, bounded case            one-point gradient descent (5/6)

How the instances were chosen (so that each expert is in its asymptotic regime, paying its worst
case n^alpha, all along the last decade; on an arbitrary fixed instance a UCB-type or Hedge expert
has logarithmic regret and the slope would say nothing about alpha):

* Both experts of a pool are copies of one specification on the same arms (two identical rows of
  ``mlcb/BanditExperts-v0``; the BCO pair shares one convex stream, ``mlcb/ConvexBandit-v0``).
  M-LCB's choice between them then costs nothing, each trains about half of the rounds (the BCO
  pair: one copy, see below), and the pseudo-regret is the sum of the deployed (smoothed)
  decisions' excess losses R(n)/n, whose growth has the experts' exponent.
* epsilon-greedy pays its exploration on every instance: eps_j ~ j^(alpha - 1) exploration rounds
  at a gap of 0.8 (two arms, reward means 0.9 and 0.1) give regret ~ n^alpha from the start.
* Hedge's weight on a predictor of gap Delta is about exp(-Delta sqrt(8 n ln N)): its regret is
  of order sqrt(n) only when, at every n of the window, predictors have gaps at the scale
  s(n) = 1/sqrt(8 n ln N) (1.2e-3 down to 3.9e-4 here, n = 2.5 10^4 .. 2.5 10^5). The
  predictors' loss means are 0 (16 of them) and a ladder of gaps 0.5 2^(-i), i = 0 .. 12 (down
  to 1.2e-4; N = 29), one per octave across that scale; a best loss of 0 makes the loss
  differences nearly noiseless counts, so the weights follow the gaps. The 16 copies of the best
  predictor keep the weight that the ladder's still unresolved predictors share nearly constant
  as s(n) shrinks past them (with one best predictor and a ladder of 32 half-octave rungs
  reaching 1e-5, that group shrinks: 0.55 instead of 0.48).
* Robust UCB plays an arm of gap Delta until its radius, c_eps (log(4 m s^2 / delta0) / s)^
  (eps/(1+eps)), falls to about Delta: at round n the arms near the critical gap Delta_c(n) ~
  (log n / n)^(eps/(1+eps)) cost n Delta_c(n) ~ n^(1/(1+eps)) (the worst case). A ladder of gaps
  0.9 2^(-i), i = 0 .. 7 (down to 0.007), has an arm at the critical scale in every octave of
  Delta_c; 24 arms share the best loss mean 0.05 (m = 32), so that the number of arms sharing the
  pulls barely changes as the ladder's arms saturate one after another (with a single best arm,
  slopes of 0.81 to 0.86 at T = 2 10^5).
* Bandit gradient descent (BCO, d = 2) on an affine stream, ``theta = (0.9, 0)``, slope and level
  noise 0.05 (:func:`bco_stream`): the optimum sits on the boundary of the expert's ball, at
  ``-e_1``, so the shrunk domain ``(1 - a_j) K`` keeps the centre ``a_j |theta| / 2`` above it in
  expected loss at every round: exactly the shrink term of the rate, ``a_j (L(0) - L*)``, with
  ``a_j = j^(-1/4)`` (Lipschitz case) or ``j^(-1/6)`` (bounded case), i.e. regret
  ``(0.45 / (1 - p)) n^(1-p)`` (``p = 1/4, 1/6``) from the first rounds on. The strong slope makes
  the gradient estimates point the centre to the boundary within a few dozen updates, and the small
  noise keeps its random excursions from it a small share of the regret. The BCO rates are
  vacuous (``U(n) = n``) at these counts, so M-LCB's lower bounds read ``L_k - 1`` and it trains
  the copy with the smaller mean: one copy takes (nearly) every round, and the pseudo-regret is
  that expert's, with ``n = t``.

The residuals, with numbers (T = 5 10^5, 16 replications, seed 1; measured 0.48, 0.71, 0.75, 0.78,
0.78, 0.74, 0.82; seed 2 gives the same table within 0.01):

* epsilon-greedy's schedule eps_j = c (m ln j / j)^(1-alpha) carries (ln n)^(1-alpha): a local
  slope of alpha + (1-alpha)/ln n, +0.03 (alpha = 2/3) and +0.02 (3/4) at n ~ 10^5, against
  +0.05 and +0.03 measured.
* Robust UCB's radius carries (log(4 m s^2 / delta0))^(eps/(1+eps)), about 25 over the window:
  +2 (eps/(1+eps)) / 25, i.e. +0.027 (eps = 1/2) and +0.020 (eps = 1/3); the group of arms that
  share the pulls (the 24 best and the ladder's unresolved rungs, about 29) shrinks by one arm
  per octave of Delta_c: +(eps/(1+eps)) / (29 ln 2), i.e. +0.017 and +0.012. Together +0.044 and
  +0.032, against +0.08 and +0.035 measured. At eps = 1/2 the rest is the transient (the theory
  constant c_eps = 3.58 keeps the best arms' radius near 0.5 through the window): the experts'
  own regret (smoothing "last") has local slopes 0.74, 0.73, 0.72 over the window's thirds
  (0.727 over the decade), and the counts smoothing, which deploys the average of the past pulls,
  lags it by another +0.02 (0.745).
* Hedge: the predictors the noise cannot yet separate weigh like a sqrt(ln N_eff) factor that
  shrinks slowly; 0.48 against 0.50.
* BCO: the shrink term has the exponent exactly (its own last-decade slope is 0.750 and 0.833);
  the rest of the regret, the centre's random excursions from the boundary, is 1.4 % (Lipschitz)
  and 2.8 % (bounded) of it with smoothing "last" and grows more slowly over the window (local
  slopes 0.54 and 0.66, as the losses near the optimum, hence the gradient estimates, shrink):
  -0.003 and -0.006 (0.747, 0.827). The average smoothing, which deploys the mean of all past
  centres, carries the first rounds' excursions longer (2.0 % and 3.5 % of the regret): another
  -0.005 and -0.002.

A run takes about 30 s of CPU (Hedge 4 s, epsilon-greedy 1 s each, robust UCB 10 s each: 32 arms
with a power and a logarithm per arm and round), plus the BCO rows (d normals and a handful of powers
and logarithms per update); the script prints each row's time.

    python benchmarks/bench_slopes.py [--horizon T] [--replications R] [--threads N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import agents
import mlcb

#: Checkpoints of the geometric grid (about 13 per decade at the default horizon).
CHECKPOINTS = 80


def hedge_row() -> list[float]:
    """Reward means of Hedge's predictors: 16 of loss 0 and a ladder of gaps 0.5 2^-i, i = 0 .. 12."""
    gaps = [0.0] * 16 + [0.5 * 2.0 ** (-i) for i in range(13)]
    return [1.0 - gap for gap in gaps]


def greedy_row() -> list[float]:
    """Two arms, reward means 0.9 and 0.1 (gap 0.8)."""
    return [0.9, 0.1]


def robust_row() -> list[float]:
    """24 arms of loss 0.05 and a ladder of gaps 0.9 2^-i, i = 0 .. 7 (m = 32)."""
    gaps = [0.0] * 24 + [0.9 * 2.0 ** (-i) for i in range(8)]
    return [0.95 - gap for gap in gaps]


def bco_stream() -> dict:
    """The convex stream of the BCO rows (``mlcb/ConvexBandit-v0``): affine losses on the unit disc,
    mean slope (0.9, 0), slope and level noise 0.05 (``L* = 0.05`` at ``-e_1``)."""
    return {"theta": [0.9, 0.0], "noise": 0.05, "level_noise": 0.05}


#: (alpha, label, expert, instance): the reward means of one expert's arms (a list, on
#: ``mlcb/BanditExperts-v0``) or the parameters of a convex stream (a dict, ``mlcb/ConvexBandit-v0``).
ROWS = (
    ("1/2", "Hedge", agents.make("hedge"), hedge_row),
    ("2/3", "epsilon-greedy, alpha = 2/3", agents.make("epsilon-greedy", alpha=2 / 3), greedy_row),
    ("2/3", "robust UCB, eps = 1/2", agents.make("robust-ucb", eps=1 / 2), robust_row),
    ("3/4", "epsilon-greedy, alpha = 3/4", agents.make("epsilon-greedy", alpha=3 / 4), greedy_row),
    ("3/4", "robust UCB, eps = 1/3", agents.make("robust-ucb", eps=1 / 3), robust_row),
    ("3/4", "BCO, Lipschitz case", agents.make("bco", dim=2), bco_stream),
    ("5/6", "BCO, bounded case", agents.make("bco-bounded", dim=2), bco_stream),
)


def _alpha(label: str) -> float:
    top, bottom = label.split("/")
    return float(top) / float(bottom)


def last_decade_slope(rounds: np.ndarray, values: np.ndarray, horizon: int) -> float:
    """Least-squares slope of log(values) against log(rounds) over the rounds in [T/10, T]."""
    keep = (rounds >= horizon / 10) & (values > 0)
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(rounds[keep]), np.log(values[keep]), 1)[0])


def measure(
    expert,
    reward_row: list[float] | dict,
    horizon: int,
    replications: int,
    seed: int = 1,
    threads: int | None = None,
) -> tuple[float, float]:
    """The last-decade slope of the mean pseudo-regret of M-LCB (K = 2, M = 1) on two copies of
    ``expert`` over the arms ``reward_row`` (or on the convex stream with the parameters
    ``reward_row``, a dict), and the final mean pseudo-regret."""
    if isinstance(reward_row, dict):
        env, env_params = "mlcb/ConvexBandit-v0", reward_row
    else:
        env, env_params = "mlcb/BanditExperts-v0", {"reward_means": [reward_row, reward_row]}
    result = mlcb.simulate(
        env=env,
        env_params=env_params,
        experts=[expert, expert],
        budget=1,
        horizon=horizon,
        replications=replications,
        seed=seed,
        checkpoints=min(CHECKPOINTS, horizon),
        threads=threads,
    )
    mean = result.to_frame().groupby("round")["pseudo_regret"].mean()
    rounds, values = mean.index.to_numpy(dtype=float), mean.to_numpy()
    return last_decade_slope(rounds, values, horizon), float(values[-1])


def run(
    horizon: int = 500_000, replications: int = 16, seed: int = 1, threads: int | None = None
) -> list[dict]:
    """One row per line of :data:`ROWS`: alpha, experts, slope, max(1/2, alpha), the final mean
    pseudo-regret and the seconds it took."""
    rows = []
    for alpha, label, expert, reward_row in ROWS:
        started = time.perf_counter()
        slope, final = measure(expert, reward_row(), horizon, replications, seed, threads)
        rows.append(
            {
                "alpha": alpha,
                "experts": label,
                "slope": slope,
                "target": max(0.5, _alpha(alpha)),
                "pseudo_regret": final,
                "seconds": time.perf_counter() - started,
            }
        )
    return rows


def table(rows: list[dict]) -> str:
    """The rows as a Markdown table: alpha | experts | slope | max(1/2, alpha)."""
    lines = ["| alpha | experts | slope | max(1/2, alpha) |", "|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['alpha']} | {row['experts']} | {row['slope']:.2f} | {row['target']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=float, default=5e5)
    parser.add_argument("--replications", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = run(int(args.horizon), args.replications, args.seed, args.threads)
    print(
        f"M-LCB, K = 2, M = 1, T = {int(args.horizon):,}, {args.replications} replications: "
        "last-decade slope of the mean pseudo-regret"
    )
    print(table(rows))
    print(
        f"({time.perf_counter() - started:.1f} s; per row: "
        + ", ".join(f"{r['seconds']:.1f}" for r in rows)
        + ")"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return rows


if __name__ == "__main__":
    main()
