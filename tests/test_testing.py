"""The public conformance checks (mlcb.testing): every registered object passes them, and
deliberately broken ones fail with a message that says what is wrong."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np
import pytest

import agents
import envs
from agents.bandits import BANDITS, UCB1
from envs.bandit import TrapEnv
from mlcb import policies
from mlcb.kernels import implements
from mlcb.testing import ConformanceError, check_env, check_expert, check_policy

# Gymnasium's checker advises bounded, normalised Box spaces (the GLM's prediction is unbounded).
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*(infinity|symmetric and normalized).*:UserWarning",
)

ENV_PARAMS = {
    "mlcb/BanditExperts-v0": {
        "reward_means": [[0.9, 0.5, math.nan], [0.2, 0.3, 0.4], [0.6, math.nan, math.nan]]
    },
    "mlcb/Trap-v0": {"n_experts": 4},
}
K = 6
BUDGETS = {"smooth-corral": 1, "full-budget": K}  # CORRAL trains one expert; full-budget trains all K


def test_conformance_error_is_an_assertion_error():
    assert issubclass(ConformanceError, AssertionError)


# --- everything registered passes ----------------------------------------------------------------
@pytest.mark.parametrize("name", envs.names())
def test_registered_environment_conforms(name):
    assert check_env(name, env_params=ENV_PARAMS.get(name))


@pytest.mark.parametrize("name", policies.names())
def test_registered_policy_conforms(name):
    assert check_policy(name, n_experts=K, budget=BUDGETS.get(name, 2), horizon=120)


def test_policy_object_conforms():
    check_policy(policies.make("mlcb", bonus_scale=0.5), n_experts=4, budget=2, horizon=60)


@pytest.mark.parametrize("name", agents.names())
def test_registered_expert_family_conforms(name):
    if name == "ogd":
        assert check_expert(agents.make(name), "mlcb/GLM-v0", rounds=20)
    elif name in ("softmax", "perceptron"):  # classifiers of a real-data stream
        env_params = {"dataset": "breast-cancer"}
        assert check_expert(agents.make(name), "mlcb/RealData-v0", env_params=env_params)
    elif name.startswith("bco"):
        assert check_expert(agents.make(name), "mlcb/ConvexBandit-v0", rounds=20)
    elif name == "moe":  # torch networks of the clustered stream
        pytest.importorskip("torch")
        assert check_expert(agents.make(name, hidden=4), "mlcb/Clustered-v0", rounds=20)
    else:
        assert check_expert(agents.make(name), "mlcb/Trap-v0", env_params={"n_experts": 4})


def test_expert_on_an_environment_object():
    check_expert(agents.make("ucb1"), envs.make("mlcb/Trap-v0", n_experts=3), rounds=20)


# --- Python experts ------------------------------------------------------------------------------
class Leader:
    """Follow the leader over the expert's arms (ties: smallest index); deploys its most pulled arm."""

    heuristic = True

    def __init__(self):
        self.pulls = None
        self.sums = None

    def _start(self, data):
        if self.pulls is None:
            self.pulls = np.zeros(data.n_arms)
            self.sums = np.zeros(data.n_arms)

    def _arm(self):
        untried = np.flatnonzero(self.pulls == 0)
        return int(untried[0]) if untried.size else int(np.argmin(self.sums / self.pulls))

    def learn(self, data):
        self._start(data)
        arm = self._arm()
        loss = data.loss(arm)
        self.pulls[arm] += 1
        self.sums[arm] += loss
        return loss

    def deploy(self, data):
        self._start(data)
        arm = int(np.argmax(self.pulls))
        return data.loss(arm), data.mean(arm)


class RandomLeader(Leader):
    """Explores with probability 0.2 from its own generator; deploys from a separate one."""

    def __init__(self, seed=0):
        super().__init__()
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.deploy_rng = np.random.default_rng([seed, 1])

    def spawn(self, seed):
        return RandomLeader(seed)

    def _arm(self):
        if self.rng.random() < 0.2:
            return int(self.rng.integers(len(self.pulls)))
        return super()._arm()

    def deploy(self, data):
        self._start(data)
        arm = int(self.deploy_rng.integers(data.n_arms))
        return data.loss(arm), data.mean(arm)


TRAP = {"env": "mlcb/Trap-v0", "env_params": {"n_experts": 3}, "rounds": 12}


def test_python_experts_conform():
    check_expert(Leader(), **TRAP)
    check_expert(RandomLeader(), **TRAP)


