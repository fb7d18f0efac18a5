"""The lower bound's hard instances (mlcb/LowerBound-v0), the bound proved on them, and the
experiment that sets M-LCB between the lower and the upper curve (docs/theory.md §5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import envs
import mlcb
from agents.bandits import EpsilonGreedy, epsilon
from envs.lower_bound import (
    DEFAULT_C0,
    LowerBoundEnv,
    construction,
    default_gamma,
    divergence,
    game_loss_means,
    paper_constants,
    regret_lower_bound,
)
from mlcb import theory
from mlcb.paper import Section
from mlcb.paper import lower_bound as experiment
from mlcb.testing import check_env

ENV = "mlcb/LowerBound-v0"


def _kl(p: float, q: float) -> float:
    """Kullback-Leibler divergence of Bernoulli(p) from Bernoulli(q), written out."""
    return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))


def _final(result) -> tuple[float, float]:
    """Mean final pseudo-regret and its standard error over replications."""
    values = result.final()["pseudo_regret"].to_numpy(float)
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))


# --- the instances -------------------------------------------------------------------------------
def test_gaps_of_both_regimes_pinned():
    # K / (M T) = 10 / 10,000 = 1e-3: sqrt = 0.0316..., cube root = 0.1.
    low = construction(10, 2, 5_000, alpha=0.5, gamma=0.1)
    assert low.epsilon == pytest.approx(0.1 * math.sqrt(1e-3)) and low.gap == low.epsilon
    high = construction(10, 2, 5_000, alpha=2 / 3, gamma=0.1, c0=0.02)
    assert high.epsilon == pytest.approx(0.1 / math.sqrt(5_000))
    assert high.gap == pytest.approx(0.02 * 0.1)
    assert default_gamma(10) == pytest.approx(0.15) and construction(10, 1, 100, 0.5).gamma == 0.15
    assert DEFAULT_C0 == construction(10, 1, 100, 0.9).c0


def test_means_and_optimal_losses_pinned():
    env = envs.make(ENV, n_experts=3, budget=1, horizon=300, alpha=0.5, gamma=0.1, game=1, shuffle=False)
    eps = 0.1 * math.sqrt(3 / 300)  # 0.01
    assert env.epsilon == pytest.approx(0.01) and env.gap == pytest.approx(0.01)
    params, _ = env.build(seed=5, replication=3, horizon=100)
    expected = [[0.505, 0.515], [0.495, 0.485], [0.505, 0.515]]
    np.testing.assert_allclose(params.loss_means, expected)
    optimal = [env.optimal_loss(params, k) for k in range(3)]
    np.testing.assert_allclose(optimal, [0.5 + eps / 2, 0.5 - eps / 2 - eps, 0.5 + eps / 2])
    _, info = env.reset(seed=5, options={"replication": 3})
    assert info["optimal_loss"] == pytest.approx(0.485) and info["game"] == 1
    null = game_loss_means(3, eps, eps, None)
    np.testing.assert_allclose(null, [[0.505, 0.515]] * 3)
    np.testing.assert_allclose(env.loss_means(None), null)


def test_arms_are_shuffled_per_replication():
    env = envs.make(ENV, n_experts=4, budget=1, horizon=1_000, alpha=2 / 3, game=2)
    unshuffled = env.loss_means(2)
    orders = set()
    for r in range(30):
        params, _ = env.build(seed=0, replication=r, horizon=100)
        np.testing.assert_allclose(np.sort(params.loss_means, axis=1), np.sort(unshuffled, axis=1))
        orders.add(tuple(np.argsort(params.loss_means[2])))
        assert env.optimal_loss(params, 2) == pytest.approx(unshuffled[2].min())
    assert len(orders) == 2


def test_the_random_game_is_uniform_reproducible_and_shared_by_budgets():
    one = envs.make(ENV, n_experts=5, budget=1, horizon=10_000, alpha=0.5)
    two = envs.make(ENV, n_experts=5, budget=2, horizon=10_000, alpha=2 / 3)
    games = [one.game_of(7, r) for r in range(500)]
    assert games == [two.game_of(7, r) for r in range(500)]  # common random numbers
    assert games != [one.game_of(8, r) for r in range(500)]
    counts = np.bincount(games, minlength=5)
    # 100 expected per game; a binomial(500, 0.2) has sd 8.9: a 5-sd band.
    assert np.all(np.abs(counts - 100) < 45), counts
    for r in range(5):
        params, _ = one.build(7, r, 100)
        optimal = [one.optimal_loss(params, k) for k in range(5)]
        assert int(np.argmin(optimal)) == games[r]
    null = envs.make(ENV, n_experts=5, game="null")
    assert null.game_of(7, 0) is None and null.reset(seed=7)[1]["game"] == -1


def test_a_fixed_game_draws_what_the_bandit_environment_draws():
    # The instance is a BanditExpertsEnv with the game's means: the same draws and decisions; the
    # means there pass through 1 - (1 - mean), so the regrets agree to rounding.
    params = {"n_experts": 4, "budget": 2, "horizon": 2_000, "alpha": 2 / 3, "c0": 0.5, "game": 3}
    params["shuffle"] = False
    means = 1 - envs.make(ENV, **params).loss_means(3)
    pool = [EpsilonGreedy(alpha=2 / 3)] * 4
    common = {"experts": pool, "budget": 2, "horizon": 2_000, "replications": 3, "seed": 4, "checkpoints": 5}
    ours = mlcb.simulate(env=ENV, env_params=params, **common)
    theirs = mlcb.simulate(env="mlcb/BanditExperts-v0", env_params={"reward_means": means.tolist()}, **common)
    for column in ("regret", "pseudo_regret", "certificate"):
        np.testing.assert_allclose(ours.curves[column], theirs.curves[column], rtol=1e-12, atol=1e-12)
    for column in ("trained", "deployed"):
        np.testing.assert_array_equal(ours.experts[column], theirs.experts[column])


def test_conformance():
    check_env(ENV, env_params={"n_experts": 3, "budget": 1, "horizon": 500, "alpha": 0.75})
    check_env(LowerBoundEnv(n_experts=2, horizon=50, alpha=0.0, game="null"))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"n_experts": 1}, "n_experts must be an integer >= 2"),
        ({"n_experts": 3, "budget": 4}, r"budget must be an integer in \[1, n_experts=3\], got 4"),
        ({"horizon": 0}, "horizon must be an integer >= 1"),
        ({"alpha": 1.0}, r"alpha must be a number in \[0, 1\)"),
        ({"gamma": 0.0}, "gamma must be a finite number > 0"),
        ({"c0": -1.0}, "c0 must be a finite number > 0"),
        ({"n_experts": 3, "game": 3}, r"game must be 'null', 'random' or an expert index in \[0, 2\]"),
        ({"game": "h"}, "game must be 'null', 'random'"),
        ({"shuffle": 1}, "shuffle must be True or False"),
        ({"horizon": 1, "gamma": 0.5, "alpha": 0.5}, "must lie in \\(0, 1\\).*lower gamma or c0"),
    ],
)
def test_bad_parameters_are_refused_by_name(params, message):
    with pytest.raises(ValueError, match=message):
        envs.make(ENV, **params)


# --- the bound -----------------------------------------------------------------------------------
def test_divergence_is_the_largest_arm_divergence():
    for eps, gap in ((0.1, 0.05), (0.003, 0.003), (0.0, 0.2), (0.02, 0.0)):
        null, game = game_loss_means(2, eps, gap, None)[0], game_loss_means(2, eps, gap, 0)[0]
        written_out = max(_kl(p, q) for p, q in zip(null, game) if p != q) if eps + gap > 0 else 0.0
        assert divergence(eps, gap) == pytest.approx(written_out, rel=1e-12, abs=1e-300)
        d = eps + 2 * gap
        assert divergence(eps, gap) <= 2 * d * d / (1 - d * d) + 1e-15
    np.testing.assert_allclose(divergence([0.1, 0.0], [0.05, 0.0]), [0.2 * math.log(1.2 / 0.8), 0.0])


def test_regret_lower_bound_pinned():
    # K = 10, M = 1, T = 1e5, alpha = 1/2: eps = Delta = 0.15 sqrt(1e-4) = 1.5e-3, d = 4.5e-3.
    eps, d = 1.5e-3, 4.5e-3
    kappa = d * math.log((1 + d) / (1 - d))
    by_hand = 2 * eps * 1e5 * (1 - 0.1 - math.sqrt(kappa * (1e5 + 10) / 20))
    assert regret_lower_bound(100_000, 10, 1, 0.5) == pytest.approx(by_hand, rel=1e-12)
    assert by_hand == pytest.approx(135.0, abs=0.05)
    curve = regret_lower_bound([1_000, 100_000], 10, 1, 0.5)
    assert curve[1] == pytest.approx(by_hand) and curve[0] < curve[1]
    # alpha = 3/4 with c0 = 0.02: the bracket is negative at T = 1e7, the bound clipped to 0.
    assert regret_lower_bound(10_000_000, 10, 1, 0.75) == 0.0
    env = LowerBoundEnv(n_experts=10, budget=1, horizon=100_000, alpha=0.5)
    assert env.regret_lower_bound() == pytest.approx(by_hand)


def test_paper_constants_lie_below_the_bound_at_every_horizon():
    grid = np.geomspace(1_000, 1_000_000, 25)
    for alpha in (0.0, 0.5, 2 / 3, 0.75):
        for budget in (1, 2, 4):
            c1, c2 = paper_constants(10, budget, alpha, grid)
            form = c1 * np.sqrt(10 * grid / budget) + c2 * grid**alpha * (10 / budget) ** (1 - alpha)
            assert np.all(form <= regret_lower_bound(grid, 10, budget, alpha) * (1 + 1e-12))
            if alpha <= 0.5:
                assert c1 == c2 > 0
    # alpha = 1/2, large T: c1 = c2 = gamma (1 - 1/K - 3 gamma) -> (1 - 1/K)^2 / 12 at gamma = (1 - 1/K) / 6.
    c1, _ = paper_constants(10, 1, 0.5, [1e8])
    assert c1 == pytest.approx(0.81 / 12, rel=1e-3)
    assert paper_constants(10, 2, 0.75, [1e7]) == (0.0, 0.0)
    with pytest.raises(ValueError, match="horizons must be >= K / M"):
        paper_constants(10, 1, 0.5, [5])


# --- the bound holds for every policy that does not know the game ---------------------------------
POLICIES = ("mlcb", "uniform", "round-robin", "greedy", "limited-advice")


@pytest.mark.parametrize("alpha", [0.5, 2 / 3])
def test_no_policy_beats_the_bound_but_the_oracle_does(alpha):
    # The bound is a theorem about the expectation: a policy's mean is allowed 3 standard errors
    # below it (one-sided, under 0.2 % per check). The oracle knows the game: the bound does not
    # cover it, and on these instances it pays only its expert's own regret, below the bound.
    k, budget, horizon = 4, 1, 4_000
    params = {"n_experts": k, "budget": budget, "horizon": horizon, "alpha": alpha}
    bound = regret_lower_bound(horizon, k, budget, alpha)
    pool = experiment.experts_for(alpha, k)
    run = {"env": ENV, "env_params": params, "experts": pool, "budget": budget, "horizon": horizon}
    run.update(replications=24, seed=3, checkpoints=2)
    for policy in POLICIES:
        mean, error = _final(mlcb.simulate(policy=policy, **run))
        assert mean + 3 * error >= bound, (policy, mean, error, bound)
    mean, error = _final(mlcb.simulate(policy="oracle", **run))
    assert mean + 3 * error < bound, (mean, error, bound)


def test_epsilon_greedy_pays_its_exploration():
    # The oracle trains and deploys h every round; its deployed arm is drawn from h's pull counts,
    # of which an expected (1/2) sum_j eps_j went to the worse arm by exploration alone: the
    # pseudo-regret is at least Delta sum_t a(t + 1), a(n) = (1/2n) sum_{j <= n} eps_j.
    k, horizon = 2, 3_000
    env = LowerBoundEnv(n_experts=k, budget=1, horizon=horizon, alpha=2 / 3, c0=1.0, game=0)
    assert env.gap > 0.05  # a gap the expert resolves early: what remains is its exploration
    eps = np.array([epsilon(1.0, 2 / 3, 2, j) for j in range(1, horizon + 2)])
    averages = np.cumsum(eps) / (2 * np.arange(1, horizon + 2))
    floor = env.gap * averages[1:].sum()
    result = mlcb.simulate(
        env=ENV,
        env_params={"n_experts": k, "budget": 1, "horizon": horizon, "alpha": 2 / 3, "c0": 1.0, "game": 0},
        experts=[EpsilonGreedy(alpha=2 / 3)] * k,
        policy="oracle",
        budget=1,
        horizon=horizon,
        replications=20,
        seed=2,
        checkpoints=2,
    )
    mean, error = _final(result)
    assert mean + 3 * error >= floor, (mean, error, floor)
    assert floor > 0.2 * env.gap * horizon ** (2 / 3)  # of order Delta T^alpha


@pytest.mark.parametrize("alpha", [0.5, 2 / 3])
def test_mlcb_lies_between_the_curves(alpha):
    # Moderate size: K = 10, M = 2, T = 2e4. The lower curve (paper form, explicit constants) is a
    # theorem about the mean: allowed 3 standard errors. The upper curve holds run by run with
    # probability >= 1 - delta; it sits orders of magnitude above (checked with no margin).
    k, budget, horizon = 10, 2, 20_000
    point = experiment.measure(alpha, budget, horizon, replications=16, n_experts=k, seed=1)
    c1, c2 = paper_constants(k, budget, alpha, np.geomspace(1_000, horizon, 10))
    lower = theory.lower_bound(horizon, k, budget, alpha, c1, c2)
    assert lower <= point["lower_exact"]
    assert point["mean"] + 3 * point["stderr"] >= lower
    upper = experiment.upper_bound([horizon], k, budget, alpha)[0]
    assert point["mean"] <= upper
    assert upper > 50 * point["mean"]  # the certificate does not know the gaps are tiny


def test_upper_curve_is_the_numeric_worst_case():
    k, budget, horizon, alpha = 3, 2, 400, 2 / 3
    pool = experiment.experts_for(alpha, k)
    env = LowerBoundEnv(k, budget, horizon, alpha)
    counts = np.arange(1, horizon + 1)
    rates = pool[0].family.rates(pool, env, counts, experiment.DELTA / (2 * k))
    widths = theory.confidence_width(counts, k, experiment.DELTA, rates)
    gaps = construction(k, budget, horizon, alpha)
    expected = theory.numeric_worst_case(widths, 0, budget)
    expected += experiment.DELTA * horizon * (gaps.epsilon + 2 * gaps.gap)
    assert experiment.upper_bound([horizon], k, budget, alpha)[0] == pytest.approx(expected, rel=1e-12)


# --- the experiment ------------------------------------------------------------------------------
def test_quick_experiment_returns_a_section(tmp_path):
    small = {"horizons": (200, 1_000), "replications": 3, "budgets": (1, 2), "n_experts": 4}
    section = experiment.run("quick", tmp_path, seed=0, threads=1, **small)
    assert isinstance(section, Section) and section.key == "lower-bound" and section.text
    assert section.figures == (tmp_path / "lower_bound.png",)
    assert section.figures[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "lower_bound.csv").is_file()
    assert len(section.tables) == 2  # one per alpha
    for table in section.tables:
        assert len(table.rows) == 2  # one per budget
        for row in table.rows:
            assert "T = 1,000" in row.quantity and row.paper == "lower bound <= E Reg(T) <= upper bound"
            assert math.isfinite(row.package) and math.isfinite(row.stderr) and "upper bound" in row.note


def test_experiment_refuses_bad_input_before_running(tmp_path):
    with pytest.raises(ValueError, match="size must be one of"):
        experiment.run("huge", tmp_path)
    with pytest.raises(ValueError, match="unknown size override"):
        experiment.run("quick", tmp_path, horizon=10)
    with pytest.raises(ValueError, match="must lie in"):
        experiment.run("quick", tmp_path, horizons=(1,), alphas=(0.5,), budgets=(1,), n_experts=40)
    with pytest.raises(ValueError, match="horizons must be >= K / M"):
        experiment.run("quick", tmp_path, horizons=(2,), alphas=(0.5,), budgets=(1,), n_experts=4)
    assert not any(tmp_path.iterdir())
