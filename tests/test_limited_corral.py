"""LimitedAdvice and Smooth CORRAL: compiled kernels against their twins, draws, OMD solver, checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlcb
import mlcb.testing.twins.limited_corral as twins
from mlcb import presets
from mlcb.kernels.stats import new_stats
from mlcb.policies import corral, limited_advice, make
from mlcb.testing.twins import core as twin

ROUNDS = 2_000


def _compare(config, replication: int = 0, rounds: int = ROUNDS):
    return twin.assert_matches_engine(config, replication, rounds)


# --- compiled against twin ---------------------------------------------------------------------
@pytest.mark.parametrize(("budget", "smoothing"), [(1, "last"), (3, "counts")])
def test_limited_advice_trap_matches_twin(budget, smoothing):
    config = presets.get("trap").config(
        budget, policy="limited-advice", seed=7, horizon=ROUNDS, smoothing=smoothing
    )
    compiled = _compare(config, replication=1)
    selected = compiled.trace_selected
    assert selected.shape == (ROUNDS, budget)
    assert np.all(selected[:, 0] == compiled.trace_deployed)  # i_t heads S_t
    assert all(len(set(row)) == budget for row in selected.tolist())  # without replacement
    assert compiled.trained[-1].sum() == budget * ROUNDS  # no warm start


@pytest.mark.parametrize("schedule", ["run", "doubling"])
@pytest.mark.parametrize("loss_feed", ["train", "deployed", "mean"])
def test_corral_trap_matches_twin(schedule, loss_feed):
    config = presets.get("trap").config(
        1,
        policy="smooth-corral",
        policy_params={"schedule": schedule, "loss_feed": loss_feed},
        seed=5,
        horizon=ROUNDS,
        smoothing="uniform",
    )
    compiled = _compare(config)
    assert compiled.trained[-1].sum() == ROUNDS
    assert np.all(np.isnan(compiled.certificate))


def test_corral_own_horizon_matches_twin():
    # T = 300 shorter than the run: the master keeps its constants after T.
    config = presets.get("trap").config(
        1, policy="smooth-corral", policy_params={"horizon": 300}, seed=2, horizon=1_000
    )
    _compare(config, rounds=1_000)


@pytest.mark.parametrize("policy", ["limited-advice", "smooth-corral"])
def test_glm_matches_twin(policy):
    config = presets.get("glm").config(2, policy=policy, seed=4, horizon=400, smoothing="uniform")
    compiled = _compare(config, rounds=400)
    assert compiled.trace_selected.shape == (400, 2)
    if policy == "smooth-corral":  # CORRAL trains one expert whatever M
        assert np.all(compiled.trace_selected[:, 1] == -1)
        assert compiled.trained[-1].sum() == 400


# --- LimitedAdvice's draws ---------------------------------------------------------------------
@pytest.mark.parametrize("budget", [1, 3, 10])
def test_inclusion_probabilities_match_frequencies(budget):
    """P(k in S_t) = p_k + (1 - p_k)(M - 1)/(K - 1) and P(i_t = k) = p_k, empirically.

    One fixed state, N independent draws (distinct stream keys, same round). Each frequency is a
    mean of N Bernoulli(q) indicators, standard error sqrt(q (1 - q) / N) <= 0.0035 at N = 20,000;
    a margin of 5 standard errors (+ 1/N) is exceeded with probability < 1e-6 per check, about
    1e-5 over the 20 checks, and the seed is fixed.
    """
    n_experts, t, draws = 10, 5, 20_000
    policy = limited_advice.LimitedAdvice()
    params, state = policy.build(n_experts, budget, 0.1, 1_000, np.zeros(n_experts))
    state.experts["lhat"] = np.linspace(0.0, 12.0, n_experts)[::-1]
    stats = new_stats(n_experts)
    selected = np.zeros(budget, dtype=np.int64)
    widths = np.zeros(budget)
    included = np.zeros(n_experts)
    deployed = np.zeros(n_experts)
    for key in range(draws):
        n_selected, chosen = limited_advice._select(params, state, stats, t, np.uint64(key), selected, widths)
        assert n_selected == budget and selected[0] == chosen
        assert len(set(selected.tolist())) == budget
        assert np.all(np.isnan(widths))
        included[selected] += 1
        deployed[chosen] += 1
    p = state.experts["p"].copy()
    eta = math.sqrt(budget * math.log(n_experts) / (n_experts * t))
    softmax = np.exp(-eta * (state.experts["lhat"] - state.experts["lhat"].min()))
    np.testing.assert_allclose(p, softmax / softmax.sum(), rtol=1e-12)
    assert p.min() < 0.05 and p.max() > 0.2  # an informative, far from uniform, distribution
    q = p + (1 - p) * (budget - 1) / (n_experts - 1)
    for frequency, probability in ((included / draws, q), (deployed / draws, p)):
        variance = np.clip(probability * (1 - probability), 0.0, None)  # q = 1 + ulp at M = K
        margin = 5.0 * np.sqrt(variance / draws) + 1.0 / draws
        assert np.all(np.abs(frequency - probability) <= margin), (frequency, probability)
    # The update divides by the same q.
    before = state.experts["lhat"].copy()
    limited_advice._observe(params, state, stats, 3, 0.5, t)
    assert state.experts["lhat"][3] - before[3] == pytest.approx(0.5 / q[3], rel=1e-15)


def test_limited_advice_single_expert():
    params, state = limited_advice.LimitedAdvice().build(1, 1, 0.1, 10, np.zeros(1))
    stats = new_stats(1)
    selected, widths = np.zeros(1, dtype=np.int64), np.zeros(1)
    assert limited_advice._select(params, state, stats, 1, np.uint64(3), selected, widths) == (1, 0)
    limited_advice._observe(params, state, stats, 0, 0.25, 1)
    assert state.experts["lhat"][0] == 0.25


# --- CORRAL's OMD step -------------------------------------------------------------------------
def _omd_cases(count: int = 300, seed: int = 12):
    """Random OMD inputs, many of them extreme: pbar down to 1/(K T), losses up to K T."""
    rng = np.random.default_rng(seed)
    horizon = 250_000
    for case in range(count):
        n_experts = int(rng.choice([2, 3, 10, 50]))
        p = rng.dirichlet(np.full(n_experts, float(rng.choice([0.05, 1.0, 10.0]))))
        if case % 3 == 0:  # some probabilities at CORRAL's floor gamma / K = 1 / (K T)
            tiny = rng.random(n_experts) < 0.5
            p[tiny] = 1.0 / (n_experts * horizon) * rng.uniform(1.0, 3.0, tiny.sum())
        p = np.maximum(p, 1.0 / (n_experts * horizon))
        p /= p.sum()
        eta = math.sqrt(n_experts / horizon) * rng.uniform(1.0, 4.2, n_experts)
        if case % 5 == 1:
            eta = rng.uniform(0.01, 10.0, n_experts)
        loss = np.zeros(n_experts)
        if case % 4 == 3:  # a general loss vector
            loss = rng.uniform(0.0, 1.0, n_experts) / p
        else:  # CORRAL's: one importance-weighted loss f / pbar_i
            i = int(rng.integers(n_experts))
            pbar = (1 - 1 / horizon) * p[i] + 1 / (n_experts * horizon)
            loss[i] = float(rng.choice([0.0, 1.0, rng.random()])) / pbar
        yield p, eta, loss


def _records(p, eta, loss):
    experts = np.zeros(len(p), dtype=corral.EXPERT_DTYPE)
    experts["p"], experts["eta"], experts["loss"] = p, eta, loss
    return experts


def test_omd_newton_agrees_with_bisection():
    worst = 0.0
    for p, eta, loss in _omd_cases():
        experts = _records(p, eta, loss)
        root, iterations = corral.omd_root(experts)
        args = (p.tolist(), eta.tolist(), loss.tolist())
        assert (root, iterations) == twins.newton_root(*args)  # the twin's iteration, bit for bit
        assert iterations < corral.ROOT_ITERATIONS
        reference = twins.bisection_root(*args)
        residual, slope = twins._f(*args, root)
        # Newton's stopping rule, or a bracket collapsed to adjacent floats.
        assert abs(residual) <= corral.ROOT_TOLERANCE or abs(root - reference) <= 4 * math.ulp(root)
        # The roots agree to 1e-10 in F (|F(x) - F(y)| ~ F' |x - y|) and relatively.
        gap = abs(root - reference)
        assert gap * slope <= 1e-10 or gap <= 1e-10 * max(1.0, abs(reference))
        updated = np.array(twins.omd(*args, root))
        expected = np.array(twins.omd(*args, reference))
        np.testing.assert_allclose(updated, expected, rtol=0, atol=1e-10)
        worst = max(worst, float(np.max(np.abs(updated - expected))))
        corral.omd_step(experts)
        np.testing.assert_array_equal(experts["p"], updated)
        assert np.all(updated > 0) and abs(updated.sum() - 1.0) <= 1e-12
        i = int(np.argmax(loss))
        if loss[i] > 0 and np.count_nonzero(loss) == 1:
            assert updated[i] <= p[i] * (1 + 1e-12)  # the one loss moves mass away from it
    assert worst <= 1e-10


def test_omd_zero_loss_keeps_p():
    p = np.array([0.1, 0.2, 0.7])
    experts = _records(p, np.full(3, 0.5), np.zeros(3))
    corral.omd_step(experts)
    np.testing.assert_allclose(experts["p"], p, rtol=1e-15)


def test_corral_build_and_epochs():
    assert [corral.first_epoch(k) for k in (1, 2, 10, 16)] == [8, 16, 128, 128]
    params, state = make("smooth-corral").build(10, 3, 0.1, 2_500, np.zeros(10))
    master = state.master[0]
    assert master["length"] == 2_500 and master["gamma"] == 1 / 2_500
    assert master["beta"] == math.exp(1 / math.log(2_500))
    np.testing.assert_array_equal(state.experts["eta"], math.sqrt(10 / 2_500))
    np.testing.assert_array_equal(state.experts["rho"], 20.0)
    np.testing.assert_array_equal(state.experts["pbar"], 0.1)
    params, state = make("smooth-corral", schedule="doubling").build(10, 1, 0.1, 10**6, np.zeros(10))
    assert state.master[0]["length"] == 128 and state.master[0]["end"] == 128
    _, state = make("smooth-corral", horizon=1).build(2, 1, 0.1, 10, np.zeros(2))
    assert state.master[0]["beta"] == math.e  # exp(1 / max(1, ln T)) stays finite at T = 1


# --- validation --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("limited-advice", {"eta_scale": 0}, "eta_scale must be a finite number > 0"),
        ("limited-advice", {"eta_scale": -1.0}, "eta_scale must be a finite number > 0"),
        ("limited-advice", {"eta_scale": math.nan}, "eta_scale must be a finite number > 0"),
        ("limited-advice", {"eta_scale": math.inf}, "eta_scale must be a finite number > 0"),
        ("limited-advice", {"eta_scale": True}, "eta_scale must be a finite number > 0"),
        ("limited-advice", {"eta_scale": "1"}, "eta_scale must be a finite number > 0"),
        ("smooth-corral", {"eta_scale": 0.0}, "eta_scale must be a finite number > 0"),
        (
            "smooth-corral",
            {"loss_feed": "reward"},
            r"loss_feed must be one of \('train', 'deployed', 'mean'\)",
        ),
        ("smooth-corral", {"schedule": "anytime"}, r"schedule must be one of \('run', 'doubling'\)"),
        ("smooth-corral", {"horizon": 0}, "horizon must be None or an integer >= 1"),
        ("smooth-corral", {"horizon": -5}, "horizon must be None or an integer >= 1"),
        ("smooth-corral", {"horizon": 10.5}, "horizon must be None or an integer >= 1"),
        ("smooth-corral", {"horizon": True}, "horizon must be None or an integer >= 1"),
        (
            "smooth-corral",
            {"horizon": 100, "schedule": "doubling"},
            "horizon must be None with schedule='doubling'",
        ),
    ],
)
def test_bad_parameters_raise(name, params, message):
    with pytest.raises(ValueError, match=message):
        make(name, **params)


def test_corrals_horizon_is_a_whole_number_however_written():
    """``horizon = 1e4`` (how TOML writes it in floats) is 10,000, as every other count of the
    package: the same master; it was refused as not an integer."""
    written = make("smooth-corral", horizon=1e4).build(3, 1, 0.1, 100, np.zeros(3))
    plain = make("smooth-corral", horizon=10_000).build(3, 1, 0.1, 100, np.zeros(3))
    assert written[0] == plain[0]
    for a, b in zip(written[1], plain[1]):
        np.testing.assert_array_equal(a, b)


def test_bad_config_raises():
    with pytest.raises(ValueError, match="loss_feed"):
        mlcb.engine.build(
            presets.get("trap").config(1, policy="smooth-corral", policy_params={"loss_feed": "x"})
        )


def test_policy_attributes():
    for name in ("limited-advice", "smooth-corral"):
        policy = make(name)
        assert policy.warm_start is False
        assert policy.has_certificate is False and policy.certificate_valid is False
