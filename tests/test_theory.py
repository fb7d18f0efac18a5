"""Tests of mlcb.theory: hand-computed values, docs/rates.md's tables, the bounds' ordering."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from agents.rates import epsilon_greedy_rate, ucb1_rate, ucb_delta_rate
from mlcb.theory import (
    certificate_allowance,
    closed_form_bound,
    confidence_width,
    loglog_slope,
    lower_bound,
    numeric_worst_case,
    theorem_rate,
    ucb_pool_bound,
)


# --- theorem and lower bound ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("horizon", "k", "m", "alpha", "delta", "c"), [(1, 1, 1, 0.0, 0.5, 1.0), (5000, 10, 3, 2 / 3, 0.1, 2.5)]
)
def test_theorem_rate_hand_computed(horizon, k, m, alpha, delta, c):
    expected = (
        math.sqrt(k * horizon / m * math.log(k * horizon / delta))
        + (k / m) ** (1 - alpha) * horizon**alpha * c
    )
    got = theorem_rate(horizon, k, m, alpha, delta, c_delta=c)
    assert isinstance(got, float) and got == pytest.approx(expected, rel=1e-13)


def test_theorem_rate_with_heterogeneous_constants():
    beta = [0.5, 2.0, 1.0, 4.0]
    horizon, m, alpha, delta, c = 10_000, 2, 0.6, 0.05, 3.0
    norm = (sum(b ** (1 / (1 - alpha)) for b in beta) / m) ** (1 - alpha)
    first = math.sqrt(4 * horizon / m * math.log(4 * horizon / delta))
    expected = first + horizon**alpha * c * (beta[1] + norm)
    got = theorem_rate(horizon, 4, m, alpha, delta, c_delta=c, beta=beta, best_expert=1)
    assert got == pytest.approx(expected, rel=1e-13)
    # Unit constants: the homogeneous curve plus the best expert's own term T^alpha c(delta).
    ones = theorem_rate(horizon, 4, m, alpha, delta, c_delta=c, beta=np.ones(4))
    assert ones - theorem_rate(horizon, 4, m, alpha, delta, c_delta=c) == pytest.approx(horizon**alpha * c)


def test_theorem_rate_vectorised_and_regimes():
    horizons = np.array([[1e3, 1e4], [1e5, 1e6]])
    values = theorem_rate(horizons, 10, 2, 0.5, 0.1)
    assert values.shape == (2, 2)
    assert values[1, 0] == theorem_rate(1e5, 10, 2, 0.5, 0.1)
    # A larger budget lowers the curve; M = K leaves sqrt(T log(T K / delta)) + T^alpha.
    assert np.all(theorem_rate(horizons, 10, 5, 0.5, 0.1) < values)
    full = theorem_rate(1e6, 10, 10, 0.8, 0.1)
    assert full == pytest.approx(math.sqrt(1e6 * math.log(1e7 / 0.1)) + 1e6**0.8, rel=1e-13)


@pytest.mark.parametrize(
    ("alpha", "beta"),
    [
        (0.999, [0.5, 2.0, 9.5, 3.0]),  # beta_k^(1/(1-alpha)) = 9.5^1000 overflows: the curve was inf
        (0.99, [1e-5, 2e-5, 1e-5, 3e-5]),  # (1e-5)^100 underflows to 0: the beta term was dropped
        (0.5, [0.5, 2.0, 9.5, 3.0]),
    ],
)
def test_theorem_rate_heterogeneous_norm_near_alpha_one(alpha, beta):
    # ((1/M) sum_k beta_k^(1/(1-alpha)))^(1-alpha), exactly in fractions after taking out the largest
    # beta (every ratio below 1), for alpha in [0, 1) however close to 1.
    horizon, m, delta = 100, 2, 0.1
    largest = max(beta)
    power = round(1 / (1 - alpha))
    inner = sum(Fraction(b / largest) ** power for b in beta) / m
    norm = largest * float(inner) ** (1 - alpha)
    expected = math.sqrt(4 * horizon / m * math.log(4 * horizon / delta)) + horizon**alpha * (beta[0] + norm)
    got = theorem_rate(horizon, 4, m, alpha, delta, beta=beta)
    assert math.isfinite(got) and got == pytest.approx(expected, rel=1e-12)


def test_lower_bound_hand_computed():
    got = lower_bound([100, 1e6], 8, 2, 0.75, c1=0.5, c2=3.0)
    expected = [0.5 * math.sqrt(8 * t / 2) + 3.0 * t**0.75 * 4**0.25 for t in (100, 1e6)]
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    # Up to the logarithm, the lower bound has the theorem's order.
    assert lower_bound(1e6, 8, 2, 0.75) < theorem_rate(1e6, 8, 2, 0.75, 0.1)


# --- widths and the certificate's bounds ---------------------------------------------------------
def test_confidence_width_hand_computed():
    n = np.array([1, 10, 1000])
    rate = np.array([1.0, 7.0, 80.0])
    expected = [math.sqrt(2 * math.log(4 * 6 * k**2 / 0.2) / k) + r / k for k, r in zip(n, rate, strict=True)]
    np.testing.assert_allclose(confidence_width(n, 6, 0.2, rate), expected, rtol=1e-13)
    assert confidence_width(np.arange(1, 5)[:, None], 6, 0.2, np.zeros(3)).shape == (4, 3)


def brute_numeric_worst_case(widths: list[list[float]], best: int, budget: int) -> float:
    entries = sorted((w for row in widths for w in row), reverse=True)
    return sum(widths[best]) + sum(entries[: budget * len(widths[0])]) / budget


def test_numeric_worst_case_hand_computed():
    widths = [[3.0, 1.0, 0.5], [4.0, 2.0, 0.25], [0.1, 0.1, 0.1]]
    # k* = 2: own 0.3; the 3 largest of 9 entries: 4 + 3 + 2.
    assert numeric_worst_case(widths, best_expert=2, budget=1) == pytest.approx(0.3 + 9.0)
    # M = K: every entry, divided by K.
    assert numeric_worst_case(widths, best_expert=0, budget=3) == pytest.approx(4.5 + 11.05 / 3)
    rng = np.random.default_rng(7)
    for k, t, m in [(1, 1, 1), (3, 5, 2), (6, 40, 4)]:
        random_widths = rng.random((k, t))
        best = int(rng.integers(k))
        expected = brute_numeric_worst_case(random_widths.tolist(), best, m)
        assert numeric_worst_case(random_widths, best, m) == pytest.approx(expected, rel=1e-12)


def test_numeric_worst_case_batches():
    rng = np.random.default_rng(8)
    widths = rng.random((2, 3, 4, 6))
    got = numeric_worst_case(widths, best_expert=1, budget=2)
    assert got.shape == (2, 3)
    for i, j in itertools.product(range(2), range(3)):
        assert got[i, j] == pytest.approx(brute_numeric_worst_case(widths[i, j].tolist(), 1, 2), rel=1e-12)


def test_numeric_worst_case_dominates_every_allocation():
    # Delta(T) = sum_{i <= nu_k*} w_k*(i) + (1/M) sum_k sum_{i <= nu_k} w_k(i), sum_k nu_k = M T, nu_k <= T.
    k, t, m = 3, 4, 2
    n = np.arange(1, t + 1)
    widths = np.array([(1.0 + k_) / np.sqrt(n) + 0.3 / n for k_ in range(k)])  # decreasing in n
    bound = numeric_worst_case(widths, best_expert=0, budget=m)
    worst_spread = 0.0
    for nu in itertools.product(range(t + 1), repeat=k):
        if sum(nu) != m * t:
            continue
        spread = sum(widths[j, : nu[j]].sum() for j in range(k)) / m
        worst_spread = max(worst_spread, spread)
        assert widths[0, : nu[0]].sum() + spread <= bound + 1e-12
    # For decreasing widths the top M T entries are prefixes: the spread part is attained.
    assert worst_spread + widths[0].sum() == pytest.approx(bound, rel=1e-12)


def test_closed_form_bound_hand_computed():
    a = [[1.0, 2.0], [3.0, 0.5], [0.0, 1.0]]
    gamma = [0.5, 0.0]
    t, m = 400.0, 2
    own = 3.0 * t**0.5 / 0.5 + 0.5 * (1 + math.log(t))
    phi_half = (1 / 0.5) * (1.0**2 + 3.0**2 + 0.0**2) ** 0.5 * (m * t) ** 0.5
    phi_zero = (1 + math.log(t)) * (2.0 + 0.5 + 1.0)
    expected = own + (phi_half + phi_zero) / m
    assert closed_form_bound(t, a, gamma, best_expert=1, budget=m) == pytest.approx(expected, rel=1e-13)
    # gamma = 2/3: Phi = (3/2) (sum_k A^3)^(1/3) (M T)^(2/3).
    got = closed_form_bound(t, [[2.0], [1.0]], [2 / 3], best_expert=0, budget=1)
    expected = 2.0 * 1.5 * t ** (2 / 3) + 1.5 * (8.0 + 1.0) ** (1 / 3) * t ** (2 / 3)
    assert got == pytest.approx(expected, rel=1e-13)


def test_closed_form_bound_dominates_numeric_worst_case():
    rng = np.random.default_rng(11)
    k, t, m = 5, 300, 2
    gamma = np.array([0.0, 0.5, 2 / 3])
    a = rng.random((k, 3)) * [3.0, 1.0, 0.5]
    n = np.arange(1, t + 1)
    widths = np.einsum("kj,jn->kn", a, n[None, :] ** (gamma[:, None] - 1.0))  # the majorant itself
    for best in range(k):
        assert closed_form_bound(t, a, gamma, best, m) >= numeric_worst_case(widths, best, m)


def test_closed_form_bound_exponent_near_one():
    # gamma = 0.999: A^(1/(1-gamma)) = 5^1000 overflows, yet Phi = (1/gamma) ||A||_1000 (M T)^gamma is
    # about 5 (M T)^gamma / gamma; coefficients of 1e-5 at gamma = 0.99 underflow instead.
    t, gamma = 100.0, 0.999
    norm = 5.0 * float(1 + Fraction(3, 5) ** 1000) ** (1 - gamma)
    expected = 5.0 * t**gamma / gamma + norm * t**gamma / gamma
    got = closed_form_bound(t, [[5.0], [3.0]], [gamma], best_expert=0, budget=1)
    assert math.isfinite(got) and got == pytest.approx(expected, rel=1e-13)
    tiny = closed_form_bound(t, [[1e-5], [1e-5]], [0.99], best_expert=0, budget=2)
    expected = 1e-5 * t**0.99 / 0.99 + 1e-5 * 2**0.01 * (2 * t) ** 0.99 / 0.99 / 2
    assert tiny == pytest.approx(expected, rel=1e-12)


def test_closed_form_bound_vectorised_over_horizons():
    a = np.array([[1.0, 2.0], [0.5, 1.0]])
    horizons = np.array([10.0, 100.0, 1000.0])
    got = closed_form_bound(horizons, a, [0.5, 0.0], best_expert=0, budget=1)
    assert got.shape == (3,)
    for i, h in enumerate(horizons):
        assert got[i] == closed_form_bound(h, a, [0.5, 0.0], best_expert=0, budget=1)
    per_horizon = np.stack([a * (1 + i) for i in range(3)])  # coefficients growing with T
    got = closed_form_bound(horizons, per_horizon, [0.5, 0.0], best_expert=0, budget=1)
    expected = [closed_form_bound(h, a * (1 + i), [0.5, 0.0], 0, 1) for i, h in enumerate(horizons)]
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    assert np.all(np.diff(got) > 0)


@pytest.mark.parametrize(("k", "m", "arms"), [(10, 2, 2), (4, 4, 5), (3, 1, 1)])
def test_ucb_pool_bound(k, m, arms):
    delta, t = 0.1, 2000
    log_h = math.log(4 * k * t**2 / delta)
    inner = (
        math.sqrt(2 * log_h)
        + math.sqrt(2 * (arms - 1) * math.log(16 * k * arms * t**2 / delta))
        + math.sqrt(0.5 * math.log(8 * k * t**2 / delta))
    )
    expected = 2 * (math.sqrt(t) + math.sqrt(k * t / m)) * inner + (arms - 1) * (1 + math.log(t)) * (
        1 + k / m
    )
    bound = ucb_pool_bound(t, k, m, arms, delta)
    assert bound == pytest.approx(expected, rel=1e-13)
    # It is closed_form_bound for the UCB(delta0) widths' majorant (docs/theory.md §5) ...
    coefficients = np.tile([inner, arms - 1.0], (k, 1))
    assert closed_form_bound(t, coefficients, [0.5, 0.0], 0, m) == pytest.approx(bound, rel=1e-12)
    # ... and dominates the numeric worst case of those widths.
    n = np.arange(1, t + 1)
    width = confidence_width(n, k, delta, ucb_delta_rate(n, arms, delta / (2 * k)))
    assert np.all(width <= inner / np.sqrt(n) + (arms - 1) / n + 1e-12)
    assert numeric_worst_case(np.tile(width, (k, 1)), 0, m) <= bound


def test_trap_preset_numeric_worst_case_of_rates():
    # docs/theory.md §5: K = 10, m = 2, delta = 0.1, experts 0-4 epsilon-greedy
    # (c = 1, alpha = 2/3, U#), experts 5-9 UCB1 (c = 2), T = 250 000; the printed B_num/T is reproduced
    # with k* an epsilon-greedy expert.
    k, delta, t = 10, 0.1, 250_000
    dp = delta / (2 * k)
    n = np.arange(1, t + 1)
    greedy = confidence_width(n, k, delta, epsilon_greedy_rate(n, 2, 1.0, 2 / 3, dp))
    ucb = confidence_width(n, k, delta, ucb1_rate(n, 2, 2.0, dp))
    widths = np.stack([greedy] * 5 + [ucb] * 5)
    got = [numeric_worst_case(widths, 0, m) / t for m in (1, 2, 3, 4)]
    np.testing.assert_allclose(got[:3], [0.84, 0.73, 0.68], rtol=0, atol=0.005 + 1e-12)
    assert got[3] == pytest.approx(0.645, abs=0.0005 + 1e-12)


# --- log-log slope -------------------------------------------------------------------------------
def test_loglog_slope_of_power_laws():
    rounds = np.logspace(1, 6, 30)
    assert loglog_slope(rounds, 5.0 * rounds**0.7, tail=1.0) == pytest.approx(0.7, rel=1e-12)
    # Slope 1 up to 1e3, then 1/2: the last half of the points sees only the 1/2.
    curve = np.where(rounds <= 1e3, rounds, 1e3**0.5 * rounds**0.5)
    assert loglog_slope(rounds, curve) == pytest.approx(0.5, rel=1e-12)
    assert loglog_slope(rounds, curve, tail=1.0) > 0.6
    # Order of the points does not matter; non-positive values are dropped before taking the tail.
    order = np.random.default_rng(3).permutation(30)
    assert loglog_slope(rounds[order], curve[order]) == pytest.approx(0.5, rel=1e-12)
    with_zeros = np.concatenate([np.zeros(30), curve])
    assert loglog_slope(np.concatenate([rounds / 1e7, rounds]), with_zeros) == pytest.approx(0.5, rel=1e-12)


def test_loglog_slope_hand_computed_least_squares():
    x, y = [1.0, 2.0, 4.0], [1.0, 3.0, 4.0]
    lx, ly = [math.log(v) for v in x], [math.log(v) for v in y]
    mx, my = sum(lx) / 3, sum(ly) / 3
    slope = sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum((a - mx) ** 2 for a in lx)
    assert loglog_slope(x, y, tail=1.0) == pytest.approx(slope, rel=1e-12)


def test_loglog_slope_nan_when_too_few_points():
    assert math.isnan(loglog_slope([1.0, 2.0, 3.0], [0.0, -1.0, 5.0]))
    assert math.isnan(loglog_slope([1.0, 10.0, 100.0], [1.0, 2.0, 3.0], tail=0.3))
    assert math.isnan(loglog_slope([5.0, 5.0], [1.0, 2.0], tail=1.0))
    assert not math.isnan(loglog_slope([1.0, 10.0, 100.0], [1.0, 2.0, 3.0], tail=0.5))


# --- binomial allowance --------------------------------------------------------------------------
RATES_TABLE = {  # docs/theory.md §4: (delta, a) -> allowance for R = 30, 50, 100, 200, 500, 1000
    (0.1, 1e-3): [9, 13, 20, 34, 72, 130],
    (0.1, 1e-6): [13, 17, 27, 43, 85, 148],
    (0.05, 1e-3): [6, 8, 13, 21, 41, 73],
    (0.05, 1e-6): [10, 12, 18, 27, 51, 86],
}
REPLICATIONS = [30, 50, 100, 200, 500, 1000]


@pytest.mark.parametrize(("delta", "alpha"), list(RATES_TABLE))
def test_certificate_allowance_reproduces_rates_table(delta, alpha):
    got = certificate_allowance(REPLICATIONS, delta, alpha)
    assert got.tolist() == RATES_TABLE[delta, alpha]
    for r, c in zip(REPLICATIONS, got.tolist(), strict=True):
        assert certificate_allowance(r, delta, alpha) == c
        # The definition: the smallest c with P(Bin(R, delta) > c) <= alpha ...
        assert stats.binom.sf(c, r, delta) <= alpha < stats.binom.sf(c - 1, r, delta)
        # ... below the Hoeffding form R delta + sqrt(R ln(1/alpha) / 2).
        assert c <= r * delta + math.sqrt(r * math.log(1 / alpha) / 2)


def test_certificate_allowance_small_cases():
    # Bin(1, 0.5): P(X > 0) = 0.5 > 0.4 and P(X > 1) = 0 -> c = 1; alpha = 0.6 allows c = 0.
    assert certificate_allowance(1, 0.5, 0.4) == 1
    assert certificate_allowance(1, 0.5, 0.6) == 0
    # Bin(2, 0.1): P(X > 1) = 0.01 -> c = 1 at alpha = 0.01, c = 2 just below.
    assert certificate_allowance(2, 0.1, 0.0100001) == 1
    assert certificate_allowance(2, 0.1, 0.0099999) == 2


# --- bad arguments -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: theorem_rate(100, 4, 0, 0.5, 0.1), r"budget must be an integer in \[1, n_experts=4\]"),
        (lambda: theorem_rate(100, 4, 5, 0.5, 0.1), r"budget must be an integer in \[1, n_experts=4\]"),
        (lambda: theorem_rate(100, 4, 2.5, 0.5, 0.1), "budget"),  # (2.0 is the whole number 2)
        (lambda: theorem_rate(100, 0, 1, 0.5, 0.1), "n_experts"),
        (lambda: theorem_rate(100, 4, 2, 1.0, 0.1), r"alpha .*\[0, 1\)"),
        (lambda: theorem_rate(100, 4, 2, 0.5, 0.0), r"delta .*\(0, 1\)"),
        (lambda: theorem_rate(100, 4, 2, 0.5, 1.0), r"delta .*\(0, 1\)"),
        (lambda: theorem_rate(0.5, 4, 2, 0.5, 0.1), "horizon"),
        (lambda: theorem_rate(100, 4, 2, 0.5, 0.1, c_delta=0.0), "c_delta"),
        (lambda: theorem_rate(100, 4, 2, 0.5, 0.1, beta=[1.0, 2.0]), "beta"),
        (lambda: theorem_rate(100, 2, 1, 0.5, 0.1, beta=[1.0, 0.0]), "beta"),
        (lambda: theorem_rate(100, 2, 1, 0.5, 0.1, beta=[1.0, 1.0], best_expert=2), "best_expert"),
        (lambda: theorem_rate(100, 2, 1, 0.5, 0.1, best_expert=2), "best_expert"),  # also without beta
        (lambda: confidence_width([1, 2], 4, 0.1, [1.0, 2.0, 3.0]), "rate must be broadcastable with n"),
        (lambda: lower_bound(100, 4, 2, 0.5, c1=-1.0), "c1"),
        (lambda: lower_bound(100, 4, 5, 0.5), "budget"),
        (lambda: confidence_width(0, 4, 0.1, 1.0), "n must"),
        (lambda: confidence_width(10, 4, 0.1, -1.0), "rate"),
        (lambda: confidence_width(10, 4, 1.5, 1.0), "delta"),
        (lambda: numeric_worst_case([1.0, 2.0], 0, 1), "widths"),
        (lambda: numeric_worst_case([[1.0, np.nan]], 0, 1), "widths"),
        (lambda: numeric_worst_case([[1.0, 2.0]], 1, 1), "best_expert"),
        (lambda: numeric_worst_case([[1.0, 2.0]], 0, 2), r"budget must be an integer in \[1, n_experts=1\]"),
        (lambda: closed_form_bound(10, [[1.0]], [1.0], 0, 1), "exponents"),
        (lambda: closed_form_bound(10, [[1.0]], [0.5, 0.5], 0, 1), "exponents"),
        (lambda: closed_form_bound(10, [[-1.0]], [0.5], 0, 1), "coefficients"),
        (lambda: closed_form_bound(10, [1.0], [0.5], 0, 1), "coefficients"),
        (lambda: ucb_pool_bound(10, 4, 2, 0, 0.1), "n_arms"),
        (lambda: ucb_pool_bound(10, 4, 2, 2, 0.0), "delta"),
        (lambda: loglog_slope([1.0, 2.0], [1.0, 2.0], tail=0.0), "tail"),
        (lambda: loglog_slope([0.0, 2.0], [1.0, 2.0]), "rounds"),
        (lambda: loglog_slope([1.0, 2.0], [1.0]), "rounds"),
        (lambda: certificate_allowance(0, 0.1), "replications"),
        (lambda: certificate_allowance(10.0, 0.1), "replications"),
        (lambda: certificate_allowance(10, 0.0), "delta"),
        (lambda: certificate_allowance(10, 0.1, alpha=1.0), r"alpha .*\(0, 1\)"),
        # NumPy's own errors before: a ragged array, shapes that do not broadcast, text
        (
            lambda: theorem_rate([[1], [2, 3]], 4, 2, 0.5, 0.1),
            r"horizon must hold finite numbers >= 1, got \[\[1\]",
        ),
        (lambda: numeric_worst_case([[1.0], [2.0, 3.0]], 0, 1), "widths must hold finite numbers >= 0, got"),
        (
            lambda: closed_form_bound([10, 20, 30], np.ones((2, 2, 1)), [0.5], 0, 1),
            r"coefficients' leading axes must broadcast with horizon's shape \(3,\)",
        ),
        (lambda: loglog_slope([1.0, 2.0], ["a", "b"]), r"values must hold numbers, got \['a', 'b'\]"),
        (lambda: loglog_slope([1.0, 2.0], ["1", "2"]), "values must hold numbers"),
        (
            lambda: certificate_allowance([[1], [2, 3]], 0.1),
            r"replications must hold integers >= 1, got \[\[1\]",
        ),
        # a huge value is shown shortened, its length counted (it was written out whole)
        (
            lambda: theorem_rate(100, 4, 2, "x" * 10**6, 0.1),
            r"alpha .*'xxx+'\.\.\. \(1,000,000 characters\)$",
        ),
        (lambda: certificate_allowance([0] * 10**5, 0.1), r"replications .*\(300,000 characters in all\)$"),
    ],
)
def test_bad_arguments_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()
