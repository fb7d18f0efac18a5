"""The expert families (mlcb.contracts.ExpertFamily): everything about a family is decided by it,
on the environment being run."""

from __future__ import annotations

import numpy as np
import pytest

import agents
import envs
import mlcb
from agents.bandits import BANDITS, UCB1, BanditFamily, EpsilonGreedy, ThompsonSampling
from agents.family import BanditEnvironmentFamily, CompiledFamily, Family, overflowed_norm, rate_values
from agents.glm import GLMS, GLMFamily, OnlineGradientDescent
from agents.rates import expert_rate
from envs.links import LINK_NAMES
from mlcb import engine, kernels, presets
from mlcb.contracts import BuildContext, ExpertFamily, family_of

#: The links whose loss is convex on the GLM stream with a small feature radius, not on the default.
CONVEX_AT_SMALL_RADIUS = ("logistic", "arctan", "softplus")


def test_families_meet_the_contract():
    for family, name, default in ((BANDITS, "bandit", "counts"), (GLMS, "glm", "average")):
        assert isinstance(family, ExpertFamily)
        assert family.name == name and family.smoothing[0] == default
        assert callable(family.build_pool)
    assert isinstance(BANDITS, BanditFamily) and isinstance(GLMS, GLMFamily)
    for name in ("ucb1", "epsilon-greedy", "thompson", "clipped-thompson"):
        assert type(agents.make(name)).family is BANDITS
    assert type(agents.make("ogd")).family is GLMS
    assert family_of([UCB1(), ThompsonSampling(clipped=True)]) is BANDITS


def test_codes_select_the_algorithm():
    assert (UCB1.code, EpsilonGreedy.code) == (0, 1)
    assert (ThompsonSampling().code, ThompsonSampling(clipped=True).code) == (2, 3)


@pytest.mark.parametrize("link", CONVEX_AT_SMALL_RADIUS)
def test_glm_heuristic_flag_is_decided_on_the_environment_run(link):
    pool = [OnlineGradientDescent(link=link)]
    assert GLMS.heuristic(pool, envs.make("mlcb/GLM-v0", radius=0.2)) == [False]
    assert GLMS.heuristic(pool, envs.make("mlcb/GLM-v0")) == [True]
    small = mlcb.SimulationConfig(
        env="mlcb/GLM-v0",
        env_params={"radius": 0.2},
        experts=tuple(pool) * 2,
        budget=1,
        horizon=50,
        replications=1,
    )
    result = mlcb.simulate(small)
    meta = result.metadata["settings"][small.label]
    assert meta["heuristic_experts"] == [] and meta["certificate_valid"] is True and meta["family"] == "glm"
    default = mlcb.simulate(small.replace(env_params={}))
    meta = default.metadata["settings"][small.label]
    assert meta["heuristic_experts"] == [0, 1] and meta["certificate_valid"] is False


def test_glm_heuristic_flags_on_both_radii():
    pool = [OnlineGradientDescent(link=link) for link in LINK_NAMES]
    small = dict(zip(LINK_NAMES, GLMS.heuristic(pool, envs.make("mlcb/GLM-v0", radius=0.2))))
    default = dict(zip(LINK_NAMES, GLMS.heuristic(pool, envs.make("mlcb/GLM-v0"))))
    assert [link for link, flag in small.items() if not flag] == ["affine", *CONVEX_AT_SMALL_RADIUS]
    assert [link for link, flag in default.items() if not flag] == ["affine"]
    rescaled = [
        OnlineGradientDescent(link="affine", step_scale=2.0),
        OnlineGradientDescent(link="affine", rate_scale=0.5),
    ]
    assert GLMS.heuristic(rescaled, envs.make("mlcb/GLM-v0")) == [True, True]


@pytest.mark.parametrize(
    ("name", "field", "held"),
    [
        ("epsilon-greedy", "alpha", np.float32(0.5)),
        ("epsilon-greedy", "alpha", np.float64(0.25)),
        ("epsilon-greedy", "c", np.int64(2)),
        ("ucb1", "c", np.float32(2.5)),
        ("robust-ucb", "eps", np.float32(0.5)),
        ("kl-ucb", "c", np.int64(3)),
        ("hedge", "rate_scale", np.float32(2.0)),
        ("bco", "shrink", np.float32(0.5)),
        ("ogd", "radius", np.float32(0.5)),
    ],
)
def test_numpy_scalars_are_taken_as_the_numbers_they_hold(name, field, held):
    """A parameter given as a NumPy scalar (read from an array, a data frame) is the number it
    holds, for every family's real parameters (epsilon-greedy's alpha refused np.float32)."""
    assert agents.make(name, **{field: held}) == agents.make(name, **{field: float(held)})


