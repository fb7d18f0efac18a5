"""The practitioners' policies (bandits over learners, successive halving and Hyperband, R-ed-UCB,
EXP3.P: mlcb/policies/bandits_over_learners.py, halving.py, rising_ucb.py, exp3p.py).

Compiled runs against the pure-Python twins of mlcb/testing/twins/practitioners.py (identical decisions,
losses and regret, bit for bit), then each policy's defining behaviour, then parameter checks.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlcb import engine, policies, presets
from mlcb.testing.twins import core as twin

ROUNDS = 2_000

TRAP_CASES = [
    ("bandit-epsilon-greedy", {"burn_in": 3}, 1),
    ("bandit-epsilon-greedy", {"burn_in": 3, "epsilon": 0.3, "decay": 1e-3}, 3),
    ("bandit-epsilon-greedy", {}, 2),
    ("bandit-ucb1", {"burn_in": 0}, 1),
    ("bandit-ucb1", {"burn_in": 5, "c": 0.5}, 3),
    ("bandit-thompson", {"burn_in": 0}, 1),
    ("bandit-thompson", {"burn_in": 2, "scale": 0.3}, 2),
    ("successive-halving", {}, 1),
    ("successive-halving", {"steps": 400}, 3),
    ("hyperband", {}, 1),
    ("hyperband", {"steps": 50}, 2),
    ("r-ed-ucb", {}, 1),
    ("r-ed-ucb", {"epsilon": 0.5, "sigma": 0.1}, 3),
    ("exp3p", {}, 1),
    ("exp3p", {"gamma": 0.2, "alpha": 1.0}, 3),
]


@pytest.mark.parametrize(("policy", "params", "budget"), TRAP_CASES)
def test_trap_matches_twin(policy, params, budget):
    config = presets.get("trap").config(budget, policy=policy, policy_params=params, seed=13, horizon=ROUNDS)
    twin.assert_matches_engine(config, replication=1, rounds=ROUNDS)


@pytest.mark.parametrize(
    ("policy", "budget"),
    [("bandit-ucb1", 1), ("bandit-ucb1", 3), ("bandit-epsilon-greedy", 2), ("bandit-thompson", 2)],
)
def test_many_experts_match_twin(policy, budget):
    """Above 64 experts UCB1 selects by branch and bound on a heap, and the leader is read off a
    heap of means instead of a scan: still the twin's full sorts."""
    config = presets.get("trap").config(
        budget,
        policy=policy,
        policy_params={"burn_in": 2},
        env_params={"n_experts": 96},
        seed=8,
        horizon=1_500,
    )
    twin.assert_matches_engine(config, rounds=1_500)


@pytest.mark.parametrize(
    ("policy", "budget", "rounds"),
    [("r-ed-ucb", 2, 400), ("bandit-thompson", 2, 600), ("bandit-ucb1", 1, 3_000), ("bandit-ucb1", 5, 3_000)],
)
def test_more_experts_than_two_blocks_match_twin(policy, budget, rounds):
    """Above 128 experts R-ed-UCB and Thompson sampling select through smallest_blocked, and
    UCB1's search by columns has several experts in every column."""
    params = {"burn_in": 2} if policy.startswith("bandit") else {}
    config = presets.get("trap").config(
        budget, policy=policy, policy_params=params, env_params={"n_experts": 160}, seed=5, horizon=rounds
    )
    twin.assert_matches_engine(config, rounds=rounds)


@pytest.mark.parametrize("budget", [1, 3, 70])
def test_ucb1_search_by_columns_selects_as_the_sort_again_without_training(budget):
    """UCB1's search over 160 experts (a column of 64 holds two or three) returns the M smallest
    indices by (index, k), as sorting all of them does, also when it is asked again before any
    expert has trained; M = 70 is more than a column count."""
    from mlcb.kernels import observe, select
    from mlcb.kernels.stats import new_stats

    n_experts = 160
    spec = policies.make("bandit-ucb1", burn_in=0)
    params, state = spec.build(n_experts, budget, 0.1, 1_000, np.zeros(n_experts))
    stats = new_stats(n_experts)
    rng = np.random.default_rng(budget)
    for k in range(n_experts):
        n = int(rng.integers(1, 40))
        stats[k]["n"] = n
        stats[k]["loss_sum"] = n * float(rng.choice([0.25, 0.5, 0.75]))  # ties in the means
        observe(params, state, stats, k, 0.5, 0)
    a = 2.0 * math.log(n_experts)
    index = [stats[k]["loss_sum"] / stats[k]["n"] - math.sqrt(a / stats[k]["n"]) for k in range(n_experts)]
    expected = sorted(range(n_experts), key=lambda k: (index[k], k))[:budget]
    for _ in range(2):
        selected, widths = np.full(budget, -1), np.zeros(budget)
        select(params, state, stats, 1, 0, selected, widths)
        assert selected.tolist() == expected


