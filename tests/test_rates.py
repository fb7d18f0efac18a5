"""Tests of agents.rates: hand-computed values, docs/rates.md's printed numbers, the compiled kernels."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents import bandits
from agents.rates import (
    authors_epsilon_greedy_rate,
    epsilon_greedy_closed_form,
    epsilon_greedy_rate,
    epsilon_greedy_schedule,
    expert_rate,
    heavy_tailed_constant,
    heavy_tailed_rate,
    hedge_rate,
    ogd_rate,
    scale_and_cap,
    thompson_rate,
    ucb1_rate,
    ucb_delta_rate,
)

DELTA_PRIME = 0.005  # K = 10, delta = 0.1: the level of docs/rates.md's tables
CHECKPOINTS = np.array([10_000, 100_000, 250_000, 1_000_000])


# --- slow, obvious twins (plain Python) ----------------------------------------------------------
def twin_ucb_delta(n: int, m: int, dp: float, factor: float = 1.0) -> float:
    exploit = factor * math.sqrt(2 * (m - 1) * n * math.log(8 * m * n**2 / dp))
    return min(n, exploit + math.sqrt(n / 2 * math.log(4 * n**2 / dp)) + (m - 1))


def twin_ucb1(n: int, m: int, c: float, dp: float) -> float:
    t0 = math.ceil((8 * m / dp) ** (1 / (2 * c - 2)))
    value = (
        2 * math.sqrt(c * (m - 1) * n * math.log(n))
        + (m - 1)
        + t0
        + math.sqrt(n / 2 * math.log(4 * n**2 / dp))
    )
    return min(n, value)


def twin_epsilon(j: int, m: int, c: float, alpha: float) -> float:
    return min(1.0, c * (m * max(1.0, math.log(j)) / j) ** (1 - alpha))


def twin_sharp(n_max: int, m: int, c: float, alpha: float, dp: float) -> list[float]:
    """U#(n) for n = 1 .. n_max, straight from docs/rates.md §2."""
    out = []
    past_eps = 0.0  # sum_{i<j} eps_i
    total = 0.0  # sum_{j<=n} eps_j + (1 - eps_j) b_j
    for j in range(1, n_max + 1):
        eps = twin_epsilon(j, m, c, alpha)
        mu = past_eps / m
        s = math.ceil(mu - math.sqrt(2 * mu * math.log(6 * m * j**2 / dp)))
        b = min(1.0, math.sqrt(2 * math.log(12 * m * s**2 / dp) / s)) if s >= 1 else 1.0
        total += eps + (1 - eps) * b
        past_eps += eps
        out.append(min(j, total + math.sqrt(j / 2 * math.log(6 * j**2 / dp))))
    return out


def twin_heavy_tailed(n: int, m: int, eps: float, dp: float, u: float = 1.0) -> float:
    """docs/rates.md §6: 2 c_eps u^(1/(1+eps)) ((m-1) log(8mn^2/dp))^(eps/(1+eps)) n^(1/(1+eps)) + ..."""
    c_eps = 1 + eps + math.sqrt(2) + 2 / 3
    exploit = 2 * c_eps * u ** (1 / (1 + eps)) * ((m - 1) * math.log(8 * m * n**2 / dp)) ** (eps / (1 + eps))
    value = exploit * n ** (1 / (1 + eps)) + (m - 1) + math.sqrt(n / 2 * math.log(4 * n**2 / dp))
    return min(n, value)


def twin_closed_form(n: int, m: int, c: float, alpha: float, dp: float) -> float:
    ell = max(1.0, math.log(n))
    log_e = math.log(12 * m * n**2 / dp)
    log_n = math.log(6 * m * n**2 / dp)
    kappa = max(1.0, m * c ** (1 / (1 - alpha))) * (1 - alpha) / alpha + 1
    theta = 8 * m * log_n / (8 * m * log_n + kappa)
    j0 = math.ceil(((alpha / c) * m ** (alpha - 1) * (8 * m * log_n + kappa)) ** (1 / alpha))
    explore = (c / alpha) * (m * ell) ** (1 - alpha) * n**alpha
    exploit = 2 * math.sqrt(alpha / (theta * c)) / (1 - alpha / 2) * m ** (alpha / 2) * math.sqrt(log_e)
    sampling = math.sqrt(n / 2 * math.log(6 * n**2 / dp))
    return min(n, explore + exploit * n ** (1 - alpha / 2) + j0 + sampling)


