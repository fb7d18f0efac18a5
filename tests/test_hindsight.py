"""The best expert in hindsight has one home (:mod:`mlcb.engine.hindsight`) and is computed once
per stream, expert and replication: the settings of a comparison, of a run's budgets and a
resumed run reuse it."""

from __future__ import annotations

import functools
import operator
from typing import NamedTuple

import numpy as np
import pytest

import agents
import mlcb
from mlcb.engine import hindsight

HORIZON, REPLICATIONS = 60, 2


class RunningMean:
    """Predicts the running mean of ``y`` (a Python expert without a stated ``L_k*``)."""

    def __init__(self, shrink: float = 1.0) -> None:
        self.shrink = shrink
        self.total, self.n = 0.0, 0

    def _guess(self) -> float:
        return self.shrink * self.total / max(self.n, 1)

    def learn(self, data):
        loss = data.loss(self._guess())
        self.total, self.n = self.total + data.y, self.n + 1
        return loss

    def deploy(self, data):
        return data.loss(self._guess())


def _pool() -> list:
    return [RunningMean(1.0), RunningMean(0.5), RunningMean(0.9)]


@pytest.fixture(autouse=True)
def _fresh():
    hindsight.clear()
    yield
    hindsight.clear()


def _passes() -> dict[str, int]:
    return dict(hindsight.PASSES)


def test_a_comparison_of_two_budgets_on_a_python_pool_computes_the_pass_once():
    before = _passes()
    fields = dict(env="mlcb/GLM-v0", horizon=HORIZON, replications=REPLICATIONS, seed=2)
    one = mlcb.simulate(experts=_pool(), budget=1, **fields)
    after_one = _passes()
    two = mlcb.simulate(experts=_pool(), budget=2, **fields)  # other objects, the same experts
    assert after_one["python"] - before["python"] == REPLICATIONS  # one pass per replication
    assert _passes() == after_one  # the second budget computed none
    np.testing.assert_array_equal(one.replications["best_loss"], two.replications["best_loss"])
    assert one.metadata["settings"]["mlcb M=1"]["reference"].startswith("the best expert in hindsight")


def test_compare_on_the_compiled_classifiers_computes_each_replications_pass_once():
    before = _passes()
    result = mlcb.compare("ctg", horizon=HORIZON, replications=REPLICATIONS, budget=[1, 2])
    assert len(result.settings) > 2  # several policies and budgets on one stream
    assert _passes()["compiled"] - before["compiled"] == REPLICATIONS


def test_the_reference_is_each_experts_own_mean_loss_trained_every_round():
    """A pool of one: the regret at the horizon is 0 (it is trained and deployed every round)."""
    result = mlcb.simulate(
        env="mlcb/GLM-v0", experts=[RunningMean()], horizon=HORIZON, replications=REPLICATIONS, seed=4
    )
    final = result.curves[result.curves["round"] == HORIZON]["regret"].to_numpy()
    np.testing.assert_allclose(final, 0.0, atol=1e-9)


def test_a_resumed_run_reads_the_references_kept_beside_its_parts(tmp_path):
    fields = dict(env="mlcb/GLM-v0", horizon=HORIZON, replications=REPLICATIONS, seed=5, parts=tmp_path)
    first = mlcb.simulate(experts=_pool(), budget=1, **fields)
    assert list((tmp_path / "hindsight").glob("*.json"))
    hindsight.clear()  # a new process: nothing in memory
    before = _passes()
    other = mlcb.simulate(experts=_pool(), budget=2, **fields)  # another setting of the same run
    assert _passes() == before
    np.testing.assert_array_equal(first.replications["best_loss"], other.replications["best_loss"])


def test_a_damaged_reference_file_is_computed_again(tmp_path):
    fields = dict(env="mlcb/GLM-v0", horizon=HORIZON, replications=1, seed=6, parts=tmp_path)
    first = mlcb.simulate(experts=_pool(), budget=1, **fields)
    for path in (tmp_path / "hindsight").glob("*.json"):
        path.write_text('{"not": "numbers", ')
    hindsight.clear()
    again = mlcb.simulate(experts=_pool(), budget=2, **fields)
    np.testing.assert_array_equal(first.replications["best_loss"], again.replications["best_loss"])


