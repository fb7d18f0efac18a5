"""M-LCB against river's own selectors on the streams of :mod:`mlcb.river.streams` (:func:`compare`)."""

from __future__ import annotations

import math
from typing import Any

from mlcb.river.budgeted import _is_a
from mlcb.river.estimators import BudgetedClassifier, BudgetedRegressor
from mlcb.river.experts import seeds, what_is
from mlcb.river.streams import STREAMS, check_length, pool_for, stream
from mlcb.validation import InputError

#: The selectors :func:`compare` runs, in the order of its table.
SELECTORS = ("mlcb", "epsilon-greedy", "ucb", "successive-halving", "equal-halving", "train-everything")

#: River's selectors whose spend does not depend on a budget of M-LCB's.
_UNBUDGETED = ("epsilon-greedy", "ucb", "successive-halving", "train-everything")

#: The row :func:`compare` adds beside every run of training everything: not a selector but a
#: yardstick, the score of the pool's best model had it been known before the stream began.
HINDSIGHT = "best-in-hindsight"


def _scored(prediction: Any, regression: bool) -> Any:
    """The prediction a metric scores: a regressor's ``None`` (river's statistics and some trees
    predict nothing before their first sample) counts as 0.0, for every selector and every model
    alike; a classifier's ``None`` is a wrong label."""
    return 0.0 if regression and prediction is None else prediction


class TrainEverything:
    """Every model learns every sample; the model with the best metric so far predicts (river's
    ``GreedyRegressor``, for both tasks: the first model until another is strictly better). The
    reference of the comparison: what training every model buys."""

    def __init__(self, models: list, regression: bool) -> None:
        from river import metrics

        self.models = models
        self.regression = regression
        self.metrics = [metrics.MAE() if regression else metrics.Accuracy() for _ in models]
        self.best = 0

    @property
    def best_model(self) -> Any:
        return self.models[self.best]

    def predict_one(self, x: dict) -> Any:
        return self.models[self.best].predict_one(x)

    def best_alone(self) -> float:
        """The best of the models' own progressive scores: as each model learnt every sample, its
        score is what it would have scored learning alone (one update per sample), had it been
        chosen before the first sample. Only known at the end of the stream."""
        best = self.metrics[0]
        for metric in self.metrics[1:]:
            if metric.is_better_than(best):
                best = metric
        return float(best.get())

    def learn_one(self, x: dict, y: Any) -> None:
        for k, (model, metric) in enumerate(zip(self.models, self.metrics)):
            metric.update(y, _scored(model.predict_one(x), self.regression))
            model.learn_one(x, y)
            if metric.is_better_than(self.metrics[self.best]):
                self.best = k


def selector(
    name: str, models: list, budget: int = 1, horizon: int = 2_000, seed: int = 0, regression: bool = False
) -> Any:
    """A fresh selector over clones of ``models``, as :func:`compare` runs it.

    ``"mlcb"``
        :class:`BudgetedClassifier` or :class:`BudgetedRegressor` with ``budget`` and its defaults.
    ``"epsilon-greedy"``, ``"ucb"``
        river's ``BanditClassifier`` / ``BanditRegressor`` with the policies of river's own
        documentation examples: ``EpsilonGreedy(epsilon=0.1, decay=0.001, burn_in=20,
        seed=seed)`` and ``UCB(delta=1, burn_in=20, seed=seed)``; the reward is accuracy for
        classification and R² for regression (river's bandits take the largest reward as the
        best: with the MAE as the reward, as river's regression examples have it, they would
        favour the model that errs most).
    ``"successive-halving"``
        river's ``SuccessiveHalvingClassifier`` / ``SuccessiveHalvingRegressor`` with ``budget =
        horizon`` model updates for its halving rounds and ``eta = 2`` (after them its best model
        keeps learning every sample).
    ``"equal-halving"``
        The same with ``budget`` its halving rounds' budget: :func:`compare` sets it with
        :func:`halving_budget` so that successive halving makes as many updates as M-LCB did.
    ``"train-everything"``
        :class:`TrainEverything`: every model learns every sample, the best so far predicts.

    ``budget`` is M-LCB's ``M`` for ``"mlcb"`` and the halving rounds' budget of updates for
    ``"equal-halving"``; the other selectors take none. A model left unseeded (``seed=None``, a
    pipeline's step too) is cloned with ``seed``, so that a comparison run twice gives the same
    rows; a seed given is kept.
    """
    from river import bandit, metrics, model_selection

    # A stochastic model left unseeded (seed=None, a pipeline's step too) draws from ``seed``, so
    # that a comparison run twice gives the same rows; a seed given is kept.
    fresh = [m.clone(None if seed is None else seeds(m, int(seed), unset_only=True)) for m in models]
    metric = metrics.MAE() if regression else metrics.Accuracy()
    if name == "mlcb":
        return (BudgetedRegressor if regression else BudgetedClassifier)(fresh, budget=budget, seed=seed)
    if name in ("epsilon-greedy", "ucb"):
        policy = (
            bandit.EpsilonGreedy(epsilon=0.1, decay=0.001, burn_in=20, seed=seed)
            if name == "epsilon-greedy"
            else bandit.UCB(delta=1.0, burn_in=20, seed=seed)
        )
        kind = model_selection.BanditRegressor if regression else model_selection.BanditClassifier
        return kind(fresh, metric=metrics.R2() if regression else metric, policy=policy)
    if name in ("successive-halving", "equal-halving"):
        halving = (
            model_selection.SuccessiveHalvingRegressor
            if regression
            else model_selection.SuccessiveHalvingClassifier
        )
        return halving(
            fresh, metric=metric, budget=horizon if name == "successive-halving" else budget, eta=2
        )
    if name == "train-everything":
        return TrainEverything(fresh, regression)
    raise InputError(f"selector must be one of {SELECTORS}, got {name!r}")


