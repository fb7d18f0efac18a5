"""mlcb/BudgetedSelection-v0: the selection problem as a Gymnasium environment."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import mlcb.selection_env
from mlcb import engine, presets
from mlcb.selection_env import ENV_ID, BudgetedSelectionEnv

#: What only the engine computes: the statistics' fields, the regret totals, the accounting and
#: policy kernels, confidence widths.
ACCOUNTING = {
    "loss_sum",
    "totals",
    "best_loss",
    "observe",
    "end_round",
    "account_deployed",
    "account_trained",
    "account_end",
    "account_warm_start",
    "hoeffding_width",
    "sqrt",
    "new_stats",
}


def accounting_names(path: Path) -> set[str]:
    """The names of :data:`ACCOUNTING` that the code of ``path`` uses (as a name, an attribute or
    a field string, and square roots of anything but constants; docstrings and comments aside)."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("sqrt"):
            if not all(isinstance(argument, ast.Constant) for argument in node.args):
                found.add("sqrt")  # a width computed here (a constant's root is no accounting)
        elif isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr != "sqrt":
            found.add(node.attr)
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            found.add(str(node.slice.value))
    return found & ACCOUNTING


def _engine_run(config):
    rounds = config.horizon
    return engine.run_replication(
        engine.build(config), config.seed, 0, rounds, np.arange(1, rounds + 1), trace_rounds=rounds
    )


@pytest.mark.parametrize(
    ("preset", "budget", "fields"),
    [
        ("trap", 2, {"horizon": 1_500, "seed": 5}),
        ("trap", 1, {"horizon": 800, "seed": 2, "calibration": "authors"}),
        ("glm", 2, {"horizon": 300, "seed": 4, "smoothing": "average"}),
    ],
)
def test_reproduces_the_engine_under_mlcb_decisions(preset, budget, fields):
    fields = dict(fields)
    calibration = fields.pop("calibration", None)
    config = presets.get(preset).config(budget, calibration, **fields)
    result = _engine_run(config)
    env = BudgetedSelectionEnv(config)
    observation, info = env.reset(seed=config.seed)
    k = env.n_experts
    assert np.all(observation["counts"] == 1)
    for t in range(config.horizon):
        row = result.trace_selected[t]
        train = np.where(row >= 0, row, k)
        observation, reward, terminated, truncated, info = env.step(
            {"train": train, "deploy": int(result.trace_deployed[t])}
        )
        assert reward == -result.trace_loss[t]
        assert info["regret"] == result.regret[t]
        assert info["pseudo_regret"] == result.pseudo_regret[t]
        assert not terminated and truncated == (t == config.horizon - 1)
    np.testing.assert_array_equal(observation["counts"], result.trained[-1])
    assert info["best_expert"] == result.best_expert


def test_passes_gymnasiums_checker_and_makes_by_id():
    env = gym.make(ENV_ID, preset="trap", budget=2, horizon=50)
    check_env(env.unwrapped, skip_render_check=True)
    check_env(BudgetedSelectionEnv(preset="glm", budget=1, horizon=20), skip_render_check=True)
    import envs

    assert ENV_ID not in envs.names()  # not a stream a simulation could draw from
    with pytest.raises(ValueError, match="unknown environment"):
        envs.make(ENV_ID)


def test_a_misspelt_field_is_refused_by_name():
    """By id or by class, with a preset: the field named, with what the environment takes (before:
    SimulationConfig.__init__'s TypeError); a preset's own config says the same of itself."""
    with pytest.raises(TypeError, match=r"BudgetedSelectionEnv has no parameter 'horizn'; it takes config, "):
        gym.make(ENV_ID, preset="trap", horizn=10)
    with pytest.raises(TypeError, match=r"^preset 'trap' has no parameter 'horizn'; it takes budget, "):
        presets.get("trap").config(horizn=10)


def test_seeded_resets_repeat_and_unseeded_ones_move_on():
    env = BudgetedSelectionEnv(preset="trap", budget=2, horizon=30)
    action = {"train": [3, 4], "deploy": 3}
    first = [env.reset(seed=1)[0]["mean_loss"].copy(), env.step(action)[1]]
    second = [env.reset(seed=1)[0]["mean_loss"].copy(), env.step(action)[1]]
    np.testing.assert_array_equal(first[0], second[0])
    assert first[1] == second[1]
    other = env.reset()[0]["mean_loss"]  # replication 1 of seed 1
    assert not np.array_equal(other, first[0])


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"train": [0, 1, 2], "deploy": 0}, "at most M=2"),
        ({"train": [0, 11], "deploy": 0}, "train"),
        ({"train": [0], "deploy": 10}, "deploy"),
        ({"train": [0]}, "keys"),
    ],
)
def test_bad_actions_are_refused(action, message):
    env = BudgetedSelectionEnv(preset="trap", budget=2, horizon=10)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=message):
        env.step(action)


def test_episode_is_truncated_at_the_horizon():
    env = BudgetedSelectionEnv(preset="trap", budget=1, horizon=3)
    env.reset(seed=0)
    for _ in range(3):
        *_, truncated, _ = env.step({"train": [10], "deploy": 0})  # train nobody
    assert truncated
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"train": [0], "deploy": 0})