# --- hand-computed values ------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 7, 1000, 123_456])
def test_count_only_rates_match_hand_computation(n):
    assert ucb_delta_rate(n, 3, 0.01) == pytest.approx(twin_ucb_delta(n, 3, 0.01), rel=1e-13)
    assert ucb1_rate(n, 3, 2.0, 0.01) == pytest.approx(twin_ucb1(n, 3, 2.0, 0.01), rel=1e-13)
    assert thompson_rate(n, 4, 0.02, clipped=True) == pytest.approx(
        twin_ucb_delta(n, 4, 0.02, 1.5), rel=1e-13
    )
    assert thompson_rate(n, 4, 0.02, clipped=False) == pytest.approx(twin_ucb_delta(n, 4, 0.02), rel=1e-13)
    ogd = min(n, 1.5 * 0.3 * 2.0 * math.sqrt(n) + math.sqrt(n / 2 * math.log(2 * n**2 / 0.01)))
    assert ogd_rate(n, 0.3, 2.0, 0.01) == pytest.approx(ogd, rel=1e-13)
    hedge = (
        math.sqrt(2 * n * math.log(7))
        + math.sqrt(math.log(7) / 8)
        + math.sqrt(n / 2 * math.log(2 * n**2 / 0.01))
    )
    assert hedge_rate(n, 7, 0.01) == pytest.approx(min(n, hedge), rel=1e-13)
    for eps in (1.0, 0.5, 1 / 3):
        heavy = twin_heavy_tailed(n, 3, eps, 0.01)
        assert heavy_tailed_rate(n, 3, eps, 0.01) == pytest.approx(heavy, rel=1e-13)
    heavy = twin_heavy_tailed(n, 4, 0.6, 0.02, u=2.26)
    assert heavy_tailed_rate(n, 4, 0.6, 0.02, moment=2.26) == pytest.approx(heavy, rel=1e-13)
    assert heavy_tailed_constant(0.5) == pytest.approx(1.5 + math.sqrt(2) + 2 / 3, rel=1e-15)
    authors = 1.0 if n == 1 else min(n, 0.4 * n**0.75 * (5 * math.log(n)) ** 0.25)
    assert authors_epsilon_greedy_rate(n, 5, 0.75, 0.4) == pytest.approx(authors, rel=1e-13, abs=0.0)
    assert epsilon_greedy_schedule(n, 5, 1.5, 0.75) == pytest.approx(twin_epsilon(n, 5, 1.5, 0.75), rel=1e-13)
    closed = twin_closed_form(n, 3, 1.5, 0.7, 0.01)
    assert epsilon_greedy_closed_form(n, 3, 1.5, 0.7, 0.01) == pytest.approx(closed, rel=1e-13)


def test_ucb1_offset_values_of_rates():
    # docs/rates.md §1b: t0 = 57 for c = 2 and 3200 for c = 1.5 (m = 2, delta' = 0.005); the rate minus its
    # two square-root terms is the additive (m - 1) + t0.
    for c, t0 in [(2.0, 57), (1.5, 3200)]:
        n = 10**7
        remainder = 2 * math.sqrt(c * n * math.log(n)) + math.sqrt(n / 2 * math.log(4 * n**2 / DELTA_PRIME))
        assert ucb1_rate(n, 2, c, DELTA_PRIME) - remainder == pytest.approx(1 + t0, rel=1e-9)


@pytest.mark.parametrize("n_max", [1, 2, 3, 5000])
def test_sharp_rate_matches_slow_twin(n_max):
    for m, c, alpha, dp in [(2, 1.0, 2 / 3, 0.005), (5, 3.0, 0.75, 0.05)]:
        expected = twin_sharp(n_max, m, c, alpha, dp)
        got = epsilon_greedy_rate(np.arange(1, n_max + 1), m, c, alpha, dp)
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_sharp_rate_reads_any_order_and_shape():
    n = np.array([[40, 3], [1, 40]])
    got = epsilon_greedy_rate(n, 2, 1.0, 2 / 3, DELTA_PRIME)
    full = twin_sharp(40, 2, 1.0, 2 / 3, DELTA_PRIME)
    assert got.shape == (2, 2)
    np.testing.assert_allclose(got, [[full[39], full[2]], [full[0], full[39]]], rtol=1e-12)
    assert epsilon_greedy_rate(np.array([], dtype=np.int64), 2, 1.0, 2 / 3, DELTA_PRIME).shape == (0,)


