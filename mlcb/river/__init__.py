"""M-LCB as a river model selector: :class:`BudgetedClassifier` and :class:`BudgetedRegressor`.

river's own selectors (``model_selection.BanditClassifier``, ``SuccessiveHalvingClassifier``)
train the models a bandit picks on each sample and predict with the best so far. The two
estimators here do the same with a budget that is a cap: after a warm start (every model learns
the first ``warm_start`` samples) the chosen policy of :mod:`mlcb.policies` (M-LCB by default)
selects at most ``budget`` models on each sample; those, and only those, learn from it, and
``predict_one`` answers with the deployed model. With ``budget`` equal to the number of models
every model learns every sample. The estimators are thin adapters over a round session of the
engine (:class:`mlcb.engine.lean_session.LeanSession` for M-LCB, :class:`mlcb.engine.session.Session`
for every other policy), which keeps every count, loss and bound.

Losses are in ``[0, 1]`` and score a model's prediction on a sample *before* it learns it
(progressive validation): the 0-1 loss (or the log-loss, clipped and scaled) for
classification; for regression :func:`mlcb.river.experts.absolute_loss`, the absolute error in
units of four times a robust running scale of the targets, linear up to three scales (so that
a model's mean loss ranks it as its MAE does) and still rising below 1 beyond.

After the warm start a sample costs the predictions of the models that learn it, plus the
deployed model's where it does not learn it (its answer to ``predict_one`` is reused for its
loss), and their updates: M-LCB's rule reads the losses of the models it trains only, and its
bookkeeping (:class:`mlcb.engine.lean_session.LeanSession`) is a few microseconds a sample. What
the policy is told, ``statistics``:

``"recent"`` (M-LCB's default)
    A model's mean over its latest training losses, at most ``window`` (200) of them, of those
    only the ones scored when it had at least half the updates it has now: its loss as it is now.
    If a model's loss only falls as it learns, this mean is at most its full mean, which its rate
    bounds, so M-LCB's lower bound still bounds the loss it would reach.
``"trained"`` (the paper's; the default of ``rule="plain"`` and of every other policy)
    A model's mean over every sample it learnt.
``"pool"``
    Every model, trained or not, is scored on every sample (``K`` predictions per sample), its
    mean over its window; only M-LCB reads it.

A model's rate is ``min(n, burn_in + beta n^alpha sqrt(log(2 n^2 / delta')))`` with ``rate =
(beta, alpha)``, a heuristic (no guarantee holds for an arbitrary river model), the same for
every kind of model. M-LCB's default rule (``rule="default"``): :data:`MLCB_RATE`, ``(0.3,
1/2)``, and :data:`BURN_IN`, 14, for a classifier; :data:`REGRESSION_MLCB_RATE`, ``(0.1, 1/2)``,
and :data:`REGRESSION_BURN_IN`, 5, for a regressor (its loss sets models about three times closer
apart). The burn-in is the part of a model's regret that comes from its first updates, when a
model that learns late (k-NN, a small learning rate) predicts little better than chance; without
it such a model's lower bound after the warm start is above the loss it reaches and M-LCB never
trains it again. ``rule="plain"`` and every other policy: :data:`RATE`, ``(1/sqrt 2, 1/2)``, no
burn-in. ``"pool"`` statistics: :data:`POOL_RATE`, ``(0.3, 3/4)`` (:data:`REGRESSION_POOL_RATE`,
``(0.1, 3/4)``), no burn-in, or ``rate="curve"`` (:data:`CURVE`): each model's lower bound
measured on the pool's scores against the learning curve of the model that predicts
(:mod:`mlcb.river.curves`).

The warm start: every model learns the first ``warm_start`` samples, by default
:func:`default_warm_start` of them (``floor(100 M / (K - M))``, between 1 and ``20 M``, plus
``floor(700 (M - 1) / (K - M))``, a regressor ``floor(230 (M - 1) / (K - M))``: 14 for 8 models at
``M = 1``, 149 at ``M = 2``, a regressor's 71; the plain rule and other policies take that of ``M
= 1``), so that a stream of 2,000 samples costs at most 1.05 model updates per sample at ``M = 1``
and 2.45 at ``M = 2`` (a regressor 2.21): the slots beyond the first spend part of their updates
early, while every model learns the same samples. The policy then observes each model once, with a count of
``warm_start`` and its mean loss.

No model predicts before its predictions have been checked: scored on a sample after it learnt
at least once (from the second sample of a warm start on). Until then the selector predicts from
the targets seen so far (the most frequent label; the mean target), and ``best_model`` is
``None``.

The pool's order does not matter: the models are ranked once by a canonical key (their ``repr``,
which lists their class and parameters) and the policy sees them in that order, so its ties are
broken by the key, never by a position in the list. Every random draw of a policy comes from a
counter-based stream seeded by ``seed``.

river is an optional dependency. The adapters that put river and scikit-learn models in a
simulation's pool (:mod:`mlcb.river.experts`) import without it; the selectors and their
comparison need it, and asking for one without river raises one ``ImportError`` saying what to
install.

Examples
--------
>>> from river import datasets, evaluate, linear_model, metrics, optim, preprocessing, tree
>>> from mlcb.river import BudgetedClassifier
>>> models = [
...     preprocessing.StandardScaler() | linear_model.LogisticRegression(optimizer=optim.SGD(lr))
...     for lr in (0.005, 0.05, 0.5)
... ] + [tree.HoeffdingTreeClassifier()]
>>> model = BudgetedClassifier(models, budget=1)
>>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
Accuracy: 89.03%
>>> model.n_updates  # the warm start's 4 x 20 (20: 4 models), then one per sample
1310
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mlcb.river.budgeted import (
        BURN_IN,
        CURVE,
        DEFAULT_STATISTICS,
        DEPLOY_RULES,
        MLCB_RATE,
        POOL_POLICIES,
        POOL_RATE,
        RATE,
        REGRESSION_BURN_IN,
        REGRESSION_MLCB_RATE,
        REGRESSION_POOL_RATE,
        REGRESSION_WARM_EXTRA,
        RULES,
        STATISTICS,
        WARM_EXTRA,
        WARM_START,
        WARM_UPDATES,
        WINDOW,
        canonical_order,
        default_warm_start,
        nonparametric,
    )
    from mlcb.river.comparison import SELECTORS, compare, selector
    from mlcb.river.estimators import BudgetedClassifier, BudgetedRegressor
    from mlcb.river.experts import LOG_LOSS_FLOOR

#: Where each public name lives (imported on first use: they need river).
_HOMES = {
    **dict.fromkeys(
        (
            "BURN_IN",
            "CURVE",
            "DEFAULT_STATISTICS",
            "DEPLOY_RULES",
            "POOL_POLICIES",
            "MLCB_RATE",
            "POOL_RATE",
            "RATE",
            "REGRESSION_BURN_IN",
            "REGRESSION_MLCB_RATE",
            "REGRESSION_POOL_RATE",
            "REGRESSION_WARM_EXTRA",
            "RULES",
            "STATISTICS",
            "WARM_EXTRA",
            "WARM_START",
            "WINDOW",
            "WARM_UPDATES",
            "canonical_order",
            "default_warm_start",
            "nonparametric",
        ),
        "mlcb.river.budgeted",
    ),
    "LOG_LOSS_FLOOR": "mlcb.river.experts",
    **dict.fromkeys(("SELECTORS", "compare", "selector"), "mlcb.river.comparison"),
    **dict.fromkeys(("BudgetedClassifier", "BudgetedRegressor"), "mlcb.river.estimators"),
}

__all__ = [
    "BURN_IN",
    "CURVE",
    "DEFAULT_STATISTICS",
    "DEPLOY_RULES",
    "LOG_LOSS_FLOOR",
    "MLCB_RATE",
    "POOL_POLICIES",
    "POOL_RATE",
    "RATE",
    "REGRESSION_BURN_IN",
    "REGRESSION_MLCB_RATE",
    "REGRESSION_POOL_RATE",
    "REGRESSION_WARM_EXTRA",
    "RULES",
    "SELECTORS",
    "STATISTICS",
    "WARM_EXTRA",
    "WARM_START",
    "WARM_UPDATES",
    "WINDOW",
    "BudgetedClassifier",
    "BudgetedRegressor",
    "canonical_order",
    "compare",
    "default_warm_start",
    "nonparametric",
    "selector",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'mlcb.river' has no attribute {name!r}")
    try:
        import river  # noqa: F401
    except ImportError:  # pragma: no cover - exercised in a subprocess by the tests
        raise ImportError("mlcb.river needs river: pip install 'mlcb[river]'") from None
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
