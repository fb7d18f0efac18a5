"""KL-UCB, the worked example of a compiled family (agents.klucb): its kernels against a slow
pure-Python KL-UCB written here in *reward* space, and the family on the compiled engine."""

from __future__ import annotations

import math

import numpy as np
import pytest

import agents
import envs
import mlcb
from agents.klucb import KLUCB, KLUCB_FAMILY, KLUCBParams, bernoulli_kl, kl_lower_bound, rate
from envs.bandit import arm_loss
from mlcb import kernels
from mlcb.contracts import BuildContext, ExpertFamily, family_of


# --- a slow KL-UCB, written from the paper (rewards, upper confidence bounds) -------------------
def reference_kl(p: float, q: float) -> float:
    q = min(max(q, 1e-15), 1.0 - 1e-15)
    out = 0.0
    if p > 0:
        out += p * math.log(p / q)
    if p < 1:
        out += (1 - p) * math.log((1 - p) / (1 - q))
    return out


def reference_index(reward_mean: float, pulls: int, j: int, c: float) -> float:
    """The largest q in [reward_mean, 1] with pulls kl(reward_mean, q) <= log j + c log log j."""
    level = math.log(j) + (c * math.log(math.log(j)) if math.log(j) > 1 else 0.0)
    low, high = reward_mean, 1.0
    for _ in range(100):
        middle = (low + high) / 2
        if pulls * reference_kl(reward_mean, middle) <= level:
            low = middle
        else:
            high = middle
    return low


def reference_arm(pulls: np.ndarray, rewards: np.ndarray, j: int, c: float) -> int:
    for a in range(len(pulls)):
        if pulls[a] == 0:
            return a
    indices = [reference_index(rewards[a] / pulls[a], int(pulls[a]), j, c) for a in range(len(pulls))]
    return int(np.argmax(indices))  # the first of equal indices


def reference_rate(m: int, n: int, delta_prime: float) -> float:
    value = (
        math.sqrt(2 * (m - 1) * n * math.log(8 * m * n**2 / delta_prime))
        + math.sqrt(n / 2 * math.log(4 * n**2 / delta_prime))
        + (m - 1)
    )
    return min(float(n), value)


# --- the kernels -----------------------------------------------------------------------------------
def test_kl_and_its_lower_bound():
    assert bernoulli_kl(0.3, 0.3) == 0.0
    assert bernoulli_kl(0.2, 0.5) == pytest.approx(reference_kl(0.2, 0.5))
    assert bernoulli_kl(0.0, 0.5) == pytest.approx(math.log(2))
    for mean, pulls, level in [(0.5, 10, math.log(100)), (0.9, 3, 1.2), (0.05, 50, 2.0), (1.0, 7, 0.5)]:
        q = kl_lower_bound(mean, pulls, level)
        assert 0.0 <= q <= mean
        assert pulls * bernoulli_kl(mean, q) <= level + 1e-12
        # in reward space, 1 - q is the paper's upper confidence bound
        assert q == pytest.approx(1.0 - _reward_bound(1.0 - mean, pulls, level), abs=1e-9)
    assert kl_lower_bound(0.0, 5, 3.0) == 0.0


def _reward_bound(reward_mean: float, pulls: int, level: float) -> float:
    low, high = reward_mean, 1.0
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if pulls * reference_kl(reward_mean, middle) <= level else (low, middle)
    return low


@pytest.mark.parametrize("c", [0.0, 3.0])
def test_train_kernel_plays_the_reference_arm(c):
    reward_means = [[0.9, 0.8, 0.5, 0.85], [0.3, 0.35, 0.2, 0.1], [0.6, 0.6, 0.55, np.nan]]
    env = envs.make("mlcb/BanditExperts-v0", reward_means=reward_means)
    env_params, env_state = env.build(11, 0, 100)
    experts = [KLUCB(c=c)] * 3
    keys = np.arange(3, dtype=np.uint64)
    params, state = KLUCB_FAMILY.build_pool(BuildContext(experts, env, env_params, 0.1, keys, "counts", 400))
    assert isinstance(params, KLUCBParams)
    delta_prime = 0.1 / 6
    for k in range(3):
        m = int(env.n_arms[k])
        for t in range(1, 301):
            pulls = state.pulls[k, :m].copy()
            rewards = pulls - state.losses[k, :m]
            j = int(state.steps[k]) + 1
            expected_arm = reference_arm(pulls, rewards, j, c)
            loss, expert_rate = kernels.train(params, state, env_params, env_state, k, t)
            played = np.flatnonzero(state.pulls[k, :m] != pulls)
            assert played.tolist() == [expected_arm], (k, t)
            assert loss == arm_loss(env_params, t, k, expected_arm)
            assert expert_rate == pytest.approx(reference_rate(m, j, delta_prime), rel=1e-12)
    assert state.steps.tolist() == [300, 300, 300]


