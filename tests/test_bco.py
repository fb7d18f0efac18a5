"""Bandit convex optimisation (agents.bco) on the convex stream (envs.convex): the compiled family
against its pure-Python twin (mlcb/testing/twins/bco.py), the rate and the stream against hand-computed
values, the contract (registry, checks, errors) and a simulation check of the rate."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import agents
import envs
import mlcb
from agents.bco import BCO, BCO_FAMILY, BCOParams, bco_rate, rate, schedule
from envs.convex import ConvexBanditEnv, ConvexEnvParams, loss_at, optimal_value
from mlcb import kernels
from mlcb.contracts import BuildContext, ExpertFamily, family_of
from mlcb.testing import check_env, check_expert
from mlcb.testing.twins import core as twin

ENV = "mlcb/ConvexBandit-v0"
ROUNDS = 1_200
#: Five experts of different cases, dimensions, radii and schedules.
POOL = (
    BCO(dim=1),
    BCO(dim=4, radius=0.7),
    BCO(case="bounded", dim=2),
    BCO(case="bounded", dim=3, shrink=0.5, perturbation=0.6, step_scale=2.0),
    BCO(dim=2, perturbation=0.5, rate_scale=0.1),
)


def _config(budget=2, policy="mlcb", smoothing=None, pool=POOL, env_params=None, seed=5):
    return mlcb.SimulationConfig(
        env=ENV,
        env_params=env_params or {},
        experts=tuple(pool),
        policy=policy,
        budget=budget,
        horizon=ROUNDS,
        replications=1,
        seed=seed,
        smoothing=smoothing,
    )


# --- twins -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("smoothing", ["average", "uniform", "last"])
@pytest.mark.parametrize("budget", [1, 2])
def test_bco_matches_twin_under_mlcb(budget, smoothing):
    twin.assert_matches_engine(_config(budget, smoothing=smoothing), replication=1)


@pytest.mark.parametrize("policy", ["mlcb-topm", "dynamic-balancing", "round-robin"])
def test_other_policies_match_twin(policy):
    twin.assert_matches_engine(_config(2, policy=policy))


def test_twin_on_a_curved_noisy_stream():
    curved = {"theta": [0.3, -0.2, 0.1], "radius": 2.0, "noise": 0.2, "level_noise": 0.1, "curvature": 0.3}
    pool = (BCO(dim=3, radius=2.0), BCO(case="bounded", dim=2, radius=1.5), BCO(dim=1, radius=0.5))
    twin.assert_matches_engine(_config(2, pool=pool, env_params=curved, smoothing="average"))


# --- the rate, by hand -----------------------------------------------------------------------------
def _lipschitz_rate_by_hand(n, d, lam, delta_prime):
    """Section 9's Lipschitz formula with shrink = perturbation = step_scale = 1 (p = 1)."""
    ell = math.log(4 * n * n / delta_prime)
    gradient = 2 / math.sqrt(3) * d * 2 * n**0.75
    smooth = 4 / 3 * (lam + min(1, lam)) * n**0.75
    variance = 4 * d * 2 / 3 * ((n + 1) ** 1.5 - 1)
    bound = 2 * min(lam, d * n**0.25 / 2) + 2 * d * n**0.25
    return gradient + smooth + math.sqrt(2 * variance * ell) + 2 / 3 * bound * ell + math.sqrt(n / 2 * ell)


def _bounded_rate_by_hand(n, d, rho, a0, delta_prime):
    """Section 9's bounded formula with step_scale = 1."""
    p = rho * a0
    ell = math.log(4 * n * n / delta_prime)
    gradient = math.sqrt(6 / 5) * d / p * 2 * n ** (5 / 6)
    inner = min(1, 1 / ((d + 1) * (1 - rho))) if rho < 1 else 1
    smooth = 6 / 5 * (rho * (inner + d / (d + 1)) + a0) * n ** (5 / 6)
    variance = 4 * d / p**2 * 3 / 5 * ((n + 1) ** (5 / 3) - 1)
    bound = 3 * d * n ** (1 / 3) / p
    return gradient + smooth + math.sqrt(2 * variance * ell) + 2 / 3 * bound * ell + math.sqrt(n / 2 * ell)