def test_a_glm_ball_beyond_the_streams_weight_radius_is_refused_before_any_work():
    """The stream sizes its loss scale B for balls up to its weight_radius (1 by default). A larger
    ball let the link pass B: losses clipped at 1 that the exact expected loss leaves out (a
    pseudo-regret overstated), gradients past the rate's bound, and at radius 180 with the exp link
    squares float64 cannot hold (a negative pseudo-regret). Such an expert is refused by index;
    a stream sized for it takes it."""
    env = envs.make("mlcb/GLM-v0")
    GLMS.check([OnlineGradientDescent(link="exp", radius=1.0)], env)
    for k, expert in (
        (0, OnlineGradientDescent(link="exp", radius=180.0)),
        (1, OnlineGradientDescent(radius=1.5)),
        (1, OnlineGradientDescent(radius=1e200)),
    ):
        with pytest.raises(
            ValueError,
            match=rf"experts\[{k}\]: radius must be a number in \(0, 1\] \(the stream's weight_radius",
        ):
            GLMS.check([OnlineGradientDescent()] * k + [expert], env)
    wide = envs.make("mlcb/GLM-v0", weight_radius=3.0)
    GLMS.check([OnlineGradientDescent(link="affine", radius=r) for r in (1.0, 3.0)], wide)
    assert GLMS.heuristic([OnlineGradientDescent(link="affine", radius=3.0)], wide) == [False]


def test_bandit_heuristic_flags():
    env = envs.make("mlcb/Trap-v0", n_experts=5)
    pool = [
        UCB1(),
        UCB1(c=0.25, rate="authors"),
        EpsilonGreedy(rate_scale=2.0),
        ThompsonSampling(),
        ThompsonSampling(clipped=True),
    ]
    assert BANDITS.heuristic(pool, env) == [False, True, True, True, False]


def test_bandit_rates_are_the_expert_rates():
    env = envs.make(
        "mlcb/BanditExperts-v0", reward_means=[[0.1, 0.2, np.nan], [0.3, 0.4, 0.5], [0.5, 0.6, 0.7]]
    )
    pool = [UCB1(), EpsilonGreedy(), UCB1()]
    n = np.array([1, 5, 100, 2_000])
    rates = BANDITS.rates(pool, env, n, 0.01)
    assert rates.shape == (3, 4)
    for k, expert in enumerate(pool):
        np.testing.assert_array_equal(rates[k], expert_rate(expert, n, int(env.n_arms[k]), 0.01))
    assert not np.array_equal(rates[0], rates[2])  # two arms against three
    assert BANDITS.rates([UCB1(c=0.25, rate="authors")] + pool[1:], env, n, 0.01) is None


def test_glm_rates_match_the_compiled_pool():
    """The family's rates are those the compiled train kernel reports."""
    config = presets.get("glm").config(2, horizon=200)
    env, experts = engine.build(config).env, list(config.experts)
    n = np.arange(1, 201)
    rates = GLMS.rates(experts, env, n, config.delta / (2 * len(experts)))
    for k, expert in enumerate(experts):
        coef = 1.5 * env.lipschitz(expert.link, expert.radius) * 2 * expert.radius
        sampling = np.sqrt(0.5 * n * np.log(2.0 * n * n / (config.delta / 20)))
        np.testing.assert_allclose(rates[k], np.minimum(n, coef * np.sqrt(n) + sampling), rtol=1e-13)


def test_the_norm_of_an_overflowed_projection():
    """Finite entries whose squares overflow: the norm at the scale of the largest; infinite
    entries: their limit direction, written into the array, finite ones 0."""
    finite = np.array([[3e200, -4e200]])
    assert overflowed_norm(finite) == pytest.approx(5e200, rel=1e-15)
    np.testing.assert_array_equal(finite, [[3e200, -4e200]])
    infinite = np.array([[np.inf, 2.0], [-np.inf, 1e300]])
    assert overflowed_norm(infinite) == pytest.approx(np.sqrt(2.0), rel=1e-15)
    np.testing.assert_array_equal(infinite, [[1.0, 0.0], [-1.0, 0.0]])


