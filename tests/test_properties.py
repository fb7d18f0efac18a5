"""Invariants of the engine and M-LCB on random instances (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agents.bandits import UCB1, EpsilonGreedy, ThompsonSampling
from mlcb import engine
from mlcb.config import SimulationConfig
from mlcb.engine import compiled_loop
from mlcb.testing.twins import core as twin

FAMILIES = st.sampled_from(["ucb1", "epsilon-greedy", "thompson", "clipped-thompson"])


#: The random pools here mix algorithms and numbers of arms at random: compiled for each mix (the
#: default), they compiled some 60 round loops, 3 minutes of a run of the suite.
pytestmark = pytest.mark.usefixtures("one_loop_for_every_mix")


def _expert(family: str, scale: float):
    if family == "ucb1":
        return UCB1(c=2.0, rate_scale=scale)
    if family == "epsilon-greedy":
        return EpsilonGreedy(c=1.0, rate_scale=scale)
    return ThompsonSampling(clipped=family == "clipped-thompson", rate_scale=scale)


@st.composite
def bandit_configs(
    draw,
    max_experts: int = 6,
    horizon: int = 300,
    policy: str = "mlcb",
    rate_scale: float = 1.0,
    max_budget: int | None = None,
):
    n_experts = draw(st.integers(2, max_experts))
    n_arms = draw(st.integers(2, 3))
    means = draw(st.lists(st.floats(0.05, 0.95), min_size=n_experts * n_arms, max_size=n_experts * n_arms))
    families = draw(st.lists(FAMILIES, min_size=n_experts, max_size=n_experts))
    experts = tuple(_expert(f, rate_scale * (1.0 + 0.0137 * k)) for k, f in enumerate(families))
    return SimulationConfig(
        env="mlcb/BanditExperts-v0",
        env_params={"reward_means": np.reshape(means, (n_experts, n_arms)).tolist(), "shuffle": True},
        experts=experts,
        policy=policy,
        budget=draw(st.integers(1, max_budget or n_experts)),
        horizon=horizon,
        replications=1,
        seed=draw(st.integers(0, 2**31)),
        smoothing=draw(st.sampled_from(["counts", "average", "last"])),
    )


def _run(config, trace=True):
    grid = np.arange(1, config.horizon + 1)
    return engine.run_replication(
        engine.build(config),
        config.seed,
        0,
        config.horizon,
        grid,
        trace_rounds=config.horizon if trace else 0,
    )


@given(bandit_configs())
def test_budget_and_deployment(config):
    result = _run(config)
    selected = result.trace_selected
    sizes = (selected >= 0).sum(axis=1)
    assert np.all(sizes >= 1) and np.all(sizes <= config.budget)
    for row, deployed in zip(selected, result.trace_deployed):
        chosen = row[row >= 0]
        assert len(set(chosen.tolist())) == len(chosen)
        assert deployed in chosen
    assert result.trained[-1].sum() == config.n_experts + config.budget * config.horizon
    assert result.deployed[-1].sum() == config.horizon
    # Pseudo-regret and Top-M regret are sums of non-negative terms.
    assert np.all(np.diff(result.pseudo_regret) >= -1e-12)
    assert np.all(np.diff(result.top_m_regret) >= -1e-12)


@given(bandit_configs(policy="mlcb-topm"))
def test_top_m_deploys_the_whole_training_set(config):
    result = _run(config)
    assert np.all(result.trace_deployed == -1)
    assert result.deployed[-1].sum() == config.budget * config.horizon


@given(bandit_configs(horizon=80))
def test_untrained_experts_do_not_change(config):
    args = engine.build_replication(
        engine.build(config),
        config.seed,
        0,
        config.horizon,
        np.arange(1, config.horizon + 1),
        trace_rounds=config.horizon,
    )
    pool_state, policy_state, stats, record = args.pool_state, args.policy_state, args.stats, args.record
    args.run_rounds(compiled_loop.run_rounds, 0, 0)  # the warm start
    for t in range(1, config.horizon + 1):
        before = [np.copy(a) for a in (*pool_state, stats)]
        bounds = policy_state.bounds.copy()
        args.run_rounds(compiled_loop.run_rounds, t, t)
        trained = set(record.trace_selected[t - 1][record.trace_selected[t - 1] >= 0].tolist())
        untrained = [k for k in range(config.n_experts) if k not in trained]
        for old, new in zip(before[:-1], pool_state):
            np.testing.assert_array_equal(old[untrained], new[untrained])
        np.testing.assert_array_equal(before[-1][untrained]["n"], stats[untrained]["n"])
        np.testing.assert_array_equal(before[-1][untrained]["loss_sum"], stats[untrained]["loss_sum"])
        np.testing.assert_array_equal(bounds[untrained], policy_state.bounds[untrained])


def test_untrained_glm_experts_do_not_change():
    from mlcb import presets

    config = presets.get("glm").config(3, horizon=60, replications=1)
    args = engine.build_replication(engine.build(config), 0, 0, 60, np.arange(1, 61), trace_rounds=60)
    pool_state, record = args.pool_state, args.record
    args.run_rounds(compiled_loop.run_rounds, 0, 0)  # the warm start
    for t in range(1, 61):
        before = [np.copy(a) for a in pool_state]
        args.run_rounds(compiled_loop.run_rounds, t, t)
        untrained = sorted(set(range(10)) - set(record.trace_selected[t - 1].tolist()))
        for old, new in zip(before, pool_state):
            np.testing.assert_array_equal(old[untrained], new[untrained])


def _check_relabelled(original, permuted, order):
    new_index = np.argsort(order)
    for old_row, new_row in zip(original.trace_selected, permuted.trace_selected):
        assert sorted(new_index[old_row[old_row >= 0]].tolist()) == sorted(new_row[new_row >= 0].tolist())
    deployed = np.where(original.trace_deployed >= 0, new_index[original.trace_deployed], -1)
    np.testing.assert_array_equal(deployed, permuted.trace_deployed)
    np.testing.assert_array_equal(original.trained[:, order], permuted.trained)
    np.testing.assert_array_equal(original.deployed[:, order], permuted.deployed)
    np.testing.assert_allclose(original.pseudo_regret, permuted.pseudo_regret, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(original.regret, permuted.regret, rtol=1e-12, atol=1e-12)


# Rates scaled below their cap at n (and distinct per expert) keep the lower bounds apart; one
# trained expert, or deploying all of S_t, leaves no upper-bound comparison: no ties to break.
@given(
    bandit_configs(horizon=250, rate_scale=0.01, max_budget=1)
    | bandit_configs(horizon=250, rate_scale=0.01, policy="mlcb-topm"),
    st.randoms(use_true_random=False),
)
def test_relabelling_bandit_experts_permutes_the_results(config, random):
    assume(not twin.run(config, 0, config.horizon).ties)
    order = list(range(config.n_experts))
    random.shuffle(order)  # new position j holds old expert order[j]
    means = np.asarray(config.env_params["reward_means"])[order].tolist()
    relabelled = config.replace(
        env_params={"reward_means": means, "shuffle": True, "streams": order},
        experts=tuple(config.experts[k] for k in order),
    )
    _check_relabelled(_run(config), _run(relabelled), order)


@given(st.permutations(range(10)), st.integers(1, 4), st.sampled_from(["average", "last"]))
def test_relabelling_glm_experts_permutes_the_results(order, budget, smoothing):
    from mlcb import presets

    config = presets.get("glm").config(budget, horizon=120, smoothing=smoothing)
    assume(not twin.run(config, 0, config.horizon).ties)
    relabelled = config.replace(experts=tuple(config.experts[k] for k in order))
    _check_relabelled(_run(config), _run(relabelled), list(order))