# --- the numbers printed in docs/rates.md -------------------------------------------------------------
@pytest.mark.parametrize(
    ("rate", "printed"),
    [
        (lambda n: ucb_delta_rate(n, 2, DELTA_PRIME), [0.108, 0.037, 0.024, 0.013]),
        (lambda n: ucb1_rate(n, 2, 2.0, DELTA_PRIME), [0.127, 0.043, 0.028, 0.015]),
        (lambda n: hedge_rate(n, 10, DELTA_PRIME), [0.056, 0.019, 0.012, 0.006]),
    ],
    ids=["ucb-delta0", "ucb1-c2", "hedge-N10"],
)
def test_summary_values_of_rates(rate, printed):
    np.testing.assert_allclose(rate(CHECKPOINTS) / CHECKPOINTS, printed, rtol=0, atol=0.0005 + 1e-12)


def test_section_6_values_of_rates():
    # docs/rates.md §6: U(n)/n at m = 2, u = 1, delta' = 0.005 and n = 10^5, 10^6, 10^7.
    n = np.array([100_000, 1_000_000, 10_000_000])
    for eps, printed in [(0.5, [0.497, 0.240, 0.115]), (1 / 3, [0.919, 0.532, 0.307])]:
        got = heavy_tailed_rate(n, 2, eps, DELTA_PRIME) / n
        np.testing.assert_allclose(got, printed, rtol=0, atol=0.0005 + 1e-12)
    assert heavy_tailed_constant(1.0) <= 4.09  # the bound quoted in §6


def test_section_2_values_of_rates():
    args = (2, 1.0, 2 / 3, DELTA_PRIME)
    sharp = epsilon_greedy_rate(CHECKPOINTS, *args) / CHECKPOINTS
    closed = epsilon_greedy_closed_form(CHECKPOINTS, *args) / CHECKPOINTS
    np.testing.assert_allclose(sharp, [0.53, 0.26, 0.19, 0.12], rtol=0, atol=0.005 + 1e-12)
    np.testing.assert_allclose(closed, [1.0, 0.52, 0.38, 0.24], rtol=0, atol=0.005 + 1e-12)
    assert closed[0] == 1.0  # printed "1": the cap at n binds


@pytest.mark.parametrize(
    ("m", "c", "alpha", "dp"),
    [
        (2, 1.0, 2 / 3, 0.005),
        (2, 0.5, 2 / 3, 0.005),
        (10, 1.0, 2 / 3, 0.01),
        (2, 1.0, 0.8, 0.005),
        (5, 3.0, 0.75, 0.05),
    ],
)
def test_sharp_rate_below_closed_form(m, c, alpha, dp):
    # docs/rates.md §2 checked U# <= U_eG up to n = 2e6 for these settings; here up to 2e5.
    n = np.arange(1, 200_001)
    assert np.all(epsilon_greedy_rate(n, m, c, alpha, dp) <= epsilon_greedy_closed_form(n, m, c, alpha, dp))


# --- agreement with the compiled kernels ---------------------------------------------------------
def kernel_table(expert, m: int, dp: float, length: int) -> np.ndarray:
    """``U(n)`` for ``n < length`` by agents.bandits' kernels, the record filled as in _pool_tables."""
    code, rate = expert.code, expert.rate
    c, alpha = float(getattr(expert, "c", 0.0)), float(getattr(expert, "alpha", 0.5))
    coef, scale = float(getattr(expert, "rate_coef", 0.0)), float(expert.rate_scale)
    record = np.zeros(1, dtype=bandits.EXPERT_DTYPE)
    offset = bandits._ucb1_offset(code, rate, c, m, dp)
    record[0] = (code, m, bandits._RATES.index(rate), c, alpha, coef, scale, offset, -1, -1, 0)
    return bandits._tabulate_rate(record[0], m, dp, length)