def _glm_weights(expert, rounds=6):
    """The iterate of one OGD expert driven by hand on the default GLM stream."""
    env = envs.make("mlcb/GLM-v0")
    env_params, env_state = env.build(0, 0, rounds)
    context = BuildContext((expert,), env, env_params, 0.1, np.ones(1, np.uint64), "average", rounds)
    params, state = GLMS.build_pool(context)
    for t in range(1, rounds + 1):
        kernels.begin_round(env_params, env_state, t)
        kernels.train(params, state, env_params, env_state, 0, t)
    return state.weights[0].copy()


def test_a_glm_step_whose_squares_overflow_is_still_projected_onto_the_ball():
    """A step so large that ``|w|^2`` overflows projects onto the sphere, as a large step whose
    squares do not (it fell to the centre: ``radius / inf = 0``)."""
    large = _glm_weights(OnlineGradientDescent(link="affine", step_scale=1e100))
    huge = _glm_weights(OnlineGradientDescent(link="affine", step_scale=1e200))
    assert np.linalg.norm(large) == pytest.approx(1.0)
    np.testing.assert_allclose(huge, large, rtol=1e-12)


def test_a_uniform_glm_pool_trained_past_its_horizon_is_refused_not_written_past_its_history():
    """ "uniform" keeps every iterate in room for the horizon (and the warm start): a pool trained
    more often (a session driven past its horizon) is refused; it wrote past the array's end."""
    env = envs.make("mlcb/GLM-v0")
    env_params, env_state = env.build(0, 0, 3)
    context = BuildContext(
        (OnlineGradientDescent(),), env, env_params, 0.1, np.ones(1, np.uint64), "uniform", 3
    )
    params, state = GLMS.build_pool(context)
    for t in range(5):
        kernels.begin_round(env_params, env_state, t)
        kernels.train(params, state, env_params, env_state, 0, t)
    with pytest.raises(ValueError, match="smoothing 'uniform' keeps every past iterate of an expert"):
        kernels.train(params, state, env_params, env_state, 0, 5)
    assert state.steps[0] == 5


def test_glm_authors_rate_is_one_common_rate_in_the_streams_loss_units():
    """rate="authors": the authors' 3 D G sqrt(n) (D = G = 0.1) on their loss (y_hat - y)^2 / 2,
    that is 0.06 / B^2 sqrt(n) on the stream's (y_hat - y)^2 / B^2, the same for every link, in the
    family's rates and in the compiled kernel's, beyond its tables too; a heuristic."""
    from agents.glm import RATE_KINDS, glm_rate

    env = envs.make("mlcb/GLM-v0")
    pool = [OnlineGradientDescent(link=link, rate="authors") for link in LINK_NAMES]
    n = np.array([1, 10, 250, 10_000])
    coefficient = 0.03 * 2.0 / env.scale**2
    assert coefficient == pytest.approx(0.00225, rel=0.01)  # B = 5.16 on the default stream
    rates = GLMS.rates(pool, env, n, 0.005)
    np.testing.assert_allclose(rates, np.tile(np.minimum(n, coefficient * np.sqrt(n)), (10, 1)), rtol=1e-13)
    kind = RATE_KINDS.index("authors")
    assert glm_rate(kind, coefficient, 2.0, 10**8, 0.005) == pytest.approx(2.0 * coefficient * 1e4, rel=1e-13)
    assert GLMS.heuristic(pool, env) == [True] * 10
    doubled = OnlineGradientDescent(rate="authors", rate_coef=0.06)
    assert GLMS.rates([doubled], env, n, 0.005)[0] == pytest.approx(2 * rates[0])
    assert [e.rate for e in presets.get("glm").config(1, "authors").experts] == ["authors"] * 10
    with pytest.raises(ValueError, match=r"rate must be one of \('theory', 'authors'\), got 'nope'"):
        OnlineGradientDescent(rate="nope")
    with pytest.raises(ValueError, match="rate_coef"):
        OnlineGradientDescent(rate="authors", rate_coef=0.0)


def test_optimal_losses():
    trap = envs.make("mlcb/Trap-v0")
    params, _ = trap.build(0, 0, 100)
    np.testing.assert_allclose(
        BANDITS.optimal_losses([UCB1()] * 10, trap, params), 1 - 0.1 * (3 - np.arange(10) / 10)
    )
    glm = envs.make("mlcb/GLM-v0")
    params, _ = glm.build(0, 0, 100)
    losses = GLMS.optimal_losses([OnlineGradientDescent(link=link) for link in LINK_NAMES], glm, params)
    assert int(np.argmin(losses)) == LINK_NAMES.index("logcosh")
    assert np.all(losses >= glm.optimal_loss(params, 0) * (1 - 1e-9))


