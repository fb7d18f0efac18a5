"""Dynamic Balancing and D3RB / ED2RB: compiled against their twins, behaviour, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlcb import engine, presets
from mlcb.kernels.stats import new_stats
from mlcb.policies import make
from mlcb.policies.balancing import DataDrivenBalancing, DynamicBalancing
from mlcb.testing.twins import core as twin

ROUNDS = 2_500
GLM_ROUNDS = 300


def _compare(config, replication: int = 0, rounds: int = ROUNDS):
    return twin.assert_matches_engine(config, replication, rounds)


def _trap(policy: str, budget: int, seed: int, calibration: str = "theory", rounds: int = ROUNDS, **params):
    """The trap preset with ``policy`` (the ``authors`` calibration's experts, whose heuristic
    rates are small, make Dynamic Balancing eliminate within a few rounds)."""
    base = presets.get("trap").config(budget, calibration, seed=seed, horizon=rounds)
    return base.replace(policy=policy, policy_params=params)


# Settings in which the tests below see the interesting events: eliminations (authors rates,
# c = 0.1) and doublings / estimated coefficients above d_min (c = 0.1); the defaults see none
# in a few thousand rounds of the trap.
ACTIVE_DB = {"calibration": "authors", "c": 0.1}
ACTIVE_DD = {"c": 0.1}


# --- compiled against the twins -----------------------------------------------------------------
@pytest.mark.parametrize("budget", [1, 3])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"comparator": "optimistic", "deploy": "ucb"},
        {**ACTIVE_DB, "comparator": "pessimistic", "deploy": "ucb"},
        {**ACTIVE_DB, "comparator": "optimistic", "deploy": "head"},
        {"weights": (0.5,) * 5 + (1.0,) * 5, "c": 0.3, "deploy": "ucb"},
    ],
)
def test_dynamic_balancing_trap_matches_twin(budget, options):
    _compare(_trap("dynamic-balancing", budget, seed=11, **options), replication=1)


@pytest.mark.parametrize("budget", [1, 3])
@pytest.mark.parametrize("policy", ["d3rb", "ed2rb"])
@pytest.mark.parametrize(
    "options", [{}, {**ACTIVE_DD, "deploy": "ucb"}, {**ACTIVE_DD, "max_coefficient": 1.5}]
)
def test_data_driven_trap_matches_twin(budget, policy, options):
    _compare(_trap(policy, budget, seed=7, **options), replication=2)


@pytest.mark.parametrize(
    "policy, options",
    [
        ("dynamic-balancing", {"c": 0.1, "deploy": "ucb"}),
        ("dynamic-balancing", {"c": 0.1, "comparator": "optimistic"}),
        ("d3rb", {"c": 0.1}),
        ("ed2rb", {"c": 0.1, "deploy": "ucb"}),
    ],
)
def test_glm_matches_twin(policy, options):
    config = presets.get("glm").config(2, seed=4, horizon=GLM_ROUNDS, policy=policy, policy_params=options)
    _compare(config, rounds=GLM_ROUNDS)


# --- behaviour, on the compiled path ------------------------------------------------------------
def _step(config, rounds: int = ROUNDS, replication: int = 0):
    """Run the compiled kernels one round at a time; the policy state after the warm start and
    after every round (copies of its per-expert record array and of ``phi`` when it has one)."""
    args = engine.build_replication(
        engine.build(config), config.seed, replication, rounds, np.arange(1, rounds + 1), rounds
    )
    run_rounds = args.round_loop()
    record, state, stats = args.record, args.policy_state, args.stats
    args.run_rounds(run_rounds, 0, 0)  # the warm start
    history = [(state.experts.copy(), getattr(state, "phi", np.zeros(0)).copy(), stats["n"].copy())]
    for t in range(1, rounds + 1):
        args.run_rounds(run_rounds, t, t)
        history.append((state.experts.copy(), getattr(state, "phi", np.zeros(0)).copy(), stats["n"].copy()))
    engine.raise_for_error(record)
    return record, history


@pytest.mark.parametrize("budget, comparator", [(1, "pessimistic"), (3, "pessimistic"), (3, "optimistic")])
def test_dynamic_balancing_eliminates_for_good(budget, comparator):
    rounds = 1_500
    config = _trap("dynamic-balancing", budget, seed=11, rounds=rounds, comparator=comparator, **ACTIVE_DB)
    record, history = _step(config, rounds)
    active = np.array([experts["active"] for experts, _, _ in history])  # (rounds + 1, K)
    assert active.any(axis=1).all(), "the active set emptied"
    assert (active[1:] <= active[:-1]).all(), "an eliminated expert came back"
    assert not active[-1].all(), "nothing was eliminated: the check is vacuous"
    for t in range(1, rounds + 1):
        row = record.trace_selected[t - 1]
        chosen = row[row >= 0]
        assert active[t - 1, chosen].all(), f"round {t} trained an eliminated expert"
        assert len(chosen) == min(budget, active[t - 1].sum())
        assert record.trace_deployed[t - 1] in chosen
    n = np.array([counts for _, _, counts in history])
    gone = np.argmax(~active, axis=0)  # the update that removed each expert (0 if never)
    for k in np.flatnonzero(~active[-1]):
        assert n[-1, k] == n[gone[k], k], f"expert {k} trained after its elimination"
    # one round at a time is the same run as all rounds at once
    once = engine.run_replication(
        engine.build(config), config.seed, 0, rounds, np.arange(1, rounds + 1), trace_rounds=rounds
    )
    np.testing.assert_array_equal(once.trace_selected, record.trace_selected)
    np.testing.assert_array_equal(once.trace_loss, record.trace_loss)


@pytest.mark.parametrize("budget", [1, 3])
def test_d3rb_coefficients_only_double(budget):
    rounds = 1_500
    record, history = _step(_trap("d3rb", budget, seed=7, rounds=rounds, **ACTIVE_DD), rounds)
    dhat = np.array([experts["dhat"] for experts, _, _ in history])
    phi = np.array([p for _, p, _ in history])
    n = np.array([counts for _, _, counts in history])
    ratio = dhat[1:] / dhat[:-1]
    assert np.isin(ratio, [1.0, 2.0]).all()
    assert (ratio == 2.0).any(), "no doubling: the check is vacuous"
    assert (dhat >= 1.0).all()
    np.testing.assert_array_equal(phi, dhat * np.sqrt(n))
    trained = n[1:] > n[:-1]
    assert (ratio[~trained] == 1.0).all(), "an untrained expert's coefficient changed"


def test_d3rb_cap():
    _, history = _step(_trap("d3rb", 1, seed=7, rounds=600, max_coefficient=1.5, **ACTIVE_DD), 600)
    dhat = np.array([experts["dhat"] for experts, _, _ in history])
    assert np.isin(dhat, [1.0, 1.5]).all() and (dhat == 1.5).any()


@pytest.mark.parametrize("budget", [1, 3])
def test_ed2rb_potentials_never_decrease_and_at_most_double(budget):
    rounds = 1_500
    record, history = _step(_trap("ed2rb", budget, seed=7, rounds=rounds, **ACTIVE_DD), rounds)
    dhat = np.array([experts["dhat"] for experts, _, _ in history])
    phi = np.array([p for _, p, _ in history])
    n = np.array([counts for _, _, counts in history])
    ratio = phi[1:] / phi[:-1]
    assert (ratio >= 1.0).all() and (ratio <= 2.0).all()
    trained = n[1:] > n[:-1]
    assert (ratio[~trained] == 1.0).all(), "an untrained expert's potential changed"
    assert (dhat >= 1.0).all()
    assert (dhat > 1.0).any(), "no estimate above d_min: the check is vacuous"


def test_infinite_rate_goes_first():
    """A rate of +inf sorts first in the balancing order and cannot be eliminated; an eliminated
    expert leaves the order (direct calls of the kernels)."""
    from mlcb.policies import balancing

    policy = DynamicBalancing(c=0.01)
    params, state = policy.build(4, 2, 0.1, 100, np.zeros(4))
    stats = new_stats(4)
    stats["n"] = 5
    stats["loss_sum"] = [0.0, 5.0, 5.0, 0.0]
    stats["rate"] = [1.0, 2.0, math.inf, 0.5]
    for k in range(4):
        balancing._balancing_observe(params, state, stats, k, 0.0, 1)
    balancing._balancing_end_round(params, state, stats, np.zeros(2, dtype=np.int64), 0, -1, 0.0, 1)
    selected = np.zeros(2, dtype=np.int64)
    widths = np.zeros(2)
    n_selected, deployed = balancing._balancing_select(
        params, state, stats, 2, np.uint64(0), selected, widths
    )
    assert (n_selected, deployed) == (2, 2)
    assert list(selected) == [2, 3]
    assert np.isnan(widths).all()
    # expert 1 (mean loss 1, bound 2) is eliminated; expert 2 (mean loss 1) survives with +inf
    assert list(state.experts["active"]) == [True, False, True, True]
    assert state.n_active[0] == 3


# --- parameters --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params, match",
    [
        ({"delta": 0.0}, r"delta must be a finite number in \(0.0, 1.0\)"),
        ({"delta": 1.0}, "delta must"),
        ({"delta": math.nan}, "delta must"),
        ({"c": 0.0}, r"c must be a finite number in \(0.0, inf\)"),
        ({"c": math.inf}, "c must"),
        ({"c": True}, "c must"),
        ({"weights": (1.0, 0.0)}, "every entry of weights must"),
        ({"weights": "ab"}, "weights must be None or a sequence"),
        ({"weights": 3.0}, "weights must be None or a sequence"),
        ({"comparator": "best"}, "comparator must be one of"),
        ({"deploy": "last"}, "deploy must be one of"),
    ],
)
def test_dynamic_balancing_rejects_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        DynamicBalancing(**params)


def test_dynamic_balancing_weights_length():
    policy = make("dynamic-balancing", weights=[1, 2, 3])
    assert policy.weights == (1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match=r"weights must have one entry per expert \(n_experts=4\), got 3"):
        policy.build(4, 1, 0.1, 100, np.zeros(4))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"empirical": "yes"}, "empirical must be True"),
        ({"d_min": 0.0}, r"d_min must be a finite number in \(0.0, inf\)"),
        ({"c": -1.0}, "c must"),
        ({"delta": 1.5}, r"delta must be a finite number in \(0.0, 1.0\)"),
        ({"max_coefficient": 0.5}, r"max_coefficient must be a finite number in \[1.0, inf\)"),
        ({"d_min": 3.0, "max_coefficient": 2.0}, r"max_coefficient must be a finite number in \[3.0, inf\)"),
        ({"max_coefficient": math.inf}, "max_coefficient must"),
        ({"deploy": "average"}, "deploy must be one of"),
    ],
)
def test_data_driven_rejects_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        DataDrivenBalancing(**params)


def test_registered_names():
    assert make("d3rb").empirical is False and make("d3rb").label == "d3rb"
    assert make("ed2rb").empirical is True and make("ed2rb").label == "ed2rb"
    assert make("ed2rb", max_coefficient=None).max_coefficient is None
    db = make("dynamic-balancing")
    assert (db.delta, db.c, db.weights, db.comparator, db.deploy) == (0.05, 1.0, None, "pessimistic", "head")
    dd = make("d3rb")
    assert (dd.d_min, dd.c, dd.delta, dd.max_coefficient, dd.deploy) == (1.0, 1.0, 0.01, 1e4, "head")
    for policy in (db, dd):
        assert policy.warm_start and not policy.has_certificate and not policy.certificate_valid