KERNEL_EXPERTS = [
    bandits.UCB1(c=2.0),
    bandits.UCB1(c=1.5, rate_scale=0.7),
    bandits.EpsilonGreedy(),
    bandits.EpsilonGreedy(c=0.5, alpha=0.75),
    bandits.EpsilonGreedy(rate_scale=3.0),
    bandits.EpsilonGreedy(rate="authors", rate_coef=0.5),
    bandits.EpsilonGreedy(alpha=0.6, rate="authors", rate_coef=2.0, rate_scale=1.5),
    bandits.ThompsonSampling(),
    bandits.ThompsonSampling(clipped=True),
    bandits.ThompsonSampling(clipped=True, rate_scale=0.3),
]


@pytest.mark.parametrize("expert", KERNEL_EXPERTS, ids=repr)
@pytest.mark.parametrize("m", [2, 5])
def test_expert_rate_matches_kernel(expert, m):
    length = 20_001
    table = kernel_table(expert, m, DELTA_PRIME, length)
    n = np.arange(1, length)
    np.testing.assert_allclose(expert_rate(expert, n, m, DELTA_PRIME), table[1:], rtol=1e-12, atol=0)


def test_shipped_rates_are_the_expert_rates():
    n = np.arange(1, 3001)
    np.testing.assert_array_equal(
        expert_rate(bandits.EpsilonGreedy(c=0.5, alpha=0.75), n, 3, 0.01),
        epsilon_greedy_rate(n, 3, 0.5, 0.75, 0.01),
    )
    np.testing.assert_array_equal(expert_rate(bandits.UCB1(c=3.0), n, 3, 0.01), ucb1_rate(n, 3, 3.0, 0.01))
    np.testing.assert_array_equal(
        expert_rate(bandits.ThompsonSampling(clipped=True), n, 3, 0.01),
        thompson_rate(n, 3, 0.01, clipped=True),
    )
    np.testing.assert_array_equal(thompson_rate(n, 3, 0.01, clipped=False), ucb_delta_rate(n, 3, 0.01))


def test_rate_scale_applies_before_the_cap():
    # min(n, 0.5 U) differs from 0.5 min(n, U) where U > n; the kernel scales first.
    n = np.arange(1, 200)
    raw = [twin_ucb1(int(k), 2, 2.0, DELTA_PRIME) for k in n]
    assert raw[0] == 1  # the cap binds at n = 1 (t0 = 57)
    got = expert_rate(bandits.UCB1(c=2.0, rate_scale=0.01), n, 2, DELTA_PRIME)
    uncapped = 0.01 * (
        2 * np.sqrt(2.0 * n * np.log(n)) + 1 + 57 + np.sqrt(n / 2 * np.log(4.0 * n * n / DELTA_PRIME))
    )
    np.testing.assert_allclose(got, np.minimum(n, uncapped), rtol=1e-13)
    assert np.any(got < n) and np.any(got > 0.01 * np.asarray(raw))


def test_expert_rate_plug_in():
    class Learner:
        def rate_function(self, n, n_arms, delta_prime):
            return 3.0 * np.sqrt(np.asarray(n, dtype=float)) * math.log(1 / delta_prime)

    n = np.array([1, 10, 10_000])
    expected = np.minimum(n, 3.0 * np.sqrt(n) * math.log(200))
    np.testing.assert_allclose(expert_rate(Learner(), n, 0, 0.005), expected, rtol=1e-15)
    assert expert_rate(Learner(), n, 0, 0.005)[0] == 1.0


def test_expert_rate_rejects_data_dependent_and_unknown():
    with pytest.raises(ValueError, match="count-only"):
        expert_rate(bandits.UCB1(c=0.25, rate="authors"), 10, 2, DELTA_PRIME)
    with pytest.raises(TypeError, match="rate_function"):
        expert_rate(object(), 10, 2, DELTA_PRIME)


