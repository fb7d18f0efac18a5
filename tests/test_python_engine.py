"""The Python engine: bit for bit the compiled engine on every built-in family and policy; Python
experts of any kind; failures that name the expert and lose nothing."""

from __future__ import annotations

import math
import re
import sys
import threading
from typing import NamedTuple

import numpy as np
import pandas as pd
import pytest

import agents
import envs
import mlcb
from mlcb import engine, policies, presets
from mlcb.config import checkpoint_grid
from mlcb.contracts import family_of
from mlcb.engine import python_loop
from mlcb.errors import ExpertError, ExpertLossError
from mlcb.validation import InputError

ROUNDS = 1_500
FIELDS = ("regret", "pseudo_regret", "top_m_regret", "certificate", "trained", "deployed", "optimal")
TRACES = ("trace_selected", "trace_deployed", "trace_loss")


def assert_engines_agree(config, replications=(0, 2), rounds: int | None = None, block: int = 2) -> None:
    """Both engines, same seed: identical decisions, losses, regrets, certificate and counts."""
    rounds = config.horizon if rounds is None else rounds
    grid = checkpoint_grid(rounds, 40)
    problem = engine.build(config)
    compiled = [engine.run_replication(problem, config.seed, r, rounds, grid, rounds) for r in replications]
    python = python_loop.run_replications(
        problem, config.seed, replications, rounds, grid, trace_rounds=rounds, block=block
    )
    for one, other in zip(compiled, python):
        assert one.index == other.index
        assert one.best_expert == other.best_expert
        assert one.exceeded == other.exceeded
        for name in FIELDS + TRACES:
            np.testing.assert_array_equal(getattr(one, name), getattr(other, name), err_msg=name)


def _budget_for(name: str, n_experts: int) -> int:
    if name == "full-budget":
        return n_experts
    if name == "smooth-corral":
        return 1
    return 2


@pytest.mark.parametrize("policy", policies.names())
def test_every_policy_agrees_on_trap(policy):
    config = presets.get("trap").config(
        _budget_for(policy, 10), seed=7, horizon=ROUNDS, policy=policy, replications=3
    )
    assert_engines_agree(config)


@pytest.mark.parametrize("policy", ["mlcb", "limited-advice", "d3rb", "oracle"])
def test_policies_agree_on_glm(policy):
    config = presets.get("glm").config(2, seed=4, horizon=300, policy=policy)
    assert_engines_agree(config, replications=(1,), block=1)


@pytest.mark.parametrize("smoothing", ["counts", "average", "uniform", "last"])
def test_every_bandit_family_and_smoothing_agrees(smoothing):
    pool = [
        agents.make("ucb1"),
        agents.make("epsilon-greedy"),
        agents.make("thompson"),
        agents.make("clipped-thompson"),
        agents.make("ucb1", c=0.25, rate="authors"),
        agents.make("epsilon-greedy", rate="authors"),
    ]
    config = presets.get("trap").config(
        2,
        seed=2,
        horizon=800,
        experts=tuple(pool),
        env_params={"n_experts": 6, "n_arms": 3},
        smoothing=smoothing,
    )
    assert_engines_agree(config)


@pytest.mark.parametrize("smoothing", ["average", "uniform", "last"])
def test_glm_smoothing_agrees(smoothing):
    config = presets.get("glm").config(3, seed=5, horizon=300, smoothing=smoothing)
    assert_engines_agree(config, replications=(0,))


def test_every_registered_family_runs_on_both_engines():
    for name in agents.names():
        if name == "moe":  # torch networks: the Python engine alone runs them (tests/test_moe.py)
            continue
        expert = agents.make(name)
        family = family_of([expert]).name
        env = {"glm": "mlcb/GLM-v0", "classifiers": "mlcb/RealData-v0", "bco": "mlcb/ConvexBandit-v0"}.get(
            family, "mlcb/Trap-v0"
        )
        n = 10 if env == "mlcb/Trap-v0" else 4
        env_params = {"dataset": "breast-cancer"} if family == "classifiers" else {}
        config = mlcb.SimulationConfig(
            env=env, env_params=env_params, experts=(expert,) * n, budget=2, horizon=300, seed=1
        )
        assert_engines_agree(config, replications=(0,))


def test_simulate_chooses_the_engine_and_both_give_one_result():
    compiled = mlcb.simulate(preset="trap", budget=2, horizon=2_000, replications=3, seed=3)
    python = mlcb.simulate(preset="trap", budget=2, horizon=2_000, replications=3, seed=3, engine="python")
    assert compiled.metadata["settings"]["mlcb M=2"]["engine"] == "compiled"
    assert python.metadata["settings"]["mlcb M=2"]["engine"] == "python"
    for name in ("curves", "experts", "replications"):
        pd.testing.assert_frame_equal(getattr(compiled, name), getattr(python, name))


