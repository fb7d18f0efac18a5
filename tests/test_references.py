"""The simple reference policies (mlcb/policies/references.py, docs/baselines.md §5).

Compiled runs against the pure-Python twins of mlcb/testing/twins/references.py (identical decisions and
regret), then each policy's defining behaviour, then parameter validation.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats as scipy_stats

import mlcb
from agents.bandits import BANDITS
from mlcb import engine, policies, presets
from mlcb.kernels.seeding import stream_keys
from mlcb.policies.references import FullBudget, Greedy, Oracle, RoundRobin, Uniform
from mlcb.testing.twins import core as twin

ROUNDS = 2_500
#: False-alarm probability of every chi-square check for a correct implementation and a random
#: seed; the seeds are fixed, so each check is deterministic.
ALPHA = 1e-6


def _run(config, replication: int = 0, rounds: int | None = None, trace: bool = True):
    rounds = rounds or config.horizon
    grid = np.arange(1, rounds + 1)
    return engine.run_replication(
        engine.build(config),
        config.seed,
        replication,
        rounds,
        grid,
        trace_rounds=rounds if trace else 0,
    )


def _compare(config, replication: int = 0, rounds: int = ROUNDS):
    return twin.assert_matches_engine(config, replication, rounds)


# --- compiled against twin ---------------------------------------------------------------------
TRAP_CASES = [
    ("round-robin", {}, 1),
    ("round-robin", {}, 3),
    ("round-robin", {"deploy_within_S": True}, 1),
    ("round-robin", {"deploy_within_S": True}, 3),
    ("uniform", {}, 1),
    ("uniform", {}, 3),
    ("greedy", {}, 1),
    ("greedy", {}, 3),
    ("full-budget", {}, 2),
    ("full-budget", {"bonus_scale": 0.5}, 1),
    ("oracle", {}, 2),
]


@pytest.mark.parametrize(("policy", "params", "budget"), TRAP_CASES)
def test_trap_matches_twin(policy, params, budget):
    config = presets.get("trap").config(budget, policy=policy, policy_params=params, seed=13, horizon=ROUNDS)
    _compare(config, replication=1)


@pytest.mark.parametrize(
    ("policy", "params"),
    [
        ("round-robin", {}),
        ("round-robin", {"deploy_within_S": True}),
        ("uniform", {}),
        ("greedy", {}),
        ("full-budget", {}),
        ("oracle", {}),
    ],
)
def test_glm_matches_twin(policy, params):
    config = presets.get("glm").config(2, policy=policy, policy_params=params, seed=4, horizon=300)
    _compare(config, rounds=300)


# --- behaviour ---------------------------------------------------------------------------------
def test_round_robin_counts_differ_by_at_most_one():
    budget, rounds = 3, 1_000
    config = presets.get("trap").config(budget, policy="round-robin", seed=2, horizon=rounds)
    result = _run(config, trace=False)
    n_experts = config.n_experts
    for t in range(1, rounds + 1):
        updates = result.trained[t - 1] - 1  # less the warm start
        assert updates.max() - updates.min() <= 1
        assert updates.min() == (t * budget) // n_experts
        assert updates.sum() == t * budget


def _chi_square_ok(counts, expected) -> None:
    counts = np.asarray(counts, dtype=float)
    statistic = float(np.sum((counts - expected) ** 2 / expected))
    threshold = scipy_stats.chi2.isf(ALPHA, len(counts) - 1)
    assert statistic < threshold, (statistic, threshold)


def test_uniform_subsets_and_deployments_are_uniform():
    budget, rounds = 3, 40_000
    config = presets.get("trap").config(budget, policy="uniform", seed=21, horizon=rounds)
    n_experts = config.n_experts
    result = _run(config)
    selected, deployed = result.trace_selected, result.trace_deployed
    assert all(len(set(row)) == budget for row in selected.tolist())
    assert all(d in row for d, row in zip(deployed.tolist(), selected.tolist()))
    # Unordered subsets: C(10, 3) = 120 cells, 333 expected draws each.
    subsets = Counter(tuple(sorted(row)) for row in selected.tolist())
    cells = math.comb(n_experts, budget)
    assert len(subsets) == cells
    _chi_square_ok(list(subsets.values()), rounds / cells)
    # The permutation is carried from round to round: consecutive first members are independent.
    pairs = Counter(zip(selected[:-1, 0].tolist(), selected[1:, 0].tolist()))
    _chi_square_ok(
        [pairs.get((a, b), 0) for a in range(n_experts) for b in range(n_experts)], (rounds - 1) / 100
    )
    # Deployed expert: uniform over the K experts, and uniform over the positions within S_t.
    _chi_square_ok(np.bincount(deployed, minlength=n_experts), rounds / n_experts)
    position = np.argmax(selected == deployed[:, None], axis=1)
    _chi_square_ok(np.bincount(position, minlength=budget), rounds / budget)


def test_full_budget_trains_everyone_every_round():
    rounds = 500
    config = presets.get("trap").config(2, policy="full-budget", seed=3, horizon=rounds)
    result = _run(config)
    expected = np.arange(1, rounds + 1)[:, None] + 1  # t rounds plus the warm start
    np.testing.assert_array_equal(result.trained, np.broadcast_to(expected, result.trained.shape))
    assert result.trace_selected.shape == (rounds, config.n_experts)
    assert np.all(np.isnan(result.certificate))


def test_oracle_regret_is_the_best_experts_own():
    rounds, seed = 2_000, 8
    results = [
        _run(presets.get("trap").config(budget, policy="oracle", seed=seed, horizon=rounds), trace=False)
        for budget in (1, 3)
    ]
    config = presets.get("trap").config(1, policy="oracle", seed=seed, horizon=rounds)
    # k* alone, driven through the twin's world with no policy at all.
    env = engine.build(config).env
    keys = stream_keys(seed, 0, config.n_experts, getattr(env, "streams", None))
    env_params, _ = env.build(seed, 0, 100)
    optimal = BANDITS.optimal_losses(list(config.experts), env, env_params)
    best = int(np.argmin(optimal))
    world = twin._BanditWorld(config, env, env_params, keys)
    pseudo, realized, own_pseudo, own_realized = 0.0, 0.0, [], []
    for t in range(1, rounds + 1):
        world.begin(t)
        loss, expected = world.deploy(best, t, 0)
        world.train(best, t)
        pseudo += expected - optimal[best]
        realized += loss - optimal[best]
        own_pseudo.append(pseudo)
        own_realized.append(realized)
    for result in results:
        assert result.best_expert == best
        np.testing.assert_array_equal(result.pseudo_regret, own_pseudo)
        np.testing.assert_array_equal(result.regret, own_realized)
        others = np.delete(result.trained, best, axis=1)
        assert not others.any()  # no warm start, nobody else ever trained
        np.testing.assert_array_equal(result.trained[:, best], np.arange(1, rounds + 1))
        np.testing.assert_array_equal(result.deployed[:, best], np.arange(1, rounds + 1))


def test_greedy_locks_out_the_best_expert():
    """The trap for Greedy: after the warm start every mean is 0 or 1; if k* (expert 0) drew a loss
    and at least M = 2 others drew none, those others keep means < 1 forever and k*, at 1, is never
    trained or deployed again. From the instance (docs/theory.md §7; first decisions uniform over the
    two arms for epsilon-greedy, arm 0 after the per-run shuffle for UCB1, so on average the mean
    of the two arms) k* draws a loss with probability 0.75 and expert k = 1..9 draws none with
    probability about 0.25 - 0.015 k, so the lock-out has probability about 0.75 * 0.47 = 0.35 at
    round 1 alone: about 22 of 64 replications, standard deviation 3.8. The bound 10 lies 3 standard
    deviations below (P(Bin(64, 0.35) < 10) < 1e-3 for a random seed). M-LCB cannot be locked out:
    an expert left at n = 1 keeps LCB = L - U(1) <= 0 while every trained expert's LCB rises towards
    its L_k* >= 0.7, so k* is eventually trained again; by round 10,000 it was in every replication
    here (at round 2,000 not yet in 12 of 64).
    """
    rounds, n_reps = 10_000, 64
    locked = {}
    for policy in ("greedy", "mlcb"):
        config = presets.get("trap").config(2, policy=policy, seed=17, horizon=rounds)
        reps = engine.run_replications(
            engine.build(config), config.seed, range(n_reps), rounds, np.array([rounds]), threads=1
        )
        trained = np.array([r.trained[-1, r.best_expert] for r in reps])
        deployed = np.array([r.deployed[-1, r.best_expert] for r in reps])
        assert np.all((trained == 1) <= (deployed == 0))  # a locked-out expert is never deployed
        locked[policy] = int(np.sum(trained == 1))
    assert locked["greedy"] >= 10, locked
    assert locked["mlcb"] == 0, locked


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="the trap is built so that Greedy would deploy k* less often than M-LCB (theory "
    "calibration) at M = 2 over 100,000 rounds; the data disagree (here a share of rounds of 0.86 "
    "against 0.46): Greedy is locked out of k* in some replications (1 of these 8, about a third in "
    "general: test_greedy_locks_out_the_best_expert) but deploys k* in nearly every round of the "
    "others, while M-LCB spends its budget exploring",
)
def test_greedy_deploys_the_best_expert_less_than_mlcb():
    rounds, n_reps = 100_000, 8
    share = {}
    for policy in ("greedy", "mlcb"):
        config = presets.get("trap").config(2, policy=policy, seed=7, horizon=rounds)
        reps = engine.run_replications(
            engine.build(config), config.seed, range(n_reps), rounds, np.array([rounds]), threads=1
        )
        share[policy] = np.mean([r.deployed[-1, r.best_expert] / rounds for r in reps])
    assert share["greedy"] < share["mlcb"], share


# --- the policy objects ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["round-robin", "uniform", "greedy", "full-budget", "oracle"])
def test_registered_and_without_certificate(name):
    policy = policies.make(name)
    assert policy.name == name
    assert policy.has_certificate is False
    assert policy.certificate_valid is False
    assert getattr(policy, "warm_start", True) is (name != "oracle")


def test_selection_sizes():
    assert engine.selection_size(FullBudget(), 10, 2) == 10
    for policy in (RoundRobin(), Uniform(), Greedy(), Oracle()):
        assert engine.selection_size(policy, 10, 3) == 3


def test_oracle_picks_the_smallest_index_among_ties():
    params, _ = Oracle().build(4, 1, 0.1, 10, np.array([0.5, 0.2, 0.3, 0.2]))
    assert params.best == 1


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: RoundRobin(deploy_within_S=1), r"deploy_within_S must be True or False, got 1"),
        (lambda: RoundRobin(deploy_within_S="yes"), r"deploy_within_S must be True or False, got 'yes'"),
        (lambda: FullBudget(bonus_scale=0), r"bonus_scale must be a finite number > 0, got 0"),
        (lambda: FullBudget(bonus_scale=-1.0), r"bonus_scale must be a finite number > 0, got -1.0"),
        (lambda: FullBudget(bonus_scale=math.nan), r"bonus_scale must be a finite number > 0, got nan"),
        (lambda: FullBudget(bonus_scale=math.inf), r"bonus_scale must be a finite number > 0, got inf"),
        (lambda: FullBudget(bonus_scale=True), r"bonus_scale must be a finite number > 0, got True"),
        (lambda: FullBudget(bonus_scale="1"), r"bonus_scale must be a finite number > 0, got '1'"),
        (
            lambda: Oracle().build(3, 1, 0.1, 10, np.array([0.1, 0.2])),
            r"optimal must be 3 finite L_k\* values",
        ),
        (
            lambda: Oracle().build(2, 1, 0.1, 10, np.array([0.1, np.nan])),
            r"optimal must be 2 finite L_k\* values",
        ),
        (
            lambda: mlcb.engine.build(
                presets.get("trap").config(2, policy="full-budget", policy_params={"bonus_scale": -1})
            ),
            r"bonus_scale must be a finite number > 0, got -1",
        ),
    ],
)
def test_bad_parameters(make, message):
    with pytest.raises(ValueError, match=message):
        make()
