"""Pools of one's own: mixed families on the Python engine (one loss for the whole pool: the
environment's), and the regret reference of Python experts (the best expert in hindsight)."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

import agents
import mlcb
from mlcb import engine
from mlcb.config import checkpoint_grid
from mlcb.engine import python_loop
from mlcb.errors import ExpertError
from mlcb.kernels.seeding import stream_keys
from mlcb.learners import HINDSIGHT, seed_of
from mlcb.storage.results import DEFAULT_REFERENCE
from tests.test_python_engine import GreedyArms


class Ridge:
    """Online ridge regression on a supervised stream (``x``, ``y``), scored by the stream's loss."""

    rate = (1.0, 0.5)

    def __init__(self, lam: float = 1.0) -> None:
        self.lam = lam
        self.a: np.ndarray | None = None
        self.b: np.ndarray | None = None

    def _prediction(self, x: np.ndarray) -> float:
        if self.a is None:
            self.a, self.b = self.lam * np.eye(len(x)), np.zeros(len(x))
        return float(np.linalg.solve(self.a, self.b) @ x)

    def learn(self, data) -> float:
        loss = data.loss(self._prediction(data.x))
        self.a += np.outer(data.x, data.x)
        self.b += data.y * data.x
        return loss

    def deploy(self, data) -> float:
        return data.loss(self._prediction(data.x))


def _ogd(link: str):
    return agents.make("ogd", link=link)


# --- mixed pools ------------------------------------------------------------------------------
def test_a_compiled_family_beside_python_learners_runs_on_the_python_engine():
    """``[agents.make("ogd"), MyRidge()]`` used to fail with "a pool holds experts of one
    family"; it runs, deterministically, every expert counted."""
    pool = [_ogd("logcosh"), Ridge(1.0), _ogd("affine"), Ridge(30.0)]
    fields = dict(env="mlcb/GLM-v0", experts=pool, budget=2, horizon=300, replications=2, seed=1)
    result = mlcb.simulate(**fields)
    setting = result.metadata["settings"]["mlcb M=2"]
    assert setting["engine"] == "python"
    assert setting["family"] == "mixed (glm + python)"
    trained = result.experts[result.experts["round"] == 300].groupby("replication")["trained"].sum()
    assert (trained == 4 + 2 * 300).all()
    assert result.final()["regret"].notna().all()
    again = mlcb.simulate(**fields)
    np.testing.assert_array_equal(result.curves["regret"], again.curves["regret"])


class Faulty(Ridge):
    """States its L_k* (no best-in-hindsight pass), and fails at its third update."""

    def __init__(self) -> None:
        super().__init__(1.0)
        self.updates = 0

    def optimal_loss(self, env, env_params) -> float:
        return 0.0

    def learn(self, data) -> float:
        self.updates += 1
        if self.updates == 3:
            raise ZeroDivisionError("third update")
        return super().learn(data)


def test_a_python_member_of_a_mixed_pool_is_named_and_served_by_its_index_in_the_pool(monkeypatch):
    """The Python members run in a pool of their own: their faults named them, and the
    environment's round data was asked for them, by their index among the Python members (1 for
    the pool's expert 3)."""
    from envs.glm import GLMEnv

    asked: set[int] = set()
    round_data = GLMEnv.round_data

    def spy(self, params, state, t, expert):
        asked.add(expert)
        return round_data(self, params, state, t, expert)

    monkeypatch.setattr(GLMEnv, "round_data", spy)
    pool = [_ogd("logcosh"), Ridge(1.0), _ogd("affine"), Faulty()]
    with pytest.raises(ExpertError) as caught:
        mlcb.simulate(env="mlcb/GLM-v0", experts=pool, budget=2, horizon=50, replications=1, seed=1)
    assert str(caught.value).startswith("expert 3 (Faulty), replication 0, round ")
    assert str(caught.value).endswith(": learn raised ZeroDivisionError: third update")
    assert asked == {1, 3}


def _mean_training_losses(experts: list, rounds: int = 60) -> np.ndarray:
    """Every expert trained every round (the Gymnasium environment, seed 3): its mean loss."""
    from mlcb.selection_env import BudgetedSelectionEnv

    config = mlcb.SimulationConfig(
        env="mlcb/GLM-v0", experts=tuple(experts), budget=len(experts), horizon=rounds, seed=3
    )
    env = BudgetedSelectionEnv(config)
    env.reset(seed=3)
    for _ in range(rounds):
        observation, *_ = env.step({"train": list(range(len(experts))), "deploy": 0})
    return observation["mean_loss"]