@pytest.mark.parametrize("policy", policies.PRACTITIONERS)
def test_glm_matches_twin(policy):
    params = {"burn_in": 5} if policy.startswith("bandit") else {}
    config = presets.get("glm").config(2, policy=policy, policy_params=params, seed=4, horizon=300)
    twin.assert_matches_engine(config, rounds=300)


def _trace(policy: str, budget: int, rounds: int, **params):
    config = presets.get("trap").config(budget, policy=policy, policy_params=params, seed=3, horizon=rounds)
    return engine.run_replication(
        engine.build(config), config.seed, 0, rounds, np.arange(1, rounds + 1), trace_rounds=rounds
    )


def test_burn_in_trains_cyclically_first():
    burn_in, budget = 4, 3
    result = _trace("bandit-ucb1", budget, 40, burn_in=burn_in)
    rounds = math.ceil(10 * burn_in / budget)
    updates = result.trained[rounds - 1] - 1
    assert updates.min() >= burn_in and updates.max() <= burn_in + 1
    assert np.array_equal(result.trace_selected[0], [0, 1, 2])


def test_halving_spends_its_budget_then_keeps_the_winner():
    steps, budget = 600, 2
    result = _trace("successive-halving", budget, 800, steps=steps)
    trained = (result.trace_selected >= 0).sum(axis=1)
    # ceil(log2 10) = 4 rungs of 10, 5, 3, 2 survivors: 15, 30, 50, 75 steps each.
    assert trained.sum() == 10 * 15 + 5 * 30 + 3 * 50 + 2 * 75 + (800 - np.argmax(trained == 1))
    winner = result.trace_selected[-1, 0]
    tail = result.trace_selected[-100:]
    assert np.all(tail[:, 0] == winner) and np.all(tail[:, 1] == -1)
    assert np.all(result.trace_deployed[-100:] == winner)


def test_hyperband_restarts_brackets_with_doubled_budgets():
    """Driven by hand: each bracket spends at most its budget, then the budget doubles."""
    from mlcb.kernels import end_round, observe, select
    from mlcb.kernels.stats import new_stats
    from mlcb.policies.halving import BRACKET

    n_experts, budget, steps = 10, 2, 80
    params, state = policies.make("hyperband", steps=steps).build(
        n_experts, budget, 0.1, 10_000, np.zeros(10)
    )
    stats = new_stats(n_experts)
    stats["n"] = 1
    stats["loss_sum"] = 0.5
    selected, widths = np.zeros(budget, dtype=np.int64), np.zeros(budget)
    spent, brackets = 0, []
    for t in range(1, 4_000):
        count, deployed = select(params, state, stats, t, np.uint64(1), selected, widths)
        for k in selected[:count]:
            loss = 0.1 * k  # expert 0 is the best
            stats[k]["n"] += 1
            stats[k]["loss_sum"] += loss
            observe(params, state, stats, k, loss, t)
        spent += count
        bracket = state.counters[BRACKET]
        end_round(params, state, stats, selected, count, deployed, 0.0, t)
        if state.counters[BRACKET] != bracket:
            brackets.append(spent)
            spent = 0
            assert deployed == 0 or len(brackets) == 1
    assert len(brackets) >= 4
    for b, used in enumerate(brackets):
        allowed = steps * 2**b
        assert allowed - n_experts * 4 <= used <= allowed


def test_exp3p_default_constants_follow_the_theorem():
    gamma, alpha = policies.make("exp3p").constants(10, 10_000, 0.1)
    assert gamma == pytest.approx(min(0.6, 2 * math.sqrt(3 * 10 * math.log(10) / (5 * 10_000))))
    assert alpha == pytest.approx(2 * math.sqrt(math.log(10 * 10_000 / 0.1)))


