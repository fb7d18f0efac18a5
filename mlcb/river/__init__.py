"""M-LCB as a river model selector: :class:`BudgetedClassifier` and :class:`BudgetedRegressor`.

river's own selectors (``model_selection.BanditClassifier``, ``SuccessiveHalvingClassifier``)
train the models a bandit picks on each sample and predict with the best so far. The two
estimators here do the same with a budget that is a cap: after a warm start (every model learns
the first ``warm_start`` samples) the chosen policy of :mod:`mlcb.policies` (M-LCB by default)
selects at most ``budget`` models on each sample; those, and only those, learn from it, and
``predict_one`` answers with the deployed model. With ``budget`` equal to the number of models
every model learns every sample. The estimators are thin adapters over the engine's round
session (:class:`mlcb.engine.session.Session`), which keeps every count, loss and bound.

Losses are in ``[0, 1]`` and score a model's prediction on a sample *before* it learns it
(progressive validation): the 0-1 loss (or the log-loss, clipped and scaled) for
classification; for regression :func:`mlcb.river.experts.robust_loss`, ``g(|y - y_hat| / s)``
with ``g(x) = ln(1 + x) / (1 + ln(1 + x))`` and ``s`` a robust running scale of the targets
(their median absolute deviation): about the error in units of ``s`` for small errors and
logarithmic beyond, never clipped, so that it tells a bad model from a terrible one. What the
policy is told, ``statistics``:

``"pool"`` (M-LCB's default)
    Every model, trained or not, is scored on every sample: ``K`` predictions per sample, while
    the budget caps the updates (``learn_one`` calls), not the predictions. A model's mean loss
    is its mean over the last ``window`` samples (200 by default) that were scored when it had at
    least half the updates it has now, an estimate of its loss *as it is now*; its count ``n``
    stays its number of updates. M-LCB's lower bound then reads ``mean - U(n) / n``: if a
    model's loss only falls as it learns and its regret after ``n`` updates is at most ``U(n)``,
    then ``n (loss now - L*) <= U(n)``, so the bound is below the loss ``L*`` it would reach. The
    model that predicts (``deploy="best"``) is the one with the smallest such mean: every model
    is scored on the same samples. This departs from the paper's M-LCB, whose statistics are each
    model's own training losses; it is the default because it measured better (docs/river.md).
    Only M-LCB (``"mlcb"``, ``"mlcb-topm"``), whose bounds depend on each model's statistics
    alone, reads it.
``"trained"`` (the paper's; the default of every other policy)
    The policy sees, for each model it trained, the loss on that sample; a model's mean loss is
    its mean over the samples it learnt.

A model's rate is ``min(n, beta n^alpha sqrt(log(2 n^2 / delta')))`` with ``rate = (beta,
alpha)``, a heuristic (no guarantee holds for an arbitrary river model). By default every model
gets the same rate, whatever its kind: with ``"pool"`` statistics :data:`POOL_RATE`, ``(0.3,
3/4)`` for a classifier (a model's loss after ``n`` updates is taken to be at most ``0.3
n^(-1/4) sqrt(log(2 n^2 / delta'))`` above its limit: generous while ``n`` is small, so that
every model is tried before one is preferred, and slow to shrink, so that a model that learns
late is still tried) and :data:`REGRESSION_POOL_RATE`, ``(0.1, 3/4)``, for a regressor (its loss
sets models about three times closer apart); with ``"trained"`` ones :data:`RATE`, ``(1/sqrt 2,
1/2)``; ``rate`` may give each model its own pair, or be ``"curve"`` (:data:`CURVE`, with
``"pool"`` statistics): each model's lower bound measured on the pool's scores against the
learning curve of the model that predicts, at equal updates (:mod:`mlcb.river.curves`).

The warm start: every model learns the first ``warm_start`` samples, by default
:func:`default_warm_start` of them (``floor(100 / (K - 1))``, between 1 and 20: 14 for 8
models), so that at ``budget=1`` a stream of 2,000 samples costs at most 1.05 model updates per
sample. The policy then observes each model once, with a count of ``warm_start`` and its mean
loss (over its window with ``"pool"`` statistics).

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
Accuracy: 87.99%
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
        NONPARAMETRIC_POOL_RATE,
        POOL_POLICIES,
        POOL_RATE,
        RATE,
        REGRESSION_MLCB_RATE,
        REGRESSION_POOL_RATE,
        RULES,
        STATISTICS,
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
            "NONPARAMETRIC_POOL_RATE",
            "POOL_POLICIES",
            "MLCB_RATE",
            "POOL_RATE",
            "RATE",
            "REGRESSION_MLCB_RATE",
            "REGRESSION_POOL_RATE",
            "RULES",
            "STATISTICS",
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
    "NONPARAMETRIC_POOL_RATE",
    "POOL_POLICIES",
    "POOL_RATE",
    "RATE",
    "REGRESSION_MLCB_RATE",
    "REGRESSION_POOL_RATE",
    "RULES",
    "SELECTORS",
    "STATISTICS",
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