def test_a_check_returns_a_report_of_what_ran():
    """A check that passes says so: a report, true, that lists every check and what to know."""
    report = check_expert(RandomLeader(), **TRAP)
    assert report and report.passed and report.environment == TRAP["env"]
    text = str(report)
    assert text.startswith(
        f"expert RandomLeader (a Python expert) on {TRAP['env']}: {len(report.checks)} checks"
    )
    assert "spawn(seed): a new, untrained learner" in text and "a short simulation ran" in text
    assert "heuristic: nobody has proved its rate" in text  # what a user should know of it
    assert "<li>" in report._repr_html_() and repr(report).startswith("<CheckReport: expert RandomLeader")
    quick = check_expert(Leader(), **TRAP, simulate=False)
    assert "spawn" not in str(quick) and not any("simulation" in check for check in quick.checks)
    assert "Gymnasium's own checker" in str(check_env("mlcb/Trap-v0", env_params={"n_experts": 3}))
    assert "a short simulation" in str(check_policy("greedy", n_experts=4, budget=2, horizon=40))


def _broken(method=None, **attributes):
    """A Leader subclass with ``method`` replaced and class ``attributes`` set."""
    namespace = dict(attributes)
    if method is not None:
        namespace[method.__name__] = method
    return type("Broken", (Leader,), namespace)()


def _fails(expert, *fragments, **kwargs):
    with pytest.raises(ConformanceError) as info:
        check_expert(expert, **{**TRAP, "simulate": False, **kwargs})
    message = str(info.value)
    assert message.startswith("expert Broken"), message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_learn_returning_three_values_fails():
    def learn(self, data):
        return (Leader.learn(self, data), 1.0, 2.0)

    _fails(_broken(learn), "learn(data) at round 0 returned", "(a tuple of 3)", "or a pair (loss, rate)")


def test_learn_returning_a_list_fails():
    def learn(self, data):
        return [Leader.learn(self, data), 1.0]

    _fails(_broken(learn), "learn(data) at round 0 returned", "(a list of 2)", "a tuple (loss, rate)")


def test_nan_loss_fails():
    def learn(self, data):
        Leader.learn(self, data)
        return math.nan

    _fails(_broken(learn), "learn(data) at round 0 returned nan", "must be a number in [0, 1]")


def test_loss_out_of_range_fails():
    def learn(self, data):
        loss = Leader.learn(self, data)
        return 1.5 if self.pulls.sum() > 3 else loss

    _fails(_broken(learn), "learn(data) at round 3 returned 1.5, outside [0, 1]", "normalise or clip")


def test_deploy_out_of_range_expected_loss_fails():
    def deploy(self, data):
        return 0.0, -0.5

    _fails(_broken(deploy), "deploy(data) at round 0 returned -0.5, outside [0, 1]")


def test_deploy_that_learns_fails():
    def deploy(self, data):
        out = Leader.deploy(self, data)
        Leader.learn(self, data)
        return out

    _fails(
        _broken(deploy), "deploy(data) at round 1 changed the learner's state", "'pulls'", "must not learn"
    )


def test_deploy_drawing_from_the_learning_stream_fails():
    class Shared(RandomLeader):
        def spawn(self, seed):
            return Shared(seed)

        def deploy(self, data):
            self._start(data)
            arm = int(self.rng.integers(data.n_arms))  # the stream learn explores with
            return data.loss(arm), data.mean(arm)

    with pytest.raises(ConformanceError, match="changed what learn does next"):
        check_expert(Shared(), **TRAP, simulate=False)


def test_decreasing_rate_fails():
    _fails(
        _broken(rate=staticmethod(lambda n, delta_prime: 100.0 / np.asarray(n, dtype=float))),
        "rate(n, delta') decreases: U(1) = 100.0 > U(2) = 50.0",
        "non-decreasing in n",
    )


def test_rate_that_is_not_vectorised_fails():
    _fails(
        _broken(rate=staticmethod(lambda n, delta_prime: 1.0)),
        "has shape ()",
        "vectorised over an array of counts",
    )


def test_valid_rate_above_n_fails():
    _fails(
        _broken(rate=staticmethod(lambda n, delta_prime: 2.0 * np.asarray(n, dtype=float)), heuristic=False),
        "at n = 1 is 2.0 > n while declared valid",
        "min(n, ...)",
    )


def test_bad_rate_pair_and_heuristic_fail():
    _fails(_broken(rate=(1.0, 1.5)), "0 < alpha <= 1")
    _fails(_broken(heuristic="no"), "heuristic is 'no' (str); it must be a bool")


def test_spawn_must_be_deterministic():
    def spawn(self, seed):
        return RandomLeader(int(np.random.default_rng().integers(1 << 30)))

    _fails(_broken(spawn), "spawn(0) is not deterministic")


