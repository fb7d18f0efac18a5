"""Engine guarantees: determinism, common random numbers, reference paths, random streams."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import agents
import mlcb
from mlcb import engine, presets
from mlcb.config import checkpoint_grid
from mlcb.kernels import random as counter_random
from mlcb.kernels import tables
from mlcb.kernels.jit import JIT_DISABLED
from mlcb.testing.twins import core as twin


def _frames_equal(a, b):
    for name in ("curves", "experts", "replications"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))


@pytest.mark.parametrize(
    ("families", "n_arms", "smoothing"),
    [
        (("ucb1", "epsilon-greedy"), 2, "counts"),
        (("thompson", "clipped-thompson", "ucb1"), 3, "last"),
        (("epsilon-greedy",), 4, "average"),
    ],
)
def test_a_loop_for_every_mix_gives_what_the_specialised_loop_gives(families, n_arms, smoothing, monkeypatch):
    """The round loop compiled for a pool's own algorithms and number of arms (the default) and the
    one that serves every mix (``agents.bandit_kernels.SPECIALISED = False``) give the same bits."""
    from agents import bandit_kernels
    from agents.bandits import UCB1, EpsilonGreedy, ThompsonSampling
    from mlcb.config import SimulationConfig

    kinds = {
        "ucb1": UCB1(c=2.0),
        "epsilon-greedy": EpsilonGreedy(c=1.0),
        "thompson": ThompsonSampling(),
        "clipped-thompson": ThompsonSampling(clipped=True),
    }
    experts = tuple(kinds[families[k % len(families)]] for k in range(5))
    means = np.random.default_rng(n_arms).uniform(0.1, 0.9, (5, n_arms))
    config = SimulationConfig(
        env="mlcb/BanditExperts-v0",
        env_params={"reward_means": means.tolist(), "shuffle": True},
        experts=experts,
        budget=2,
        horizon=400,
        replications=1,
        seed=4,
        smoothing=smoothing,
    )
    grid = checkpoint_grid(config.horizon, 20)
    runs, paths = [], []
    for specialised in (True, False):
        monkeypatch.setattr(bandit_kernels, "SPECIALISED", specialised)
        problem = engine.build(config)
        paths.append(engine.build_replication(problem, 4, 0, config.horizon, grid).pool_params.paths)
        runs.append(engine.run_replication(problem, 4, 0, config.horizon, grid, trace_rounds=config.horizon))
    assert paths[0].arms == n_arms and paths[1].arms == 0 and paths[1].families == bandit_kernels.ALL_FAMILIES
    assert paths[0].families != paths[1].families
    for name in ("trace_selected", "trace_deployed", "trace_loss", "regret", "pseudo_regret", "certificate"):
        np.testing.assert_array_equal(getattr(runs[0], name), getattr(runs[1], name))


def test_results_do_not_depend_on_threads():
    one = mlcb.simulate(preset="trap", budget=2, horizon=3_000, replications=6, threads=1)
    two = mlcb.simulate(preset="trap", budget=2, horizon=3_000, replications=6, threads=2)
    _frames_equal(one, two)


def test_replication_does_not_depend_on_how_many_run():
    few = mlcb.simulate(preset="trap", budget=1, horizon=2_000, replications=2, seed=9)
    many = mlcb.simulate(preset="trap", budget=1, horizon=2_000, replications=5, seed=9)
    head = many.curves[many.curves["replication"] < 2].reset_index(drop=True)
    pd.testing.assert_frame_equal(few.curves, head)


def test_seeds_change_the_results():
    a = mlcb.simulate(preset="trap", budget=1, horizon=2_000, replications=2, seed=1)
    b = mlcb.simulate(preset="trap", budget=1, horizon=2_000, replications=2, seed=2)
    assert not np.array_equal(a.curves["regret"], b.curves["regret"])


def test_common_random_numbers_across_policies_and_budgets():
    """Every setting of one seed faces the same instance and the same xi_t."""
    trap = presets.get("trap")
    configs = [trap.config(1), trap.config(3, policy="mlcb-topm"), trap.config(2, calibration="authors")]
    builds = [engine.build_replication(engine.build(c), 5, 3, 10, np.array([10])) for c in configs]
    env_params = [b.env_params for b in builds]
    for other in env_params[1:]:
        np.testing.assert_array_equal(env_params[0].loss_means, other.loss_means)
        assert env_params[0].key == other.key
    np.testing.assert_array_equal(builds[0].pool_params.experts["key"], builds[1].pool_params.experts["key"])


@pytest.mark.parametrize("name", ["trap", "glm", "late-risers", "bananas", "ctg"])
def test_two_compiled_round_loops_for_every_horizon(name, monkeypatch):
    """The round loop's arguments have the same Numba types for every horizon whose functions of
    a count fit their tables, and the same for every horizon past them, whether the counts past
    them continue in read-only continuations or are computed (no tables at all): a run loads one
    of two compiled loops, whatever its horizon. (Within the tables the loop reads them and
    nothing else: the trap's rounds take a sixth fewer instructions at M = 4.)"""
    import numba

    config = presets.get(name).config(presets.get(name).budgets[0], horizon=600, replications=1)
    problem = engine.build(config)
    if engine.choose_engine(problem, "auto") != "compiled":
        pytest.skip(f"{name} runs on the Python engine")

    def types(horizon=config.horizon, **budgets):
        with monkeypatch.context() as patch:
            for attribute, value in budgets.items():
                patch.setattr(tables, attribute, value)
            arguments = engine.build_replication(problem, 0, 0, horizon, checkpoint_grid(horizon, 10))
        return [numba.typeof(argument) for argument in arguments]

    assert types(horizon=300) == types()  # within the tables
    past = types(TABLE_BUDGET_BYTES=8 * 3 * 100)  # past the tables: their continuation
    assert types(TABLE_BUDGET_BYTES=8 * 3 * 100, TAIL_BUDGET_BYTES=0) == past  # computed past them
    assert types(TABLE_BUDGET_BYTES=0) == past  # no tables at all
    assert types(horizon=900, TABLE_BUDGET_BYTES=8 * 3 * 100) == past


@pytest.mark.skipif(JIT_DISABLED, reason="nothing is compiled with the JIT disabled")
def test_a_run_past_the_tables_after_another_compiles_nothing(monkeypatch):
    """What a run at T = 10^7 does past the 64 MB tables (their compressed continuation, built
    and read), at a small scale: after one such run, another of another horizon compiles nothing."""
    from mlcb.kernels.jit import CompileWatch

    monkeypatch.setattr(tables, "TABLE_BUDGET_BYTES", 8 * 3 * 100)  # tables of 100 counts
    first = mlcb.simulate(preset="trap", budget=2, horizon=2_000, replications=1, seed=3)
    with CompileWatch() as watch:
        long = mlcb.simulate(preset="trap", budget=2, horizon=3_000, replications=1, seed=3)
    assert watch.count == 0
    assert long.final()["round"].iloc[0] == 3_000 and first.final()["round"].iloc[0] == 2_000


def test_the_warm_start_is_round_zero_of_the_round_loop():
    """``run_rounds`` from round 0 trains every expert once (the warm start), deploys nothing and
    records no regret; then it plays rounds 1 ..: the same bits in one call as in slices, the first
    of which is round 0 alone. (The Python engine's warm start, kernels called one by one, is held
    to the same numbers by tests/test_python_engine.py.)"""
    config = presets.get("trap").config(2, horizon=600, replications=1)
    problem = engine.build(config)
    grid = np.array([1, 50, 300, 600])
    whole, sliced = (engine.build_replication(problem, 0, 1, 600, grid) for _ in range(2))
    run_rounds = whole.round_loop()
    assert whole.run_rounds(run_rounds, 0, 600) == 0
    assert sliced.run_rounds(run_rounds, 0, 0) == 0
    assert sliced.stats["n"].tolist() == [1] * config.n_experts
    assert np.all(sliced.stats["loss_sum"] >= 0) and sliced.stats["loss_sum"].sum() > 0
    assert sliced.record.totals.tolist() == [0.0] * 5 and sliced.record.cursor[0] == 0
    for first, last in ((1, 7), (8, 600)):
        assert sliced.run_rounds(run_rounds, first, last) == 0
    for name in ("regret", "pseudo_regret", "top_m_regret", "certificate", "trained", "deployed"):
        np.testing.assert_array_equal(getattr(sliced.record, name), getattr(whole.record, name), name)
    assert sliced.stats.tobytes() == whole.stats.tobytes()
    assert whole.stats["n"].sum() == config.n_experts + 2 * 600  # M = 2 trained per round


def test_a_round_loop_within_its_tables_runs_on_past_its_horizon():
    """A pool and a policy whose tables hold every count of their horizon read nothing else in
    the round loop; driven further (a session run beyond its horizon), they compute the counts
    past their tables out of line, to the numbers of a replication built for the longer horizon."""
    config = presets.get("trap").config(2, horizon=300, replications=1)
    problem = engine.build(config)
    short = engine.build_replication(problem, 0, 0, 300, np.array([300]))
    long = engine.build_replication(problem, 0, 0, 900, np.array([300, 900]))
    for args in (short, long):
        assert args.pool_params.paths.tabulated and args.policy_params.paths.tabulated
        run_rounds = args.round_loop()
        assert args.run_rounds(run_rounds, 0, 0) == 0  # the warm start
        assert args.run_rounds(run_rounds, 1, 900) == 0
    assert short.stats["n"].max() > short.pool_params.tables.shape[1]  # past the short one's tables
    assert short.stats.tolist() == long.stats.tolist()
    assert short.pool_state.arms.tolist() == long.pool_state.arms.tolist()
    assert (
        short.policy_state.bounds[["lcb", "ucb"]].tolist()
        == long.policy_state.bounds[["lcb", "ucb"]].tolist()
    )
    assert short.policy_params.hoeffding.shape[0] < short.stats["n"].max()


def test_tables_and_computed_path_agree(monkeypatch):
    """Tabulated functions of a count and the computed reference path give identical runs: a pool
    whose experts all have their rows (the trap) reads past its tables in the round loop, one
    whose UCB1 experts take the authors' rates (a function of more than the count) in the general
    path, and the GLM pool computes past its tables."""
    trap = presets.get("trap")
    for config in (
        trap.config(2, horizon=4_000),
        trap.config(2, horizon=4_000, calibration="authors"),
        presets.get("glm").config(2, horizon=300),
    ):
        problem = engine.build(config)
        grid = checkpoint_grid(config.horizon, 30)
        tabulated = engine.run_replication(problem, 0, 0, config.horizon, grid, trace_rounds=config.horizon)
        with monkeypatch.context() as patch:
            patch.setattr(tables, "TABLE_BUDGET_BYTES", 0)
            args = engine.build_replication(problem, 0, 0, config.horizon, grid)
            assert args.pool_params.tables.size == 0 and args.policy_params.hoeffding.size == 0
            computed = engine.run_replication(
                problem, 0, 0, config.horizon, grid, trace_rounds=config.horizon
            )
        runs = {}
        # Tables shorter than the horizon, and past them: the compressed continuation to the end
        # (None), a continuation that stops short (then computed, U#'s running sums carrying on
        # from where it stopped), or none (computed from the tables' end).
        for tail_budget in (None, 3 * (config.horizon // 4), 0):
            with monkeypatch.context() as patch:
                patch.setattr(tables, "TABLE_BUDGET_BYTES", 8 * 3 * (config.horizon // 12))
                if tail_budget is not None:
                    patch.setattr(tables, "TAIL_BUDGET_BYTES", tail_budget)
                args = engine.build_replication(problem, 0, 0, config.horizon, grid)
                length = args.pool_params.tables.shape[1]
                theory = config.calibration != "authors"  # (the authors' bounds use no Hoeffding table)
                assert 0 < length < config.horizon
                assert (0 < args.policy_params.hoeffding.size < config.horizon) == theory
                runs[tail_budget] = engine.run_replication(
                    problem, 0, 0, config.horizon, grid, trace_rounds=config.horizon
                )
                if config.env != "mlcb/Trap-v0":
                    continue  # the GLM pool has no continuation: computed past its tables
                paths = args.pool_params.paths
                assert not paths.tabulated and paths.rows == theory
                stored = length + args.pool_params.tail.codes.shape[1]
                hoeffding = (
                    args.policy_params.hoeffding.size + args.policy_params.hoeffding_tail.codes.shape[1]
                )
                if tail_budget is None:
                    assert stored == config.horizon + 2 and hoeffding == (stored if theory else 0)
                else:
                    assert stored == length + tail_budget // args.pool_params.tables.shape[0]
                    assert hoeffding == (args.policy_params.hoeffding.size + tail_budget if theory else 0)
                    if theory:  # (the authors' rates spread the trainings: the leader may stop short)
                        assert runs[tail_budget].trained[-1].max() > stored
        for name in ("trace_selected", "trace_deployed", "regret", "pseudo_regret", "certificate", "trained"):
            np.testing.assert_array_equal(getattr(tabulated, name), getattr(computed, name))
            for run in runs.values():
                np.testing.assert_array_equal(getattr(run, name), getattr(computed, name))


@pytest.mark.parametrize("budget", [1, 3, 7])
@pytest.mark.parametrize("n_experts", [40, 90])  # every expert in order; S_t and a heap
def test_heap_and_scan_select_identically(budget, n_experts):
    from mlcb.policies.m_lcb import ORDERED_LIMIT

    assert (n_experts <= ORDERED_LIMIT) == (n_experts == 40)
    pool = tuple(agents.make(["ucb1", "epsilon-greedy", "clipped-thompson"][k % 3]) for k in range(n_experts))
    rng = np.random.default_rng(budget)
    config = presets.get("trap").config(
        budget,
        horizon=2_000,
        experts=pool,
        env="mlcb/BanditExperts-v0",
        env_params={"reward_means": rng.uniform(0.1, 0.9, (n_experts, 2)).tolist(), "shuffle": True},
    )
    grid = np.arange(1, 2_001)
    runs = [
        engine.run_replication(
            engine.build(config.replace(policy_params={"selection": s})),
            0,
            0,
            2_000,
            grid,
            trace_rounds=2_000,
        )
        for s in ("heap", "scan")
    ]
    np.testing.assert_array_equal(runs[0].trace_selected, runs[1].trace_selected)
    np.testing.assert_array_equal(runs[0].trace_deployed, runs[1].trace_deployed)
    np.testing.assert_array_equal(runs[0].regret, runs[1].regret)


@pytest.mark.parametrize("budget", [1, 2, 5])
@pytest.mark.parametrize("n_experts", [12, 70])
def test_incremental_selection_keeps_the_smallest_lower_bounds(budget, n_experts):
    """M-LCB's incremental S_t (up to ORDERED_LIMIT experts, every expert kept in order and moved
    to its place when its bounds change; beyond, the last S_t re-sorted and traded with the top of
    a heap of the others while it comes first) is the scan's, in the scan's order, whichever
    experts change between rounds: those of S_t (the engine's case), others too (a session that
    observes every expert), ties included; an expert never observed is never selected."""
    from mlcb.kernels import observe, select
    from mlcb.kernels.stats import new_stats
    from mlcb.policies.m_lcb import MLCB, ORDERED_LIMIT
    from mlcb.policies.selection import smallest

    assert (n_experts <= ORDERED_LIMIT) == (n_experts == 12)
    rng = np.random.default_rng(budget)
    params, state = MLCB().build(n_experts, budget, 0.1, 1_000, np.zeros(n_experts))
    stats = new_stats(n_experts)
    selected, widths = np.zeros(budget, dtype=np.int64), np.zeros(budget)
    # Before the warm start is over, only the experts observed so far are candidates.
    early_params, early_state = MLCB().build(n_experts, budget, 0.1, 1_000, np.zeros(n_experts))
    early = new_stats(n_experts)
    for k, loss in ((7, 0.75), (3, 0.25)):
        early[k]["n"], early[k]["loss_sum"] = 1, loss
        observe(early_params, early_state, early, k, loss, 0)
    n, _ = select(early_params, early_state, early, 1, np.uint64(0), selected, widths)
    assert selected[:n].tolist() == [3, 7][:budget]
    for t in range(300):
        changed = range(n_experts) if t == 0 else rng.choice(n_experts, rng.integers(0, 5), replace=False)
        if t > 0 and rng.random() < 0.5:
            changed = [*changed, *selected[: rng.integers(0, budget + 1)]]
        for k in changed:
            stats[k]["n"] += 1
            stats[k]["loss_sum"] = stats[k]["n"] * rng.integers(0, 4) / 4  # few distinct values: ties
            stats[k]["rate"] = 0.0
            observe(params, state, stats, int(k), 0.0, t)
        n, _ = select(params, state, stats, t + 1, np.uint64(0), selected, widths)
        expected = np.zeros(budget, dtype=np.int64)
        assert n == smallest(state.lcb.copy(), budget, expected) == budget
        np.testing.assert_array_equal(selected, expected)


@pytest.mark.parametrize("size", [1, 5, 64, 128, 129, 200, 1_000, 1_037])
@pytest.mark.parametrize("count", [1, 2, 5, 64, 65])
def test_blocked_selection_matches_the_scan(size, count):
    """smallest_blocked (column minima, then only the columns that can hold a winner) returns
    smallest's indices in smallest's order, ties (few distinct values) and -inf included."""
    from mlcb.policies.selection import BLOCK, smallest, smallest_blocked

    rng = np.random.default_rng(size * 100 + count)
    cases = [
        rng.normal(size=size),
        rng.integers(0, 4, size).astype(float),  # many ties: the smaller index first
        np.where(rng.random(size) < 0.05, -np.inf, rng.random(size)),
        np.zeros(size),
        np.arange(size, 0, -1, dtype=float),  # the winners in the last row
    ]
    for values in cases:
        expected = np.full(max(count, 1), -1)
        got = np.full(max(count, 1), -1)
        filled = smallest(values, count, expected)
        assert smallest_blocked(values, count, got, np.zeros(BLOCK)) == filled
        np.testing.assert_array_equal(got[:filled], expected[:filled])


def test_checkpoint_grid():
    grid = checkpoint_grid(250_000, 100)
    assert grid[0] == 1 and grid[-1] == 250_000
    assert np.all(np.diff(grid) > 0)
    assert 60 <= len(grid) <= 101
    assert checkpoint_grid(1, 5).tolist() == [1]


def test_counter_based_stream_matches_python_and_is_uniform():
    key = np.uint64(0x1234_5678_9ABC_DEF0)
    for a, b in [(0, 0), (1, 0), (0, 1), (2**40 + 3, 77), (123_456_789, 2**31)]:
        assert counter_random.uniform(key, a, b) == twin.uniform(int(key), a, b)
        assert counter_random.normal(key, a, b) == twin.normal(int(key), a, b)
    draws = np.array([twin.uniform(int(key), t, 5) for t in range(20_000)])
    # Kolmogorov-Smirnov against U(0, 1): a p-value below 1e-4 would be a 1-in-10^4 accident.
    assert stats.kstest(draws, "uniform").pvalue > 1e-4
    # Neighbouring counters and keys are not correlated (|r| < 4.5 / sqrt(n) holds w.p. > 1 - 1e-5).
    shifted = np.array([twin.uniform(int(key), t, 6) for t in range(20_000)])
    other = np.array([twin.uniform(int(key) + 1, t, 5) for t in range(20_000)])
    bound = 4.5 / math.sqrt(len(draws))
    assert abs(np.corrcoef(draws, shifted)[0, 1]) < bound
    assert abs(np.corrcoef(draws, other)[0, 1]) < bound


def _ziggurat_path(key: int, a: int, b: int) -> str:
    """Which branch the first word of the ziggurat draw at ``(key, a, b)`` takes."""
    word = twin.bits(key, a, b)
    layer = word & 255
    x = (word >> 11) * (1.0 / 9007199254740992.0) * twin.ZIGGURAT_X[layer]
    if x < twin.ZIGGURAT_X[layer + 1]:
        return "rectangle"
    return "tail" if layer == 0 else "wedge"


def test_ziggurat_normal_matches_python_on_every_path():
    key = 0x0BAD_5EED_1234_5678
    found: dict[str, list[tuple[int, int]]] = {"rectangle": [], "wedge": [], "tail": []}
    a = 0
    while len(found["tail"]) < 6 or len(found["wedge"]) < 40:
        for b in (0, 1, 9, 2**31):
            found[_ziggurat_path(key, a, b)].append((a, b))
        a += 1
    for path, cases in found.items():
        for a, b in cases[:200]:
            compiled = counter_random.ziggurat_normal(np.uint64(key), a, b)
            assert compiled == twin.ziggurat_normal(key, a, b), (path, a, b)
            if path == "tail":
                assert abs(compiled) > counter_random.ZIGGURAT_R
    np.testing.assert_array_equal(counter_random.ZIGGURAT_X, twin.ZIGGURAT_X)
    np.testing.assert_array_equal(counter_random.ZIGGURAT_F, twin.ZIGGURAT_F)


def test_ziggurat_layers_have_equal_areas():
    x, f = counter_random.ziggurat_tables()
    r = counter_random.ZIGGURAT_R
    tail = math.sqrt(math.pi / 2.0) * math.erfc(r / math.sqrt(2.0))
    v = x[0] * f[1]  # the base layer: the rectangle [0, x[0]] under f(r)
    assert x[1] == r and x[-1] == 0.0 and f[-1] == 1.0
    assert np.all(np.diff(x) < 0) and np.all(np.diff(f) > 0)
    assert v == pytest.approx(r * f[1] + tail, rel=1e-14)
    layers = x[1:-1] * np.diff(f[1:])  # layer i: [0, x[i]] x [f(x[i]), f(x[i + 1])]
    np.testing.assert_allclose(layers, v, rtol=1e-11)
    np.testing.assert_allclose(f, np.exp(-0.5 * x * x), rtol=1e-15)


def test_ziggurat_normals_have_the_normal_law():
    """20 million compiled draws: their mean, variance, the counts in 200 bins of probability
    1/200 each (chi-square) and the tail beyond the ziggurat's base ``r`` (how often, and its
    mean). With these draws, a generator that accepted every point of a layer's wedge, or
    rejected every one, would fail the variance check by 21 or 14 standard errors and the
    chi-square one at p near 1e-170; one that drew its tail without Marsaglia's rejection step
    would fail the tail's mean by 8 standard errors."""
    import numba

    n, r = 20_000_000, counter_random.ZIGGURAT_R
    edges = stats.norm.ppf(np.linspace(0.0, 1.0, 201)[1:-1])

    @numba.njit
    def summarise(key, n, edges, r):
        counts = np.zeros(edges.shape[0] + 1, dtype=np.int64)
        moments = np.zeros(5)  # sum, sum of squares, tail count, tail sum, tail sum of squares
        for i in range(n):
            z = counter_random.ziggurat_normal(key, i >> 5, i & 31)
            counts[np.searchsorted(edges, z)] += 1
            moments[0] += z
            moments[1] += z * z
            if abs(z) > r:
                moments[2] += 1.0
                moments[3] += abs(z)
                moments[4] += z * z
        return counts, moments

    counts, (total, squares, hits, tail_sum, tail_squares) = summarise(np.uint64(20240607), n, edges, r)
    # Each check holds with probability above 1 - 1e-5 for an exact N(0, 1) generator.
    assert abs(total / n) < 4.5 / math.sqrt(n)
    assert abs(squares / n - 1.0) < 4.5 * math.sqrt(2.0 / n)
    assert stats.chisquare(counts).pvalue > 1e-5
    expected = n * 2.0 * stats.norm.sf(r)
    assert abs(hits - expected) < 4.5 * math.sqrt(expected)
    mean = tail_sum / hits  # E|Z| given |Z| > r: phi(r) / Q(r)
    spread = math.sqrt(tail_squares / hits - mean * mean)
    assert abs(mean - stats.norm.pdf(r) / stats.norm.sf(r)) < 4.5 * spread / math.sqrt(hits)


@pytest.mark.parametrize(("alpha", "beta_"), [(1.0, 1.0), (3.0, 7.0), (0.5, 2.0), (40.0, 5.0)])
def test_beta_draws_have_the_beta_law(alpha, beta_):
    key = 0xFEED
    draws = np.array([twin.beta(key, t, 0, alpha, beta_) for t in range(6_000)])
    assert stats.kstest(draws, "beta", args=(alpha, beta_)).pvalue > 1e-4
    compiled = [counter_random.beta(np.uint64(key), t, 0, alpha, beta_) for t in range(50)]
    np.testing.assert_array_equal(compiled, draws[:50])


def test_certificate_exceedance_is_caught_between_checkpoints():
    """With a tiny bonus the pseudo-regret overtakes the certificate Delta(t) mid-run in some
    replications and falls back below it by the last checkpoint: a check at the checkpoints only
    (here rounds 1 and T) misses it; the engine checks every round. The flag must equal what a
    grid of every round shows, on both engines."""
    config = presets.get("trap").config(
        2, horizon=3_000, replications=24, seed=1, checkpoints=2, policy_params={"bonus_scale": 0.02}
    )
    problem = engine.build(config)
    every_round = checkpoint_grid(3_000, 100_000)
    assert len(every_round) == 3_000
    sparse = checkpoint_grid(3_000, 2)
    caught_between = 0
    for r in range(config.replications):
        dense = engine.run_replication(problem, 1, r, 3_000, every_round)
        few = engine.run_replication(problem, 1, r, 3_000, sparse)
        assert few.exceeded == dense.exceeded == bool(np.any(dense.pseudo_regret > dense.certificate))
        caught_between += few.exceeded and not np.any(few.pseudo_regret > few.certificate)
    assert caught_between >= 1  # replication 1 of this seed is one (found once, not tuned)
    result = mlcb.simulate(config)
    flags = result.replications["certificate_violated"].to_numpy()
    python = mlcb.simulate(config, engine="python")
    np.testing.assert_array_equal(flags, python.replications["certificate_violated"].to_numpy())
    assert flags[1] == 1.0


def test_tables_cut_at_the_budget_are_shared_across_horizons(monkeypatch):
    monkeypatch.setattr(tables, "TABLE_BUDGET_BYTES", 8 * 3 * 500)
    problem = engine.build(presets.get("trap").config(2, horizon=10_000))
    one = engine.build_replication(problem, 0, 0, 10_000, np.array([10_000]))
    other = engine.build_replication(problem, 0, 0, 20_000, np.array([20_000]))
    assert one.pool_params.tables.shape == (3, 500) and one.policy_params.hoeffding.shape == (1_500,)
    assert (
        one.pool_params.tables is other.pool_params.tables
        and one.policy_params.hoeffding is other.policy_params.hoeffding
    )


def test_threads_share_one_build_of_the_continuation(monkeypatch):
    """At long horizons the shared tables and their continuation are built once, in the calling
    thread before the workers start, not by each worker at the same time."""
    import functools
    import threading

    from agents import bandits

    builders, build = [], bandits._pool_tail.__wrapped__

    @functools.lru_cache(maxsize=2)
    def recorded(*args):
        builders.append(threading.current_thread() is threading.main_thread())
        return build(*args)

    monkeypatch.setattr(bandits, "_pool_tail", recorded)
    monkeypatch.setattr(tables, "TABLE_BUDGET_BYTES", 8 * 3 * 500)
    monkeypatch.setattr(engine.replications, "LONG_HORIZON", 10_000)
    mlcb.simulate(preset="trap", budget=2, horizon=20_000, replications=4, threads=2, seed=3)
    assert builders == [True]