def test_family_checks_name_the_problem():
    trap, glm = envs.make("mlcb/Trap-v0"), envs.make("mlcb/GLM-v0")
    with pytest.raises(ValueError, match=r"experts: this environment has 10 bandit experts, got 2"):
        BANDITS.check([UCB1()] * 2, trap)
    with pytest.raises(
        ValueError, match=r"experts: bandit experts need a bandit experts environment .* got GLMEnv"
    ):
        BANDITS.check([UCB1()] * 2, glm)
    with pytest.raises(ValueError, match=r"experts\[1\]: .* is not a bandit expert"):
        BANDITS.check([UCB1(), OnlineGradientDescent()] + [UCB1()] * 8, trap)
    with pytest.raises(ValueError, match=r"experts: GLM experts need a GLM stream .* got TrapEnv"):
        GLMS.check([OnlineGradientDescent()], trap)
    with pytest.raises(ValueError, match=r"experts\[0\]: .* is not a GLM expert"):
        GLMS.check([UCB1()], glm)
    BANDITS.check([UCB1()] * 10, trap)
    GLMS.check([OnlineGradientDescent()] * 3, glm)


class _Opaque:
    """A Python expert that is not a dataclass, with a parameter that is not JSON."""

    def __init__(self) -> None:
        self.alpha = 0.5
        self.model = object()
        self._private = 1

    def learn(self, data):
        return data.loss(0)

    def deploy(self, data):
        return data.loss(0), data.mean(0)


class _WithParams(_Opaque):
    def get_params(self):
        return {"alpha": 0.5, "model": object()}


def test_configs_of_any_experts_are_recorded():
    from mlcb.config import expert_to_dict

    # Objects without parameters are named by their class, never by a repr with an address.
    assert expert_to_dict(_Opaque()) == {
        "class": f"{__name__}:_Opaque",
        "alpha": 0.5,
        "model": "builtins:object",
    }
    described = expert_to_dict(_WithParams())
    assert described["alpha"] == 0.5 and described["model"] == "builtins:object"

    class Broken:
        def __getattribute__(self, name):
            raise RuntimeError("no")

    assert expert_to_dict(Broken())["class"].endswith("Broken")


# --- the family base classes (agents.family) and the build context -----------------------------------
def _registered_specifications():
    return [agents.make(name) for name in agents.names()]


def test_every_registered_specification_carries_its_rate():
    for spec in _registered_specifications():
        family = type(spec).family
        assert isinstance(family, Family), family
        assert callable(spec.rate_function), spec
        if isinstance(family, BanditEnvironmentFamily):  # (the GLM family decides on the stream)
            assert isinstance(spec.heuristic, bool), spec
            env = envs.make("mlcb/Trap-v0", n_experts=2)
            n = np.array([1, 7, 1_000])
            rates = family.rates([spec, spec], env, n, 0.01)
            np.testing.assert_array_equal(rates[1], expert_rate(spec, n, 2, 0.01))


def test_families_name_themselves_by_their_module_attribute():
    from agents.hedge import HEDGE_FAMILY
    from agents.klucb import KLUCB_FAMILY

    assert [repr(f) for f in (BANDITS, GLMS, HEDGE_FAMILY, KLUCB_FAMILY)] == [
        "agents.bandits.BANDITS",
        "agents.glm.GLMS",
        "agents.hedge.HEDGE_FAMILY",
        "agents.klucb.KLUCB_FAMILY",
    ]

    class Unnamed(CompiledFamily):
        name = "unnamed"

    assert (
        repr(Unnamed())
        == "<test_families_name_themselves_by_their_module_attribute.<locals>.Unnamed 'unnamed'>"
    )
    with pytest.raises(NotImplementedError, match="must define build_pool"):
        Unnamed().build_pool(None)


def test_glm_rate_function_reads_the_streams_gradient_bound():
    env = envs.make("mlcb/GLM-v0")
    expert = OnlineGradientDescent(link="logistic", radius=0.5, rate_scale=0.5)
    lipschitz = GLMS.rate_input(expert, env, 0)
    assert lipschitz == env.lipschitz("logistic", 0.5)
    n = np.arange(1, 500)
    np.testing.assert_array_equal(
        GLMS.rates([expert], env, n, 0.01)[0], expert.rate_function(n, lipschitz, 0.01)
    )
    assert float(expert.rate_function(499, lipschitz, 0.01)) == GLMS.rates([expert], env, [499], 0.01)[0, 0]


