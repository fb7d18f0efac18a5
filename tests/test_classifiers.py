"""The compiled online classifiers (agents/classifiers.py) and the real-data stream's orders."""

from __future__ import annotations

import ast
import itertools
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("river")
pytest.importorskip("sklearn")

import agents  # noqa: E402
import envs  # noqa: E402
import mlcb  # noqa: E402
from agents.classifiers import (  # noqa: E402
    CLASSIFIERS,
    MIXED_POOL_SIZE,
    OnlinePerceptron,
    OnlineSoftmax,
    mixed_pool,
)
from envs.real_data import RealDataEnv, load, permutation  # noqa: E402
from mlcb import engine, kernels  # noqa: E402
from mlcb.config import checkpoint_grid  # noqa: E402
from mlcb.contracts import BuildContext  # noqa: E402
from mlcb.engine import hindsight, run_replication  # noqa: E402
from mlcb.kernels.random import uniform  # noqa: E402
from mlcb.testing import check_env, check_expert  # noqa: E402
from mlcb.testing.twins.classifiers import TwinClassifier, coefficient  # noqa: E402

ROUNDS = 120


def _pool() -> list:
    """Both kinds, column subsets, a projection that binds (radius 1), a large step and both rates."""
    return [
        OnlineSoftmax(step=0.5, rate="log-loss"),
        OnlineSoftmax(features=(3, 0, 7), step=5.0, radius=1.0, clip=2.0),
        OnlinePerceptron(),
        OnlinePerceptron(features=(1, 2, 5, 9), clip=1.5),
        OnlineSoftmax(features=tuple(range(0, 18, 2)), step=20.0, rate_scale=0.3),
    ]


def _twin(expert, n_columns: int, n_classes: int, delta_prime: float, smoothing: str) -> TwinClassifier:
    columns = range(n_columns) if expert.features is None else expert.features
    if isinstance(expert, OnlineSoftmax):
        return TwinClassifier("softmax", columns, n_classes, expert.step, expert.radius, expert.clip,
                              expert.rate_scale, delta_prime, smoothing, expert.rate)  # fmt: skip
    return TwinClassifier("perceptron", columns, n_classes, clip=expert.clip, rate_scale=expert.rate_scale,
                          delta_prime=delta_prime, smoothing=smoothing)  # fmt: skip