def test_rate_is_the_formula_at_hand_computed_values():
    dp = 0.005
    # Pinned numbers (d = 2, L_lip R = 0.5): U(10^6) = 800,289.3 and U(10^8) = 27,557,511.5.
    for n, pinned in ((10**6, 800_289.285), (10**8, 27_557_511.48)):
        value = float(bco_rate(n, dp, "lipschitz", 2, lipschitz=0.5)[0])
        assert value == pytest.approx(_lipschitz_rate_by_hand(n, 2, 0.5, dp), rel=1e-12)
        assert value == pytest.approx(pinned, rel=1e-7)
    # The bounded rate (d = 3, perturbation 0.6, shrink 0.5) is n until n is large; uncapped values.
    for n in (10, 10**4, 10**9):
        expected = _bounded_rate_by_hand(n, 3, 0.6, 0.5, dp)
        got = rate(1, 3, math.inf, 0.5, 0.6, 1.0, 1.0, n, dp)
        assert got == pytest.approx(min(n, expected), rel=1e-12)
        assert rate(1, 3, math.inf, 0.5, 0.6, 1.0, 1e-9, n, dp) == pytest.approx(1e-9 * expected, rel=1e-12)
    assert rate(1, 3, math.inf, 0.5, 0.6, 1.0, 1e-9, 10**12, dp) * 1e9 == pytest.approx(
        1_230_570_367_624, rel=1e-7
    )
    # step_scale enters the gradient-descent term as (1/s + s): s = 2 adds (2.5 - 2) times it.
    base = rate(0, 2, 0.5, 1.0, 1.0, 1.0, 1e-9, 10**6, dp)
    scaled = rate(0, 2, 0.5, 1.0, 1.0, 2.0, 1e-9, 10**6, dp)
    assert (scaled - base) * 1e9 == pytest.approx(2 / math.sqrt(3) * 2 * 0.5 * 10**4.5, rel=1e-9)


def test_rate_of_a_flat_loss_is_the_familys():
    """A flat expected loss has Lipschitz constant 0, as the family computes it on such a stream:
    bco_rate takes it and gives the family's rate (it refused 0, and took nan in the bounded case,
    and a string raised a TypeError)."""
    flat = envs.make(ENV, theta=[0.0, 0.0], curvature=0.0)
    n = np.array([1, 10, 10**4, 10**8])
    np.testing.assert_array_equal(
        bco_rate(n, 0.005, "lipschitz", 2, lipschitz=0.0), BCO_FAMILY.rates([BCO()], flat, n, 0.005)[0]
    )


def test_rate_values_of_the_docs():
    """docs/rates.md §9 quotes U(n)/n at delta' = 0.005 for d = 2 (L_lip R = 0.5)."""
    n = np.array([10**6, 10**7, 10**8, 10**9])
    lipschitz = bco_rate(n, 0.005, "lipschitz", 2, lipschitz=0.5) / n
    assert np.round(lipschitz, 2).tolist() == [0.8, 0.47, 0.28, 0.16]
    bounded = bco_rate(n * 1000, 0.005, "bounded", 2) / (n * 1000)
    assert np.round(bounded, 2).tolist() == [0.92, 0.65, 0.46, 0.32]


@pytest.mark.parametrize("case", ["lipschitz", "bounded"])
@pytest.mark.parametrize("dim", [1, 2, 5])
def test_rate_is_positive_non_decreasing_and_capped(case, dim):
    n = np.concatenate([np.arange(1, 5_001), np.geomspace(5_001, 10**13, 400).astype(np.int64)])
    for scale in (1.0, 1e-3):
        values = bco_rate(n, 0.005, case, dim, lipschitz=0.3, radius=2.0, perturbation=0.7, rate_scale=scale)
        assert np.all(values > 0) and np.all(values <= n)
        assert np.all(np.diff(values) >= 0)