# --- shape, monotonicity, cap ----------------------------------------------------------------------
ALL_RATES = {
    "ucb-delta0": lambda n: ucb_delta_rate(n, 3, DELTA_PRIME),
    "ucb1": lambda n: ucb1_rate(n, 3, 1.5, DELTA_PRIME),
    "eps-greedy": lambda n: epsilon_greedy_rate(n, 3, 1.0, 2 / 3, DELTA_PRIME),
    "eps-greedy-closed": lambda n: epsilon_greedy_closed_form(n, 3, 1.0, 2 / 3, DELTA_PRIME),
    "clipped-ts": lambda n: thompson_rate(n, 3, DELTA_PRIME, clipped=True),
    "ogd": lambda n: ogd_rate(n, 1.0, 2.0, DELTA_PRIME),
    "hedge": lambda n: hedge_rate(n, 10, DELTA_PRIME),
    "robust-ucb-1/2": lambda n: heavy_tailed_rate(n, 3, 0.5, DELTA_PRIME),
    "robust-ucb-1/3": lambda n: heavy_tailed_rate(n, 3, 1 / 3, DELTA_PRIME),
    "robust-ucb-1": lambda n: heavy_tailed_rate(n, 1, 1.0, DELTA_PRIME),
    "authors-eps-greedy": lambda n: authors_epsilon_greedy_rate(n, 3, 2 / 3, 0.5),
}


@pytest.mark.parametrize("name", ALL_RATES)
def test_rates_are_capped_non_decreasing_float64(name):
    rate = ALL_RATES[name]
    n = np.arange(1, 300_001)
    values = rate(n)
    assert values.dtype == np.float64 and values.shape == n.shape
    assert np.all(values <= n) and np.all(values >= 0)
    assert np.all(np.diff(values) >= 0)
    assert values[-1] < n[-1]  # not trivially the cap
    scalar = rate(1000)
    assert isinstance(scalar, float) and scalar == values[999]
    np.testing.assert_array_equal(rate(n[:6].reshape(2, 3)), values[:6].reshape(2, 3))


def test_cap_binds_for_small_counts():
    # UCB1's t0 = 3200 for c = 1.5 makes the raw formula exceed n for small n.
    n = np.arange(1, 100)
    np.testing.assert_array_equal(ucb1_rate(n, 2, 1.5, DELTA_PRIME), n)
    assert ogd_rate(1, 100.0, 100.0, DELTA_PRIME) == 1.0
    assert epsilon_greedy_rate(1, 2, 1.0, 2 / 3, DELTA_PRIME) == 1.0


@pytest.mark.parametrize("c", [1.001, 1 + 1e-9])
def test_ucb1_rate_with_c_near_one_is_the_cap(c):
    # t0 = ceil((8m/delta')^(1/(2c-2))) is beyond the largest float (log10 t0 = 500 log10 3200 at
    # c = 1.001): the bound is vacuous, so U = n capped, inf uncapped (was an OverflowError).
    n = np.array([1, 10, 10**6])
    np.testing.assert_array_equal(ucb1_rate(n, 2, c, DELTA_PRIME), n)
    assert np.all(np.isinf(ucb1_rate(n, 2, c, DELTA_PRIME, capped=False)))
    np.testing.assert_array_equal(expert_rate(bandits.UCB1(c=c), n, 2, DELTA_PRIME), n)


def test_a_pool_of_ucb1_with_c_near_one_runs_at_the_cap():
    """The compiled pool computed UCB1's t0 itself and raised OverflowError for c = 1.001 before
    any round; its rate is now n, the value of ucb1_rate."""
    import mlcb

    result = mlcb.simulate(preset="trap", experts=[bandits.UCB1(c=1.001)] * 10, budget=1, horizon=300,
                           replications=1)  # fmt: skip
    assert result.final()["regret"].notna().all()
    problem = mlcb.engine.build(mlcb.presets.get("trap").config(1, experts=[bandits.UCB1(c=1.001)] * 10))
    n = np.arange(1, 301)
    rates = bandits.BANDITS.rates(list(problem.config.experts), problem.env, n, DELTA_PRIME)
    np.testing.assert_array_equal(rates, np.broadcast_to(n, rates.shape))


