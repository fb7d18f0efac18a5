"""The Gymnasium environments agree with the engine's draws and report the optimal losses."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import envs
from envs.bandit import arm_loss
from mlcb import presets


def test_registered_under_mlcb():
    assert {"mlcb/Trap-v0", "mlcb/BanditExperts-v0", "mlcb/GLM-v0"} <= set(envs.names())
    assert isinstance(gym.make("mlcb/Trap-v0").unwrapped, envs.TrapEnv)


def test_trap_instance_and_optimal_losses():
    env = envs.make("mlcb/Trap-v0")
    params, _ = env.build(seed=0, replication=0)
    optimal = env.expert_optimal_losses(params)
    np.testing.assert_allclose(optimal, 1 - 0.1 * (3 - np.arange(10) / 10))
    assert int(np.argmin(optimal)) == 0
    np.testing.assert_allclose(
        np.sort(params.loss_means, axis=1), np.sort(1 - envs.trap_reward_means(), axis=1)
    )
    orders = {tuple(np.argsort(env.build(seed=0, replication=r)[0].loss_means[3])) for r in range(20)}
    assert len(orders) == 2  # the arm order is shuffled per replication


def test_trap_steps_reproduce_the_engine_draws():
    env = envs.make("mlcb/Trap-v0")
    _, info = env.reset(seed=4, options={"replication": 2})
    assert info["optimal_loss"] == pytest.approx(0.7)
    params, _ = env.build(4, 2)
    for t in range(1, 50):
        _, reward, terminated, truncated, info = env.step((t % 10, t % 2))
        expected = [[arm_loss(params, t, k, a) for a in range(2)] for k in range(10)]
        np.testing.assert_array_equal(info["losses"], expected)
        assert reward == -expected[t % 10][t % 2]
        assert not (terminated or truncated)
    assert env.expected_loss(0, [1, 1]) == pytest.approx(0.75)
    assert env.expected_loss(0, 1) in (0.7, 0.8)


def test_trap_losses_have_the_right_means():
    env = envs.make("mlcb/Trap-v0")
    params, _ = env.build(1, 0)
    draws = np.array([[arm_loss(params, t, k, 0) for k in range(10)] for t in range(1, 20_001)])
    # Each mean of 20,000 Bernoulli draws is within 5 standard errors (<= 0.0175) of its truth.
    np.testing.assert_allclose(draws.mean(axis=0), params.loss_means[:, 0], atol=0.0175)


def test_glm_stream_reproduces_the_engine_and_its_expected_loss():
    env = envs.make("mlcb/GLM-v0")
    x, _ = env.reset(seed=2, options={"replication": 1})
    assert np.linalg.norm(x) == pytest.approx(2.0)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(5)
    w *= 0.6 / np.linalg.norm(w)
    losses = []
    from envs.links import link_value

    for _ in range(20_000):
        prediction = link_value(3, float(w @ x))
        x, reward, _, _, info = env.step([prediction])
        losses.append(-reward)
    expected = env.expected_loss("logistic", w)
    # The mean of 20,000 bounded losses is within 5 standard errors of the expected loss.
    assert abs(np.mean(losses) - expected) <= 5 * np.std(losses) / np.sqrt(len(losses))


def test_glm_optimal_losses_put_the_target_link_first():
    config = presets.get("glm").config(1)
    env = config.make_env()
    params, _ = env.build(0, 0)
    optimal = env.expert_optimal_losses(params, config.experts)
    assert int(np.argmin(optimal)) == 9
    assert optimal[9] == pytest.approx((0.02 / env.scale) ** 2)


def test_bad_environment_parameters():
    with pytest.raises(ValueError, match=r"reward_means must lie in \[0, 1\]"):
        envs.BanditExpertsEnv([[0.5, 1.5]])
    with pytest.raises(ValueError, match=r"streams must be 2 distinct integers >= 0"):
        envs.BanditExpertsEnv([[0.5, 0.5], [0.1, 0.2]], streams=[1, 1])
    with pytest.raises(ValueError, match=r"n_arms must be an integer >= 2"):
        envs.TrapEnv(n_arms=1)
    with pytest.raises(ValueError, match=r"dim must be an integer >= 2"):
        envs.make("mlcb/GLM-v0", dim=1)
