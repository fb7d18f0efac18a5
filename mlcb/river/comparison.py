"""M-LCB against river's own selectors on a real-data stream (:func:`compare`)."""

from __future__ import annotations

from typing import Any

from mlcb.river.estimators import BudgetedClassifier

# --- the comparison with river's own selectors ------------------------------------------------
#: The selectors :func:`compare` runs, in the order of its table.
SELECTORS = ("mlcb", "epsilon-greedy", "ucb", "successive-halving", "train-everything")


def selector(name: str, models: list, budget: int = 1, horizon: int = 2_000, seed: int = 0) -> Any:
    """A fresh selector over clones of ``models``, as :func:`compare` runs it.

    ``"mlcb"``
        :class:`BudgetedClassifier` with ``budget`` and its defaults (``"pool"`` statistics).
    ``"epsilon-greedy"``, ``"ucb"``
        river's ``BanditClassifier`` with the policy of river's own documentation example:
        ``EpsilonGreedy(epsilon=0.1, decay=0.001, burn_in=20, seed=seed)``, and
        ``UCB(delta=1, burn_in=20, seed=seed)``; accuracy as the reward.
    ``"successive-halving"``
        river's ``SuccessiveHalvingClassifier`` with ``budget = horizon`` model updates for its
        halving rounds and ``eta = 2`` (after them its best model keeps learning every sample).
    ``"train-everything"``
        :class:`BudgetedClassifier` with ``budget = len(models)`` and ``"trained"`` statistics:
        every model learns every sample and the one with the smallest upper bound (with equal
        counts: the smallest mean loss since the first sample, the best so far) predicts.
    """
    from river import bandit, metrics, model_selection

    fresh = [m.clone() for m in models]
    if name == "mlcb":
        return BudgetedClassifier(fresh, budget=budget, seed=seed)
    if name == "epsilon-greedy":
        policy = bandit.EpsilonGreedy(epsilon=0.1, decay=0.001, burn_in=20, seed=seed)
        return model_selection.BanditClassifier(fresh, metric=metrics.Accuracy(), policy=policy)
    if name == "ucb":
        policy = bandit.UCB(delta=1.0, burn_in=20, seed=seed)
        return model_selection.BanditClassifier(fresh, metric=metrics.Accuracy(), policy=policy)
    if name == "successive-halving":
        return model_selection.SuccessiveHalvingClassifier(
            fresh, metric=metrics.Accuracy(), budget=horizon, eta=2
        )
    if name == "train-everything":
        return BudgetedClassifier(fresh, budget=len(fresh), statistics="trained", seed=seed)
    raise ValueError(f"selector must be one of {SELECTORS}, got {name!r}")


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
    budgets: tuple = (1, 2, 3),
    selectors: tuple = SELECTORS,
    models: list | None = None,
    seed: int = 0,
) -> Any:
    """Progressive-validation accuracy and model updates of every selector on a real-data stream.

    Shuffle ``r`` is replication ``r`` of the environment ``mlcb/RealData-v0`` with ``seed``
    (:meth:`envs.real_data.RealDataEnv.stream`): ``horizon`` rows drawn with replacement, the same
    rows for every selector. Each selector predicts every row before learning it (river's
    ``evaluate.progressive_val_score``); ``updates`` counts the ``learn_one`` calls of its pool
    members. ``models`` defaults to :func:`mlcb.river.experts.river_pool`; ``budgets`` are
    M-LCB's.

    Returns a pandas ``DataFrame`` with one row per (selector, shuffle): ``dataset``,
    ``selector`` (``"mlcb M=1"``, ...), ``shuffle``, ``accuracy``, ``updates``,
    ``updates_per_sample``, ``seconds``.
    """
    import time

    import pandas as pd
    from river import evaluate, metrics

    from envs.real_data import RealDataEnv

    if models is None:
        from mlcb.river.experts import river_pool

        models = river_pool()
    unknown = [s for s in selectors if s not in SELECTORS]
    if unknown:
        raise ValueError(f"selectors must be among {SELECTORS}, got {unknown}")
    if isinstance(shuffles, bool) or not isinstance(shuffles, int) or shuffles < 1:
        raise ValueError(f"shuffles must be an integer >= 1, got {shuffles!r}")
    env = RealDataEnv(dataset, horizon=horizon)
    rows = []
    for r in range(shuffles):
        stream = list(env.stream(seed, r, horizon))
        for name in selectors:
            for budget in budgets if name == "mlcb" else (None,):
                model = selector(name, models, budget or 1, horizon, seed=r)
                counter = _count_updates(model)
                started = time.perf_counter()
                metric = evaluate.progressive_val_score(stream, model, metrics.Accuracy())
                seconds = time.perf_counter() - started
                label = f"mlcb M={budget}" if name == "mlcb" else name
                rows.append(
                    {
                        "dataset": dataset,
                        "selector": label,
                        "shuffle": r,
                        "accuracy": float(metric.get()),
                        "updates": counter[0],
                        "updates_per_sample": counter[0] / horizon,
                        "seconds": seconds,
                    }
                )
    return pd.DataFrame(rows)