def test_a_pool_records_its_rates_exponent_not_its_schedules():
    """Results recorded an epsilon-greedy pool's schedule exponent alpha as its rate exponent; for
    alpha < 2/3 the valid rate grows like n^(1 - alpha/2) (its local slope rises towards it), and
    the theory figure drew the theorem's curve of the wrong exponent."""
    import mlcb

    for alpha, rate, exponent in [(0.3, "theory", 0.85), (0.5, "theory", 0.75), (2 / 3, "theory", 2 / 3),
                                  (0.8, "theory", 0.8), (0.3, "authors", 0.3)]:  # fmt: skip
        experts = [bandits.EpsilonGreedy(alpha=alpha, rate=rate)] * 10
        result = mlcb.simulate(preset="trap", experts=experts, budget=1, horizon=50, replications=1)
        assert result.metadata["settings"]["mlcb M=1"]["rate_exponent"] == exponent
    n = np.array([10**5, 10**6, 10**7])
    slopes = np.diff(np.log(epsilon_greedy_rate(n, 2, 1.0, 0.3, DELTA_PRIME, capped=False))) / np.log(10)
    assert 0.3 + 0.4 < slopes[0] < slopes[1] < 0.85  # far above alpha, rising towards 1 - alpha/2
    import agents

    assert agents.make("bco-bounded").rate_exponent == 5 / 6


def test_closed_form_with_a_huge_kappa_is_the_cap():
    # kappa = max(1, m c^(1/(1-alpha))) (1-alpha)/alpha + 1 with 10^1000 inside (c = 10, alpha = 0.999;
    # c = 1e300, alpha = 1/2): J0 is infinite, the bound vacuous, U = n (was an OverflowError).
    n = np.array([1, 1000, 10**6])
    for c, alpha in [(10.0, 0.999), (1e300, 0.5)]:
        np.testing.assert_array_equal(epsilon_greedy_closed_form(n, 2, c, alpha, DELTA_PRIME), n)


def test_schedule_starts_at_one_and_decreases():
    eps = epsilon_greedy_schedule(np.arange(1, 100_001), 2, 1.0, 2 / 3)
    assert eps[0] == 1.0 and eps[1] == 1.0
    assert np.all(np.diff(eps) <= 0)
    assert eps[-1] == pytest.approx((2 * math.log(100_000) / 100_000) ** (1 / 3), rel=1e-13)


# --- bad arguments -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: ucb1_rate(10, 2, 1.0, DELTA_PRIME), "c must"),
        (lambda: ucb1_rate(10, 2, 0.25, DELTA_PRIME), "c must"),
        (lambda: ucb_delta_rate(0, 2, DELTA_PRIME), "n must"),
        (lambda: ucb_delta_rate([1, 2.5], 2, DELTA_PRIME), "n must"),
        (lambda: ucb_delta_rate(np.nan, 2, DELTA_PRIME), "n must"),
        (lambda: ucb_delta_rate("10", 2, DELTA_PRIME), "n must"),
        (lambda: ucb_delta_rate(10, 0, DELTA_PRIME), "n_arms"),
        (lambda: ucb_delta_rate(10, 2.5, DELTA_PRIME), "n_arms"),  # (2.0 is the whole number 2)
        (lambda: ucb_delta_rate(10, 2, 0.0), "delta_prime"),
        (lambda: thompson_rate(10, 2, 1.0, clipped=True), "delta_prime"),
        (lambda: epsilon_greedy_rate(10, 2, 0.0, 2 / 3, DELTA_PRIME), "c must"),
        (lambda: epsilon_greedy_rate(10, 2, 1.0, 1.0, DELTA_PRIME), "alpha"),
        (lambda: epsilon_greedy_closed_form(10, 2, 1.0, 0.0, DELTA_PRIME), "alpha"),
        (lambda: epsilon_greedy_schedule(0, 2, 1.0, 2 / 3), "j must"),
        (lambda: ogd_rate(10, -1.0, 2.0, DELTA_PRIME), "lipschitz"),
        (lambda: ogd_rate(10, 1.0, math.inf, DELTA_PRIME), "diameter"),
        (lambda: hedge_rate(10, 0, DELTA_PRIME), "n_predictors"),
        (lambda: heavy_tailed_rate(10, 2, 0.0, DELTA_PRIME), r"eps must be a number in \(0, 1\]"),
        (lambda: heavy_tailed_rate(10, 2, 1.01, DELTA_PRIME), r"eps must be a number in \(0, 1\]"),
        (lambda: heavy_tailed_rate(10, 2, 0.5, DELTA_PRIME, moment=0.0), "moment must"),
        (lambda: heavy_tailed_constant(-0.5), "eps must"),
        (lambda: authors_epsilon_greedy_rate(10, 2, 2 / 3, 0.0), "coef"),
        (lambda: expert_rate(bandits.UCB1(), 0, 2, DELTA_PRIME), "n must"),
        (lambda: expert_rate(bandits.EpsilonGreedy(), 10, 2, 2.0), "delta_prime"),
        # a truthy or falsy non-bool was taken for its truth value (None: the uncapped rate, vanilla TS)
        (lambda: ucb_delta_rate(10, 2, DELTA_PRIME, capped=None), "capped must be True or False, got None"),
        (lambda: hedge_rate(10, 3, DELTA_PRIME, capped="no"), "capped must be True or False, got 'no'"),
        (lambda: thompson_rate(10, 2, DELTA_PRIME, clipped=None), "clipped must be True or False, got None"),
        (
            lambda: ucb_delta_rate([[1], [2, 3]], 2, DELTA_PRIME),
            r"n must hold integers >= 1, got \[\[1\], \[2, 3\]\]",
        ),
        (lambda: scale_and_cap(10, "x", 5.0), "rate_scale must be a finite number > 0, got 'x'"),
        (lambda: scale_and_cap(10, math.nan, 5.0), "rate_scale must be a finite number > 0, got nan"),
        (lambda: scale_and_cap(10, -1.0, 5.0), "rate_scale must be a finite number > 0, got -1.0"),
        (
            lambda: ucb1_rate(10, 2, "c" * 10**6, DELTA_PRIME),
            r"c must .*'ccc+'\.\.\. \(1,000,000 characters\)$",
        ),
        (lambda: heavy_tailed_rate(10, 2, "e" * 10**6, DELTA_PRIME), r"eps must .*\(1,000,000 characters\)$"),
    ],
)
def test_bad_arguments_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --- positivity ----------------------------------------------------------------------------------
def test_every_rate_is_positive_from_the_first_count():
    n = np.arange(1, 2_001)
    for name, rate in ALL_RATES.items():
        assert np.all(rate(n) > 0), name
    # The authors' formulas vanish at n = 1 (ln 1 = 0); there the rate is the trivial bound 1.
    assert authors_epsilon_greedy_rate(1, 2, 2 / 3) == 1.0
    assert authors_epsilon_greedy_rate(2, 2, 2 / 3) == pytest.approx(
        0.5 * 2 ** (2 / 3) * (2 * math.log(2)) ** (1 / 3)
    )


