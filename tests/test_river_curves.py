"""The learning-curve bounds of mlcb.river's selectors (``rate="curve"``, with "pool"
statistics): each model's scores by its count of updates, and the lower bounds read off the
leader's curve."""

from __future__ import annotations

import math

import pytest

river = pytest.importorskip("river")

from mlcb.river import BudgetedClassifier  # noqa: E402
from mlcb.river.curves import LearningCurves, shrunk_variance  # noqa: E402


def test_level_is_the_pool_statistics_window_and_band_reads_any_counts():
    curves = LearningCurves(1, window=4)
    for c in range(6):  # loss 1 with 0, 1, 2 updates, then 0
        curves.score([1.0 if c < 3 else 0.0])
        curves.learnt(0)
    # the window: the last 4 scores, of those the ones with at least 3 of its 6 updates
    mean, variance, n = curves.level(0)
    assert (mean, n) == (0.0, 3)
    assert variance == pytest.approx(shrunk_variance(0.0, 0.0, 3))
    assert curves.band(0, 0, 2)[:1] == (1.0,) and curves.band(0, 0, 2)[2] == 3
    assert curves.band(0, 2, 4)[0] == pytest.approx(1 / 3)
    assert math.isnan(curves.band(0, 7, 9)[0])  # counts it never had


def _race(leader_losses, challenger_losses, challenger_count):
    """A reference scored ``leader_losses[c]`` with ``c`` updates (it learns after each score), a
    challenger that scores ``challenger_losses`` in turn and learnt its first ``challenger_count``
    samples only."""
    curves = LearningCurves(2, window=200)
    for c, loss in enumerate(leader_losses):
        learning = curves.counts[1] < challenger_count
        curves.score([loss, challenger_losses[c % len(challenger_losses)]])
        curves.learnt(0)
        if learning:
            curves.learnt(1)
    return curves


def test_a_challenger_better_than_the_reference_was_with_as_many_updates_is_trained_first():
    """The reference erred half the time with up to 20 updates and a tenth of the time after. A
    challenger with 20 updates that errs a tenth of the time does better than the reference did
    with as many: it comes first, within the exploration (fewer than sqrt(W n_r) updates) and past
    it (better beyond twice the noise). One that errs half the time, as the reference did then,
    is explored but not trained past the exploration; one that always errs is never trained."""
    leader = [1.0, 0.0] * 10 + ([0.0] * 9 + [1.0]) * 12  # 140 updates
    better = _race(leader, [0.0] * 9 + [1.0], 20)
    same = _race(leader, [1.0, 0.0], 20)
    worse = _race(leader, [1.0], 20)
    lead_mean = better.level(0)[0]
    for warm in (20, 1):  # sqrt(20 x 140) = 53 > 20 updates: exploring; sqrt(140) = 12 < 20: not
        order = better.priorities(0, warm=warm)
        assert order[1] < lead_mean == order[0]
        assert worse.priorities(0, warm=warm)[1] > lead_mean
    assert same.priorities(0, warm=20)[1] < lead_mean
    assert same.priorities(0, warm=1)[1] > lead_mean


class _Coin(river.base.Classifier):
    """Right on a fixed share of the samples (by a hash of the feature), whatever it learnt."""

    def __init__(self, share: float = 0.8, salt: int = 0):
        self.share = share
        self.salt = salt

    def learn_one(self, x, y):
        pass

    def predict_proba_one(self, x):
        right = (hash((self.salt, x["i"])) % 1000) / 1000 < self.share
        return {True: 1.0, False: 0.0} if right else {True: 0.0, False: 1.0}


def test_a_model_worse_at_equal_updates_beyond_the_noise_is_not_trained():
    """A model that errs half the time beside two that err a fifth of the time gets no update
    after the warm start: at every count, the reference did better than it beyond the noise."""
    model = BudgetedClassifier(
        [_Coin(0.8, 1), _Coin(0.8, 2), _Coin(0.5, 3)], budget=1, rate="curve", statistics="pool"
    )
    for i in range(1_000):
        model.learn_one({"i": i}, True)
    counts = model.trained_counts
    assert sum(counts) == 3 * 20 + 1_000 - 20
    assert counts[2] == 20