def test_both_engines_read_the_tables_continuation_alike(monkeypatch):
    """Past tables cut short, both engines read the compressed continuation (mlcb.kernels.tables) and
    agree bit for bit with each other and with the computed path."""
    from mlcb.kernels import tables

    fields = dict(preset="trap", budget=2, horizon=3_000, replications=2, seed=4)
    monkeypatch.setattr(tables, "TABLE_BUDGET_BYTES", 0)
    computed = mlcb.simulate(**fields)
    monkeypatch.setattr(tables, "TABLE_BUDGET_BYTES", 8 * 3 * 200)
    compiled = mlcb.simulate(**fields)
    python = mlcb.simulate(**fields, engine="python")
    assert compiled.experts["trained"].max() > 2_000  # far past the 200 tabulated counts
    for name in ("curves", "experts", "replications"):
        pd.testing.assert_frame_equal(getattr(compiled, name), getattr(python, name))
        pd.testing.assert_frame_equal(getattr(compiled, name), getattr(computed, name))


def test_engine_argument_is_checked():
    with pytest.raises(ValueError, match=r"engine must be one of \('auto', 'compiled', 'python'\)"):
        mlcb.simulate(preset="trap", budget=2, horizon=10, replications=1, engine="gpu")
    with pytest.raises(ValueError, match=r"engine='compiled' needs experts of a compiled family"):
        mlcb.simulate(
            env="mlcb/Trap-v0", experts=[GreedyArms()] * 10, budget=2, horizon=10, engine="compiled"
        )


# --- Python experts ------------------------------------------------------------------------------
class GreedyArms:
    """A plain class: epsilon-greedy over its expert's arms, deploys its most played arm."""

    heuristic = True
    rate = (2.0, 0.5)

    def __init__(self, epsilon: float = 0.1, seed: int = 0) -> None:
        self.epsilon = epsilon
        self.rng = np.random.default_rng(seed)
        self.pulls = None
        self.sums = None

    def spawn(self, seed: int) -> GreedyArms:
        return GreedyArms(self.epsilon, seed)

    def _start(self, data) -> None:
        if self.pulls is None:
            self.pulls = np.zeros(data.n_arms)
            self.sums = np.zeros(data.n_arms)

    def learn(self, data) -> float:
        self._start(data)
        if self.rng.random() < self.epsilon or self.pulls.min() == 0:
            arm = int(self.rng.integers(data.n_arms))
        else:
            arm = int(np.argmin(self.sums / self.pulls))
        loss = data.loss(arm)
        self.pulls[arm] += 1
        self.sums[arm] += loss
        return loss

    def deploy(self, data):
        self._start(data)
        arm = int(np.argmax(self.pulls))
        return data.loss(arm), data.mean(arm)


class RiverStyleRegressor:
    """A river-style model (``learn_one`` / ``predict_one`` on dict features): online least squares."""

    def __init__(self, lr: float = 0.05) -> None:
        self.lr = lr
        self.weights: dict = {}

    def predict_one(self, x: dict) -> float:
        return sum(self.weights.get(i, 0.0) * v for i, v in x.items())

    def learn_one(self, x: dict, y: float) -> None:
        error = self.predict_one(x) - y
        for i, v in x.items():
            self.weights[i] = self.weights.get(i, 0.0) - self.lr * error * v


class RiverExpert:
    """Wraps a river-style model as a Python expert on a supervised stream (``x``, ``y``)."""

    def __init__(self, model) -> None:
        self.model = model

    def learn(self, data) -> float:
        x = dict(enumerate(data.x))
        loss = data.loss(self.model.predict_one(x))
        self.model.learn_one(x, data.y)
        return loss

    def deploy(self, data) -> float:
        return data.loss(self.model.predict_one(dict(enumerate(data.x))))


def test_a_plain_class_runs_and_is_deterministic():
    pool = [GreedyArms(eps) for eps in (0.01, 0.05, 0.1, 0.2, 0.4)] * 2
    one = mlcb.simulate(env="mlcb/Trap-v0", experts=pool, budget=2, horizon=3_000, replications=4, seed=5)
    two = mlcb.simulate(env="mlcb/Trap-v0", experts=pool, budget=2, horizon=3_000, replications=4, seed=5)
    pd.testing.assert_frame_equal(one.curves, two.curves)
    final = one.final()
    assert final["pseudo_regret"].notna().all()
    assert (final["regret"].abs() < 3_000).all()
    setting = one.metadata["settings"]["mlcb M=2"]
    assert setting["engine"] == "python"
    assert setting["certificate_valid"] is False
    trained = one.experts[one.experts["round"] == 3_000].groupby("replication")["trained"].sum()
    assert (trained == 10 + 2 * 3_000).all()


def test_results_do_not_depend_on_blocks_or_the_pool_order():
    pool = [GreedyArms(eps) for eps in (0.01, 0.05, 0.1, 0.2, 0.4)] * 2
    config = mlcb.SimulationConfig(env="mlcb/Trap-v0", experts=tuple(pool), budget=2, horizon=500, seed=2)
    problem = engine.build(config)
    grid = checkpoint_grid(500, 20)
    whole = python_loop.run_replications(problem, 2, range(5), 500, grid, block=5)
    blocks = python_loop.run_replications(problem, 2, range(5), 500, grid, block=2)
    for a, b in zip(whole, blocks):
        np.testing.assert_array_equal(a.regret, b.regret)