def test_members_of_a_mixed_pool_learn_as_in_pools_of_their_own():
    """The compiled members and the Python members of a mixed pool suffer exactly the losses they
    suffer in pools of one family: one stream, the environment's loss for everyone."""
    compiled, python = [_ogd("logcosh"), _ogd("affine")], [Ridge(1.0), Ridge(10.0)]
    mixed = _mean_training_losses([compiled[0], python[0], compiled[1], python[1]])
    np.testing.assert_array_equal(mixed[[0, 2]], _mean_training_losses(compiled))
    np.testing.assert_array_equal(mixed[[1, 3]], _mean_training_losses(python))


def test_a_mixed_pool_needs_every_expert_on_one_stream():
    """On a bandit environment each expert owns its arms, by its index: a mixed pool is refused
    there, in one line naming the families and the environment."""
    pool = (agents.make("ucb1"),) * 5 + (GreedyArms(0.1),) * 5
    with pytest.raises(
        ValueError, match=r"mixes families \(mixed \(bandit \+ python\)\) needs an environment"
    ):
        mlcb.engine.build(mlcb.SimulationConfig(env="mlcb/Trap-v0", experts=pool, budget=2))


def test_an_error_in_a_mixed_pool_names_the_pools_index():
    """A family checks its own members; an error of the third expert of the pool (the second of
    the Python ones) names experts[2], not the index among its family's members."""

    class BadRate(Ridge):
        rate = (-1.0, 0.5)

    pool = (_ogd("logcosh"), Ridge(), BadRate())
    with pytest.raises(ValueError, match=re.escape("experts[2]: rate of ")):
        mlcb.engine.build(mlcb.SimulationConfig(env="mlcb/GLM-v0", experts=pool, budget=1))


@pytest.mark.parametrize("position", [0, 1])
def test_a_class_in_place_of_an_expert_is_refused_by_its_index(position):
    pool = [_ogd("logcosh"), Ridge()]
    pool[position] = type(pool[position])
    name = pool[position].__name__
    with pytest.raises(TypeError, match=rf"^experts\[{position}\]: {name} is a class; give an instance"):
        mlcb.SimulationConfig(env="mlcb/GLM-v0", experts=tuple(pool), budget=1)
    with pytest.raises(ValueError, match=re.escape("agents.make('ogd') builds one")):
        mlcb.SimulationConfig(env="mlcb/GLM-v0", experts=("ogd", "ogd"), budget=1)


def test_a_model_of_another_library_is_pointed_to_its_adapter():
    from river import tree
    from sklearn.linear_model import SGDClassifier

    pool = (tree.HoeffdingTreeClassifier(), SGDClassifier())
    with pytest.raises(
        ValueError, match=re.escape("(a river model: wrap it, mlcb.river.experts.RiverExpert(model))")
    ):
        mlcb.engine.build(mlcb.SimulationConfig(env="mlcb/RealData-v0", experts=pool, budget=1))
    with pytest.raises(
        ValueError, match=re.escape("(a sklearn model: wrap it, mlcb.river.experts.SklearnExpert(")
    ):
        mlcb.engine.build(mlcb.SimulationConfig(env="mlcb/RealData-v0", experts=pool[::-1], budget=1))


def test_a_river_regressor_suffers_the_environments_loss():
    """A river regressor's default loss is the stream's own (the GLM stream's normalised square
    loss), the loss every compiled expert of the pool suffers; ``scale`` is no longer required."""
    pytest.importorskip("river")
    from river import linear_model, optim

    from mlcb.river.experts import RiverExpert

    env = engine.build(mlcb.SimulationConfig(env="mlcb/GLM-v0", experts=(_ogd("affine"),))).env
    params, state = env.build(0, 0, 100)
    expert = RiverExpert(linear_model.LinearRegression(optimizer=optim.SGD(0.05)))
    assert expert.loss == "env" and expert.scale is None
    for t in range(1, 30):
        from mlcb.kernels import begin_round

        begin_round(params, state, t)
        data = env.round_data(params, state, t, 0)
        prediction = expert.model.predict_one(dict(enumerate(data.x)))
        assert expert.learn(data) == data.loss(prediction)
    result = mlcb.simulate(
        env="mlcb/GLM-v0", experts=[_ogd("logcosh"), expert], budget=1, horizon=100, replications=1, seed=0
    )
    assert result.metadata["settings"]["mlcb M=1"]["family"] == "mixed (glm + python)"


