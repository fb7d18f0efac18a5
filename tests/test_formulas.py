"""The paper's formulas pinned directly, independently of the pure-Python twins (a twin that shared
a misreading with the kernels would let it through)."""

from __future__ import annotations

import math

import numpy as np

from mlcb import engine, presets, theory
from mlcb.kernels import observe, select
from mlcb.kernels.stats import new_stats
from mlcb.policies import make


def test_certificate_is_the_sum_of_confidence_widths_over_training_rounds():
    """Delta(T) = sum over k*'s training rounds of w(n) + (1/M) sum over all training rounds of
    w(n), with w(n) = sqrt(2 log(4 K n^2 / delta) / n) + U(n, delta / 2K) / n at the count n the
    expert had when it was selected: rebuilt from the run's trace and mlcb.theory."""
    horizon = 2_000
    for budget in (1, 3):
        config = presets.get("trap").config(budget, horizon=horizon, seed=4)
        problem = engine.build(config)
        run = engine.run_replication(problem, 4, 0, horizon, np.array([horizon]), trace_rounds=horizon)
        n_experts, delta = config.n_experts, config.delta
        counts = np.arange(1, horizon + 2)
        rates = problem.family.rates(list(config.experts), problem.env, counts, delta / (2 * n_experts))
        widths = theory.confidence_width(counts[None, :], n_experts, delta, rates)  # (K, n)
        n = np.ones(n_experts, dtype=int)  # after the warm start
        best, everyone = 0.0, 0.0
        for row in run.trace_selected:
            for k in row[row >= 0]:
                w = widths[k, n[k] - 1]
                everyone += w
                best += w if k == run.best_expert else 0.0
                n[k] += 1
        np.testing.assert_allclose(run.certificate[-1], best + everyone / budget, rtol=1e-12)


def _stats(n, loss_sum, rate):
    stats = new_stats(len(n))
    stats["n"], stats["loss_sum"], stats["rate"] = n, loss_sum, rate
    return stats


def test_mlcb_bounds_and_tie_breaks_follow_the_paper():
    """LCB = L - U/n, UCB = L + sqrt(2 log(4 K n^2 / delta) / n); S_t the M smallest LCBs, i_t
    the smallest UCB in S_t, ties to the smaller index, on hand-made statistics."""
    n_experts, budget, delta = 5, 2, 0.1
    policy = make("mlcb")
    params, state = policy.build(n_experts, budget, delta, 100, np.zeros(n_experts))
    n = np.array([4, 4, 9, 4, 16])
    loss_sum = np.array([2.0, 2.0, 4.5, 2.0, 4.0])  # means 0.5, 0.5, 0.5, 0.5, 0.25
    rate = np.array([1.0, 1.0, 1.0, 1.0, 8.0])
    stats = _stats(n, loss_sum, rate)
    for k in range(n_experts):
        observe(params, state, stats, k, 0.0, 0)
    lcb = loss_sum / n - rate / n
    ucb = loss_sum / n + np.sqrt(2 * np.log(4 * n_experts * n**2 / delta) / n)
    np.testing.assert_allclose(state.bounds["lcb"], lcb, rtol=1e-14)
    np.testing.assert_allclose(state.bounds["ucb"], ucb, rtol=1e-14)
    selected, widths = np.zeros(budget, dtype=np.int64), np.zeros(budget)
    n_selected, deployed = select(params, state, stats, 1, np.uint64(7), selected, widths)
    # LCBs: 0.25, 0.25, 0.389, 0.25, -0.25: expert 4, then the tie 0, 1, 3 goes to 0.
    assert n_selected == 2 and sorted(selected.tolist()) == [0, 4]
    # UCBs of 0 and 4: 0.5 + w(4) against 0.25 + w(16); the larger count wins here.
    assert deployed == (4 if ucb[4] < ucb[0] else 0)
    np.testing.assert_allclose(sorted(widths), sorted(ucb[[0, 4]] - lcb[[0, 4]]), rtol=1e-14)
    # An exact tie in the UCB among the selected goes to the smaller index.
    stats = _stats(np.array([4, 4, 4, 4, 4]), np.full(5, 2.0), np.ones(5))
    params, state = policy.build(n_experts, budget, delta, 100, np.zeros(n_experts))
    for k in range(n_experts):
        observe(params, state, stats, k, 0.0, 0)
    n_selected, deployed = select(params, state, stats, 1, np.uint64(7), selected, widths)
    assert sorted(selected[:n_selected].tolist()) == [0, 1] and deployed == 0


def test_ucb1_index_uses_the_log_of_its_own_round():
    """UCB1 (losses): play the smallest mean - sqrt(c ln j / N_a), j the expert's own round."""
    from agents.bandits import ARM_DTYPE, _ucb1_arm

    arms = np.zeros((1, 2), dtype=ARM_DTYPE)
    arms["pulls"] = [[10, 40]]
    arms["losses"] = [[3.0, 10.0]]  # means 0.3 and 0.25
    for c, j in [(2.0, 50), (2.0, 5), (0.5, 1_000)]:
        index = [0.3 - math.sqrt(c * math.log(j) / 10), 0.25 - math.sqrt(c * math.log(j) / 40)]
        assert _ucb1_arm(c, arms, 0, 2, j) == int(np.argmin(index))
    # The exploration term flips the choice between short and long own histories.
    assert _ucb1_arm(2.0, arms, 0, 2, 50) == 0 and _ucb1_arm(0.001, arms, 0, 2, 50) == 1