def test_rate_values_is_the_kernel_at_every_count():
    from agents.klucb import rate

    n = np.array([[1, 2], [50, 10_000]])
    values = rate_values(rate, n, (3, 0.5), 0.02)
    assert values.shape == (2, 2) and values.dtype == np.float64
    assert values.tolist() == [[rate(3, 0.5, int(v), 0.02) for v in row] for row in n]
    assert isinstance(rate_values(rate, 7, (3, 0.5), 0.02), float)
    with pytest.raises(ValueError, match="n must hold integers >= 1"):
        rate_values(rate, [1, 0], (3, 0.5), 0.02)


def test_build_context_checks_its_keys_and_gives_fresh_arrays():
    env = envs.make("mlcb/Trap-v0", n_experts=2)
    params, _ = env.build(0, 0, 100)
    context = BuildContext(
        [UCB1(), UCB1(c=3.0)], env, params, 0.1, np.arange(2, dtype=np.uint64), "counts", 10
    )
    assert context.experts == (UCB1(), UCB1(c=3.0)) and context.delta_prime == 0.1 / 4
    assert context.column("c").tolist() == [2.0, 3.0] and context.column("c") is not context.column("c")
    assert context.zeros(3, dtype=np.int64).shape == (2, 3)
    assert BanditEnvironmentFamily.arms(context).tolist() == [2, 2]
    with pytest.raises(ValueError, match=r"smoothing must be one of \('last',\)"):
        context.smoothing_code(("last",))
    with pytest.raises(ValueError, match=r"keys must be one uint64 key per expert, shape \(2,\), got \(3,\)"):
        BuildContext([UCB1()] * 2, env, params, 0.1, np.arange(3, dtype=np.uint64), "counts", 10)


def test_kernel_params_fill_fields_by_name_and_name_what_is_missing():
    from typing import NamedTuple

    from agents.klucb import KLUCB, KLUCB_FAMILY, KLUCBParams

    class Odd(NamedTuple):
        n_arms: np.ndarray
        width: np.ndarray
        smoothing: int

    env = envs.make("mlcb/Trap-v0", n_experts=2, n_arms=3)
    params, _ = env.build(0, 0, 100)
    context = BuildContext(
        [KLUCB(c=1.0), KLUCB(rate_scale=2.0)], env, params, 0.1, np.zeros(2, np.uint64), "last", 5
    )
    built = KLUCB_FAMILY.kernel_params(KLUCBParams, context)
    assert built.n_arms.tolist() == [3, 3] and built.c.tolist() == [1.0, 0.0]
    assert built.rate_scale.tolist() == [1.0, 2.0] and built.delta_prime == 0.025 and built.smoothing == 3
    assert KLUCB_FAMILY.kernel_params(Odd, context, width=np.ones(2)).width.tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match=r"Odd\.width: the kl-ucb specifications have no attribute 'width'"):
        KLUCB_FAMILY.kernel_params(Odd, context)
    with pytest.raises(ValueError, match=r"KLUCBParams has no field 'widths'"):
        KLUCB_FAMILY.kernel_params(KLUCBParams, context, widths=1.0)


#: Parameters that make every registered environment (those that need some).
_ENVIRONMENT_PARAMS = {
    "mlcb/BanditExperts-v0": {"reward_means": [[0.4, 0.6]] * 3},
    "mlcb/RealData-v0": {"dataset": "breast-cancer"},
}


def test_every_expert_runs_on_the_environments_it_declares_and_no_other():
    """``mlcb list`` says where each registered expert runs (``environments=`` of its
    registration): its family's check accepts a pool of it there and refuses it elsewhere."""
    made = {}
    for name in envs.names():
        try:
            made[name] = envs.make(name, **_ENVIRONMENT_PARAMS.get(name, {}))
        except ImportError:  # an optional package (torch) that an environment needs
            continue
    for name in agents.names():
        declared = agents.registry.entry(name).environments
        assert declared and set(declared) <= set(envs.names()), name
        expert = agents.make(name)
        for env_name, env in made.items():
            pool = [expert] * (env.n_experts or 3)
            try:
                family_of(pool).check(pool, env)
                accepted = True
            except ValueError:
                accepted = False
            assert accepted == (env_name in declared), (name, env_name)