def test_spawn_must_give_an_untrained_copy():
    import copy

    def spawn(self, seed):
        return copy.deepcopy(self)

    _fails(_broken(spawn), "of a trained learner does not give a fresh, untrained copy")


def test_neither_learner_nor_specification_fails():
    with pytest.raises(ConformanceError, match="is neither an expert specification"):
        check_expert(object(), **TRAP)


def test_a_class_in_place_of_an_expert_fails_naming_it():
    """It failed inside spawn with a TypeError (spawn() missing 1 required positional argument)."""

    class Learner:
        def spawn(self, seed):
            return Learner()

        def learn(self, data):
            return 0.0

        def deploy(self, data):
            return 0.0

    with pytest.raises(
        ConformanceError, match=r"expert Learner: is a class; give an instance \(Learner\(...\)\)"
    ):
        check_expert(Learner, **TRAP)


# --- expert families -----------------------------------------------------------------------------
class _DecreasingFamily:
    """The bandit family with a rate that decreases."""

    name = "decreasing"
    smoothing = BANDITS.smoothing

    def __getattr__(self, member):
        return getattr(BANDITS, member)

    def check(self, experts, env):
        pass

    def rates(self, experts, env, n, delta_prime):
        return np.tile(1.0 / np.asarray(n, dtype=float), (len(experts), 1))


@dataclass(frozen=True)
class DecreasingUCB(UCB1):
    family: ClassVar = _DecreasingFamily()


def test_family_with_a_decreasing_rate_fails():
    with pytest.raises(ConformanceError) as info:
        check_expert(DecreasingUCB(), **TRAP)
    message = str(info.value)
    assert "family 'decreasing' of expert DecreasingUCB" in message
    assert "rates(...)[0] decreases" in message


def test_family_refusing_the_environment_fails():
    with pytest.raises(ConformanceError, match="check refuses a pool of expert OnlineGradientDescent"):
        check_expert(agents.make("ogd"), **TRAP)


# --- policies ------------------------------------------------------------------------------------
class ProbeParams(NamedTuple):
    n_experts: int
    budget: int
    mode: int


class ProbeState(NamedTuple):
    pass


CORRECT, TOO_MANY, TWICE, FAR, PAST_BUFFER, NO_WIDTHS, RANDOM = range(7)


@implements("select", ProbeParams)
def _probe_select(params, state, stats, t, key, selected, widths):
    count = params.n_experts if params.mode == TOO_MANY else params.budget
    for j in range(count):
        selected[j] = (t + j) % params.n_experts
        if params.mode != NO_WIDTHS:
            widths[j] = math.nan
    if params.mode == TWICE:
        selected[1] = selected[0]
    if params.mode == PAST_BUFFER:
        selected[params.budget] = 0
    if params.mode == RANDOM:
        selected[0] = np.int64(np.random.random() * params.n_experts)  # noqa: NPY002 (Numba's own)
        selected[1] = (selected[0] + 1) % params.n_experts
    chosen = params.n_experts + 3 if params.mode == FAR else selected[0]
    return count, chosen


@dataclass(frozen=True)
class ProbePolicy:
    """Trains ``M`` experts cyclically; ``mode`` breaks it one way or another."""

    mode: int = CORRECT

    warm_start: ClassVar[bool] = True
    has_certificate: ClassVar[bool] = False
    certificate_valid: ClassVar[bool] = False

    def build(self, n_experts, budget, delta, horizon, optimal):
        return ProbeParams(int(n_experts), int(budget), int(self.mode)), ProbeState()


def _policy_fails(policy, *fragments):
    with pytest.raises(ConformanceError) as info:
        check_policy(policy, n_experts=5, budget=2, horizon=30)
    message = str(info.value)
    assert message.startswith("policy ProbePolicy"), message
    for fragment in fragments:
        assert fragment in message, message


def test_probe_policy_conforms():
    check_policy(ProbePolicy(), n_experts=5, budget=2, horizon=30)


def test_policy_selecting_more_than_the_budget_fails():
    _policy_fails(
        ProbePolicy(TOO_MANY),
        "select at round 1: returned n_selected = 5 experts, more than selection_size = 2",
    )


def test_policy_writing_past_its_buffer_fails():
    _policy_fails(ProbePolicy(PAST_BUFFER), "wrote selected[2], past its 2 entries")


def test_policy_selecting_an_expert_twice_fails():
    _policy_fails(ProbePolicy(TWICE), "selected [1, 1]: an expert twice")


def test_policy_deploying_a_missing_expert_fails():
    _policy_fails(ProbePolicy(FAR), "deployed 8; deploy an expert index in [0, 5) or -1")