def halving_updates(budget: int, n_models: int, samples: int, eta: int = 2) -> int:
    """The ``learn_one`` calls river's successive halving makes over ``samples`` samples with
    ``n_models`` models and a budget of ``budget`` (river's rule: rung ``i`` ends after
    ``floor(budget / (s_i ceil(log_eta K)))`` samples, ``s_i`` the models still in; every model
    in learns every sample; once one model is left, or a rung's end is one already passed, the
    models left learn every sample after).

    >>> halving_updates(2_000, 8, 2_000)  # the default: about 1.5 updates per sample
    2997
    >>> halving_updates(198, 8, 2_000)  # M-LCB's spend at M = 1 with a warm start of 14: 2,098
    2097
    """
    rungs = math.ceil(math.log(n_models, eta))
    left, seen, spent = n_models, 0, 0
    while left > 1:
        end = math.floor(budget / (left * rungs))
        if end <= seen or end > samples:  # never reached: the models left learn to the end
            break
        spent += left * (end - seen)
        seen = end
        left = math.ceil(left / eta)
    return spent + left * (samples - seen)


def halving_budget(updates: int, n_models: int, samples: int, eta: int = 2) -> int:
    """The budget with which river's successive halving makes the number of updates closest to
    ``updates`` over ``samples`` samples (:func:`halving_updates`; ties: the smaller budget).
    About ``2 (updates - samples)``: halving makes about ``samples + budget / 2`` updates.

    >>> halving_budget(2_098, 8, 2_000), halving_budget(4_084, 8, 2_000)
    (198, 4170)
    """
    rungs = math.ceil(math.log(n_models, eta))
    guess = max(0, 2 * (int(updates) - samples))
    best: tuple[int, int] | None = None
    for budget in range(max(0, guess - 4 * n_models * rungs), guess + 4 * n_models * rungs + 1):
        miss = abs(halving_updates(budget, n_models, samples, eta) - int(updates))
        if best is None or miss < best[0]:
            best = (miss, budget)
    assert best is not None
    return best[1]


def _count_updates(model: Any) -> list[int]:
    """Make every pool member of ``model`` count its ``learn_one`` calls into the returned cell."""
    counter = [0]
    for member in model.models:
        learn = member.learn_one

        def counted(x: dict, y: Any, _learn: Any = learn, **kwargs: Any) -> None:
            counter[0] += 1
            _learn(x, y, **kwargs)

        member.learn_one = counted
    return counter