def test_a_river_style_learner_runs_on_the_glm_stream():
    pool = [RiverExpert(RiverStyleRegressor(lr)) for lr in (0.001, 0.01, 0.05, 0.2)]
    result = mlcb.simulate(env="mlcb/GLM-v0", experts=pool, budget=1, horizon=1_000, replications=2, seed=1)
    final = result.final()
    assert final["regret"].notna().all()
    assert final["pseudo_regret"].isna().all()  # deploy gives no expected loss: unknown, not made up


def test_python_experts_declared_rates_reach_the_policy():
    class Declared(GreedyArms):
        rate = (0.5, 0.5)

        def spawn(self, seed):
            return Declared(self.epsilon, seed)

    pool = [Declared()] * 10
    problem = engine.build(mlcb.SimulationConfig(env="mlcb/Trap-v0", experts=tuple(pool), budget=2))
    rates = problem.family.rates(list(problem.experts), problem.env, np.array([1, 100]), 0.005)
    from mlcb.learners import power_rate

    np.testing.assert_allclose(rates[0], power_rate([1, 100], 0.5, 0.5, 0.005))


def test_bad_rates_and_flags_are_refused_before_work():
    class BadRate(GreedyArms):
        rate = (0.5, 2.0)

    with pytest.raises(ValueError, match=r"experts\[0\]: rate of .*BadRate must be a callable"):
        mlcb.engine.build(mlcb.SimulationConfig(env="mlcb/Trap-v0", experts=(BadRate(),) * 10, budget=2))

    class BadFlag(GreedyArms):
        heuristic = "yes"

    with pytest.raises(ValueError, match=r"heuristic of .*BadFlag must be True or False"):
        mlcb.engine.build(mlcb.SimulationConfig(env="mlcb/Trap-v0", experts=(BadFlag(),) * 10, budget=2))
    with pytest.raises(ValueError, match=r"experts\[0\]: object is neither an expert specification"):
        mlcb.SimulationConfig(env="mlcb/Trap-v0", experts=(object(),) * 10, budget=2)


# --- failures ------------------------------------------------------------------------------------
#: Whether the faults of Faulty happen: a condition outside the expert, as a device's or a file's
#: state would be. The setting's key reads the expert's code, its attributes and the plain
#: constants its code reads, none of which change when this is cleared; it reads an object such
#: as this one by its class only.
FAULTS_ON = threading.Event()
FAULTS_ON.set()


class Faulty(GreedyArms):
    """Misbehaves from round ``at`` on, in the replication whose expert seeds match ``victim``."""

    def __init__(self, fault: str, at: int = 50, victims=None, seed: int = 0) -> None:
        super().__init__(0.1, seed)
        self.fault, self.at, self.victims, self.seed, self.steps = fault, at, victims, seed, 0

    def spawn(self, seed):
        return Faulty(self.fault, self.at, self.victims, seed)

    def _armed(self) -> bool:
        hit = self.victims is None or self.seed in self.victims
        return FAULTS_ON.is_set() and self.steps >= self.at and hit

    def learn(self, data):
        self.steps += 1
        loss = super().learn(data)
        if self._armed():
            if self.fault == "raise":
                raise ZeroDivisionError("boom")
            if self.fault == "exit":
                sys.exit(3)
            if self.fault == "interrupt":
                raise KeyboardInterrupt
            if self.fault == "nan":
                return math.nan
            if self.fault == "large":
                return 1.5
            if self.fault == "shape":
                return (loss, 1.0, 2.0)
            if self.fault == "string":
                return "0.3"
            if self.fault == "none":
                return None
            if self.fault == "rate-nan":
                return loss, math.nan
            if self.fault == "rate-negative":
                return loss, -1.0
            if self.fault == "rate-string":
                return loss, "2"
        return loss

    def deploy(self, data):
        loss, expected = super().deploy(data)
        if self._armed() and self.fault == "deployed":
            return 2.5, expected
        if self._armed() and self.fault == "expected":
            return loss, -0.5
        if self._armed() and self.fault == "deployed-none":
            return None
        if self._armed() and self.fault == "deployed-exit":
            sys.exit()
        if self._armed() and self.fault == "deployed-string":
            return "0.3", expected
        return loss, expected


def _faulty_pool(fault: str, victims=None) -> list:
    return [GreedyArms(0.1)] * 3 + [Faulty(fault, victims=victims)] + [GreedyArms(0.2)] * 6