def test_policy_without_widths_fails():
    _policy_fails(ProbePolicy(NO_WIDTHS), "did not write widths[0]")


def test_nondeterministic_policy_fails():
    _policy_fails(ProbePolicy(RANDOM), "select: is not deterministic")


def test_policy_flags_and_dataclass_are_checked():
    @dataclass
    class Loose:
        def build(self, n_experts, budget, delta, horizon, optimal):
            return ProbePolicy().build(n_experts, budget, delta, horizon, optimal)

    with pytest.raises(ConformanceError, match="not frozen"):
        check_policy(Loose(), n_experts=5, budget=2)

    @dataclass(frozen=True)
    class Claims(ProbePolicy):
        certificate_valid: ClassVar[bool] = True

    with pytest.raises(ConformanceError, match="certificate_valid is True but has_certificate is False"):
        check_policy(Claims(), n_experts=5, budget=2)

    @dataclass(frozen=True)
    class Wide(ProbePolicy):
        def selection_size(self, n_experts, budget):
            return n_experts + 1

    with pytest.raises(ConformanceError, match=r"selection_size\(5, 2\): returned 6 \(int\)"):
        check_policy(Wide(), n_experts=5, budget=2)


# --- environments --------------------------------------------------------------------------------
class NoisyTrap(TrapEnv):
    """A trap whose build draws from an unseeded generator."""

    def build(self, seed, replication, horizon):
        params, state = super().build(seed, replication, horizon)
        noise = np.random.default_rng().uniform(0, 0.01, params.loss_means.shape)
        return params._replace(loss_means=params.loss_means * (1 - noise)), state


class SameEveryReplication(TrapEnv):
    def build(self, seed, replication, horizon):
        return super().build(seed, 0, horizon)


class SharedState(TrapEnv):
    def build(self, seed, replication, horizon):
        params, _ = super().build(seed, replication, horizon)
        if not hasattr(self, "_shared"):
            self._shared = super().build(seed, replication, horizon)[1]
        return params, self._shared


class BadOptimum(TrapEnv):
    def optimal_loss(self, params, expert):
        return 1.25


def _env_fails(env, *fragments):
    with pytest.raises(ConformanceError) as info:
        check_env(env)
    message = str(info.value)
    assert message.startswith(f"environment {type(env).__name__}"), message
    for fragment in fragments:
        assert fragment in message, message


def test_nondeterministic_build_fails():
    _env_fails(
        NoisyTrap(n_experts=3),
        "build(0, 0, 3): is not deterministic: params.loss_means differs between two calls",
    )


def test_build_ignoring_the_replication_fails():
    _env_fails(SameEveryReplication(n_experts=3), "build(0, 0, 3) and build(0, 1, 3) are equal")


def test_build_sharing_state_fails():
    _env_fails(SharedState(n_experts=3), "two calls return the same array state.round")


def test_optimal_loss_out_of_range_fails():
    _env_fails(BadOptimum(n_experts=3), "optimal_loss(params, 0) returned 1.25, outside [0, 1]")


def test_environment_without_round_data_fails():
    class Bare:
        n_experts = 2

        def build(self, seed, replication):
            return (), ()

        def optimal_loss(self, params, expert):
            return 0.5

    with pytest.raises(ConformanceError, match="environment Bare: has no method round_data"):
        check_env(Bare())


class OldReset(TrapEnv):
    """Its reset returns the observation alone (the old Gym API)."""

    def reset(self, *, seed=None, options=None):
        return super().reset(seed=seed, options=options)[0]


def test_gymnasium_checker_runs():
    with pytest.raises(
        ConformanceError, match=r"environment OldReset: Gymnasium's checker .* fails: .*reset\(\)"
    ):
        check_env(OldReset(n_experts=3))
    check_env(OldReset(n_experts=3), gymnasium=False)


def test_a_round_data_block_that_disagrees_with_round_data_fails():
    """A block method that hands every replication the first one's row is caught, and one offered
    without ``round_data_shared`` too; the real-data environment's own passes."""
    pytest.importorskip("river")
    from envs.real_data import RealDataEnv

    class FirstRowForAll(RealDataEnv):
        def round_data_block(self, params, states, t):
            return [self.round_data(params[0], states[0], t, 0)] * len(states)

    class Unshared(RealDataEnv):
        round_data_shared = False

    check_env(RealDataEnv("phishing"), gymnasium=False)
    for env, fragment in (
        (FirstRowForAll("phishing"), "differs from round_data for replication 1"),
        (Unshared("phishing"), "round_data_shared = True"),
    ):
        with pytest.raises(ConformanceError, match="round_data_block") as info:
            check_env(env, gymnasium=False)
        assert fragment in str(info.value)