def test_rising_index_forecasts_a_linear_curve():
    """On rewards rising exactly linearly, R-ed-UCB's mean forecast is the line itself."""
    from mlcb.kernels import observe
    from mlcb.kernels.stats import new_stats

    spec = policies.make("r-ed-ucb", epsilon=0.5)
    params, state = spec.build(1, 1, 0.1, 100, np.zeros(1))
    stats = new_stats(1)
    for n in range(1, 41):
        reward = 0.2 + 0.01 * n
        stats[0]["n"] = n
        stats[0]["loss_sum"] += 1.0 - reward
        observe(params, state, stats, 0, 1.0 - reward, n)
    # mu forecasts the reward of the next training step, exactly for a line: 0.2 + 0.01 * 41.
    assert state.mu[0] == pytest.approx(0.2 + 0.01 * 41, abs=1e-9)
    assert state.slope[0] == pytest.approx(0.01, abs=1e-9)


def _rising_after(counts_and_losses, horizon=100, n_experts=2):
    """R-ed-UCB's state after observing ``(expert, count, loss)`` in turn (the statistics set
    to that count before each observation, as the engine's accounting does)."""
    from mlcb.kernels import observe
    from mlcb.kernels.stats import new_stats

    spec = policies.make("r-ed-ucb")
    params, state = spec.build(n_experts, 1, 0.1, horizon, np.zeros(n_experts))
    stats = new_stats(n_experts)
    for k, n, loss in counts_and_losses:
        stats[k]["loss_sum"] += (n - stats[k]["n"]) * loss
        stats[k]["n"] = n
        observe(params, state, stats, k, loss, 0)
    return state


def test_rising_one_observation_of_several_updates_records_each_of_them():
    """A warm start in which each expert made 20 updates (reported once, with their mean loss)
    is recorded as 20 rewards of that value, each expert in its own part of the history: the
    same forecasts as 20 observations of one update each."""
    at_once = _rising_after([(0, 20, 0.0), (1, 20, 1.0), (0, 21, 0.5), (1, 21, 0.25)])
    steps = [(k, n, 0.0 if k == 0 else 1.0) for n in range(1, 21) for k in (0, 1)]
    one_by_one = _rising_after(steps + [(0, 21, 0.5), (1, 21, 0.25)])
    # Every per-expert number but the selection's scratch (its last row), and the counts.
    np.testing.assert_array_equal(at_once.expert[:-1], one_by_one.expert[:-1])
    np.testing.assert_array_equal(at_once.pulls, one_by_one.pulls)
    flat = _rising_after([(0, 20, 0.0), (1, 20, 1.0)])
    assert flat.mu.tolist() == [1.0, 0.0] and flat.slope.tolist() == [0.0, 0.0]


def test_rising_history_that_is_full_raises_unchanged_and_grows():
    from mlcb.errors import PolicyStateFull
    from mlcb.kernels import observe
    from mlcb.kernels.stats import new_stats

    spec = policies.make("r-ed-ucb")
    params, state = spec.build(2, 1, 0.1, 10, np.zeros(2))  # room for 2 x (2 + 10) + 4 entries
    stats = new_stats(2)
    stats[0]["n"], stats[0]["loss_sum"] = 20, 4.0
    before = [a.copy() for a in state]
    with pytest.raises(PolicyStateFull, match="r-ed-ucb: no room left"):
        observe(params, state, stats, 0, 0.2, 0)
    for a, b in zip(state, before):
        np.testing.assert_array_equal(a, b)
    state = spec.grow(params, state, 20)
    observe(params, state, stats, 0, 0.2, 0)
    assert state.pulls[0] == 20 and state.mu[0] == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("name", "params", "field"),
    [
        ("bandit-epsilon-greedy", {"epsilon": 1.5}, "epsilon"),
        ("bandit-epsilon-greedy", {"burn_in": 2.5}, "burn_in"),
        ("bandit-ucb1", {"c": 0}, "c"),
        ("successive-halving", {"variant": "twice"}, "variant"),
        ("r-ed-ucb", {"epsilon": 0.75}, "epsilon"),
        ("exp3p", {"gamma": 2.0}, "gamma"),
    ],
)
def test_bad_parameters_name_themselves(name, params, field):
    with pytest.raises(ValueError, match=field):
        policies.make(name, **params)