def test_a_kept_reference_outside_zero_one_is_computed_again(tmp_path):
    """A reference is a mean loss: a kept value of 5 (an edited file) was read into every regret."""
    import json

    fields = dict(env="mlcb/GLM-v0", horizon=HORIZON, replications=1, seed=6, parts=tmp_path)
    first = mlcb.simulate(experts=_pool(), budget=1, **fields)
    for path in (tmp_path / "hindsight").glob("*.json"):
        path.write_text(json.dumps(dict.fromkeys(json.loads(path.read_text()), 5.0)))
    hindsight.clear()
    again = mlcb.simulate(experts=_pool(), budget=2, **fields)
    np.testing.assert_array_equal(first.replications["best_loss"], again.replications["best_loss"])


def test_values_follow_the_horizon_the_expert_and_its_random_stream():
    env = mlcb.engine.build(mlcb.SimulationConfig(env="mlcb/GLM-v0", experts=_pool())).env
    short = hindsight.losses(_pool(), env, 0, 0, 30)
    long = hindsight.losses(_pool(), env, 0, 0, 90)
    assert not np.array_equal(short, long)
    again = hindsight.losses(_pool(), env, 0, 0, 30)
    np.testing.assert_array_equal(short, again)
    other = hindsight.losses(_pool(), env, 0, 1, 30)  # another replication: another stream
    assert not np.array_equal(short, other)


class Scaled(RunningMean):
    """Predicts ``scale(running mean)``: what it predicts is decided by a ``functools.partial``."""

    def __init__(self, scale) -> None:
        super().__init__()
        self.scale = scale

    def _guess(self) -> float:
        return self.scale(self.total / max(self.n, 1))


def test_experts_that_differ_only_in_state_kept_in_c_get_references_of_their_own():
    """Two partials told apart by their arguments only: the second pool's reference was the
    first's, read from the cache, as a partial's arguments are no attribute of it."""
    fields = dict(env="mlcb/GLM-v0", horizon=HORIZON, replications=1, seed=7)
    one = mlcb.simulate(experts=[Scaled(functools.partial(operator.mul, 1.0))], **fields)
    zero = mlcb.simulate(experts=[Scaled(functools.partial(operator.mul, 0.0))], **fields)
    hindsight.clear()
    alone = mlcb.simulate(experts=[Scaled(functools.partial(operator.mul, 0.0))], **fields)
    np.testing.assert_array_equal(zero.replications["best_loss"], alone.replications["best_loss"])
    assert not np.array_equal(one.replications["best_loss"], zero.replications["best_loss"])


class Step(NamedTuple):
    loss: float
    rate: float


class NamedSteps(RunningMean):
    def learn(self, data):
        return Step(super().learn(data), 1.0)


class PlainSteps(RunningMean):
    def learn(self, data):
        return super().learn(data), 1.0


def test_a_named_tuple_from_learn_is_its_pair_in_the_pass_too():
    fields = dict(env="mlcb/GLM-v0", horizon=HORIZON, replications=1, seed=8, budget=1)
    plain = mlcb.simulate(experts=[PlainSteps(1.0), PlainSteps(0.5)], **fields)
    named = mlcb.simulate(experts=[NamedSteps(1.0), NamedSteps(0.5)], **fields)
    np.testing.assert_array_equal(plain.replications["best_loss"], named.replications["best_loss"])
    np.testing.assert_array_equal(plain.curves["regret"], named.curves["regret"])


def test_a_pool_of_stated_references_runs_no_pass():
    before = _passes()
    mlcb.simulate(preset="trap", experts=[agents.make("ucb1")] * 10, horizon=50, replications=1)
    assert _passes() == before