def test_rate_exponents():
    """Far out, U(10 n) / U(n) tends to 10^alpha (up to the logarithms)."""
    n = np.array([10**14, 10**15])
    for case, alpha in (("lipschitz", 0.75), ("bounded", 5 / 6)):
        values = bco_rate(n, 0.005, case, 2, lipschitz=0.5, rate_scale=1e-6)
        assert math.log10(values[1] / values[0]) == pytest.approx(alpha, abs=0.02)


def test_family_rates_are_the_kernels():
    env = envs.make(ENV)
    n = np.array([1, 7, 1000, 10**6, 10**9])
    rates = BCO_FAMILY.rates(list(POOL), env, n, 0.01)
    assert rates.shape == (len(POOL), n.size)
    for k, expert in enumerate(POOL):
        lam = env.lipschitz(expert.dim, expert.radius) * expert.radius
        code = 0 if expert.case == "lipschitz" else 1
        for i, count in enumerate(n):
            assert rates[k, i] == rate(
                code,
                expert.dim,
                lam,
                expert.shrink,
                expert.perturbation,
                expert.step_scale,
                expert.rate_scale,
                count,
                0.01,
            )


def test_schedules():
    a, delta, eta = schedule(0, 0.8, 0.5, 0.3, 2.0, 16)
    assert (a, delta, eta) == pytest.approx((0.4, 0.4, 0.3 / 8))
    a, delta, eta = schedule(1, 1.0, 1.0, 0.3, 2.0, 64)
    assert (a, delta, eta) == pytest.approx((0.5, 0.5, 0.3 / 32))
    assert BCO(dim=3, radius=2.0, perturbation=0.5).step == pytest.approx(math.sqrt(3) * 0.5 * 4 / 3)
    assert BCO(case="bounded", dim=2).step == pytest.approx(math.sqrt(10 / 3) / 2)


# --- the stream ------------------------------------------------------------------------------------
def test_stream_values_by_hand():
    env = ConvexBanditEnv(theta=[0.4, -0.3], radius=2.0, noise=0.1, level_noise=0.1, curvature=0.3)
    params, state = env.build(0, 0, 100)
    assert isinstance(params, ConvexEnvParams)
    # L(x) = (1/2) (1 - 0.3 + theta . x / 2 + 0.3 |x|^2 / 4); at x = (1, 1): 0.5 (0.7 + 0.05 + 0.15).
    round_data = env.round_data(params, state, 0, 0)
    assert round_data.expected_loss([1.0, 1.0]) == pytest.approx(0.45)
    assert round_data.expected_loss([0.0]) == pytest.approx(0.35)
    # |theta| = 0.5: the minimiser lies along -theta at q* = min(r/R, 0.5 / 0.6) (q = |x| / R).
    assert env.optimal_loss_of(2, 2.0) == pytest.approx(0.5 * (0.7 - 0.5 * (5 / 6) + 0.3 * (5 / 6) ** 2))
    assert env.optimal_loss_of(2, 0.5) == pytest.approx(0.5 * (0.7 - 0.5 * 0.25 + 0.3 * 0.25**2))
    assert env.optimal_loss_of(1, 2.0) == pytest.approx(0.5 * (0.7 - 0.4 * (2 / 3) + 0.3 * (2 / 3) ** 2))
    assert env.optimal_loss(params, 0) == env.optimal_loss_of(2, 2.0)
    assert env.lipschitz(2, 1.0) == pytest.approx((0.5 + 2 * 0.3 * 0.5) / 4)
    assert optimal_value(0.5, 0.0, 1.0) == 0.25


def test_default_stream_optima():
    env = envs.make(ENV)
    expected = {1: 0.3, 2: 0.25, 3: 0.5 - math.sqrt(0.29) / 2, 4: 0.5 - math.sqrt(0.3) / 2}
    for dim, value in expected.items():
        assert env.optimal_loss_of(dim, 1.0) == pytest.approx(value)
        assert env.optimal_loss_of(dim, 0.5) == pytest.approx(0.5 - (0.5 - value) / 2)
        assert env.lipschitz(dim, 1.0) == pytest.approx(0.5 - value)
    params, _ = env.build(0, 0, 100)
    np.testing.assert_allclose(
        BCO_FAMILY.optimal_losses([BCO(dim=d) for d in (1, 2, 3, 4)], env, params), list(expected.values())
    )