@pytest.mark.parametrize("family", ["ucb1", "epsilon-greedy"])
def test_authors_rates_retry_an_expert_whose_warm_start_loss_was_one(family):
    # Under M-LCB's count-only bounds a zero rate at n = 1 would leave an expert whose single
    # warm-start loss was 1 at LCB = 1 for ever; the trivial U(1) = 1 starts it at LCB = 0.
    import mlcb

    expert = (
        bandits.UCB1(c=0.25, rate="authors") if family == "ucb1" else bandits.EpsilonGreedy(rate="authors")
    )
    result = mlcb.simulate(
        env="mlcb/BanditExperts-v0",
        env_params={"reward_means": [[0.5, 0.5]] * 8},
        experts=(expert,) * 8,
        budget=1,
        horizon=400,
        replications=4,
        checkpoints=2,
    )
    trained = result.to_frame("experts")
    final = trained[trained["round"] == 400]
    assert final["trained"].min() >= 2


def test_a_pool_fits_only_the_rates_whose_exponent_it_does_not_know(monkeypatch):
    """The pool's exponent computed every expert's rate up to the horizon, the declared ones
    included: on the trap at T = 10^7, 5 s and 1 GB at the end of the run for epsilon-greedy's U#,
    whose exponent it declares. Only the undeclared experts' rates (UCB1's) are computed."""
    import mlcb
    from mlcb.engine.collect import rate_exponent

    def refuse(*args, **kwargs):
        raise AssertionError("a declared expert's rate was computed")

    monkeypatch.setattr(bandits.EpsilonGreedy, "rate_function", refuse)
    config = mlcb.presets.get("trap").config(1, horizon=10**7, replications=1)
    problem = mlcb.engine.build(config)
    assert {type(e).__name__ for e in config.experts} == {"EpsilonGreedy", "UCB1"}
    assert rate_exponent(list(config.experts), problem.env, bandits.BANDITS, 0.1, 10**7) == 2 / 3
