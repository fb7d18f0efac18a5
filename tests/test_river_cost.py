"""What a sample costs the river selectors after the warm start (only the trained models' and the
deployed model's predictions, and the trained models' updates), the equal-update yardstick of
the comparison, the regression loss and the named rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("river")

import river  # noqa: E402

from mlcb.river import BudgetedClassifier, BudgetedRegressor, compare  # noqa: E402
from mlcb.river.comparison import halving_budget, halving_updates, selector  # noqa: E402
from mlcb.river.experts import absolute_loss, robust_loss  # noqa: E402


class _Counted(river.base.Classifier):
    """A threshold on feature ``x`` at ``cut`` (a different model per ``cut``), learning the label
    frequencies on each side; counts its predictions and updates."""

    def __init__(self, cut: float = 0.5):
        self.cut = cut
        self.seen: dict = {}
        self.predictions = 0
        self.updates = 0

    def learn_one(self, x, y):
        self.updates += 1
        side = self.seen.setdefault(x["x"] > self.cut, {})
        side[y] = side.get(y, 0) + 1

    def predict_proba_one(self, x):
        self.predictions += 1
        side = self.seen.get(x["x"] > self.cut, {})
        total = sum(side.values())
        return {label: count / total for label, count in side.items()} if total else {}


class _CountedRegressor(river.base.Regressor):
    def __init__(self, slope: float = 1.0):
        self.slope = slope
        self.mean = 0.0
        self.n = 0
        self.predictions = 0
        self.updates = 0

    def learn_one(self, x, y):
        self.updates += 1
        self.n += 1
        self.mean += (y - self.slope * x["x"] - self.mean) / self.n

    def predict_one(self, x):
        self.predictions += 1
        return self.mean + self.slope * x["x"]


def _rows(n, regression=False, seed=0):
    rng = np.random.default_rng(seed)
    xs = rng.random(n)
    if regression:
        return [({"x": float(x)}, float(2 * x + rng.normal(0, 0.1))) for x in xs]
    return [({"x": float(x)}, bool(x > 0.3) != bool(rng.random() < 0.1)) for x in xs]


@pytest.mark.parametrize("regression", [False, True])
@pytest.mark.parametrize(
    ("budget", "rule", "loss"),
    [(1, "default", None), (2, "default", None), (1, "plain", None), (2, "default", "log")],
)
def test_a_sample_costs_the_trained_models_and_the_deployed_one(regression, budget, rule, loss):
    """After the warm start, progressive validation (``predict_one`` then ``learn_one``) of a
    sample calls ``predict`` on the trained models and on the deployed model where it is not
    trained, once each (the deployed model's prediction is reused for its loss), and ``learn_one``
    on the trained models only."""
    if regression and loss == "log":
        pytest.skip("the log-loss is a classifier's")
    if regression:
        pool = [_CountedRegressor(s) for s in (0.0, 1.0, 2.0, 3.0, -1.0)]
        model = BudgetedRegressor(pool, budget=budget, rule=rule)
    else:
        pool = [_Counted(c) for c in (0.1, 0.3, 0.5, 0.7, 0.9)]
        model = BudgetedClassifier(pool, budget=budget, rule=rule, **({"loss": loss} if loss else {}))
    rows = _rows(400, regression)
    warm = model._warm_samples
    for i, (x, y) in enumerate(rows):
        before = [(m.predictions, m.updates) for m in pool]
        deployed = model._deployed
        train = list(model._train)
        if loss == "log":
            model.predict_proba_one(x)
        else:
            model.predict_one(x)
        model.learn_one(x, y)
        if i < warm:
            continue
        predicted = {k for k, m in enumerate(pool) if m.predictions > before[k][0]}
        learnt = {k for k, m in enumerate(pool) if m.updates > before[k][1]}
        assert learnt == set(train) and len(train) == budget
        assert predicted == set(train) | {deployed}
        assert all(m.predictions - before[k][0] == 1 for k, m in enumerate(pool) if k in predicted)


def test_a_prediction_is_reused_only_for_the_very_features_it_answered():
    """The deployed model's answer is reused for its loss only when ``learn_one`` gets the same
    features object that ``predict_one`` answered, with nothing learnt in between."""
    pool = [_Counted(c) for c in (0.2, 0.6)]
    model = BudgetedClassifier(pool, budget=2, warm_start=3)
    rows = _rows(20)
    for x, y in rows[:3]:
        model.learn_one(x, y)
    x, y = rows[3]
    model.predict_one(dict(x))  # another object with the same features: not reused
    counts = [m.predictions for m in pool]
    model.learn_one(x, y)
    assert [m.predictions - c for m, c in zip(pool, counts)] == [1, 1]


@pytest.mark.parametrize("budget", [1, 2])
def test_equal_halving_spends_what_mlcb_spent(budget):
    """``equal-halving M=m`` is river's successive halving with the budget that makes it spend
    (about) the updates M-LCB at ``M = m`` made on the same shuffle; the spend formula is river's."""
    frame = compare("iris", horizon=400, shuffles=2, budgets=(budget,), selectors=("mlcb", "equal-halving"))
    for r in range(2):
        part = frame[frame["shuffle"] == r].set_index("selector")["updates"]
        ours, halving = part[f"mlcb M={budget}"], part[f"equal-halving M={budget}"]
        assert abs(halving - ours) <= 8  # one sample's worth of updates at most
        assert halving == halving_updates(halving_budget(ours, 8, 400), 8, 400)
    assert np.isfinite(frame["us_per_sample"]).all() and (frame["us_per_sample"] > 0).all()
    # without M-LCB's rows, it still runs M-LCB for the spend
    alone = compare("iris", horizon=100, shuffles=1, budgets=(budget,), selectors=("equal-halving",))
    assert alone["selector"].tolist() == [f"equal-halving M={budget}"]


def test_halving_updates_is_what_river_counts():
    from river import metrics, model_selection

    from mlcb.river.comparison import _count_updates
    from mlcb.river.streams import classifier_pool, stream

    rows = stream("iris", 0, 300)
    for budget in (0, 20, 24, 50, 198, 1_000, 4_170, 10**6):
        model = model_selection.SuccessiveHalvingClassifier(
            classifier_pool(), metric=metrics.Accuracy(), budget=budget
        )
        counter = _count_updates(model)
        for x, y in rows:
            model.predict_one(x)
            model.learn_one(x, y)
        assert counter[0] == halving_updates(budget, 8, 300), budget


def test_river_bandit_regressors_reward_r2():
    """river's bandits take the largest reward as the best: with the MAE as the reward they would
    pick the model that errs most; the comparison gives them R²."""
    from river import metrics

    from mlcb.river.streams import classifier_pool, regressor_pool

    for name in ("epsilon-greedy", "ucb"):
        assert isinstance(selector(name, regressor_pool(), regression=True).metric, metrics.R2)
        assert isinstance(selector(name, classifier_pool(), regression=False).metric, metrics.Accuracy)


def test_the_regression_loss_ranks_models_as_their_mae():
    """The regressor's default loss is linear in the absolute error up to 3 scales (the mean of
    the losses ranks as the MAE does), then still rising below 1; ``loss="robust"`` is the
    compressed one, whose ranking can differ from the MAE's."""
    mean = lambda errors, f: sum(f(e, 1.0) for e in errors) / len(errors)  # noqa: E731
    steady, spiky = [1.0] * 10, [0.0] * 6 + [2.75] * 4  # MAE 1.0 and 1.1, errors below 3 scales
    assert mean(steady, absolute_loss) < mean(spiky, absolute_loss)  # as the MAE ranks them
    assert mean(spiky, robust_loss) < mean(steady, robust_loss)  # the compressed loss: the other way
    calm = [0.0] * 7 + [3.0] * 3  # MAE 0.9
    assert mean(calm, absolute_loss) < mean(steady, absolute_loss)
    assert 0.9 < absolute_loss(10.0, 1.0) < absolute_loss(1e6, 1.0) < absolute_loss(1e12, 1.0) < 1.0
    assert absolute_loss(math.nan, 1.0) == 1.0
    assert BudgetedRegressor([_CountedRegressor(0.0), _CountedRegressor(1.0)]).loss == "absolute"
    with pytest.raises(ValueError, match="loss must be one of"):
        BudgetedRegressor([_CountedRegressor(0.0), _CountedRegressor(1.0)], loss="squared")


def test_the_plain_rule_is_there_by_name():
    """``rule="plain"``: the paper's statistics, the rate of ``"trained"`` statistics, no burn-in,
    the warm start of one unit of budget; the default rule reads recent statistics, a burn-in and a
    warm start that grows with the budget. Explicit parameters override either."""
    from mlcb.river import BURN_IN, MLCB_RATE, RATE, default_warm_start

    pool = [_Counted(c) for c in (0.1, 0.3, 0.5, 0.7, 0.9)]
    plain = BudgetedClassifier(pool, budget=2, rule="plain")
    assert plain._session.statistics == "trained" and list(plain._rates) == [RATE] * 5
    assert plain._session._rates[0].burn_in == 0.0 and plain._warm_samples == default_warm_start(5, 1)
    model = BudgetedClassifier([m.clone() for m in pool], budget=2)
    assert model._session.statistics == "recent" and list(model._rates) == [MLCB_RATE] * 5
    assert model._session._rates[0].burn_in == BURN_IN and model._warm_samples == default_warm_start(5, 2)
    mixed = BudgetedClassifier(
        [m.clone() for m in pool], budget=2, rule="plain", statistics="recent", burn_in=3
    )
    assert mixed._session.statistics == "recent" and mixed._session._rates[0].burn_in == 3
    with pytest.raises(ValueError, match="rule must be one of"):
        BudgetedClassifier([m.clone() for m in pool], rule="fast")
    with pytest.raises(ValueError, match="burn_in must be None or a finite number >= 0"):
        BudgetedClassifier([m.clone() for m in pool], burn_in=-1)


class _Late(river.base.Classifier):
    """Answers ``x > 0.5`` wrongly until it has learnt ``after`` samples, then rightly: a model
    that learns late (k-NN on a multi-class stream, a small learning rate)."""

    def __init__(self, after: int = 60):
        self.after = after
        self.updates = 0

    def learn_one(self, x, y):
        self.updates += 1

    def predict_proba_one(self, x):
        right = x["x"] > 0.5
        return {right if self.updates >= self.after else not right: 1.0}


def test_the_second_slot_buys_a_warm_start_long_enough_to_see_a_model_learn_late():
    """At ``M = 2`` the default warm start spends the second slot's extra updates early, while
    every model learns the same samples: a model that errs on its first 60 samples and is the
    best after them is seen learning, then trained on every sample and deployed. With the warm
    start of ``M = 1`` only, its mean loss after the warm start is that of its errors, and its
    lower bound stays above those of the models that never improve: it is never trained again."""
    from mlcb.river import WARM_EXTRA, default_warm_start

    rng = np.random.default_rng(1)
    rows = [({"x": float(x)}, bool(x > 0.5) != bool(rng.random() < 0.05)) for x in rng.random(1_000)]

    def run(**params):
        model = BudgetedClassifier([_Counted(c) for c in (0.3, 0.35, 0.65, 0.7, 0.75)] + [_Late()], **params)
        for x, y in rows:
            model.predict_one(x)
            model.learn_one(x, y)
        return model

    first = 40  # the first part at M = 2: min(2 x 20, 2 x 100 / 4) samples
    assert default_warm_start(6, 2) == first + WARM_EXTRA // 4
    model = run(budget=2)
    assert isinstance(model.best_model, _Late) and model.trained_counts[-1] == len(rows)
    first_part = run(budget=2, warm_start=first)
    assert not isinstance(first_part.best_model, _Late) and first_part.trained_counts[-1] < 100


def test_a_regressor_warm_start_spends_a_third_of_the_extra_updates():
    """A regressor's second unit of budget buys a third of a classifier's extra warm start, as its
    rate and burn-in are a third; the first unit's warm start is the same for both."""
    from mlcb.river import REGRESSION_WARM_EXTRA, WARM_EXTRA, default_warm_start

    assert 3 * REGRESSION_WARM_EXTRA == pytest.approx(WARM_EXTRA, rel=0.02)
    pool = [_CountedRegressor(s) for s in (0.5, 1.0, 1.5, 2.0, 2.5)]
    assert BudgetedRegressor(pool, budget=1)._warm_samples == default_warm_start(5, 1)
    model = BudgetedRegressor([m.clone() for m in pool], budget=2)
    assert model._warm_samples == default_warm_start(5, 2, REGRESSION_WARM_EXTRA)
    assert default_warm_start(5, 1) < model._warm_samples < default_warm_start(5, 2)