@pytest.mark.parametrize(
    "fault, error, message",
    [
        ("raise", ExpertError, r"learn raised ZeroDivisionError: boom"),
        # A learner's sys.exit() is its fault, named as any other (it used to end the run, and the
        # command, with the learner's exit status and no word).
        ("exit", ExpertError, r"learn raised SystemExit: 3$"),
        ("deployed-exit", ExpertError, r"deploy raised SystemExit$"),
        ("nan", ExpertLossError, r"training loss is nan; losses must be numbers in \[0, 1\]"),
        ("large", ExpertLossError, r"training loss is 1.5"),
        ("shape", ExpertError, r"learn must return a loss .* or a pair \(loss, rate\), got \("),
        ("deployed", ExpertLossError, r"deployed loss is 2.5"),
        ("expected", ExpertLossError, r"expected loss of the deployed decision is -0.5"),
        # A string or None is no loss (before, "0.3" was taken as 0.3 and None read "loss is nan").
        ("string", ExpertError, r"learn must return a loss .* or a pair \(loss, rate\), got '0.3'"),
        ("none", ExpertError, r"learn must return a loss .* got None"),
        ("deployed-string", ExpertError, r"deploy must return a loss .* got \('0.3', "),
        ("deployed-none", ExpertError, r"deploy must return a loss .* got None"),
        # Rates must be finite numbers >= 0.
        ("rate-nan", ExpertError, r"learn returned the rate nan; rates must be finite numbers >= 0"),
        ("rate-negative", ExpertError, r"learn returned the rate -1.0; rates must be finite numbers >= 0"),
        ("rate-string", ExpertError, r"learn must return a loss .* got \(.*, '2'\)"),
    ],
)
def test_a_faulty_python_expert_is_named_with_its_replication_and_round(fault, error, message):
    with pytest.raises(error, match=r"^expert 3 \(Faulty\), replication \d, round \d+: " + message):
        mlcb.simulate(
            env="mlcb/Trap-v0",
            experts=_faulty_pool(fault),
            budget=4,
            policy="uniform" if fault.startswith(("deployed", "expected")) else "round-robin",
            horizon=400,
            replications=2,
            seed=0,
        )


def test_an_interrupt_inside_a_learner_stays_an_interrupt():
    with pytest.raises(KeyboardInterrupt):
        mlcb.simulate(
            env="mlcb/Trap-v0", experts=_faulty_pool("interrupt"), budget=4, policy="round-robin",
            horizon=400, replications=1, seed=0,
        )  # fmt: skip


class Locked(GreedyArms):
    """Holds a lock: no deep copy, so each replication's copy needs a spawn (it has none)."""

    spawn = None

    def __init__(self) -> None:
        super().__init__(0.1)
        self.lock = threading.Lock()


class SpawnsNothing(GreedyArms):
    def spawn(self, seed):
        return None


class SpawnExits(GreedyArms):
    def spawn(self, seed):
        sys.exit("no copies")


class SpawnsItself(GreedyArms):
    def spawn(self, seed):  # reseeds and hands out the one object
        self.rng = np.random.default_rng(seed)
        return self


class SpawnsOne(GreedyArms):
    """Hands out one copy it keeps, whoever asks."""

    kept: GreedyArms | None = None

    def spawn(self, seed):
        if SpawnsOne.kept is None:
            SpawnsOne.kept = GreedyArms(0.1)
        return SpawnsOne.kept


class WarmUpdates(GreedyArms):
    def __init__(self, updates) -> None:
        super().__init__(0.1)
        self.warm_updates = updates

    def spawn(self, seed):
        return WarmUpdates(self.warm_updates)


class StatesOptimal(GreedyArms):
    def __init__(self, value) -> None:
        super().__init__(0.1)
        self.value = value

    def optimal_loss(self, env, env_params):
        if self.value == "raise":
            raise KeyError("no such arm")
        return self.value


@pytest.mark.filterwarnings("ignore:experts.3.. Locked holds a random generator")
@pytest.mark.parametrize(
    "expert, message",
    [
        (
            Locked(),
            "replication 0, round 0: it has no spawn(seed), and copy.deepcopy, which makes each replication's "
            "copy, raised TypeError: cannot pickle '_thread.lock' object; define spawn(seed) to return a fresh copy",
        ),
        (
            SpawnsNothing(),
            "replication 0, round 0: spawn(seed) returned None, not a learner with learn(data) and deploy(data)",
        ),
        (SpawnExits(), "replication 0, round 0: spawn raised SystemExit: no copies"),
        (
            SpawnsItself(0.1),
            "replication 0, round 0: spawn(seed) returned the expert itself, not a fresh copy: every "
            "replication, and the pass that computes the best expert in hindsight, would train that one "
            "object, and results would depend on what ran before; return a new learner "
            "(type(self)(..., seed=seed))",
        ),
        (
            WarmUpdates("2"),
            "replication 0, round 0: warm_updates, the updates its warm-start learn made, must be an integer "
            ">= 1, got '2'",
        ),
        (WarmUpdates(0), "replication 0, round 0: warm_updates, the updates its warm-start learn made, must be "
         "an integer >= 1, got 0"),
        (
            StatesOptimal(None),
            "round 0: optimal_loss(env, env_params) returned None; L_k*, the least expected loss of its model "
            "class, must be a number in [0, 1]",
        ),
        (StatesOptimal(math.nan), "round 0: optimal_loss(env, env_params) returned nan; L_k*"),
        (StatesOptimal(1.5), "round 0: optimal_loss(env, env_params) returned 1.5; L_k*"),
        (StatesOptimal("raise"), "round 0: optimal_loss raised KeyError: 'no such arm'"),
    ],
)  # fmt: skip
def test_a_python_experts_own_hooks_are_named_when_they_fail(expert, message):
    """What the engine calls of a learner besides learn and deploy (spawn or its deep copy,
    warm_updates, optimal_loss) fails with the expert named, not a bare traceback of its code,
    and an L_k* that is no number in [0, 1] is refused (it made every regret nan, or wrong)."""
    pool = [GreedyArms(0.1)] * 3 + [expert] + [GreedyArms(0.2)] * 6
    with pytest.raises(ExpertError) as caught:
        mlcb.simulate(env="mlcb/Trap-v0", experts=pool, budget=2, horizon=20, replications=1, seed=0)
    assert str(caught.value).startswith(f"expert 3 ({type(expert).__name__}), {message}"), str(caught.value)