def compare(
    dataset: str = "phishing",
    horizon: int = 2_000,
    shuffles: int = 10,
    budgets: tuple = (1,),
    selectors: tuple = SELECTORS,
    models: list | None = None,
    seed: int = 0,
) -> Any:
    """Progressive validation of every selector on stream ``dataset`` (:data:`mlcb.river.streams.STREAMS`).

    Shuffle ``r`` is :func:`mlcb.river.streams.stream` with seed ``seed + r`` and ``horizon``
    rows, the same rows for every selector. Each selector predicts every row before learning it
    (river's ``evaluate.progressive_val_score``); ``updates`` counts the ``learn_one`` calls of
    its pool members. ``models`` defaults to the stream's pool (:func:`mlcb.river.streams.pool_for`);
    ``budgets`` are M-LCB's. Every selector gets clones of the models, on shuffle ``r`` those left
    unseeded with seed ``seed + r`` (:func:`selector`): the same call gives the same table.

    ``"equal-halving"`` is the yardstick at equal updates: river's successive halving given, on
    each shuffle and for each of ``budgets``, the budget with which it makes as many updates as
    M-LCB made there (:func:`halving_budget`; row ``"equal-halving M=1"``, ...). M-LCB runs for
    it even when ``"mlcb"`` is not among ``selectors``.

    Beside each run of ``"train-everything"`` comes a row :data:`HINDSIGHT` (``"best-in-hindsight"``):
    the best score of a single model of the pool, learning every sample alone, as a selector that
    knew the best model in advance would score (one update per sample; its ``seconds`` and
    ``samples_per_s`` are NaN: it is read off training everything, not run). A selector's distance
    to it is what finding the best model costs it.

    Returns a pandas ``DataFrame`` with one row per (selector, shuffle): ``dataset``, ``task``,
    ``selector`` (``"mlcb M=1"``, ...), ``shuffle``, ``metric`` (``"accuracy"`` or ``"MAE"``),
    ``value``, ``samples``, ``updates``, ``updates_per_sample``, ``seconds`` and
    ``samples_per_s`` (wall-clock), and ``us_per_sample``: the CPU time of this process per
    sample in microseconds, predicting and learning, the steadier measure on a busy machine.
    """
    import pandas as pd
    from river import base

    from mlcb import validation
    from mlcb.kernels.seeding import check_seed

    if dataset not in STREAMS:
        raise InputError(f"dataset must be one of {', '.join(STREAMS)}, got {dataset!r}")
    if isinstance(selectors, str):  # one selector's name
        selectors = (selectors,)
    try:
        selectors = tuple(selectors)
    except TypeError:
        raise InputError(
            f"selectors must be a selector's name or a list of them, got {selectors!r}"
        ) from None
    unknown = [s for s in selectors if not isinstance(s, str) or s not in SELECTORS]
    if unknown or not selectors:
        raise InputError(f"selectors must name at least one of {SELECTORS}, got {list(selectors)}")
    horizon = check_length(dataset, horizon, "horizon")
    shuffles = validation.integer("shuffles", shuffles)
    seed = check_seed(seed)
    regression = STREAMS[dataset].task == "regression"
    if models is not None and (isinstance(models, (str, bytes, dict)) or not hasattr(models, "__iter__")):
        raise InputError(f"models must be None or a list of river models, got {type(models).__name__}")
    pool = list(models) if models is not None else pool_for(dataset)
    if len(pool) < 2:
        raise InputError(f"models must hold at least 2 river models to select from, got {len(pool)}")
    kind, noun = (base.Regressor, "regressor") if regression else (base.Classifier, "classifier")
    for k, member in enumerate(pool):  # training everything would run a classifier on targets
        if not _is_a(member, kind):
            raise InputError(
                f"models[{k}]: {what_is(member)} is not a river {noun}, and {dataset!r} is a "
                f"{STREAMS[dataset].task} stream"
            )
    budgeted = "mlcb" in selectors or "equal-halving" in selectors
    # Checked whichever selectors run: a budget outside [1, K] is a mistake even where unread.
    checked = validation.budgets("budgets", budgets, len(pool))
    checked = checked if budgeted else []
    # M-LCB runs first on each shuffle: equal-halving is given its measured spend (M-LCB runs
    # for that even when its own rows are not asked for).
    order = [name for name in SELECTORS if name in selectors or (name == "mlcb" and budgeted)]
    rows = []
    for r in range(shuffles):
        data = stream(dataset, seed + r, horizon)
        spent: dict[int, int] = {}  # M -> M-LCB's updates on this shuffle
        for name in order:
            for budget in checked if name not in _UNBUDGETED else (None,):
                m = 1 if budget is None else budget  # (None: river's selectors, which take no budget)
                if name == "equal-halving":
                    m = halving_budget(spent[m], len(pool), len(data))
                model = selector(name, pool, m, len(data), seed=seed + r, regression=regression)
                counter = _count_updates(model)
                value, seconds, cpu = _progressive(model, data, regression, name, dataset, r)
                if name == "mlcb":
                    spent[m] = counter[0]
                    if "mlcb" not in selectors:
                        continue
                rows.append(
                    {
                        "dataset": dataset,
                        "task": STREAMS[dataset].task,
                        "selector": f"{name} M={budget}" if budget is not None else name,
                        "shuffle": r,
                        "metric": "MAE" if regression else "accuracy",
                        "value": value,
                        "samples": len(data),
                        "updates": counter[0],
                        "updates_per_sample": counter[0] / len(data),
                        "seconds": seconds,
                        "samples_per_s": len(data) / seconds if seconds > 0 else float("inf"),
                        "us_per_sample": 1e6 * cpu / len(data),
                    }
                )
                if name == "train-everything":
                    samples = len(data)
                    rows.append(
                        {
                            **rows[-1],
                            "selector": HINDSIGHT,
                            "value": model.best_alone(),
                            "updates": samples,
                            "updates_per_sample": 1.0,
                            "seconds": float("nan"),
                            "samples_per_s": float("nan"),
                            "us_per_sample": float("nan"),
                        }
                    )
    return pd.DataFrame(rows)


def _progressive(model: Any, data: list, regression: bool, name: str, dataset: str, r: int) -> tuple:
    """Progressive validation of ``model`` on ``data``: each row predicted, scored, then learnt.
    Returns the metric's value, the seconds it took and the CPU seconds of this process."""
    import time

    from river import metrics

    metric = metrics.MAE() if regression else metrics.Accuracy()
    started, cpu = time.perf_counter(), time.process_time()
    try:
        for x, y in data:
            prediction = model.predict_one(x)
            metric.update(y, _scored(prediction, regression))
            model.learn_one(x, y)
    except Exception as error:  # whichever selector failed (river's fail on a model's None)
        error.add_note(
            f"raised while running selector {name!r} ({type(model).__name__}) on {dataset!r}, shuffle {r}"
        )
        raise
    return float(metric.get()), time.perf_counter() - started, time.process_time() - cpu