def test_practitioners_entry_set_compares_at_equal_budget():
    from mlcb.compare import comparison_configs

    configs = comparison_configs("trap", entry_set="practitioners", budget=2, horizon=100)
    assert [c.policy for c in configs] == ["mlcb", *policies.PRACTITIONERS]
    assert {c.budget for c in configs} == {2} and {c.smoothing for c in configs} == {"counts"}
    assert [c.policy for c in comparison_configs("trap")][:1] == ["mlcb"]  # the paper's is unchanged
    assert "exp3p" not in {c.policy for c in comparison_configs("trap")}
    glm = comparison_configs("glm", entry_set="practitioners", budget=1)
    assert {c.smoothing for c in glm} == {"average"}
    with pytest.raises(ValueError, match="entry_set"):
        comparison_configs("trap", entry_set="no-such-set")


# --- the README's claims, at reduced size (seed 0, not tuned) ----------------------------------
def _final(result, policy: str, budget: int) -> tuple[float, float]:
    final = result.final()
    values = final[(final.policy == policy) & (final.budget == budget)].pseudo_regret.to_numpy()
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(len(values)))


def _ahead(result, winner: str, loser: str, budget: int, margin: float = 3.0) -> None:
    """``winner``'s mean pseudo-regret is below ``loser``'s by ``margin`` standard errors of the
    difference."""
    (a, sa), (b, sb) = _final(result, winner, budget), _final(result, loser, budget)
    assert b - a > margin * math.hypot(sa, sb), (winner, a, sa, loser, b, sb)


@pytest.mark.slow
def test_late_risers_mlcb_beats_the_naive_bandits():
    import mlcb

    naive = ["bandit-epsilon-greedy", "bandit-ucb1", "bandit-thompson"]
    result = mlcb.compare(
        "late-risers", [(name, (1,), {}, None) for name in ["mlcb", *naive]], horizon=50_000, replications=8
    )
    for name in naive:
        _ahead(result, "mlcb", name, 1)


@pytest.mark.slow
def test_trap_authors_calibration_where_mlcb_wins_and_where_not():
    import mlcb

    names = ["mlcb", "bandit-ucb1", "r-ed-ucb", "exp3p"]
    result = mlcb.compare(
        "trap",
        [(n, (1, 2), {}, "counts") for n in names],
        calibration="authors",
        horizon=50_000,
        replications=8,
    )
    for budget in (1, 2):  # far ahead of the rising-bandit and adversarial rules
        _ahead(result, "mlcb", "r-ed-ucb", budget)
        _ahead(result, "mlcb", "exp3p", budget)
    _ahead(result, "bandit-ucb1", "mlcb", 1)  # behind UCB1 over learners at M = 1


def test_cli_compare_runs_the_practitioners_set(tmp_path, capsys):
    from mlcb.cli import main

    argv = ["compare", "trap", "--set", "practitioners", "-T", "300", "-R", "1", "-M", "2"]
    assert main([*argv, "--out", str(tmp_path), "--quiet", "--no-plot"]) == 0
    assert (tmp_path / "trap-comparison-practitioners").is_dir()
    out = capsys.readouterr().out
    assert all(name in out for name in policies.PRACTITIONERS)
    assert main(["compare", "trap", "--set", "nothing", "--out", str(tmp_path)]) != 0


def _count_fields(name: str) -> list[str]:
    """The fields of the policy registered as ``name`` that count rounds, updates or steps (an
    int, or an int or None)."""
    import dataclasses

    cls = policies.registry.entry(name).load()
    return [f.name for f in dataclasses.fields(cls) if str(f.type) in ("int", "int | None")]


@pytest.mark.parametrize("name", policies.names())
def test_every_count_of_a_policy_is_bounded_before_the_run(name):
    """A count beyond what the kernels' 64-bit integers hold (``burn_in = 10**30``) is refused
    with the field and its range when the policy is made; it was accepted, then failed as the run
    started with Numba's "non-precise type pyobject" or "int too large to convert to C long".
    The largest count allowed builds."""
    from mlcb.policies.base import MAX_ROUNDS, MAX_STEPS

    for field in _count_fields(name):
        largest = MAX_STEPS if field == "steps" else MAX_ROUNDS
        with pytest.raises(ValueError, match=rf"{field} must be .*in \[[01], {largest:_}\], got 10{{30}}"):
            policies.make(name, **{field: 10**30})
        with pytest.raises(ValueError, match=rf"{field} must be .*in \[[01], {largest:_}\]"):
            policies.make(name, **{field: largest + 1})
        policies.make(name, **{field: largest}).build(10, 1, 0.1, 100, np.zeros(10))