def test_a_spawn_that_hands_out_one_object_to_several_holders_is_named():
    """Two replications (or two experts) holding one learner would each train it: the results
    would depend on the order the engine calls them in. The second holder is named."""
    pool = [GreedyArms(0.1)] * 3 + [SpawnsOne(0.1)] + [GreedyArms(0.2)] * 6
    with pytest.raises(ExpertError) as caught:
        mlcb.simulate(env="mlcb/Trap-v0", experts=pool, budget=2, horizon=20, replications=2, seed=0)
    assert str(caught.value) == (
        "expert 3 (SpawnsOne), replication 1, round 0: "
        "spawn(seed) returned the object it had returned for expert 3 of replication 0"
        "; each call must return a fresh copy, or both would train that one object"
    )


def test_a_rate_callable_that_raises_is_named_before_work():
    class Raising(GreedyArms):
        def rate(self, n, delta_prime):
            raise ZeroDivisionError("no rate")

    with pytest.raises(InputError) as caught:
        mlcb.engine.build(mlcb.SimulationConfig(env="mlcb/Trap-v0", experts=(Raising(),) * 10, budget=2))
    assert str(caught.value).startswith("experts[0]: rate of ")
    assert "Raising raised ZeroDivisionError: no rate; it is called as rate(n, delta_prime)" in str(
        caught.value
    )


class Mean:
    """Predicts the running mean of y on the GLM stream (whose reference is the best in hindsight)."""

    def __init__(self, bad="") -> None:
        self.total, self.n, self.bad = 0.0, 0, bad  # bad: what learn returns in place of its loss

    def learn(self, data):
        loss = data.loss(self.total / max(self.n, 1))
        self.total, self.n = self.total + data.y, self.n + 1
        return loss if self.bad == "" else self.bad

    def deploy(self, data):
        return data.loss(self.total / max(self.n, 1))


class StatedMean(Mean):
    def optimal_loss(self, env, env_params):
        return 0.1


@pytest.mark.parametrize(
    "bad, error, message",
    [
        (None, ExpertError, "learn (regret reference) must return a loss (a number in [0, 1]) or a pair (loss, rate), "
         "got None"),
        ("0.3", ExpertError, "learn (regret reference) must return a loss (a number in [0, 1]) or a pair (loss, rate), "
         "got '0.3'"),
        (math.nan, ExpertLossError, "training loss (regret reference) is nan; losses must be numbers in [0, 1]"),
        (1.5, ExpertLossError, "training loss (regret reference) is 1.5; losses must be numbers in [0, 1]"),
    ],
)  # fmt: skip
def test_the_regret_reference_pass_holds_losses_to_the_runs_rule_and_names_the_pool_index(
    bad, error, message
):
    """The best-in-hindsight pass runs before the run: a learner's bad loss there is named as the
    run names it (None was a bare TypeError, a string was read as a number), as its index in the
    whole pool (the pass sees only the experts that state no L_k*: it named expert 0)."""
    pool = [StatedMean(), StatedMean(), Mean(bad)]
    with pytest.raises(error) as caught:
        mlcb.simulate(env="mlcb/GLM-v0", experts=pool, budget=1, horizon=20, replications=1, seed=0)
    assert str(caught.value).startswith(f"expert 2 (Mean), replication 0, round 0: {message}"), str(
        caught.value
    )


_GLM = type(envs.make("mlcb/GLM-v0"))