def test_losses_are_the_formula_and_in_the_unit_interval():
    theta, sigma, tau = np.array([0.5, -0.2, 0.1]), 0.2, 0.1
    env = ConvexBanditEnv(theta=theta, radius=1.5, noise=sigma, level_noise=tau, curvature=0.1)
    params, state = env.build(3, 2, 100)
    rng = np.random.default_rng(0)
    for t in range(1, 200):
        kernels.begin_round(params, state, t)
        zeta = (2 * np.array([twin.uniform(int(params.key), t, i) for i in range(3)]) - 1) / math.sqrt(3)
        eps = 2 * twin.uniform(int(params.key), t, 3) - 1
        np.testing.assert_allclose(state.zeta, zeta, rtol=1e-15)
        point = rng.standard_normal(3)
        point *= 1.5 * rng.random() ** (1 / 3) / np.linalg.norm(point)
        value = 0.5 * (0.9 + (theta + sigma * zeta) @ point / 1.5 + 0.1 * point @ point / 2.25 + tau * eps)
        assert loss_at(params, state, point, 1.0, 3) == pytest.approx(value, abs=1e-14)
        assert 0.0 <= value <= 1.0
    # The extreme point of the strongest stream meets the bound: loss 1 at x = R theta / |theta|.
    edge = ConvexBanditEnv(theta=[0.6], noise=0.2, level_noise=0.2)
    data = edge.round_data(*edge.build(0, 0, 100), 0, 0)
    assert 0.0 <= data.loss([1.0]) <= 1.0 and data.expected_loss([1.0]) == pytest.approx(0.8)


