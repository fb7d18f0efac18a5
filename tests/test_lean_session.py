"""The lean M-LCB session of the river selectors (:mod:`mlcb.engine.lean_session`): the engine's
decisions, bit for bit, with ``"trained"`` statistics; its ``"recent"`` statistics by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlcb import policies
from mlcb.engine.lean_session import LeanSession
from mlcb.engine.session import Session
from mlcb.errors import ExpertLossError
from mlcb.learners import power_rate


class _Rate:
    def __init__(self, beta: float, alpha: float, delta_prime: float, burn_in: float = 0.0) -> None:
        self.beta, self.alpha, self.delta_prime, self.burn_in = beta, alpha, delta_prime, burn_in

    def __call__(self, n):
        return self.burn_in + power_rate(n, self.beta, self.alpha, self.delta_prime)


@pytest.mark.parametrize("trial", range(12))
def test_lean_session_decides_as_the_engine_with_trained_statistics(trial):
    """Fed the same losses, the lean session and the engine's round session running M-LCB make
    the same training sets, deployed experts and best expert every round, and hold the same
    counts, means and upper bounds (equal floats, not approximately)."""
    rng = np.random.default_rng(trial)
    k = int(rng.integers(2, 10))
    budget = int(rng.integers(1, k + 1))
    warm = int(rng.integers(1, 20))
    top_m, scale = bool(trial % 2), float(rng.choice([1.0, 0.5]))
    rates = [
        _Rate(
            float(rng.uniform(0.05, 1)), float(rng.uniform(0.3, 1)), 0.1 / (2 * k), float(rng.choice([0, 14]))
        )
        for _ in range(k)
    ]
    identities = rng.permutation(k).tolist()
    policy = policies.make("mlcb", bonus_scale=scale, top_m=top_m)
    engine = Session.standalone(
        policy, k, budget=budget, delta=0.1, horizon=300, identities=identities, rates=rates
    )
    lean = LeanSession(
        k, budget=budget, delta=0.1, rates=rates, identities=identities, bonus_scale=scale, top_m=top_m
    )
    p = rng.uniform(0, 1, k)
    for _ in range(warm):
        losses = (rng.random(k) < p).astype(float).tolist() if rng.random() < 0.7 else rng.random(k).tolist()
        engine.warm_sample(losses)
        lean.warm_sample(losses)
        assert engine.best() == lean.best()
    engine.end_warm()
    lean.end_warm()
    for t in range(1, 300):
        decision = engine.select(t)
        assert lean.select(t) == decision
        assert lean.best() == engine.best()
        losses = (rng.random(k) < p).astype(float)
        train, chosen = decision
        deployed = [losses[j] for j in train] if chosen < 0 else losses[chosen]
        for session in (engine, lean):
            session.deployed(deployed)
            for j in train:
                session.trained(j, float(losses[j]))
            session.end()
    assert np.array_equal(lean.counts, engine.counts)
    assert np.array_equal(lean.mean_losses, engine.mean_losses)
    assert np.array_equal(lean.upper_bounds(), engine.upper_bounds())


def test_recent_statistics_are_the_latest_training_losses_of_at_least_half_the_updates():
    """``"recent"``: an expert's mean is over its latest ``window`` training losses, of those the
    ones scored with at least half its updates now (the latest kept); its bounds read that mean
    and its count; the other experts' statistics do not move."""
    rates = [_Rate(0.3, 0.75, 0.1 / 4)] * 2
    session = LeanSession(2, budget=1, delta=0.1, rates=rates, statistics="recent", window=5)
    for losses in ([1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]):
        session.warm_sample(losses)
    session.end_warm()
    assert session.mean_losses.tolist() == [0.0, 1.0]  # counts 2 and 3 of 4 kept: the last two
    seen = [(1.0, 0), (1.0, 1), (0.0, 2), (0.0, 3)]
    for t, loss in enumerate([0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0], start=1):
        train, _ = session.select(t)
        assert train == [0]  # expert 0: the smaller mean, ties and all, every round here
        session.deployed(loss)
        seen.append((loss, session.counts[0]))
        session.trained(0, loss)
        session.end()
        n = session.counts[0]
        kept = [value for value, count in seen[-5:] if count >= 0.5 * n] or [seen[-1][0]]
        mean = sum(kept) / len(kept)
        assert session.mean_losses[0] == pytest.approx(mean)
        rate = min(n, float(rates[0](np.array([n]))[0]))
        assert session.lcb[0] == pytest.approx(mean - rate / n)
        assert session.ucb[0] == pytest.approx(mean + math.sqrt(2 * math.log(4 * 2 * n * n / 0.1) / n))
        assert session.mean_losses[1] == 1.0 and session.counts[1] == 4