class BrokenGLM(_GLM):
    """The GLM stream with an environment's fault of one's own: ``fault`` says which."""

    def __init__(self, fault: str = "round_data", **params) -> None:
        super().__init__(**params)
        self.fault = fault

    def round_data(self, params, state, t, expert):
        if self.fault == "round_data" and t == 2:
            raise KeyError("no row")
        return super().round_data(params, state, t, expert)

    def build(self, seed, replication, horizon):
        built = super().build(seed, replication, horizon)
        if self.fault == "build-exits":
            sys.exit(4)
        if self.fault == "build-raises":
            raise LookupError("no such cohort")
        return {"build-none": None, "build-three": (*built, 0)}.get(self.fault, built)

    def optimal_loss(self, params, expert):
        if self.fault == "optimal-raises":
            raise ZeroDivisionError("no optimum")
        return {"optimal-none": None, "optimal-nan": math.nan}.get(self.fault, 0.5)


@pytest.mark.parametrize(
    "fault, pool, error, message",
    [
        # the environment's round_data raising was reported as the learner's own fault
        ("round_data", [StatedMean(), StatedMean()], ExpertError,
         "expert 1 (StatedMean), replication 0, round 2: the environment's round_data (for deploy) raised "
         "KeyError: 'no row'"),
        ("round_data", [Mean(), Mean()], ExpertError,
         "expert 0 (Mean), replication 0, round 2: the environment's round_data (for learn, regret reference) "
         "raised KeyError: 'no row'"),
        # None was a bare TypeError; nan made the regret nan where the environment's L_k* is read
        ("optimal-none", [Mean(), Mean()], InputError,
         "environment BrokenGLM: optimal_loss(params, 0) returned None; the least expected loss of an expert "
         "must be a number in [0, 1]"),
        ("optimal-nan", [Mean(), Mean()], InputError, "environment BrokenGLM: optimal_loss(params, 0) returned nan"),
        # the environment's own code failing, or a build that is no pair: its own error a round
        # later, or a traceback that called it a bug of mlcb; sys.exit() ended the command unsaid
        ("optimal-raises", [Mean(), Mean()], InputError,
         "environment BrokenGLM: optimal_loss(params, 0) raised ZeroDivisionError: no optimum"),
        ("build-exits", [Mean(), Mean()], InputError,
         "environment BrokenGLM: build(seed=0, replication=0, horizon=5) raised SystemExit: 4"),
        ("build-raises", [Mean(), Mean()], InputError,
         "environment BrokenGLM: build(seed=0, replication=0, horizon=5) raised LookupError: no such cohort"),
        ("build-none", [Mean(), Mean()], InputError,
         "environment BrokenGLM: build(seed=0, replication=0, horizon=5) must return a pair (params, state), "
         "got NoneType None"),
        ("build-three", [Mean(), Mean()], InputError,
         "environment BrokenGLM: build(seed=0, replication=0, horizon=5) must return a pair (params, state), "
         "got a tuple of 3"),
    ],
)  # fmt: skip
def test_an_environments_own_faults_are_its_own(monkeypatch, fault, pool, error, message):
    monkeypatch.setattr(envs.registry, "_entries", dict(envs.registry._entries))
    envs.register("test/BrokenGLM-v0", f"{__name__}:BrokenGLM")
    with pytest.raises(error) as caught:
        mlcb.simulate(
            env="test/BrokenGLM-v0", env_params={"fault": fault}, experts=pool, policy="round-robin", budget=1,
            horizon=5, replications=1, seed=0,
        )  # fmt: skip
    assert str(caught.value).startswith(message), str(caught.value)


def test_learner_classes_that_differ_in_what_their_methods_close_over_are_told_apart():
    """A class made by a function (its methods read the function's variables) or differing in a
    method's default: the regret reference kept for one was reused for the other (a regret of 35
    where the fresh run gives 0), and a resumed run would reuse its parts."""
    from mlcb.engine import hindsight

    def learner(prediction):
        class Constant:
            def learn(self, data, scale=1.0):
                return data.loss(prediction * scale)

            def deploy(self, data):
                return data.loss(prediction)

        return Constant

    def run(prediction):
        return mlcb.simulate(
            env="mlcb/GLM-v0", experts=[learner(prediction)(), learner(prediction)()], budget=1,
            horizon=50, replications=1, seed=0,
        ).final()["regret"].to_numpy()  # fmt: skip

    hindsight.clear()
    run(0.0)
    after = run(3.0)
    hindsight.clear()
    np.testing.assert_array_equal(after, run(3.0))
    configs = [
        mlcb.SimulationConfig(env="mlcb/GLM-v0", experts=(learner(p)(),) * 2, budget=1) for p in (0.0, 3.0)
    ]
    assert configs[0].key() != configs[1].key()