# --- the regret reference of a pool of one's own ----------------------------------------------
def _by_hand(pool: list, seed: int, replication: int, rounds: int) -> list[float]:
    """Each expert's mean loss over rounds 1 .. T when trained on every round 0 .. T."""
    from mlcb.kernels import begin_round

    env = engine.build(mlcb.SimulationConfig(env="mlcb/GLM-v0", experts=tuple(pool))).env
    params, state = env.build(seed, replication, 100)
    copies = [copy.deepcopy(expert) for expert in pool]
    totals = [0.0] * len(pool)
    for t in range(rounds + 1):
        begin_round(params, state, t)
        for k, expert in enumerate(copies):
            loss = expert.learn(env.round_data(params, state, t, k))
            totals[k] += loss if t > 0 else 0.0
    return [total / rounds for total in totals]


def test_a_pool_of_ones_own_is_measured_against_the_best_expert_in_hindsight():
    """On GLM-v0 a Python expert's reference used to be the optimum of link k (the environment's
    ``optimal_loss(params, k)``), meaningless for ridge regressions; it is the best expert in
    hindsight on the run's stream, and results say so."""
    pool = [Ridge(0.1), Ridge(10.0), Ridge(1_000.0)]
    rounds, seed = 120, 4
    result = mlcb.simulate(
        env="mlcb/GLM-v0", experts=pool, budget=1, horizon=rounds, replications=2, seed=seed
    )
    for r in range(2):
        expected = min(_by_hand(pool, seed, r, rounds))
        best = result.replications.loc[result.replications["replication"] == r, "best_loss"].item()
        assert best == pytest.approx(expected, rel=1e-12)
    assert result.metadata["settings"]["mlcb M=1"]["reference"] == HINDSIGHT
    assert (result.summary()["reference"] == HINDSIGHT).all()
    # The regret at T is the deployed losses' sum minus T times the best expert's mean loss.
    config = mlcb.SimulationConfig(
        env="mlcb/GLM-v0", experts=tuple(pool), budget=1, horizon=rounds, seed=seed
    )
    (one,) = python_loop.run_replications(
        engine.build(config), seed, [0], rounds, checkpoint_grid(rounds, 5), trace_rounds=rounds
    )
    assert one.regret[-1] == pytest.approx(one.trace_loss.sum() - rounds * one.best_loss, abs=1e-9)


def test_the_hindsight_copy_is_the_runs_own_copy():
    """The reference trains ``spawn(seed)`` with the seed the run gives the expert, so a learner
    with randomness is compared with itself."""

    class Noisy(Ridge):
        def __init__(self, lam: float = 1.0, seed: int = 0) -> None:
            super().__init__(lam)
            self.seed = seed
            self.noise = np.random.default_rng(seed).normal(0, 0.1, 1_000)
            self.t = 0

        def spawn(self, seed):
            return Noisy(self.lam, seed)

        def learn(self, data):
            self.t += 1
            return min(1.0, max(0.0, super().learn(data) + abs(self.noise[self.t])))

    pool = [Noisy(1.0), Noisy(5.0)]
    config = mlcb.SimulationConfig(env="mlcb/GLM-v0", experts=tuple(pool), budget=1, horizon=50, seed=2)
    problem = engine.build(config)
    built = engine.build_common(problem, 2, 1, 50, checkpoint_grid(50, 3))
    keys = stream_keys(2, 1, 2).experts
    by_hand = []
    for k, expert in enumerate(pool):
        fresh = expert.spawn(seed_of(keys[k]))
        by_hand.append(_by_hand([fresh], 2, 1, 50)[0])
    np.testing.assert_allclose(built.accounting.optimal, by_hand, rtol=1e-12)


def test_where_the_environment_fixes_the_experts_the_reference_stays_their_l_star():
    pool = [GreedyArms(eps) for eps in (0.05, 0.1, 0.2, 0.3, 0.4)] * 2
    result = mlcb.simulate(env="mlcb/Trap-v0", experts=pool, budget=2, horizon=200, replications=1, seed=0)
    assert "reference" not in result.metadata["settings"]["mlcb M=2"]
    assert (result.summary()["reference"] == DEFAULT_REFERENCE).all()
    env = engine.build(mlcb.SimulationConfig(env="mlcb/Trap-v0", experts=tuple(pool), budget=2)).env
    params, _ = env.build(0, 0, 100)
    expected = min(env.optimal_loss(params, k) for k in range(10))
    assert result.replications["best_loss"].item() == expected


def test_an_expert_that_states_its_reference_keeps_it():
    class Stated(Ridge):
        def optimal_loss(self, env, env_params):
            return 0.25

    pool = [Stated(1.0), Stated(2.0)]
    result = mlcb.simulate(env="mlcb/GLM-v0", experts=pool, budget=1, horizon=50, replications=1, seed=0)
    assert result.replications["best_loss"].item() == 0.25
    assert (result.summary()["reference"] == DEFAULT_REFERENCE).all()