def test_readme_random_agent_example_runs(capsys):
    from tests.test_readme import README, _example

    code = _example("gym-random")
    assert len(code.strip().splitlines()) <= 25
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})  # noqa: S102 (our README)
    out = capsys.readouterr().out
    assert "pseudo-regret" in out and "training counts" in out


def test_reproduces_the_python_engine_with_python_experts():
    from mlcb.engine import python_loop
    from tests.test_python_engine import GreedyArms

    config = presets.get("trap").config(
        2, seed=3, horizon=200, experts=tuple(GreedyArms(0.1) for _ in range(10)), smoothing="learner"
    )
    rounds = config.horizon
    (result,) = python_loop.run_replications(
        engine.build(config), config.seed, [0], rounds, np.arange(1, rounds + 1), trace_rounds=rounds
    )
    env = BudgetedSelectionEnv(config)
    env.reset(seed=config.seed)
    for t in range(rounds):
        row = result.trace_selected[t]
        _, reward, _, _, info = env.step(
            {"train": np.where(row >= 0, row, 10), "deploy": result.trace_deployed[t]}
        )
        assert reward == -result.trace_loss[t]
        assert info["pseudo_regret"] == result.pseudo_regret[t]


@pytest.mark.parametrize(
    "train", ["1", "01", (0, 0.5), None, 99, [99], [True], np.array([0.5]), [[0, 1]], [-1], {"a": 1}]
)
def test_a_training_set_outside_the_action_space_is_refused_naming_it(train):
    """Strings, fractions, ``None``, booleans and indices outside [0, K] are no experts: one
    ``ValueError`` naming the action (before, ``"1"`` raised a ``TypeError`` from NumPy and ``(0,
    0.5)`` trained expert 0)."""
    env = BudgetedSelectionEnv(preset="trap", budget=2, horizon=10)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action\['train'\] must list") as raised:
        env.step({"train": train, "deploy": 0})
    assert repr(train) in str(raised.value)
    message = "must list at most M=2 expert indices, integers in [0, 10) (or 10: none), got "
    assert message + repr(train) in str(raised.value)
    assert env.step({"train": [0, 1], "deploy": 0})[-1]["round"] == 1  # nothing was played


@pytest.mark.parametrize("deploy", ["1", "01", 0.5, 1.0, None, 99, -1, True, [0], np.array([0])])
def test_a_deployed_expert_outside_the_action_space_is_refused_naming_it(deploy):
    env = BudgetedSelectionEnv(preset="trap", budget=2, horizon=10)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action\['deploy'\] must be an expert index") as raised:
        env.step({"train": [0], "deploy": deploy})
    assert "must be an expert index, an integer in [0, 10), got " + repr(deploy) in str(raised.value)


def test_every_sample_of_the_action_space_is_a_valid_action():
    env = BudgetedSelectionEnv(preset="trap", budget=3, horizon=20)
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(20):
        env.step(env.action_space.sample())
    assert env.unwrapped._t == 20


def test_the_environment_holds_no_accounting_of_its_own():
    """Counts, loss sums, rates and regret live in the engine's round session
    (:mod:`mlcb.engine.session`); the environment only turns actions into its calls."""
    assert accounting_names(Path(mlcb.selection_env.__file__)) == set()


def test_a_loss_outside_the_unit_interval_is_the_engines_error():
    """A Python expert whose loss is outside [0, 1] gets the engine's ExpertLossError (a
    ValueError) naming the expert and the round, as in a simulation."""
    from mlcb.errors import ExpertLossError
    from tests.test_python_engine import GreedyArms

    class Broken(GreedyArms):
        def spawn(self, seed):
            return Broken(self.epsilon, seed)

        def learn(self, data):
            loss = super().learn(data)
            return 2.0 if self.pulls.sum() > 3 else loss

    experts = tuple(Broken(0.1) for _ in range(10))
    config = presets.get("trap").config(1, seed=3, horizon=50, experts=experts, smoothing="learner")
    env = BudgetedSelectionEnv(config)
    env.reset(seed=0)
    with pytest.raises(
        ExpertLossError, match=r"expert 2 \(.*Broken\), replication 0, round 3: training loss is 2.0"
    ):
        for _ in range(10):
            env.step({"train": [2], "deploy": 2})


def test_reset_options_choose_the_replication_and_nothing_else_is_taken_silently():
    """``options={"replication": r}`` plays replication ``r`` (as the package's environments read
    it); it, and any other option, was ignored without a word (replication 0 was played)."""
    env = BudgetedSelectionEnv(preset="trap", budget=2, horizon=8)
    third = BudgetedSelectionEnv(preset="trap", budget=2, horizon=8, replication=3)

    def losses(environment, **reset):
        environment.reset(**reset)
        return [environment.step({"train": [0, 1], "deploy": 0})[1] for _ in range(8)]

    assert losses(env, seed=0, options={"replication": 3}) == losses(third, seed=0)
    assert losses(env, seed=0, options={}) == losses(env, seed=0)
    with pytest.raises(ValueError) as caught:
        env.reset(seed=0, options={"replicaton": 3})
    assert str(caught.value) == (
        "options may hold only 'replication' (the replication to play, an integer >= 0), got {'replicaton': 3}"
    )
    with pytest.raises(ValueError, match=r"options\['replication'\] must be an integer >= 0, got -1"):
        env.reset(seed=0, options={"replication": -1})
