"""The Gymnasium environments agree with the engine's draws and report the optimal losses."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs
from envs.bandit import arm_loss
from envs.clustered import ClusteredRound
from envs.glm import _begin_round, square_loss
from mlcb import engine, presets
from mlcb.contracts import Environment

ENVS_DIR = Path(envs.__file__).resolve().parent
PADDED = [[0.2, 0.4, np.nan], [0.3, 0.5, 0.6], [0.9, np.nan, np.nan]]


def test_registered_under_mlcb():
    assert {"mlcb/Trap-v0", "mlcb/BanditExperts-v0", "mlcb/GLM-v0"} <= set(envs.names())
    assert isinstance(gym.make("mlcb/Trap-v0").unwrapped, envs.TrapEnv)


def test_trap_instance_and_optimal_losses():
    env = envs.make("mlcb/Trap-v0")
    params, _ = env.build(seed=0, replication=0, horizon=100)
    optimal = np.array([env.optimal_loss(params, k) for k in range(env.n_experts)])
    np.testing.assert_allclose(optimal, 1 - 0.1 * (3 - np.arange(10) / 10))
    assert int(np.argmin(optimal)) == 0
    np.testing.assert_allclose(
        np.sort(params.loss_means, axis=1), np.sort(1 - envs.trap_reward_means(), axis=1)
    )
    orders = {
        tuple(np.argsort(env.build(seed=0, replication=r, horizon=100)[0].loss_means[3])) for r in range(20)
    }
    assert len(orders) == 2  # the arm order is shuffled per replication


def test_trap_steps_reproduce_the_engine_draws():
    env = envs.make("mlcb/Trap-v0")
    _, info = env.reset(seed=4, options={"replication": 2})
    assert info["optimal_loss"] == pytest.approx(0.7)
    params, _ = env.build(4, 2, 100)
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
    params, _ = env.build(1, 0, 100)
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
    env = engine.build(config).env
    params, _ = env.build(0, 0, 100)
    optimal = np.array([env.optimal_loss_of(params, e.link, e.radius) for e in config.experts])
    assert int(np.argmin(optimal)) == 9
    assert optimal[9] == pytest.approx((0.02 / env.scale) ** 2)
    # The Bayes loss of the stream: the target function's own expected loss, noise only.
    assert env.optimal_loss(params, 3) == (0.02 / env.scale) ** 2
    assert optimal[9] == pytest.approx(env.optimal_loss(params, 0), rel=1e-9)
    assert np.all(optimal >= env.optimal_loss(params, 0) * (1 - 1e-9))


def test_bad_environment_parameters():
    with pytest.raises(ValueError, match=r"reward_means must lie in \[0, 1\]"):
        envs.BanditExpertsEnv([[0.5, 1.5]])
    # NumPy's conversion read True as 1.0, "0.3" as 0.3 and None as nan (an arm removed).
    for stray, shown in ((True, "True"), ("0.3", "'0.3'"), (None, "None"), (np.bool_(False), "np.False_")):
        with pytest.raises(ValueError, match=rf"nan-padded to one length, got {re.escape(shown)} among them"):
            envs.BanditExpertsEnv([[0.5, 0.4], [0.2, stray]])
    with pytest.raises(ValueError, match="nan-padded to one length, got True among them"):
        envs.BanditExpertsEnv([[0.5, True]])
    with pytest.raises(ValueError, match="got np.True_ among them"):
        envs.BanditExpertsEnv(np.array([[True, False]]))
    with pytest.raises(
        ValueError, match=r"streams must be 2 distinct integers in \[0, 4611686018427387902\]"
    ):
        envs.BanditExpertsEnv([[0.5, 0.5], [0.1, 0.2]], streams=[1, 1])
    # An identity whose arms' slots (identity * m + arm, int64) would wrap around, or a uint64
    # past 2**63 that int64 reads as negative, shared another expert's draws.
    for streams in ([2**62, 0], np.array([2**63, 1], dtype=np.uint64)):
        with pytest.raises(ValueError, match=r"streams must be 2 distinct integers in \[0, "):
            envs.BanditExpertsEnv([[0.5, 0.5], [0.1, 0.2]], streams=streams)
    with pytest.raises(ValueError, match=r"n_arms must be an integer >= 2"):
        envs.TrapEnv(n_arms=1)
    with pytest.raises(ValueError, match=r"dim must be an integer >= 2"):
        envs.make("mlcb/GLM-v0", dim=1)


def test_a_glm_instance_float64_cannot_hold_is_refused_naming_its_parameters():
    """The GLM's losses are divided by the square of the largest loss the experts can meet: with a
    radius of 700 (the 'exp' link's e**700) or a noise of 1e200 that square overflowed, and every
    loss was 0 or nan, silently; a radius of 1e-300 left an expert a gradient of 0 and the run a
    ZeroDivisionError. A link that is not one is named by the parameter that gave it."""
    for params, value in [({"radius": 700}, "4.32e+303"), ({"weight_radius": 400}, "inf"),
                          ({"noise": 1e200}, "1e+201")]:  # fmt: skip
        with pytest.raises(ValueError) as refused:
            envs.make("mlcb/GLM-v0", **params)
        assert f"make the largest loss the experts can meet {value}, whose square float64 cannot hold" in str(
            refused.value
        )
    assert envs.make("mlcb/GLM-v0", radius=300).scale < 1e154  # large, and held
    with pytest.raises(ValueError, match=r"^target_link: unknown link 'cosh'; allowed: 0 'affine'"):
        envs.make("mlcb/GLM-v0", target_link="cosh")
    from agents.glm import OnlineGradientDescent

    with pytest.raises(ValueError, match=r"^link: unknown link 7\.5; allowed"):
        OnlineGradientDescent(link=7.5)
    import mlcb

    tiny = {"dim": 5, "radius": 1e-300, "noise": 0.0}
    with pytest.raises(ValueError) as refused:
        mlcb.simulate(preset="glm", env_params=tiny, budget=1, horizon=20, replications=1)
    assert str(refused.value).endswith(
        "gradient is inf, not a positive finite number; raise the radius of env_params or of the expert"
    )


# --- envs/ never imports agents/ --------------------------------------------------------------
def _imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted(ENVS_DIR.glob("*.py")), ids=lambda p: p.name)
def test_envs_modules_do_not_import_agents(path):
    imported = _imported_modules(path)
    assert not {name for name in imported if name == "agents" or name.startswith("agents.")}
    # nor by a dynamic import
    assert 'import_module("agents' not in path.read_text() and '__import__("agents' not in path.read_text()


def test_importing_envs_does_not_import_agents():
    modules = ["envs"] + [f"envs.{p.stem}" for p in sorted(ENVS_DIR.glob("*.py")) if p.stem != "__init__"]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "import gymnasium as gym\n"
        "for name in ('mlcb/Trap-v0', 'mlcb/BanditExperts-v0', 'mlcb/GLM-v0'):\n"
        "    kwargs = {'reward_means': [[0.5, 0.5]]} if 'Bandit' in name else {}\n"
        "    env = gym.make(name, **kwargs).unwrapped\n"
        "    params, state = env.build(0, 0, 100)\n"
        "    env.reset(seed=0)\n"
        "print(sorted(m for m in sys.modules if m == 'agents' or m.startswith('agents.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ENVS_DIR.parent
    )
    assert out.stdout.strip() == "[]"


# --- the Environment contract ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("mlcb/Trap-v0", {}),
        ("mlcb/BanditExperts-v0", {"reward_means": PADDED}),
        ("mlcb/GLM-v0", {}),
    ],
)
def test_environments_meet_the_contract(name, params):
    env = envs.make(name, **params)
    assert isinstance(env, Environment)
    assert env.n_experts is None if name == "mlcb/GLM-v0" else env.n_experts == len(env.n_arms)


def test_bandit_round_data_is_the_engine_draw():
    env = envs.make("mlcb/BanditExperts-v0", reward_means=PADDED, shuffle=True)
    params, state = env.build(3, 1, 100)
    for t in (0, 1, 7, 1000):
        for k in range(env.n_experts):
            data = env.round_data(params, state, t, k)
            assert data.n_arms == env.n_arms[k]
            for a in range(data.n_arms):
                assert data.loss(a) == arm_loss(params, t, k, a)
                assert data.mean(a) == params.loss_means[k, a]
            with pytest.raises(ValueError, match="arm must be an integer in"):
                data.loss(data.n_arms)
    assert env.optimal_loss(params, 0) == pytest.approx(0.6)
    assert env.optimal_loss(params, 2) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="expert must be an integer in"):
        env.optimal_loss(params, 3)


def test_glm_round_data_is_the_engine_draw():
    env = envs.make("mlcb/GLM-v0")
    params, state = env.build(2, 0, 100)
    w = np.full(env.dim, 0.2)
    for t in (1, 2, 50):
        _begin_round(params, state, t)
        data = env.round_data(params, state, t, 0)
        np.testing.assert_array_equal(data.x, state.x)
        assert data.y == state.y[0]
        data.x[0] += 1.0  # a copy: the stream is untouched
        assert data.x[0] != state.x[0]
        for prediction in (0.0, 0.3, data.y, 50.0):
            assert data.loss(prediction) == square_loss(params, prediction, state.y[0])
    env.reset(seed=2)
    assert data.expected_loss("logistic", w) == env.expected_loss("logistic", w)
    assert data.expected_loss("logcosh", np.zeros(env.dim)) > env.optimal_loss(params, 0)


# --- Gymnasium's own checker ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("mlcb/Trap-v0", {}),
        ("mlcb/BanditExperts-v0", {"reward_means": PADDED}),
        ("mlcb/GLM-v0", {}),
        ("mlcb/Clustered-v0", {"task": "classification"}),  # (actions sampled from its space)
        ("mlcb/ConvexBandit-v0", {}),
    ],
)
def test_gymnasium_check_env(name, params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # advice only (an unbounded prediction space), not errors
        check_env(gym.make(name, **params).unwrapped, skip_render_check=True)


def test_padded_arms_are_arms_that_always_lose():
    env = envs.make("mlcb/BanditExperts-v0", reward_means=PADDED)
    _, info = env.reset(seed=1)
    assert info["optimal_loss"] == pytest.approx(0.1)
    np.testing.assert_allclose(info["expert_optimal_losses"], [0.6, 0.4, 0.1])
    for t in range(1, 30):
        _, reward, _, _, info = env.step((2, 1 + t % 2))
        assert reward == -1.0 and info["expected_loss"] == 1.0
        assert np.all(np.isfinite(info["losses"])) and np.all(info["losses"][2, 1:] == 1.0)
        assert info["losses"][0, 2] == 1.0
    with pytest.raises(ValueError, match=r"action\[0\] \(the expert\) must be an integer in \[0, 3\), got 3"):
        env.step((3, 0))


def test_register_names_an_environment_for_make_names_and_gymnasium():
    """``envs.register`` is the same call as ``agents.register`` and ``mlcb.policies.register``; the id
    is registered with Gymnasium too; registering a taken id again is refused unless
    ``override=True``, which replaces it (with a one-line warning)."""
    from mlcb.errors import NameTaken

    name = "test/TrapOfThree-v0"
    try:
        envs.register(name, "envs.bandit:TrapEnv", summary="a trap of three experts", n_experts=3)
        assert name in envs.names() and envs.registry.entry(name).summary == "a trap of three experts"
        assert envs.make(name).n_experts == 3 and envs.make(name, n_experts=4).n_experts == 4
        assert gym.make(name).unwrapped.n_experts == 3
        with pytest.raises(ValueError, match="environment name 'test/TrapOfThree-v0' is taken"):
            envs.register(name, "envs.bandit:TrapEnv", n_experts=5)
        assert envs.make(name).n_experts == 3 and gym.make(name).unwrapped.n_experts == 3
        with pytest.warns(NameTaken, match="environment 'test/TrapOfThree-v0' is now 'envs.bandit:TrapEnv'"):
            envs.register(name, "envs.bandit:TrapEnv", n_experts=5, override=True)
        assert envs.make(name).n_experts == 5 and gym.make(name).unwrapped.n_experts == 5
    finally:
        envs.registry._entries.pop(name, None)
        gym.registry.pop(name, None)
    assert name not in envs.names()
    with pytest.raises(
        ValueError, match=r"unknown environment 'test/TrapOfThree-v0'; registered environment"
    ):
        envs.make(name)


def test_reset_options_are_checked_before_a_replication_is_replayed():
    # A misspelt key or a fractional replication would replay replication 0 or 1, silently.
    made = [envs.make(name) for name in ("mlcb/Trap-v0", "mlcb/GLM-v0", "mlcb/ConvexBandit-v0")]
    made.append(envs.make("mlcb/RealData-v0", dataset="ctg"))
    for env in made:
        for options, message in (
            (
                {"replicaton": 3},
                "options may hold only 'replication' (the replication to replay, an integer >= 0)",
            ),
            ({"replication": 1.7}, "options['replication'] must be an integer >= 0, got 1.7"),
            ({"replication": -1}, "options['replication'] must be an integer >= 0, got -1"),
            ({"horizon": 0}, "options['horizon'] must be an integer >= 1, got 0"),
        ):
            with pytest.raises(ValueError, match=re.escape(message)):
                env.reset(seed=0, options=options)
        env.reset(seed=0, options={"replication": 2.0, "horizon": 10})  # whole numbers as floats


def test_a_clustered_prediction_that_no_loss_in_0_1_can_score_is_refused():
    # Logits or scores as a classification's prediction gave a half Brier score of 8 (or nan).
    env = envs.make("mlcb/Clustered-v0", task="classification")
    env.reset(seed=0)
    message = "prediction must be a probability vector of 3 classes (entries >= 0 summing to at most 1), got"
    data = ClusteredRound(*env.build(0, 0, 10), 1)  # what a Python expert scores its prediction with
    for prediction in ([5.0, 0.0, 0.0], [0.5, 0.5, 0.5], [-0.5, 1.0, 0.5], [np.nan, 0.0, 1.0]):
        with pytest.raises(ValueError, match=re.escape(message)):
            data.loss(prediction)
    for action in ([-0.5, 1.0, 0.5], [2.0, -1.0, 0.0]):  # outside the action space Box(0, 1)
        with pytest.raises(ValueError, match=re.escape(message)):
            env.step(np.array(action))
    # A point of the action space is weights over the classes: [0.5, 0.5, 0.5] is uniform.
    assert env.action_loss(np.array([0.5, 0.5, 0.5]), 1.0) == env.action_loss(np.full(3, 1 / 3), 1.0)
    softmax = np.exp(np.array([0.3, -1.2, 2.0], dtype=np.float32))
    _, reward, *_ = env.step(softmax / softmax.sum())  # a float32 softmax, summing to 1 within 1e-7
    assert 0.0 <= -reward <= 1.0
    regression = envs.make("mlcb/Clustered-v0")
    regression.reset(seed=0)
    with pytest.raises(ValueError, match=re.escape("prediction must be one number (the regression's y_hat)")):
        regression.action_loss(np.array([0.1, 0.2]), 0.0)


def test_a_bandit_decisions_expected_loss_is_checked_not_read_from_another_arm():
    # -1 read the last expert or arm, 1.7 arm 1, negative weights gave inf and all-zero ones nan.
    env = envs.make("mlcb/BanditExperts-v0", reward_means=PADDED)
    env.reset(seed=0)
    assert env.expected_loss(0, [1, 3]) == pytest.approx(0.25 * 0.8 + 0.75 * 0.6)
    for expert, decision, message in (
        (-1, 0, "expert must be an integer in [0, 3), got -1"),
        (0, -1, "decision (an arm) must be an integer in [0, 2), got -1"),
        (0, 1.7, "decision (an arm) must be an integer in [0, 2), got 1.7"),
        (2, 1, "decision (an arm) must be an integer in [0, 1), got 1"),  # a padded arm is none
        (0, [1, -1], "decision must be an arm index in [0, 2) or 2 weights >= 0 over expert 0's arms"),
        (0, [0, 0], "decision must be an arm index in [0, 2) or 2 weights >= 0 over expert 0's arms"),
        (1, [1, 1], "decision must be an arm index in [0, 3) or 3 weights >= 0 over expert 1's arms"),
    ):
        with pytest.raises(ValueError, match=re.escape(message)):
            env.expected_loss(expert, decision)


def test_a_glm_decision_beyond_the_ball_the_loss_scale_covers_is_refused():
    # An OGD expert of radius 2 on the default stream (weight_radius 1) had its losses clipped at 1
    # while its expected loss was not: 0.315 for a decision whose losses average 0.133 (exp link).
    env = envs.make("mlcb/GLM-v0")
    params, state = env.build(0, 0, 10)
    message = (
        "radius must be a number in (0, 1] (the stream's weight_radius, the ball its loss scale is sized for)"
    )
    for call in (env.optimal_loss_of, lambda _, link, radius: env.lipschitz(link, radius)):
        with pytest.raises(ValueError, match=re.escape(message)):
            call(params, "exp", 2.0)
    data = env.round_data(params, state, 1, 0)
    with pytest.raises(ValueError, match=re.escape("weights must have a norm of at most weight_radius = 1")):
        data.expected_loss("exp", 2.0 * params.direction)
    assert data.expected_loss("exp", params.direction) < 1.0  # on the ball's edge: allowed
    wide = envs.make("mlcb/GLM-v0", weight_radius=2.0)
    assert wide.optimal_loss_of(wide.build(0, 0, 10)[0], "exp", 2.0) < 1.0


def test_a_clustered_stream_sized_beyond_memory_is_refused_however_its_sizes_are_written():
    # holdout = 1e12 (how TOML and the command line may write a whole number) skipped the check.
    from mlcb.engine.sizes import check_environment_size

    for holdout in (10**12, 1e12):
        with pytest.raises(ValueError, match=r"env_params of mlcb/Clustered-v0: this setting needs about "):
            check_environment_size("mlcb/Clustered-v0", {"holdout": holdout})