def test_finished_replications_are_kept_and_a_rerun_resumes(tmp_path, monkeypatch):
    from mlcb.kernels.seeding import stream_keys
    from mlcb.learners import seed_of

    victim = seed_of(stream_keys(0, 2, 10).experts[3])  # expert 3 of replication 2 fails
    monkeypatch.setattr(python_loop, "DEFAULT_BLOCK", 1)
    fields = {"env": "mlcb/Trap-v0", "budget": 4, "policy": "round-robin", "horizon": 300, "replications": 4}
    with pytest.raises(ExpertError, match=r"expert 3 \(Faulty\), replication 2, round"):
        mlcb.simulate(experts=_faulty_pool("raise", victims={victim}), parts=tmp_path, **fields, seed=0)
    kept = sorted(p.name for p in tmp_path.rglob("replication-*.npz"))
    assert kept == ["replication-000000.npz", "replication-000001.npz"]

    ran = []
    original = python_loop._run_block
    monkeypatch.setattr(python_loop, "_run_block", lambda *a, **k: ran.append(a[2]) or original(*a, **k))
    # The same setting (same key: the expert's code and attributes unchanged) once the outside
    # cause of the fault is gone: only replications 2 and 3 run again. (A fix of the expert's code
    # makes another setting, run anew: tests/test_identity.py.)
    FAULTS_ON.clear()
    try:
        result = mlcb.simulate(
            experts=_faulty_pool("raise", victims={victim}), parts=tmp_path, **fields, seed=0
        )
    finally:
        FAULTS_ON.set()
    assert ran == [[2], [3]]
    assert sorted(result.replications["replication"]) == [0, 1, 2, 3]


def test_setting_keys_tell_learners_apart_and_are_stable():
    def key(lrs):
        pool = tuple(RiverExpert(RiverStyleRegressor(lr)) for lr in lrs)
        return mlcb.SimulationConfig(env="mlcb/GLM-v0", experts=pool, budget=1).key()

    assert key([0.01, 0.1]) == key([0.01, 0.1])  # no memory address in the description
    assert key([0.01, 0.1]) != key([0.01, 0.2])  # the wrapped model's parameters count


def test_a_learner_with_a_generator_but_no_spawn_is_warned_about():
    class NoSpawn(GreedyArms):
        spawn = None

    with pytest.warns(
        UserWarning, match=r"experts\[0\]: .*NoSpawn holds a random generator \(rng\) but has no spawn"
    ):
        mlcb.engine.build(mlcb.SimulationConfig(env="mlcb/Trap-v0", experts=(NoSpawn(),) * 10, budget=2))


class ScalarKinds(GreedyArms):
    """GreedyArms returning its numbers as NumPy scalars and 0-d arrays instead of floats."""

    def spawn(self, seed: int) -> ScalarKinds:
        return ScalarKinds(self.epsilon, seed)

    def learn(self, data):
        return np.array(super().learn(data))

    def deploy(self, data):
        loss, expected = super().deploy(data)
        return np.float32(loss).astype(np.float64), np.array(expected)


def test_numpy_scalars_and_0d_arrays_are_numbers_like_floats():
    fields = dict(env="mlcb/Trap-v0", budget=2, horizon=300, replications=3, seed=4)
    plain = mlcb.simulate(experts=[GreedyArms(eps) for eps in (0.05, 0.1, 0.2, 0.3, 0.4)] * 2, **fields)
    kinds = mlcb.simulate(experts=[ScalarKinds(eps) for eps in (0.05, 0.1, 0.2, 0.3, 0.4)] * 2, **fields)
    np.testing.assert_array_equal(plain.curves["regret"], kinds.curves["regret"])
    np.testing.assert_array_equal(plain.curves["pseudo_regret"], kinds.curves["pseudo_regret"])


class Pair(NamedTuple):
    first: float
    second: float


class PlainPairs(GreedyArms):
    """GreedyArms returning ``(loss, rate)`` from ``learn``, as plain tuples or as ``Pair``."""

    named = False

    def spawn(self, seed: int) -> PlainPairs:
        return type(self)(self.epsilon, seed)

    def learn(self, data):
        pair = (super().learn(data), 2.0 + self.epsilon)
        return Pair(*pair) if self.named else pair

    def deploy(self, data):
        pair = super().deploy(data)
        return Pair(*pair) if self.named else pair


class NamedPairs(PlainPairs):
    named = True


def test_a_named_tuple_pair_is_the_pair_it_holds():
    """``return Step(loss=..., rate=...)`` (a NamedTuple) was refused as "not a loss or a pair"."""
    fields = dict(env="mlcb/Trap-v0", budget=2, horizon=100, replications=2, seed=4)
    plain = mlcb.simulate(experts=[PlainPairs(eps) for eps in (0.05, 0.1, 0.2, 0.3, 0.4)] * 2, **fields)
    named = mlcb.simulate(experts=[NamedPairs(eps) for eps in (0.05, 0.1, 0.2, 0.3, 0.4)] * 2, **fields)
    np.testing.assert_array_equal(plain.curves["regret"], named.curves["regret"])
    np.testing.assert_array_equal(plain.curves["certificate"], named.curves["certificate"])


def test_a_deployed_value_that_is_not_a_number_is_named():
    class Worded(GreedyArms):
        def spawn(self, seed):
            return Worded(self.epsilon, seed)

        def deploy(self, data):
            return "low", 0.5

    with pytest.raises(
        ExpertError,
        match=r"^expert \d \(.*Worded\), replication 0, round 1: deploy must return a loss .*'low'",
    ):
        mlcb.simulate(env="mlcb/Trap-v0", experts=[Worded()] * 10, budget=2, horizon=20, replications=1)