def test_lean_session_refuses_what_the_engine_refuses():
    session = LeanSession(2, budget=1, delta=0.1, rates=[np.sqrt] * 2, names=["A", "B"])
    with pytest.raises(ExpertLossError, match="loss is 1.5"):
        session.warm_sample([0.0, 1.5])
    with pytest.raises(RuntimeError, match="record the warm start"):
        session.select(1)
    session.warm_sample([0.0, 1.0])
    session.end_warm()
    train, _ = session.select(1)
    with pytest.raises(ValueError, match="not in this round's training set"):
        session.trained(1 - train[0], 0.0)
    with pytest.raises(RuntimeError, match="no deployed loss"):
        session.end()
    session.deployed(0.0)
    with pytest.raises(RuntimeError, match="were not trained"):
        session.end()
    with pytest.raises(ExpertLossError, match="training loss is nan"):
        session.trained(train[0], math.nan)
    with pytest.raises(ValueError, match="statistics must be one of"):
        LeanSession(2, budget=1, delta=0.1, rates=[np.sqrt] * 2, statistics="pool")


def _held_bytes(make) -> int:
    """The bytes still allocated after ``make()`` returns, what it returns kept alive."""
    import tracemalloc

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = make()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del kept
    return after - before


def test_rate_tables_take_eight_bytes_a_count():
    """The tables of rates grow with an expert's updates, up to the horizon: a list of Python
    floats took 32 bytes a count (about 130 MB for four experts trained every round of a run of
    a million rounds); an array of doubles takes 8, and reads the same numbers."""
    from mlcb.engine.learners import _RateTable as LearnerTable
    from mlcb.learners import rate_values

    class Learner:
        rate = (1.0, 0.5)

    n = 200_000
    counts = 2 * n
    lean = LeanSession(1, budget=1, delta=0.1, rates=[np.sqrt])
    session = Session.standalone(policies.make("mlcb"), 1, budget=1, delta=0.1, horizon=10, rates=[np.sqrt])
    for held in (
        _held_bytes(lambda: LearnerTable(Learner(), 0.01, 0).extend(n)),
        _held_bytes(lambda: (lean._rate(0, n), lean._tables[0])),
        _held_bytes(lambda: (session._rate(0, n), session._tables[0].values)),
    ):
        assert counts * 8 <= held < counts * 12
    table = LearnerTable(Learner(), 0.01, 0).extend(n)
    expected = rate_values(Learner(), np.maximum(np.arange(counts, dtype=np.float64), 1.0), 0.01)
    assert list(table) == expected.tolist()
    assert lean._rate(0, n) == min(float(n), math.sqrt(n)) and session._rate(0, n) == lean._rate(0, n)


def test_a_rate_function_that_gives_more_than_one_rate_per_count_is_named():
    def column(n):
        return np.sqrt(n)[:, None]  # (N, 1): broadcast to (N, N) by the cap at n

    with pytest.raises(ValueError, match=r"^expert 0: its rate function returned shape \(1024, 1024\)"):
        LeanSession(1, budget=1, delta=0.1, rates=[column])._rate(0, 1)
    session = Session.standalone(policies.make("mlcb"), 1, budget=1, delta=0.1, horizon=10, rates=[column])
    with pytest.raises(ValueError, match=r"^rates\[0\]: its rate function returned shape"):
        session._rate(0, 1)
