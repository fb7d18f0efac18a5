"""Statistical behaviour with fixed seeds and stated margins (docs/theory.md §4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import agents
import mlcb
from agents.bandits import BANDITS
from mlcb import engine, theory

# A small instance: four UCB1 experts with two arms each (theory rates: a valid certificate).
SMALL = {
    "env": "mlcb/BanditExperts-v0",
    "env_params": {"reward_means": [[0.3, 0.5], [0.35, 0.55], [0.2, 0.6], [0.45, 0.4]], "shuffle": True},
    "experts": (agents.make("ucb1", c=2.0),) * 4,
    "budget": 2,
    "horizon": 5_000,
    "delta": 0.1,
    "seed": 2024,
}
REPLICATIONS = 200
ALPHA = 1e-3  # false-alarm level of the binomial coverage test


@pytest.mark.slow
def test_certificate_covers_pseudo_regret_as_often_as_promised():
    """On the good event (probability >= 1 - delta) pseudo-regret <= Delta(t) for all t, so the
    number V of runs with a violation at some checkpoint is stochastically below
    Bin(R, delta): fail only when V exceeds the (1 - 1e-3)-quantile of Bin(200, 0.1)."""
    result = mlcb.simulate(replications=REPLICATIONS, **SMALL)
    assert result.metadata["settings"]["mlcb M=2"]["certificate_valid"]
    violations = int(result.replications["certificate_violated"].sum())
    assert violations <= theory.certificate_allowance(REPLICATIONS, SMALL["delta"], ALPHA)


@pytest.mark.slow
def test_coverage_test_detects_a_certificate_that_is_too_small():
    """Mutation test: with both widths shrunk a thousandfold the certificate is no longer an
    upper bound, and the same decision rule must reject it."""
    result = mlcb.simulate(replications=REPLICATIONS, policy_params={"bonus_scale": 1e-3}, **SMALL)
    violations = int(result.replications["certificate_violated"].sum())
    assert violations > theory.certificate_allowance(REPLICATIONS, SMALL["delta"], ALPHA)


def test_the_multiple_play_variant_does_not_claim_the_certificate():
    """Delta(T) bounds the loss of deploying i_t; mlcb-topm deploys all of S_t and pays the mean,
    exploring members included: at M = K = 2 with mean losses 0.1 and 0.9 its pseudo-regret is 0.4
    a round, and it exceeded Delta in every run while its results said the certificate was valid."""
    two = {"reward_means": [[0.9, 0.9], [0.1, 0.1]]}
    config = dict(SMALL, env_params=two, experts=(agents.make("ucb1"),) * 2, horizon=100_000)
    result = mlcb.simulate(policy="mlcb-topm", replications=2, **config)
    setting = result.metadata["settings"]["mlcb-topm M=2"]
    final = result.final()
    assert setting["certificate_valid"] is False
    assert np.allclose(final["pseudo_regret"], 0.4 * 100_000) and (final["certificate"] < 30_000).all()
    assert result.replications["certificate_violated"].all()
    plain = mlcb.simulate(replications=2, **config)
    assert plain.metadata["settings"]["mlcb M=2"]["certificate_valid"] is True
    assert (plain.final()["pseudo_regret"].abs() < 1e-6).all()


def test_certificate_never_exceeds_the_numeric_worst_case():
    """Deterministic: every allocation of the budget gives Delta(T) <= B_num(T) (docs/theory.md §5)."""
    result = mlcb.simulate(replications=20, **SMALL)
    config = mlcb.SimulationConfig(replications=20, **SMALL)
    n = np.arange(1, SMALL["horizon"] + 1)
    rates = BANDITS.rates(list(config.experts), engine.build(config).env, n, SMALL["delta"] / 8)
    widths = theory.confidence_width(n, 4, SMALL["delta"], rates)
    final = result.final().merge(result.replications, on=["setting", "replication"])
    for best, rows in final.groupby("best_expert"):
        bound = theory.numeric_worst_case(widths, int(best), SMALL["budget"])
        assert rows["certificate"].max() <= bound


@pytest.mark.slow
def test_realized_and_pseudo_regret_differ_by_a_martingale():
    """Each round's realized minus expected deployed loss is a martingale difference in [-1, 1]:
    by Azuma, |Reg(T) - PR(T)| <= sqrt(2 T log(2 R / 1e-4)) for all R runs w.p. >= 1 - 1e-4."""
    replications = 20
    result = mlcb.simulate(preset="trap", budget=2, horizon=20_000, replications=replications, seed=3)
    final = result.final()
    gap = (final["regret"] - final["pseudo_regret"]).abs()
    assert gap.max() <= math.sqrt(2 * 20_000 * math.log(2 * replications / 1e-4))


@pytest.fixture(scope="module")
def trap_by_budget():
    results = {}
    for budget in (1, 2, 4):
        result = mlcb.simulate(preset="trap", budget=budget, horizon=100_000, replications=16, seed=7)
        final = result.final()
        experts = result.experts[(result.experts["round"] == 100_000) & (result.experts["expert"] == 0)]
        results[budget] = (final["regret"].to_numpy(), experts["deployed"].to_numpy() / 100_000)
    return results


def _clearly_above(a: np.ndarray, b: np.ndarray) -> bool:
    """mean(a) - mean(b) exceeds four standard errors of the difference (one-sided p < 4e-5
    under the normal approximation of a mean of 16 replications)."""
    se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    return a.mean() - b.mean() > 4 * se


@pytest.mark.slow
def test_trap_regret_decreases_with_the_budget(trap_by_budget):
    regret = {m: values[0] for m, values in trap_by_budget.items()}
    assert _clearly_above(regret[1], regret[2])
    assert _clearly_above(regret[2], regret[4])


@pytest.mark.slow
def test_trap_best_expert_is_deployed_more_with_the_budget(trap_by_budget):
    share = {m: values[1] for m, values in trap_by_budget.items()}
    assert _clearly_above(share[2], share[1])
    assert _clearly_above(share[4], share[2])