@pytest.mark.parametrize("env", ["mlcb/Trap-v0", "mlcb/RealData-v0"])
def test_learner_pools_play_equals_deploying_then_training(monkeypatch, env):
    """The engine calls ``LearnerPool.play`` (deploy and train, replication after replication) in
    place of ``deploy`` for the block and then ``train`` for the block: the same results."""
    from mlcb.engine.learners import LearnerPool

    if env == "mlcb/Trap-v0":
        experts = [GreedyArms(eps) for eps in (0.01, 0.05, 0.1, 0.2, 0.4)] * 2
    else:
        pytest.importorskip("river")
        experts = [RiverExpert(RiverStyleRegressor(lr)) for lr in (0.001, 0.01, 0.1)]
    fields = dict(env=env, experts=experts, budget=2, horizon=300, replications=3, seed=1)
    played = mlcb.simulate(**fields)
    monkeypatch.setattr(LearnerPool, "play", None)  # the engine falls back to deploy, then train
    apart = mlcb.simulate(**fields)
    pd.testing.assert_frame_equal(played.curves, apart.curves)
    pd.testing.assert_frame_equal(played.experts, apart.experts)


def test_learner_pools_keep_few_writers_when_called_with_new_arrays():
    """The pool remembers how to write into the engine's output arrays (the same ones every
    round), but a caller that passes new arrays each step (the Gymnasium environment) does not
    make it hold on to them all."""
    import gymnasium as gym

    import mlcb.selection_env  # noqa: F401  (registers the environment)

    env = gym.make(
        "mlcb/BudgetedSelection-v0",
        preset="trap",
        budget=2,
        horizon=60,
        experts=[GreedyArms(eps) for eps in (0.01, 0.05, 0.1, 0.2, 0.4)] * 2,
    )
    env.reset(seed=0)
    for _ in range(60):
        env.step(env.action_space.sample())
    assert 0 < len(env.unwrapped._pool._written) <= 16


class CountedRate(GreedyArms):
    """Its rate callable gives ``value`` from count ``at`` on (a valid rate below it)."""

    def __init__(self, value: float = math.nan, at: int = 30, seed: int = 0) -> None:
        super().__init__(0.1, seed)
        self.value, self.at = value, at

    def spawn(self, seed):
        return CountedRate(self.value, self.at, seed)

    def rate(self, n, delta_prime):
        return np.where(np.asarray(n) < self.at, np.sqrt(n), self.value)


@pytest.mark.parametrize("value", [math.nan, -2.0, math.inf])
def test_a_rate_callable_that_turns_bad_is_named_with_its_count_before_work(value):
    """The rates of the counts a run reaches are read before it starts: a callable that turns bad
    at count 30 stops the run before any work, naming the expert, the value and the count."""
    pool = [GreedyArms(0.1)] * 3 + [CountedRate(value)] + [GreedyArms(0.2)] * 6
    with pytest.raises(
        InputError,
        match=rf"^experts\[3\]: rate of CountedRate must be a finite number >= 0 at every count, got "
        rf"{re.escape(repr(value))} at n = 30$",
    ):
        mlcb.simulate(
            env="mlcb/Trap-v0", experts=pool, budget=4, policy="round-robin", horizon=400, replications=1
        )


@pytest.mark.parametrize("value", [math.nan, -2.0])
def test_a_rate_callable_that_is_bad_from_the_start_is_refused_before_work(value):
    pool = [GreedyArms(0.1)] * 3 + [CountedRate(value, at=0)] + [GreedyArms(0.2)] * 6
    with pytest.raises(
        ValueError, match=r"experts\[3\]: rate of CountedRate must be a finite number >= 0 at every"
    ):
        mlcb.engine.build(mlcb.SimulationConfig(env="mlcb/Trap-v0", experts=tuple(pool), budget=2))


@pytest.mark.parametrize(
    "fault, message",
    [
        ("string", "learn must return a loss (a number in [0, 1]) or a pair (loss, rate), got '0.3'"),
        ("none", "learn must return a loss (a number in [0, 1]) or a pair (loss, rate), got None"),
        (
            "deployed-none",
            "deploy must return a loss (a number in [0, 1]) or a pair (loss, expected loss), got None",
        ),
        ("rate-nan", "learn returned the rate nan; rates must be finite numbers >= 0"),
    ],
)
def test_what_a_python_expert_returns_is_a_number_or_named(fault, message):
    """The messages of docs/bad-inputs.md, word for word."""
    with pytest.raises(ExpertError, match=r"^expert 3 \(Faulty\), replication \d, round \d+: ") as caught:
        mlcb.simulate(
            env="mlcb/Trap-v0",
            experts=_faulty_pool(fault),
            budget=4,
            policy="uniform" if fault.startswith("deployed") else "round-robin",
            horizon=400,
            replications=1,
            seed=0,
        )
    assert str(caught.value).endswith(message)