@pytest.mark.filterwarnings("ignore:.*symmetric and normalized.*:UserWarning")  # Gymnasium's advice at R = 3
def test_environment_conforms_and_reproduces_the_engine_draw():
    check_env(ENV)
    check_env(ENV, env_params={"theta": [0.1] * 6, "curvature": 0.2, "radius": 3.0})
    env = envs.make(ENV)
    observation, info = env.reset(seed=4, options={"replication": 1})
    assert observation == 0 and info["optimal_loss"] == pytest.approx(env.optimal_loss_of(4, 1.0))
    params, state = env.build(4, 1, 100)
    point = np.array([0.1, -0.5, 0.3, 0.2])
    for t in range(1, 6):
        _, reward, terminated, truncated, step_info = env.step(point)
        kernels.begin_round(params, state, t)
        assert -reward == loss_at(params, state, point, 1.0, 4)
        assert step_info["expected_loss"] == pytest.approx(env.expected_loss(point))
        assert not (terminated or truncated)
    _, reward, *_ = env.step(np.array([3.0, 0.0, 0.0, 4.0]))  # outside the ball: projected onto it
    kernels.begin_round(params, state, 6)
    assert -reward == pytest.approx(float(loss_at(params, state, np.array([0.6, 0, 0, 0.8]), 1.0, 4)))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ConvexBanditEnv(theta=[0.9], noise=0.2), r"\|theta\| \+ noise \+ level_noise \+ curvature"),
        (lambda: ConvexBanditEnv(theta=[]), r"theta must be a non-empty sequence"),
        (lambda: ConvexBanditEnv(theta=[[0.1, 0.2]]), r"theta must be a non-empty sequence"),
        (lambda: ConvexBanditEnv(theta=[math.nan]), r"theta must be a non-empty sequence"),
        (lambda: ConvexBanditEnv(theta=[0.1, True]), r"theta must be a non-empty sequence of finite numbers"),
        (lambda: ConvexBanditEnv(theta=["0.1"]), r"theta must be a non-empty sequence of finite numbers"),
        (lambda: ConvexBanditEnv(radius=0.0), r"radius must be a finite number > 0"),
        (lambda: ConvexBanditEnv(noise=-0.1), r"noise must be a finite number >= 0"),
        (lambda: ConvexBanditEnv(curvature=math.inf), r"curvature must be a finite number >= 0"),
        (lambda: ConvexBanditEnv().optimal_loss_of(5, 1.0), r"dim must be an integer in \[1, 4\]"),
        (lambda: ConvexBanditEnv().lipschitz(2, 1.5), r"radius must be a number in \(0, 1.0\]"),
        (lambda: BCO(case="smooth"), r"case must be one of \('lipschitz', 'bounded'\)"),
        (lambda: BCO(dim=0), r"dim must be an integer >= 1"),
        (lambda: BCO(radius=-1.0), r"radius must be a finite number > 0"),
        (lambda: BCO(shrink=1.5), r"shrink must be a number in \(0, 1\]"),
        (lambda: BCO(perturbation=0.0), r"perturbation must be a number in \(0, 1\]"),
        (lambda: BCO(step_scale=0.0), r"step_scale must be a finite number > 0"),
        (lambda: BCO(step_scale=1e300), r"step_scale must be a finite number in \(0, 1e\+100\], got 1e\+300"),
        (lambda: BCO(radius=1e200), r"radius must be a finite number in \(0, 1e\+100\], got 1e\+200"),
        (
            lambda: BCO(perturbation=1e-308),
            r"perturbation \* shrink \* radius \(the first perturbation's radius\) must be at least 1e-100",
        ),
        (lambda: BCO(perturbation=1e-60, shrink=1e-60), r"must be at least 1e-100, got 1e-120"),
        (lambda: BCO(rate_scale=math.nan), r"rate_scale must be a finite number > 0"),
        (lambda: bco_rate(0, 0.01), r"n must hold integers >= 1"),
        (lambda: bco_rate(10, 1.5), r"delta_prime must be a number in \(0, 1\)"),
        (
            lambda: bco_rate(10, 0.01, "lipschitz"),
            r"lipschitz must be a finite number >= 0 \(or inf in the bounded case\), got inf",
        ),
        (lambda: bco_rate(10, 0.01, "bounded", lipschitz=math.nan), r"lipschitz must be .* or inf, got nan"),
        (lambda: bco_rate(10, 0.01, lipschitz="0.5"), r"lipschitz must be .*, got '0.5'"),
        (lambda: bco_rate(10, 0.01, lipschitz=-math.inf), r"lipschitz must be .*, got -inf"),
    ],
)
def test_bad_parameters_name_the_parameter_and_range(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_round_data_refuses_points_outside_the_ball():
    env = envs.make(ENV)
    data = env.round_data(*env.build(0, 0, 100), 0, 0)
    with pytest.raises(ValueError, match="point must lie in the ball of radius 1.0"):
        data.loss([1.0, 1.0])
    with pytest.raises(ValueError, match="point must hold 1 to 4 finite coordinates"):
        data.expected_loss([0.0] * 5)


# --- the contract ----------------------------------------------------------------------------------
def test_registry_by_name():
    assert {"bco", "bco-bounded"} <= set(agents.names())
    assert agents.make("bco", dim=3) == BCO(dim=3)
    assert agents.make("bco-bounded") == BCO(case="bounded")
    assert family_of([BCO(), BCO(case="bounded")]) is BCO_FAMILY
    assert isinstance(BCO_FAMILY, ExpertFamily)
    assert ENV in envs.names()


def test_check_and_heuristic():
    env = envs.make(ENV)
    BCO_FAMILY.check(list(POOL), env)
    with pytest.raises(ValueError, match="need a convex stream"):
        BCO_FAMILY.check([BCO()], envs.make("mlcb/GLM-v0"))
    with pytest.raises(ValueError, match=r"experts\[1\]: dim must be at most 4 and radius at most 1.0"):
        BCO_FAMILY.check([BCO(), BCO(dim=5)], env)
    with pytest.raises(ValueError, match=r"experts\[0\]: dim must be at most 4 and radius at most 1.0"):
        BCO_FAMILY.check([BCO(radius=1.5)], env)
    with pytest.raises(ValueError, match="is not a bco expert"):
        BCO_FAMILY.check([BCO(), agents.make("ucb1")], env)
    assert BCO_FAMILY.heuristic(list(POOL), env) == [False, False, False, False, True]


def test_lipschitz_case_without_a_lipschitz_constant_is_heuristic():
    class Steep(ConvexBanditEnv):
        """A stream that claims no finite Lipschitz constant (the bounded analysis still applies)."""

        def lipschitz(self, dim, radius):
            return math.inf

    env = Steep()
    pool = [BCO(), BCO(case="bounded")]
    assert BCO_FAMILY.heuristic(pool, env) == [True, False]
    n = np.array([1, 10, 10**6])
    np.testing.assert_array_equal(BCO_FAMILY.rates(pool, env, n, 0.01)[0], n)


def test_kernel_steps_by_hand():
    """One expert driven by hand: centre, played point, loss and the projected step."""
    env = envs.make(ENV, theta=[0.5, 0.2], noise=0.1, level_noise=0.1)
    env_params, env_state = env.build(0, 0, 100)
    keys = np.array([123], dtype=np.uint64)
    expert = BCO(dim=2, radius=0.8)
    params, state = BCO_FAMILY.build_pool(BuildContext([expert], env, env_params, 0.1, keys, "average", 100))
    assert isinstance(params, BCOParams) and params.delta_prime == pytest.approx(0.05)
    w = np.zeros(2)
    centres = []
    for j in range(1, 41):
        kernels.begin_round(env_params, env_state, j)
        a, delta = j**-0.25, 0.8 * j**-0.25
        eta = math.sqrt(3) * 0.64 / 2 * j**-0.75
        g = np.array([twin.normal(123, j, i) for i in range(2)])
        u = g / np.linalg.norm(g)
        centres.append((1 - a) * w)
        y = (1 - a) * w + delta * u
        assert np.linalg.norm(y) <= 0.8 + 1e-12
        loss, value = kernels.train(params, state, env_params, env_state, 0, j)
        assert loss == pytest.approx(float(loss_at(env_params, env_state, y, 1.0, 2)), abs=1e-14)
        assert value == pytest.approx(min(j, float(bco_rate(j, 0.05, "lipschitz", 2, 0.35, 0.8)[0])))
        w = w - eta * (1 - a) * (2 / delta) * loss * u
        if np.linalg.norm(w) > 0.8:  # (w stays 0 at j = 1, where a_1 = 1)
            w *= 0.8 / np.linalg.norm(w)
        np.testing.assert_allclose(state.weights[0], w, atol=1e-12)
    np.testing.assert_allclose(state.centre_sums[0], np.sum(centres, axis=0), atol=1e-12)
    loss, expected = kernels.deploy(params, state, env_params, env_state, 0, 41, np.uint64(9), 0)
    mean = np.mean(centres, axis=0)
    assert expected == pytest.approx(0.5 * (1 + np.array([0.5, 0.2]) @ mean), abs=1e-12)


def _weights(expert, env, rounds=6, start=0):
    """The iterate of one expert driven by hand for ``rounds`` rounds from its count ``start``."""
    env_params, env_state = env.build(0, 0, rounds)
    keys = np.array([123], dtype=np.uint64)
    params, state = BCO_FAMILY.build_pool(
        BuildContext([expert], env, env_params, 0.1, keys, "average", rounds)
    )
    state.steps[0] = start
    for j in range(1, rounds + 1):
        kernels.begin_round(env_params, env_state, j)
        kernels.train(params, state, env_params, env_state, 0, j)
    return state.weights[0].copy()


def test_a_step_whose_squares_overflow_is_still_projected_onto_the_ball():
    """On a ball of radius 1e60 a step of scale 1e100 overflows ``|w|^2``: the iterate is projected
    onto the sphere as with a smaller step that does not overflow (it fell to the centre)."""
    env = envs.make(ENV, radius=1e60)
    large = _weights(BCO(radius=1e60, step_scale=1e70), env)
    huge = _weights(BCO(radius=1e60, step_scale=1e100), env)
    assert np.linalg.norm(large) == pytest.approx(1e60)
    np.testing.assert_allclose(huge, large, rtol=1e-12)


@pytest.mark.parametrize("case", ["lipschitz", "bounded"])
@pytest.mark.parametrize("start", [0, 10**10])
def test_the_extreme_schedules_allowed_keep_the_iterate_finite(case, start):
    """At the bounds of the parameters (the largest ball and step, the smallest first perturbation)
    the iterate stays finite from the first count to the longest horizon's (it became nan below
    them: the stream then charged the expert 0 every round)."""
    env = envs.make(ENV, radius=1e100)
    extremes = [
        BCO(case=case, perturbation=1e-50, shrink=1e-50),
        BCO(case=case, radius=1e100, step_scale=1e100, perturbation=1e-100, shrink=1e-100),
    ]
    for expert in extremes:
        assert np.all(np.isfinite(_weights(expert, env, start=start)))


def test_a_uniform_pool_trained_past_its_horizon_is_refused_not_written_past_its_history():
    """ "uniform" keeps every centre in room for the horizon (and the warm start): a pool trained
    more often (a session driven past its horizon) is refused; it wrote past the array's end."""
    env = envs.make(ENV)
    env_params, env_state = env.build(0, 0, 3)
    context = BuildContext([BCO()], env, env_params, 0.1, np.ones(1, np.uint64), "uniform", 3)
    params, state = BCO_FAMILY.build_pool(context)
    assert state.history.shape[1] == 5
    for j in range(5):
        kernels.train(params, state, env_params, env_state, 0, j)
    with pytest.raises(ValueError, match="smoothing 'uniform' keeps every past iterate of an expert"):
        kernels.train(params, state, env_params, env_state, 0, 5)
    assert state.steps[0] == 5


def test_bad_smoothing_is_refused():
    with pytest.raises(ValueError, match="smoothing"):
        mlcb.simulate(_config(smoothing="counts"))


def test_conformance_checker_accepts_both():
    check_expert(BCO(dim=3), ENV)
    check_expert(agents.make("bco-bounded"), ENV, env_params={"theta": [0.5, 0.5], "noise": 0.0})


def test_engines_agree():
    config = _config(2, smoothing="uniform")
    compiled = mlcb.simulate(config)
    python = mlcb.simulate(config, engine="python")
    for name in ("curves", "experts", "replications"):
        pd.testing.assert_frame_equal(getattr(compiled, name), getattr(python, name))


# --- the rate holds: a simulation check ------------------------------------------------------------
def _own_regrets(expert, env_params, runs, updates, seed=0):
    """``R(n) = sum of training losses - n L_k*`` of ``expert`` trained alone at every round, and
    its rate, for ``runs`` replications: arrays (runs, updates)."""
    env = envs.make(ENV, **env_params)
    optimal = env.optimal_loss_of(expert.dim, expert.radius)
    regrets = np.empty((runs, updates))
    rates = np.empty(updates)
    for r in range(runs):
        e_params, e_state = env.build(seed, r, 100)
        keys = np.array([1000 + r], dtype=np.uint64)
        params, state = BCO_FAMILY.build_pool(
            BuildContext([expert], env, e_params, 0.1, keys, "average", updates)
        )
        total = 0.0
        for j in range(1, updates + 1):
            kernels.begin_round(e_params, e_state, j)
            loss, rates[j - 1] = kernels.train(params, state, e_params, e_state, 0, j)
            total += loss
            regrets[r, j - 1] = total - j * optimal
    return regrets, rates


@pytest.mark.parametrize("case", ["lipschitz", "bounded"])
def test_no_run_exceeds_the_rate(case):
    """docs/rates.md §9: 40 runs of 3,000 updates on two streams; none exceeds U(n), nor the
    uncapped bound, and a bound a hundred times smaller is exceeded (the check can fail)."""
    for env_params, dim in (({"theta": [0.9, 0.0], "noise": 0.05, "level_noise": 0.05}, 2), ({}, 3)):
        expert = BCO(case=case, dim=dim)
        regrets, rates = _own_regrets(expert, env_params, 40, 3_000)
        assert np.all(regrets <= rates)
        lam = envs.make(ENV, **env_params).lipschitz(dim, 1.0)
        n = np.arange(1, 3_001)
        uncapped = bco_rate(n, 0.05, case, dim, lipschitz=lam, rate_scale=1e-6) * 1e6
        ratio = regrets[:, 100:] / uncapped[100:]
        assert ratio.max() < 0.2
        assert np.any(regrets[:, 100:] > uncapped[100:] / 100)