def test_deploy_kernel_last_and_counts():
    env = envs.make("mlcb/BanditExperts-v0", reward_means=[[0.9, 0.5, 0.4]])
    env_params, env_state = env.build(3, 0, 100)
    keys = np.zeros(1, dtype=np.uint64)
    last, last_state = KLUCB_FAMILY.build_pool(
        BuildContext([KLUCB()], env, env_params, 0.1, keys, "last", 100)
    )
    counts, counts_state = KLUCB_FAMILY.build_pool(
        BuildContext([KLUCB()], env, env_params, 0.1, keys, "counts", 100)
    )
    key = np.uint64(99)
    # never trained: the current decision (arm 0) is deployed under every wrapper
    assert (
        kernels.deploy(counts, counts_state, env_params, env_state, 0, 1, key, 0)[1]
        == env_params.loss_means[0, 0]
    )
    for t in range(1, 60):
        kernels.train(last, last_state, env_params, env_state, 0, t)
        kernels.train(counts, counts_state, env_params, env_state, 0, t)
    pulls = counts_state.pulls[0, :3]
    mixture = float(pulls @ env_params.loss_means[0, :3] / pulls.sum())
    for t in range(60, 400):
        loss, expected = kernels.deploy(counts, counts_state, env_params, env_state, 0, t, key, 1)
        assert expected == pytest.approx(mixture)
        assert loss in (0.0, 1.0)
        current = reference_arm(
            last_state.pulls[0, :3],
            last_state.pulls[0, :3] - last_state.losses[0, :3],
            int(last_state.steps[0]) + 1,
            0.0,
        )
        loss, expected = kernels.deploy(last, last_state, env_params, env_state, 0, t, key, 0)
        assert expected == env_params.loss_means[0, current]
        assert loss == arm_loss(env_params, t, 0, current)
    assert counts_state.steps[0] == 59  # deploying never learns


# --- the family --------------------------------------------------------------------------------------
def test_family_contract():
    env = envs.make("mlcb/Trap-v0", n_experts=3)
    pool = [agents.make("kl-ucb")] * 3
    assert isinstance(KLUCB_FAMILY, ExpertFamily)
    assert family_of(pool) is KLUCB_FAMILY
    KLUCB_FAMILY.check(pool, env)
    with pytest.raises(ValueError, match="3 bandit experts"):
        KLUCB_FAMILY.check(pool[:2], env)
    with pytest.raises(ValueError, match="not a kl-ucb expert"):
        KLUCB_FAMILY.check([pool[0], agents.make("ucb1"), pool[0]], env)
    with pytest.raises(ValueError, match="bandit experts environment"):
        KLUCB_FAMILY.check(pool, envs.make("mlcb/GLM-v0"))
    assert KLUCB_FAMILY.heuristic(pool, env) == [True] * 3
    n = np.array([1, 2, 10, 1000, 10**6])
    rates = KLUCB_FAMILY.rates(pool, env, n, 0.01)
    assert rates.shape == (3, 5)
    for k in range(3):
        assert rates[k] == pytest.approx([reference_rate(2, int(v), 0.01) for v in n], rel=1e-12)
        assert [rate(2, 1.0, int(v), 0.01) for v in n] == rates[k].tolist()
    with pytest.raises(ValueError):
        KLUCB(c=-1.0)


def test_simulate_on_the_compiled_path_is_deterministic():
    experts = [agents.make("kl-ucb")] * 10
    setting = {"env": "mlcb/Trap-v0", "experts": experts, "budget": 2, "horizon": 3000, "replications": 3}
    runs = [mlcb.simulate(engine="compiled", seed=4, **setting) for _ in range(2)]
    first, second = (run.curves[["regret", "pseudo_regret", "certificate"]].to_numpy() for run in runs)
    np.testing.assert_array_equal(first, second)
    assert np.all(np.isfinite(first))
    recorded = next(iter(runs[0].metadata["settings"].values()))
    assert recorded["family"] == "kl-ucb"
    assert recorded["certificate_valid"] is False  # KL-UCB's rate is heuristic
    other = mlcb.simulate(engine="compiled", seed=5, **setting)
    assert not np.array_equal(first, other.curves[["regret", "pseudo_regret", "certificate"]].to_numpy())
    # the Python engine drives the same kernels (CompiledPool) and gives the same numbers
    python = mlcb.simulate(engine="python", seed=4, **setting)
    np.testing.assert_array_equal(python.curves[["regret", "pseudo_regret", "certificate"]].to_numpy(), first)


def test_a_klucb_pool_has_sublinear_regret():
    horizon = 40_000
    result = mlcb.simulate(
        env="mlcb/BanditExperts-v0",
        env_params={"reward_means": [[0.8, 0.5, 0.3]]},
        experts=[KLUCB()],
        budget=1,
        horizon=horizon,
        replications=4,
        seed=2,
        smoothing="last",
        checkpoints=30,
    )
    curve = result.curves.groupby("round")["pseudo_regret"].mean()
    early = curve.index[np.searchsorted(curve.index, horizon // 40)]
    # linear regret would be 0.3 to 0.5 per round; KL-UCB's grows like log T
    assert curve[horizon] < 0.01 * horizon
    assert curve[horizon] / curve[early] < 0.3 * horizon / early


def test_conformance_checker_accepts_klucb():
    from mlcb.testing import check_expert

    check_expert(agents.make("kl-ucb"), "mlcb/Trap-v0", env_params={"n_experts": 3})
    check_expert(
        agents.make("kl-ucb", c=3.0), "mlcb/BanditExperts-v0", env_params={"reward_means": [[0.2, 0.7]]}
    )