# --- the kernels against their pure-Python twin ------------------------------------------------------
@pytest.mark.parametrize("smoothing", ["last", "average"])
@pytest.mark.parametrize("order", ["shuffle", "bootstrap"])
def test_kernels_agree_with_the_python_twin(smoothing, order):
    """Deploy then train every expert every round, as the engine does: the same 0-1 losses bit for
    bit, the same rates and weights to float precision."""
    env = RealDataEnv("segments", order=order)
    pool = _pool()
    env_params, env_state = env.build(3, 1, ROUNDS)
    context = BuildContext(tuple(pool), env, env_params, 0.1, np.zeros(5, np.uint64), smoothing, ROUNDS)
    params, state = CLASSIFIERS.build_pool(context)
    n_columns, n_classes = env.table.x.shape[1], len(env.table.classes)
    twins = [_twin(e, n_columns, n_classes, 0.1 / (2 * len(pool)), smoothing) for e in pool]
    mistakes = np.zeros(len(pool))
    for t in range(ROUNDS + 1):
        kernels.begin_round(env_params, env_state, t)
        row = int(env_state.row[0])
        x, y = env.table.x[row], int(env.table.labels[row])
        for k, twin in enumerate(twins):
            loss, expected = kernels.deploy(params, state, env_params, env_state, k, t, np.uint64(1), 0)
            assert loss == twin.deploy(x, y), (t, k)
            assert math.isnan(expected)
            loss, rate = kernels.train(params, state, env_params, env_state, k, t)
            twin_loss, twin_rate = twin.train(x, y)
            assert loss == twin_loss, (t, k)
            assert rate == pytest.approx(twin_rate, rel=1e-12)
            mistakes[k] += loss
    for k, twin in enumerate(twins):
        width = len(twin.columns) + 1
        np.testing.assert_allclose(state.weights[k, :, :width], twin.weights, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(state.mean[k, : width - 1], twin.mean, rtol=1e-12)
        assert state.steps[k] == ROUNDS + 1
        if smoothing == "average":
            np.testing.assert_allclose(
                state.weight_sums[k, :, :width], twin.weight_sums, rtol=1e-9, atol=1e-12
            )
    assert 0 < mistakes.min() and mistakes.max() < ROUNDS  # the learners learn, and not perfectly


def test_the_projection_binds_and_deploy_changes_nothing():
    env = RealDataEnv("segments", order="shuffle")
    pool = [OnlineSoftmax(step=50.0, radius=0.5)]
    env_params, env_state = env.build(0, 0, 50)
    params, state = CLASSIFIERS.build_pool(
        BuildContext(tuple(pool), env, env_params, 0.1, np.zeros(1, np.uint64), "average", 50)
    )
    for t in range(30):
        kernels.begin_round(env_params, env_state, t)
        kernels.train(params, state, env_params, env_state, 0, t)
        before = [a.copy() for a in state]
        kernels.deploy(params, state, env_params, env_state, 0, t, np.uint64(1), 0)
        for old, new in zip(before, state):
            np.testing.assert_array_equal(old, new)
    assert np.linalg.norm(state.weights[0]) == pytest.approx(0.5)


def test_a_step_whose_squares_overflow_is_still_projected_onto_the_ball():
    """A step so large that ``|W|^2`` overflows projects onto the sphere, as a large step whose
    squares do not (the weights fell to 0: ``radius / inf``, and every prediction to class 0)."""
    env = RealDataEnv("segments", order="shuffle")
    env_params, env_state = env.build(0, 0, 20)

    def weights(step):
        pool = (OnlineSoftmax(step=step, radius=2.0),)
        params, state = CLASSIFIERS.build_pool(
            BuildContext(pool, env, env_params, 0.1, np.zeros(1, np.uint64), "last", 20)
        )
        for t in range(20):
            kernels.begin_round(env_params, env_state, t)
            kernels.train(params, state, env_params, env_state, 0, t)
        return state.weights[0].copy()

    large, huge = weights(1e100), weights(1e300)
    assert np.linalg.norm(large) == pytest.approx(2.0)
    np.testing.assert_allclose(huge, large, rtol=1e-12)


def test_rates_are_what_train_returns_and_the_coefficient_is_pinned():
    env = RealDataEnv("segments", order="shuffle")
    pool = _pool()
    env_params, env_state = env.build(0, 0, 60)
    delta_prime = 0.1 / (2 * len(pool))
    params, state = CLASSIFIERS.build_pool(
        BuildContext(tuple(pool), env, env_params, 0.1, np.zeros(5, np.uint64), "last", 60)
    )
    counts = np.arange(1, 41)
    table = CLASSIFIERS.rates(pool, env, counts, delta_prime)
    assert table.shape == (5, 40)
    for t in range(40):
        kernels.begin_round(env_params, env_state, t)
        for k in range(len(pool)):
            _, rate = kernels.train(params, state, env_params, env_state, k, t)
            assert rate == table[k, t]
    assert np.all(np.diff(table, axis=1) >= 0) and np.all(table <= counts)
    # c = (D^2 / (2 step) + G^2 step) / B with D = 2, G = sqrt(2) sqrt(2 + 1), B = log 2 + 2 sqrt(3):
    # (4 + 3) / (log 2 + 2 sqrt 3), by hand.
    log_loss = coefficient("softmax", 2, 2, 0.5, 1.0, 1.0, "log-loss")
    assert log_loss == pytest.approx(7 / (math.log(2) + 2 * math.sqrt(3)))
    assert params.experts["rate_coef"][0] == pytest.approx(
        coefficient("softmax", 18, 7, 0.5, 10.0, 4.0, "log-loss")
    )
    assert params.experts["rate_coef"][0] > 2  # not the default's 1
    # The default (rate="zero-one") is 1 for every classifier, whatever its step: the softmax of
    # step 5 and of step 20, and the perceptrons.
    assert params.experts["rate_coef"][1:].tolist() == [1.0, 1.0, 1.0, 1.0]
    # U(n) = min(n, c sqrt(n) + sqrt((n/2) log(2 n^2 / delta'))) at n = 400, by hand.
    c = coefficient("softmax", 18, 7, 0.5, 10.0, 4.0, "log-loss")
    expected = c * 20 + math.sqrt(200 * math.log(2 * 400**2 / delta_prime))
    assert CLASSIFIERS.rates(pool[:1], env, [400], delta_prime)[0, 0] == pytest.approx(expected, rel=1e-12)


def test_the_reference_is_each_expert_trained_on_every_round():
    """L_k*: the twin trained on rounds 0 .. horizon, its mean loss over rounds 1 .. horizon
    (:mod:`mlcb.engine.hindsight`, which the family names for every expert); the same whether the
    expert is computed alone, in a pool, or from the cache."""
    env = RealDataEnv("segments", order="shuffle")
    pool = _pool()
    assert CLASSIFIERS.in_hindsight(pool, env) == [True] * len(pool)
    hindsight.clear()
    references = hindsight.losses(pool, env, 5, 2, ROUNDS)
    env_params, _ = env.build(5, 2, ROUNDS)
    n_columns, n_classes = env.table.x.shape[1], len(env.table.classes)
    rows = env.rows(env_params, ROUNDS + 1)
    for k, expert in enumerate(pool):
        twin = _twin(expert, n_columns, n_classes, 0.01, "last")
        losses = [twin.train(env.table.x[r], int(env.table.labels[r]))[0] for r in rows]
        assert references[k] == pytest.approx(sum(losses[1:]) / ROUNDS, abs=1e-12)
        assert hindsight.losses([expert], env, 5, 2, ROUNDS)[0] == references[k]
    np.testing.assert_array_equal(hindsight.losses(pool, env, 5, 2, ROUNDS), references)  # cached
    assert not np.array_equal(hindsight.losses(pool, env, 5, 3, ROUNDS), references)


def test_the_regret_at_the_horizon_is_the_deployed_loss_minus_the_best_fixed_experts():
    """What the real-data section reports: the deployed decisions' cumulative 0-1 loss (the sum of
    the trace) equals regret(T) + T L* with L* the best reference."""
    config = mlcb.SimulationConfig(
        env="mlcb/RealData-v0",
        env_params={"dataset": "segments", "order": "shuffle"},
        experts=tuple(mixed_pool(18, 6)),
        budget=2,
        horizon=300,
        seed=4,
    )
    problem = engine.build(config)
    one = run_replication(problem, 4, 1, 300, checkpoint_grid(300, 10), trace_rounds=300)
    env = problem.env
    best = hindsight.losses(list(config.experts), env, 4, 1, 300).min()
    assert one.best_loss == best
    assert one.trace_loss.sum() == pytest.approx(one.regret[-1] + 300 * best, abs=1e-9)
    assert set(np.unique(one.trace_loss)) <= {0.0, 1.0}


def test_both_engines_agree():
    from tests.test_python_engine import assert_engines_agree

    for smoothing in ("last", "average"):
        config = mlcb.SimulationConfig(
            env="mlcb/RealData-v0",
            env_params={"dataset": "digits"},
            experts=tuple(mixed_pool(64, 5)),
            budget=2,
            horizon=200,
            seed=2,
            smoothing=smoothing,
        )
        assert_engines_agree(config, replications=(0, 1))


# --- the family's contract ----------------------------------------------------------------------------
@pytest.mark.parametrize("expert", [OnlineSoftmax(), OnlinePerceptron(features=(0, 4))])
def test_the_family_conforms(expert):
    env_params = {"dataset": "segments", "order": "shuffle"}
    assert check_expert(expert, "mlcb/RealData-v0", env_params=env_params)
    assert check_expert(expert, "mlcb/RealData-v0", env_params={"dataset": "breast-cancer"})


def test_every_rate_is_heuristic_and_results_say_so():
    result = mlcb.simulate(
        env="mlcb/RealData-v0",
        env_params={"dataset": "segments", "order": "shuffle"},
        experts=mixed_pool(18, 4),
        budget=2,
        horizon=100,
        replications=2,
    )
    meta = result.metadata["settings"]["mlcb M=2"]
    assert meta["heuristic_experts"] == [0, 1, 2, 3]
    assert meta["certificate_valid"] is False
    assert meta["reference"] == CLASSIFIERS.reference
    assert result.curves["pseudo_regret"].isna().all()  # no expected loss on real data


def test_bad_specifications_and_environments_are_refused():
    for bad, message in (
        (lambda: OnlineSoftmax(features=()), "features must be None or a non-empty list"),
        (lambda: OnlineSoftmax(features=(1, 1)), "features must be distinct"),
        (lambda: OnlineSoftmax(features=(-1,)), "features must be None or a non-empty list"),
        (lambda: OnlinePerceptron(features=(True,)), "features must be None or a non-empty list"),
        (lambda: OnlineSoftmax(step=0), "step must be a finite number > 0"),
        (lambda: OnlineSoftmax(radius=math.inf), "radius must be a finite number > 0"),
        (lambda: OnlinePerceptron(clip=-1.0), "clip must be a finite number > 0"),
        (lambda: mixed_pool(18, 16), r"size must be an integer in \[1, 15\]"),
        (lambda: mixed_pool(2), "n_features must be an integer >= 3"),
        (lambda: OnlineSoftmax(rate="hinge"), r"rate must be one of \('zero-one', 'log-loss'\), got 'hinge'"),
        (lambda: mixed_pool(18, rate="x"), r"rate must be one of \('zero-one', 'log-loss'\)"),
    ):
        with pytest.raises(ValueError, match=message):
            bad()
    assert OnlineSoftmax(features=[2, 0]).features == (2, 0)
    for env, pool, message in (
        (
            RealDataEnv("segments"),
            [OnlineSoftmax(features=(18,))],
            r"column indices in \[0, 18\)",
        ),
        (RealDataEnv("phishing", warm_start=5), [OnlineSoftmax()], "use warm_start=1"),
        (envs.make("mlcb/Trap-v0"), [OnlineSoftmax()], "need a real-data stream"),
    ):
        with pytest.raises(ValueError, match=message):
            CLASSIFIERS.check(pool, env)
    with pytest.raises(ValueError, match="not a classifier expert"):
        CLASSIFIERS.check([OnlineSoftmax(), agents.make("ucb1")], RealDataEnv("segments"))


def test_the_mixed_pool_is_nested_heterogeneous_and_puts_its_best_in_the_middle():
    pool = mixed_pool(18)
    assert len(pool) == MIXED_POOL_SIZE and len(set(pool)) == MIXED_POOL_SIZE
    assert mixed_pool(18, 7) == pool[:7] and mixed_pool(18, 10) == pool[:10]
    assert {type(e) for e in pool} == {OnlineSoftmax, OnlinePerceptron}
    assert len({e.features for e in pool}) >= 6
    env = RealDataEnv("segments", order="shuffle")
    references = np.mean([hindsight.losses(pool, env, 0, r, 2_125) for r in range(3)], axis=0)
    assert 0 < int(np.argmin(references[:7])) < 6  # the best of the smallest pool is not first
    assert all(e.rate_scale == 0.5 for e in mixed_pool(18, rate_scale=0.5))


# --- the stream's orders --------------------------------------------------------------------------
def test_the_bootstrap_order_is_unchanged():
    """Row floor(u_t n) with u_t the stream's uniform at (t, 0): the draws of the stream before the
    shuffle order existed, bit for bit."""
    env = RealDataEnv("phishing")
    params, _ = env.build(7, 3, 100)
    n = len(env.table.rows)
    expected = [min(int(uniform(params.key, t, 0) * n), n - 1) for t in range(200)]
    assert env.rows(params, 200).tolist() == expected
    assert params.order.shape == (0,)


def test_the_shuffle_order_is_a_permutation_per_replication():
    env = RealDataEnv("segments", order="shuffle")
    n = len(env.table.rows)
    orders = [env.rows(env.build(0, r, 100)[0], n) for r in range(3)]
    for order in orders:
        assert sorted(order.tolist()) == list(range(n))  # every row once
    assert not np.array_equal(orders[0], orders[1]) and not np.array_equal(orders[1], orders[2])
    np.testing.assert_array_equal(env.rows(env.build(0, 1, 100)[0], n), orders[1])  # reproducible
    assert not np.array_equal(env.rows(env.build(1, 1, 100)[0], n), orders[1])  # the seed matters
    np.testing.assert_array_equal(orders[0], permutation(env.build(0, 0, 100)[0].key, n))
    # Fisher-Yates draws every permutation alike: each row is equally likely first.
    firsts = np.bincount([permutation(key, 4)[0] for key in range(4_000)], minlength=4)
    assert np.all(np.abs(firsts - 1_000) < 4 * math.sqrt(4_000 * 0.25 * 0.75))


def test_a_shuffled_warm_start_uses_rows_no_round_meets():
    env = RealDataEnv("segments", warm_start=20, order="shuffle")
    params, state = env.build(2, 0, 100)
    kernels.begin_round(params, state, 0)
    data = env.round_data(params, state, 0, 0)
    warm = [sample.row for sample in data.warm]
    assert len(set(warm)) == 20 and warm[0] == data.row
    assert not set(warm[1:]) & set(env.rows(params, 101).tolist())


def test_a_warm_start_does_not_move_with_the_horizon():
    # The first rounds of a longer run are those of a shorter one, round 0's warm rows included.
    n = len(load("segments"))
    for order in ("shuffle", "bootstrap"):
        env = RealDataEnv("segments", warm_start=20, order=order)
        warms = []
        for horizon in (100, n - 20):  # the longest run the shuffled order allows
            params, state = env.build(2, 0, horizon)
            kernels.begin_round(params, state, 0)
            warms.append([sample.row for sample in env.round_data(params, state, 0, 0).warm])
            if order == "shuffle":  # (read once: no round meets them)
                assert not set(warms[-1][1:]) & set(env.rows(params, horizon + 1).tolist())
        assert warms[0] == warms[1]


def test_round_data_of_another_replication_on_the_same_state_is_its_own():
    # A state's identity is reused once it is gone: round 0 of another stream is built anew.
    env = RealDataEnv("segments", warm_start=5)
    state = env.build(0, 0, 100)[1]
    warms = []
    for replication in (0, 1):
        params = env.build(0, replication, 100)[0]
        state.row[0] = 7
        warms.append([sample.row for sample in env.round_data(params, state, 0, 0).warm])
        assert warms[-1][1:] == [
            min(int(uniform(params.key, 0, j) * len(env.table)), 2_309) for j in range(1, 5)
        ]
    assert warms[0] != warms[1]


class Recorder:
    """A Python expert that notes the row it meets each round (class-wide, per tag)."""

    seen: dict = {}

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def learn(self, data) -> float:
        Recorder.seen.setdefault(self.tag, {}).setdefault(data.t, set()).add(data.row)
        return 0.0

    def deploy(self, data) -> float:
        return self.learn(data)


def test_every_policy_meets_the_same_shuffled_rows():
    env_params = {"dataset": "segments", "order": "shuffle"}
    for policy in ("mlcb", "round-robin", "uniform"):
        mlcb.simulate(
            env="mlcb/RealData-v0", env_params=env_params, experts=[Recorder(policy)] * 3, policy=policy,
            budget=1, horizon=60, replications=1, seed=9,
        )  # fmt: skip
    env = RealDataEnv(**env_params)
    expected = {t: {row} for t, row in enumerate(env.rows(env.build(9, 0, 100)[0], 61).tolist())}
    for policy in ("mlcb", "round-robin", "uniform"):
        assert Recorder.seen[policy] == expected
    best = {
        policy: mlcb.simulate(
            env="mlcb/RealData-v0", env_params=env_params, experts=mixed_pool(18, 5),
            policy=policy, budget=2, horizon=80, replications=3,
        ).replications["best_loss"].to_numpy()
        for policy in ("mlcb", "round-robin")
    }  # fmt: skip
    np.testing.assert_array_equal(best["mlcb"], best["round-robin"])  # the same streams
    assert len(set(best["mlcb"])) > 1  # each replication its own


def test_the_shuffle_order_is_checked_and_conforms():
    n = len(load("segments").rows)
    RealDataEnv("segments", order="shuffle").check_horizon(n - 1)
    with pytest.raises(ValueError, match=rf"horizon must be at most n_rows - warm_start = {n - 1}"):
        RealDataEnv("segments", order="shuffle").check_horizon(n)
    with pytest.raises(ValueError, match=rf"= {n - 10} for order='shuffle'"):
        RealDataEnv("segments", warm_start=10, order="shuffle").check_horizon(n - 5)
    with pytest.raises(ValueError, match=rf"horizon must be at most n_rows - warm_start = {n - 1}"):
        mlcb.simulate(env="mlcb/RealData-v0", env_params={"dataset": "segments", "order": "shuffle"},
                      experts=mixed_pool(18, 2), horizon=n, replications=1)  # fmt: skip
    with pytest.raises(ValueError, match=r"order must be one of \('bootstrap', 'shuffle'\)"):
        RealDataEnv("segments", order="sorted")
    check_env(RealDataEnv("segments", order="shuffle"))
    check_env("mlcb/RealData-v0", env_params={"dataset": "digits", "order": "shuffle"})


def test_segments_is_loaded_with_its_seven_classes():
    table = load("segments")
    assert table.x.shape == (2_310, 18) and len(table.classes) == 7
    assert np.bincount(table.labels).tolist() == [330] * 7
    assert table.classes == tuple(range(7)) and table.labels.tolist() == list(table.y)
    from river import datasets

    names = sorted({y for _, y in datasets.ImageSegments()})
    assert names[0] == "brickface" and names[-1] == "window"
    assert [names[y] for y in table.y[:50]] == [y for _, y in itertools.islice(datasets.ImageSegments(), 50)]


def test_the_family_runs_as_python_with_the_jit_disabled():
    """``NUMBA_DISABLE_JIT=1`` (a debugger's mode) gives the compiled results (record fields are
    not shadowed by NumPy attributes)."""
    script = (
        "import mlcb\n"
        "from agents.classifiers import mixed_pool\n"
        "result = mlcb.simulate(env='mlcb/RealData-v0', env_params={'dataset': 'segments',\n"
        "    'order': 'shuffle'}, experts=mixed_pool(18, 5), budget=2, horizon=60, replications=2, seed=3)\n"
        "print(result.final()[['regret', 'top_m_regret']].to_numpy().tolist())\n"
    )
    root = Path(__file__).resolve().parent.parent
    environment = {**os.environ, "NUMBA_DISABLE_JIT": "1", "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=environment, cwd=root, check=True
    )
    interpreted = np.array(ast.literal_eval(out.stdout.strip().splitlines()[-1]))
    result = mlcb.simulate(
        env="mlcb/RealData-v0", env_params={"dataset": "segments", "order": "shuffle"},
        experts=mixed_pool(18, 5), budget=2, horizon=60, replications=2, seed=3,
    )  # fmt: skip
    np.testing.assert_array_equal(interpreted, result.final()[["regret", "top_m_regret"]].to_numpy())


def test_a_stream_read_once_is_not_read_past_its_rows():
    # stream() on a shuffled data set started the permutation over past n_rows, repeating rows.
    env = RealDataEnv("segments", order="shuffle")
    n = len(env.table)
    assert len({id(features) for features, _ in env.stream(0, 0, n)}) == n  # every row once
    with pytest.raises(ValueError, match=rf"rounds must be at most n_rows = {n} for order='shuffle'"):
        env.stream(0, 0, n + 1)  # refused when called, before any row
    assert len(list(RealDataEnv("segments").stream(0, 0, n + 1))) == n + 1  # drawn with replacement
