"""Every registered policy through the same checks (Gymnasium's check_env / river's checks idea)."""

from __future__ import annotations

import dataclasses
import importlib
import math
import sys
import threading
from typing import ClassVar, NamedTuple

import numpy as np
import pytest

import agents
import envs
import mlcb
from mlcb import engine, policies, presets
from mlcb.errors import PolicyError
from mlcb.kernels import implements, kernel
from mlcb.testing import ConformanceError, check_env, check_expert
from mlcb.testing.twins import core as twin

# Each policy module brings a pure-Python twin; importing registers it.
for _module in (
    "mlcb.testing.twins.limited_corral",
    "mlcb.testing.twins.balancing",
    "mlcb.testing.twins.references",
    "mlcb.testing.twins.practitioners",
):
    importlib.import_module(_module)

NAMES = policies.names()
SMALL_TRAP = {"env_params": {"n_experts": 6, "n_arms": 2}}


def _config(name: str, budget: int, seed: int = 1, horizon: int = 600, **fields):
    return presets.get("trap").config(budget, policy=name, seed=seed, horizon=horizon, **SMALL_TRAP, **fields)


def _run(config, replication: int = 0):
    grid = np.arange(1, config.horizon + 1)
    return engine.run_replication(
        engine.build(config),
        config.seed,
        replication,
        config.horizon,
        grid,
        trace_rounds=config.horizon,
    )


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("budget", [1, 3])
def test_budget_and_deployment_are_valid(name, budget):
    config = _config(name, budget)
    policy = engine.build(config).policy
    size = engine.selection_size(policy, config.n_experts, budget)
    assert size == budget or name == "full-budget"
    result = _run(config)
    for row, deployed in zip(result.trace_selected, result.trace_deployed):
        chosen = row[row >= 0]
        assert 1 <= len(chosen) <= size
        assert len(set(chosen.tolist())) == len(chosen)
        assert np.all((chosen >= 0) & (chosen < config.n_experts))
        assert deployed == -1 or 0 <= deployed < config.n_experts
    warm = config.n_experts if getattr(policy, "warm_start", True) else 0
    assert result.trained[-1].sum() == warm + (result.trace_selected >= 0).sum()
    assert np.all(np.isfinite(result.regret)) and np.all(np.isfinite(result.pseudo_regret))
    assert np.all(np.diff(result.pseudo_regret) >= -1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_under_a_seed(name):
    config = _config(name, 2)
    first, second = _run(config), _run(config)
    np.testing.assert_array_equal(first.trace_selected, second.trace_selected)
    np.testing.assert_array_equal(first.trace_deployed, second.trace_deployed)
    np.testing.assert_array_equal(first.regret, second.regret)


@pytest.mark.parametrize("name", NAMES)
def test_runs_on_the_glm_stream(name):
    config = presets.get("glm").config(2, policy=name, horizon=150, smoothing="last")
    result = _run(config)
    assert np.all(np.isfinite(result.pseudo_regret))


@pytest.mark.parametrize("name", NAMES)
def test_has_a_twin(name):
    assert type(policies.make(name)) in twin.POLICIES


def _bad_values(field: dataclasses.Field):
    default = field.default
    if isinstance(default, bool) or default is None or default is dataclasses.MISSING:
        return []
    if isinstance(default, str):
        return ["not-a-choice"]
    if isinstance(default, (int, float)):
        return [-1, float("nan")]
    return []


CASES = [
    (name, field.name, value)
    for name in NAMES
    for field in dataclasses.fields(policies.make(name))
    for value in _bad_values(field)
]


@pytest.mark.parametrize(("name", "field", "value"), CASES)
def test_bad_parameters_are_refused_by_name(name, field, value):
    with pytest.raises(ValueError, match=field):
        policies.make(name, **{field: value})


@pytest.mark.parametrize("name", NAMES)
def test_unknown_parameter_is_refused(name):
    with pytest.raises(TypeError, match="no_such_parameter"):
        policies.make(name, no_such_parameter=1)


@pytest.mark.parametrize("name", NAMES)
def test_documented(name):
    policy = policies.make(name)
    doc = type(policy).__doc__ or ""
    assert len(doc) > 200, f"{name}: the class docstring should cite its paper and state its parameters"
    assert "Parameters" in doc


# --- check_expert on Python learners whose own code fails ------------------------------------------
class _FirstArm:
    """Plays arm 0; ``fault`` names what goes wrong (nothing by default)."""

    def __init__(self, fault: str = "") -> None:
        self.fault, self.steps = fault, 0

    def learn(self, data):
        self.steps += 1
        if self.fault == "learn" and self.steps == 3:
            raise ZeroDivisionError("boom")
        if self.fault == "exit" and self.steps == 2:
            sys.exit(3)
        if self.fault == "0d":  # a 0-d array is a number to the engine (docs/python-experts.md)
            return np.array(data.loss(0)), np.array(1.0)
        return data.loss(0)

    def deploy(self, data):
        if self.fault == "deploy":
            raise KeyError("arm")
        if self.fault == "0d":
            return np.array(data.loss(0)), np.array(data.mean(0))
        return data.loss(0), data.mean(0)


class _SpawnFails(_FirstArm):
    def spawn(self, seed):
        raise RuntimeError("no copies")


class _Locked(_FirstArm):
    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()


class _OptimalFails(_FirstArm):
    def optimal_loss(self, env, env_params):
        raise AttributeError("no optimum")


@pytest.mark.parametrize(
    "expert, message",
    [
        (_FirstArm("learn"), "expert _FirstArm: learn(data) at round 2 fails: ZeroDivisionError: boom"),
        (_FirstArm("deploy"), "expert _FirstArm: deploy(data) at round 0 fails: KeyError: 'arm'"),
        (_FirstArm("exit"), "expert _FirstArm: learn(data) at round 1 fails: SystemExit: 3"),
        (_SpawnFails(), "expert _SpawnFails: spawn(0) fails: RuntimeError: no copies"),
        (
            _Locked(),
            "expert _Locked: has no spawn(seed), and copy.deepcopy, which the engine uses to make each "
            "replication's copy, fails: TypeError: cannot pickle '_thread.lock' object; define spawn(seed) "
            "to return a fresh copy",
        ),
        (
            _OptimalFails(),
            "expert _OptimalFails: optimal_loss(env, env_params) fails: AttributeError: no optimum",
        ),
    ],
)
def test_check_expert_reports_a_failure_of_the_learners_own_code(expert, message):
    """The learner's exceptions (a sys.exit() too) come out as a ConformanceError naming the method
    and the round, not as its bare traceback (nor the end of the program)."""
    with pytest.raises(ConformanceError) as caught:
        check_expert(expert, "mlcb/Trap-v0", rounds=5, simulate=False)
    assert str(caught.value) == message


def test_check_expert_takes_what_the_engine_takes_as_a_loss():
    """0-d arrays are numbers to the engine; the check failed such a learner."""
    assert check_expert(_FirstArm("0d"), "mlcb/Trap-v0", rounds=5, simulate=False)


# --- the engines refuse a selection they cannot index with -----------------------------------------
class _BreakingParams(NamedTuple):
    n_experts: int
    budget: int
    mode: int


class _BreakingState(NamedTuple):
    pass


_FAR_INDEX, _TOO_MANY, _FAR_DEPLOYED, _BELOW_DEPLOYED = range(4)


@implements("select", _BreakingParams)
@kernel
def _breaking_select(params, state, stats, t, key, selected, widths):
    """Trains experts 0 .. M - 1 and deploys expert 0, but from round 3 on breaks the contract."""
    for j in range(params.budget):
        selected[j] = j
        widths[j] = math.nan
    if t < 3:
        return params.budget, 0
    if params.mode == _FAR_INDEX:
        selected[1] = params.n_experts
    if params.mode == _TOO_MANY:
        return params.budget + 1, 0
    if params.mode == _FAR_DEPLOYED:
        return params.budget, params.n_experts
    if params.mode == _BELOW_DEPLOYED:
        return params.budget, -2
    return params.budget, 0


@dataclasses.dataclass(frozen=True)
class BreakingPolicy:
    """A policy of one's own that breaks the selection contract from round 3 on (``mode``)."""

    mode: int = _FAR_INDEX

    has_certificate: ClassVar[bool] = False

    def build(self, n_experts, budget, delta, horizon, optimal):
        return _BreakingParams(n_experts, budget, self.mode), _BreakingState()


@pytest.mark.parametrize("engine_name", ["compiled", "python"])
@pytest.mark.parametrize(
    "mode, problem",
    [
        (_FAR_INDEX, "select put expert 6 in the training set, not an index in [0, 6)"),
        (_TOO_MANY, "select returned n_selected = 3, outside [0, 2] (selection_size = 2)"),
        (_FAR_DEPLOYED, "select deployed 6; deploy an expert index in [0, 6) or -1 (Top-M)"),
        (_BELOW_DEPLOYED, "select deployed -2; deploy an expert index in [0, 6) or -1 (Top-M)"),
    ],
)
def test_the_engines_stop_a_policy_whose_selection_they_cannot_index_with(
    monkeypatch, engine_name, mode, problem
):
    """Such a policy crashed the process (an index past the training set's buffer or the pool) or
    ran on numbers read from outside the arrays (a deployed expert K or -2: no error, a regret of
    -35); each engine now stops at the round, naming the policy."""
    monkeypatch.setattr(policies.registry, "_entries", dict(policies.registry._entries))
    policies.register("breaking-selection", f"{__name__}:BreakingPolicy")
    with pytest.raises(PolicyError) as caught:
        mlcb.simulate(
            **SMALL_TRAP, env="mlcb/Trap-v0", experts=[agents.make("ucb1")] * 6, policy="breaking-selection",
            policy_params={"mode": mode}, budget=2, horizon=10, replications=1, engine=engine_name,
        )  # fmt: skip
    assert str(caught.value) == (
        f"policy breaking-selection (replication 0, round 3): {problem}; mlcb.testing.check_policy checks a "
        "policy against its contract"
    )


def test_the_compiled_loop_checks_the_selections_of_policies_of_ones_own_only():
    """The check after every select is a sixth of a round's instructions on the trap: the compiled
    loop keeps it for a policy of one's own, and leaves it out for mlcb's policies, whose
    selections test_testing's conformance checks hold to the contract."""
    from mlcb.engine.replications import checks_selection

    assert not any(checks_selection(policies.make(name)) for name in policies.names())
    assert checks_selection(BreakingPolicy())


# --- check_env on an environment whose own code fails ------------------------------------------------
_GLM = type(envs.make("mlcb/GLM-v0"))


class _FailingGLM(_GLM):
    """The GLM stream whose ``fault`` method raises (or exits)."""

    def __init__(self, fault: str, **params) -> None:
        super().__init__(**params)
        self.fault = fault

    def build(self, seed, replication, horizon):
        if self.fault == "build":
            sys.exit(5)
        return super().build(seed, replication, horizon)

    def optimal_loss(self, params, expert):
        if self.fault == "optimal_loss":
            raise ZeroDivisionError("no optimum")
        return super().optimal_loss(params, expert)

    def round_data(self, params, state, t, expert):
        if self.fault == "round_data" and t == 2:
            raise KeyError("no row")
        return super().round_data(params, state, t, expert)


@pytest.mark.parametrize(
    "fault, message",
    [
        ("build", "environment _FailingGLM: build(0, 0, 3) fails: SystemExit: 5"),
        (
            "optimal_loss",
            "environment _FailingGLM: optimal_loss(params, 0) fails: ZeroDivisionError: no optimum",
        ),
        ("round_data", "environment _FailingGLM: round_data(params, state, 2, 0) fails: KeyError: 'no row'"),
    ],
)
def test_check_env_reports_a_failure_of_the_environments_own_code(fault, message):
    with pytest.raises(ConformanceError) as caught:
        check_env(_FailingGLM(fault), gymnasium=False)
    assert str(caught.value) == message


class _HandsOnItsList(_FirstArm):
    """spawn forgets to copy: every replication's copy appends to one list."""

    def __init__(self, played=None) -> None:
        super().__init__()
        self.played = [] if played is None else played

    def spawn(self, seed):
        return _HandsOnItsList(self.played)

    def learn(self, data):
        self.played.append(1)
        return data.loss(len(self.played) % 2)


class _CountsInItsClass(_FirstArm):
    """A class attribute as state: every deep copy shares it."""

    counts = [0]

    def learn(self, data):
        self.counts[0] += 1
        return data.loss(self.counts[0] % 2)


@pytest.mark.parametrize(
    ("expert", "made"),
    [
        (_HandsOnItsList(), "spawn(0), played side by side on the same rounds, return other losses than one copy "
         "played alone: spawn(0) is not deterministic, or"),
        (_CountsInItsClass(), "copy.deepcopy, played side by side on the same rounds, return other losses than one "
         "copy played alone:"),
    ],
)  # fmt: skip
def test_check_expert_fails_copies_that_share_state(expert, made):
    """Copies sharing state made every replication's numbers depend on the others'; one passed the
    check, the other failed it blaming deploy."""
    with pytest.raises(ConformanceError) as caught:
        check_expert(expert, "mlcb/Trap-v0", rounds=10, simulate=False)
    assert str(caught.value) == (
        f"expert {type(expert).__name__}: two copies made by {made} the copies share state (a class attribute, "
        "a list or array handed to every copy, a global random generator); give every copy its own state, "
        "seeded from spawn(seed)"
    )
