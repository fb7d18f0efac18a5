"""M-LCB against river's own selectors on the streams of :mod:`mlcb.river.streams` (:func:`compare`)."""

from __future__ import annotations

from typing import Any

from mlcb.river.estimators import BudgetedClassifier, BudgetedRegressor
from mlcb.river.streams import STREAMS, pool_for, stream
from mlcb.validation import InputError

#: The selectors :func:`compare` runs, in the order of its table.
SELECTORS = ("mlcb", "epsilon-greedy", "ucb", "successive-halving", "train-everything")

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
        seed=seed)`` and ``UCB(delta=1, burn_in=20, seed=seed)``; the metric (accuracy, or MAE
        as river's regression examples use it) as the reward. (river's bandits take the largest
        reward as the best, so with MAE they favour the models that err most.)
    ``"successive-halving"``
        river's ``SuccessiveHalvingClassifier`` / ``SuccessiveHalvingRegressor`` with ``budget =
        horizon`` model updates for its halving rounds and ``eta = 2`` (after them its best model
        keeps learning every sample).
    ``"train-everything"``
        :class:`TrainEverything`: every model learns every sample, the best so far predicts.
    """
    from river import bandit, metrics, model_selection

    fresh = [m.clone() for m in models]
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
        return kind(fresh, metric=metric, policy=policy)
    if name == "successive-halving":
        halving = (
            model_selection.SuccessiveHalvingRegressor
            if regression
            else model_selection.SuccessiveHalvingClassifier
        )
        return halving(fresh, metric=metric, budget=horizon, eta=2)
    if name == "train-everything":
        return TrainEverything(fresh, regression)
    raise InputError(f"selector must be one of {SELECTORS}, got {name!r}")


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
    ``budgets`` are M-LCB's.

    Beside each run of ``"train-everything"`` comes a row :data:`HINDSIGHT` (``"best-in-hindsight"``):
    the best score of a single model of the pool, learning every sample alone, as a selector that
    knew the best model in advance would score (one update per sample; its ``seconds`` and
    ``samples_per_s`` are NaN: it is read off training everything, not run). A selector's distance
    to it is what finding the best model costs it.

    Returns a pandas ``DataFrame`` with one row per (selector, shuffle): ``dataset``, ``task``,
    ``selector`` (``"mlcb M=1"``, ...), ``shuffle``, ``metric`` (``"accuracy"`` or ``"MAE"``),
    ``value``, ``samples``, ``updates``, ``updates_per_sample``, ``seconds`` and
    ``samples_per_s``.
    """
    import time

    import pandas as pd
    from river import base, metrics

    from mlcb import validation
    from mlcb.kernels.seeding import check_seed

    if dataset not in STREAMS:
        raise InputError(f"dataset must be one of {', '.join(STREAMS)}, got {dataset!r}")
    if isinstance(selectors, str):  # one selector's name
        selectors = (selectors,)
    unknown = [s for s in selectors if s not in SELECTORS]
    if unknown:
        raise InputError(f"selectors must be among {SELECTORS}, got {unknown}")
    horizon = validation.integer("horizon", horizon)
    shuffles = validation.integer("shuffles", shuffles)
    seed = check_seed(seed)
    regression = STREAMS[dataset].task == "regression"
    pool = list(models) if models is not None else pool_for(dataset)
    if len(pool) < 2:
        raise InputError(f"models must hold at least 2 river models to select from, got {len(pool)}")
    kind, noun = (base.Regressor, "regressor") if regression else (base.Classifier, "classifier")
    for k, member in enumerate(pool):  # training everything would run a classifier on targets
        if not isinstance(member, kind):
            raise InputError(
                f"models[{k}]: {type(member).__name__} is not a river {noun}, and {dataset!r} is a "
                f"{STREAMS[dataset].task} stream"
            )
    checked = validation.budgets("budgets", budgets, len(pool)) if "mlcb" in selectors else []
    rows = []
    for r in range(shuffles):
        data = stream(dataset, seed + r, horizon)
        for name in selectors:
            for budget in checked if name == "mlcb" else (None,):
                m = 1 if budget is None else budget  # (None: river's selectors, which take no budget)
                model = selector(name, pool, m, len(data), seed=seed + r, regression=regression)
                counter = _count_updates(model)
                metric = metrics.MAE() if regression else metrics.Accuracy()
                started = time.perf_counter()
                try:
                    for x, y in data:
                        prediction = model.predict_one(x)
                        metric.update(y, _scored(prediction, regression))
                        model.learn_one(x, y)
                except Exception as error:  # whichever selector failed (river's fail on a model's None)
                    error.add_note(
                        f"raised while running selector {name!r} ({type(model).__name__}) on "
                        f"{dataset!r}, shuffle {r}"
                    )
                    raise
                seconds = time.perf_counter() - started
                rows.append(
                    {
                        "dataset": dataset,
                        "task": STREAMS[dataset].task,
                        "selector": f"mlcb M={budget}" if name == "mlcb" else name,
                        "shuffle": r,
                        "metric": "MAE" if regression else "accuracy",
                        "value": float(metric.get()),
                        "samples": len(data),
                        "updates": counter[0],
                        "updates_per_sample": counter[0] / len(data),
                        "seconds": seconds,
                        "samples_per_s": len(data) / seconds if seconds > 0 else float("inf"),
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
                        }
                    )
    return pd.DataFrame(rows)
