"""Robust UCB (agents.robust_ucb) and Hedge (agents.hedge): the compiled families against their
pure-Python twins (mlcb/testing/twins/robust_hedge.py), against the formulas of docs/rates.md, and their
contract (registry, check, errors)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import agents
import envs
import mlcb
from agents.hedge import HEDGE_FAMILY, Hedge, HedgeParams
from agents.rates import expert_rate, heavy_tailed_constant, heavy_tailed_rate, hedge_rate
from agents.robust_ucb import ROBUST_UCB_FAMILY, RobustUCB, RobustUCBParams, radius, threshold
from envs.bandit import arm_loss
from mlcb import kernels
from mlcb.contracts import BuildContext, ExpertFamily, family_of
from mlcb.testing.twins import core as twin

ROUNDS = 1_500
#: Four experts of three arms on the trap, with different parameters.
ROBUST_POOL = (RobustUCB(eps=1.0), RobustUCB(eps=0.5), RobustUCB(eps=1 / 3), RobustUCB(eps=0.5, moment=2.0))
HEDGE_POOL = (Hedge(),) * 3 + (Hedge(rate_scale=0.5),)


def _config(pool, budget=2, policy="mlcb", smoothing=None, seed=5, **policy_params):
    return mlcb.SimulationConfig(
        env="mlcb/Trap-v0",
        env_params={"n_experts": len(pool), "n_arms": 3},
        experts=tuple(pool),
        policy=policy,
        policy_params=policy_params,
        budget=budget,
        horizon=ROUNDS,
        replications=1,
        seed=seed,
        smoothing=smoothing,
    )


# --- twins -------------------------------------------------------------------------------------
@pytest.mark.parametrize("smoothing", ["counts", "last"])
@pytest.mark.parametrize("budget", [1, 2])
def test_robust_ucb_matches_twin_under_mlcb(budget, smoothing):
    twin.assert_matches_engine(_config(ROBUST_POOL, budget, smoothing=smoothing), replication=1)


@pytest.mark.parametrize("smoothing", ["average", "last"])
@pytest.mark.parametrize("budget", [1, 2])
def test_hedge_matches_twin_under_mlcb(budget, smoothing):
    twin.assert_matches_engine(_config(HEDGE_POOL, budget, smoothing=smoothing), replication=1)


@pytest.mark.parametrize("pool", [ROBUST_POOL, HEDGE_POOL], ids=["robust-ucb", "hedge"])
@pytest.mark.parametrize("policy", ["mlcb-topm", "dynamic-balancing", "bandit-ucb1"])
def test_other_policies_match_twin(pool, policy):
    twin.assert_matches_engine(_config(pool, 2, policy=policy))


# --- formulas, independently of the twins ------------------------------------------------------
def test_robust_radius_and_truncation_are_the_formulas():
    eps, u, m, delta0 = 0.5, 1.0, 3, 0.0025
    c = 1.0 + eps + math.sqrt(2.0) + 2.0 / 3.0
    assert heavy_tailed_constant(eps) == pytest.approx(c)
    assert heavy_tailed_constant(1.0) <= 4.09
    for s in (1, 10, 1000):
        expected = c * u ** (1 / 1.5) * (math.log(4 * m * s * s / delta0) / s) ** (eps / 1.5)
        assert radius(eps, u, m, s, delta0) == pytest.approx(expected, rel=1e-12)
        assert threshold(eps, u, m, s, delta0) == pytest.approx(
            (u * s / math.log(4 * m * s * s / delta0)) ** (1 / 1.5)
        )
    # A loss of 1 is truncated to 0 while B_t < 1: the first samples of an arm at this delta0.
    assert threshold(eps, u, m, 1, delta0) < 1.0 < threshold(eps, u, m, 100, delta0)


def test_rates_are_the_formulas_and_the_kernels():
    n = np.array([1, 2, 10, 1000, 123_456])
    dp = 0.01
    for eps in (1.0, 0.5, 1 / 3):
        for m in (1, 2, 5):
            e = eps / (1 + eps)
            expected = np.minimum(
                n,
                2
                * heavy_tailed_constant(eps)
                * ((m - 1) * np.log(8 * m * n * n / dp)) ** e
                * n ** (1 / (1 + eps))
                + (m - 1)
                + np.sqrt(n / 2 * np.log(4 * n * n / dp)),
            )
            np.testing.assert_allclose(heavy_tailed_rate(n, m, eps, dp), expected, rtol=1e-12)
    for m in (1, 2, 10):
        expected = np.minimum(
            n,
            np.sqrt(2 * n * math.log(m))
            + math.sqrt(math.log(m) / 8)
            + np.sqrt(n / 2 * np.log(2 * n * n / dp)),
        )
        np.testing.assert_allclose(hedge_rate(n, m, dp), expected, rtol=1e-12)
    env = envs.make("mlcb/Trap-v0", n_experts=4, n_arms=3)
    np.testing.assert_array_equal(
        ROBUST_UCB_FAMILY.rates(list(ROBUST_POOL), env, n, dp)[:3],
        np.stack([heavy_tailed_rate(n, 3, e.eps, dp) for e in ROBUST_POOL[:3]]),
    )
    np.testing.assert_array_equal(HEDGE_FAMILY.rates(list(HEDGE_POOL), env, n, dp)[0], hedge_rate(n, 3, dp))
    np.testing.assert_allclose(
        HEDGE_FAMILY.rates(list(HEDGE_POOL), env, n, dp)[3],
        np.minimum(n, 0.5 * hedge_rate(n, 3, dp, capped=False)),
    )
    for expert in (*ROBUST_POOL, *HEDGE_POOL):
        np.testing.assert_allclose(
            expert_rate(expert, n, 3, dp),
            (ROBUST_UCB_FAMILY if isinstance(expert, RobustUCB) else HEDGE_FAMILY).rates(
                [expert], envs.make("mlcb/Trap-v0", n_experts=1, n_arms=3), n, dp
            )[0],
            rtol=1e-12,
        )


@pytest.mark.parametrize("m", [1, 2, 10])
def test_rates_are_positive_and_non_decreasing_for_every_count(m):
    n = np.arange(1, 20_001)
    for values in (
        heavy_tailed_rate(n, m, 0.5, 0.005),
        heavy_tailed_rate(n, m, 1 / 3, 0.005),
        hedge_rate(n, m, 0.005),
    ):
        assert np.all(values > 0)
        assert np.all(np.diff(values) >= 0)
        assert np.all(values <= n)


def test_rate_exponents():
    """Far out, U(10 n) / U(n) tends to 10^alpha (up to the logarithms)."""
    n = np.array([10**12, 10**13])
    for eps in (1.0, 0.5, 1 / 3):
        ratio = heavy_tailed_rate(n, 2, eps, 0.005, capped=False)
        assert math.log10(ratio[1] / ratio[0]) == pytest.approx(1 / (1 + eps), abs=0.03)
    ratio = hedge_rate(n, 10, 0.005, capped=False)
    assert math.log10(ratio[1] / ratio[0]) == pytest.approx(0.5, abs=0.03)


def test_hedge_kernel_plays_exponential_weights():
    """One expert, two arms, driven by hand: the recorded loss is the mixture of the two losses."""
    env = envs.make("mlcb/BanditExperts-v0", reward_means=[[0.9, 0.2]])
    env_params, env_state = env.build(0, 0, 100)
    keys = np.zeros(1, dtype=np.uint64)
    params, state = HEDGE_FAMILY.build_pool(
        BuildContext([Hedge()], env, env_params, 0.1, keys, "average", 100)
    )
    assert isinstance(params, HedgeParams)
    sums = np.zeros(2)
    for t in range(1, 51):
        eta = math.sqrt(8 * math.log(2) / t)
        p = np.exp(-eta * (sums - sums.min()))
        p /= p.sum()
        losses = np.array([float(arm_loss(env_params, t, 0, a)) for a in range(2)])
        loss, rate = kernels.train(params, state, env_params, env_state, 0, t)
        assert loss == pytest.approx(p @ losses, abs=1e-12)
        assert rate == pytest.approx(hedge_rate(t, 2, 0.05 / 1))
        sums += losses
    np.testing.assert_array_equal(state.cumulative[0], sums)
    assert state.weights[0].sum() == pytest.approx(50.0)
    assert state.weights[0, 0] > state.weights[0, 1]  # arm 0 has loss mean 0.1, arm 1 0.8


def test_robust_ucb_kernel_finds_the_best_arm():
    env = envs.make("mlcb/BanditExperts-v0", reward_means=[[0.2, 0.9, 0.4]])
    env_params, env_state = env.build(0, 0, 100)
    keys = np.zeros(1, dtype=np.uint64)
    params, state = ROBUST_UCB_FAMILY.build_pool(
        BuildContext([RobustUCB(eps=1.0)], env, env_params, 0.1, keys, "counts", 10)
    )
    assert isinstance(params, RobustUCBParams) and params.delta0 == params.delta_prime / 2
    for t in range(1, 20_001):
        kernels.train(params, state, env_params, env_state, 0, t)
    assert int(np.argmax(state.pulls[0])) == 1 and state.steps[0] == 20_000


# --- the contract ------------------------------------------------------------------------------
def test_registry_by_name():
    assert {"robust-ucb", "hedge"} <= set(agents.names())
    assert agents.make("robust-ucb", eps=1 / 3) == RobustUCB(eps=1 / 3)
    assert agents.make("hedge") == Hedge()
    assert type(agents.make("robust-ucb")).family is ROBUST_UCB_FAMILY
    assert family_of([Hedge()] * 2) is HEDGE_FAMILY
    for family in (ROBUST_UCB_FAMILY, HEDGE_FAMILY):
        assert isinstance(family, ExpertFamily)
    assert RobustUCB(eps=0.5).alpha == pytest.approx(2 / 3) and Hedge().alpha == 0.5


def test_check_and_heuristic():
    env = envs.make("mlcb/Trap-v0", n_experts=3)
    ROBUST_UCB_FAMILY.check([RobustUCB()] * 3, env)
    HEDGE_FAMILY.check([Hedge()] * 3, env)
    with pytest.raises(ValueError, match="3 bandit experts, got 2"):
        HEDGE_FAMILY.check([Hedge()] * 2, env)
    with pytest.raises(ValueError, match="is not a hedge expert"):
        HEDGE_FAMILY.check([Hedge(), RobustUCB(), Hedge()], env)
    with pytest.raises(ValueError, match="bandit experts environment"):
        ROBUST_UCB_FAMILY.check([RobustUCB()], envs.make("mlcb/GLM-v0"))
    pool = [RobustUCB(), RobustUCB(moment=0.5), RobustUCB(rate_scale=2.0)]
    assert ROBUST_UCB_FAMILY.heuristic(pool, env) == [False, True, True]
    assert HEDGE_FAMILY.heuristic([Hedge(), Hedge(rate_scale=0.5), Hedge()], env) == [False, True, False]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: RobustUCB(eps=0.0), r"eps must be a number in \(0, 1\], got 0.0"),
        (lambda: RobustUCB(eps=1.5), r"eps must be a number in \(0, 1\], got 1.5"),
        (lambda: RobustUCB(eps="half"), r"eps must be a number in \(0, 1\]"),
        (lambda: RobustUCB(moment=-1.0), r"moment must be a finite number > 0"),
        (lambda: RobustUCB(rate_scale=0.0), r"rate_scale must be a finite number > 0"),
        (lambda: Hedge(rate_scale=math.inf), r"rate_scale must be a finite number > 0"),
        (lambda: heavy_tailed_rate(10, 2, 2.0, 0.01), r"eps must be a number in \(0, 1\]"),
        (lambda: heavy_tailed_rate(10, 2, 0.5, 1.5), r"delta_prime must be a number in \(0, 1\)"),
        (lambda: heavy_tailed_rate(0, 2, 0.5, 0.01), r"n must hold integers >= 1"),
        (lambda: hedge_rate(10, 0, 0.01), r"n_predictors"),
    ],
)
def test_bad_parameters_name_the_parameter_and_range(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_smoothing_is_refused():
    with pytest.raises(ValueError, match="smoothing"):
        mlcb.simulate(_config(HEDGE_POOL, smoothing="counts"))


def test_conformance_checker_accepts_both():
    from mlcb.testing import check_expert

    check_expert(RobustUCB(eps=0.5), "mlcb/Trap-v0")
    check_expert(Hedge(), "mlcb/Trap-v0")
