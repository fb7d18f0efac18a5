"""M-LCB as river's classifier and regressor selectors (:mod:`mlcb.river` describes them)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from river import base
from river.model_selection.base import ModelSelector

from mlcb import validation
from mlcb.river.budgeted import _CLASSIFIER_LOSSES, _REGRESSOR_LOSSES, _SHARED, WINDOW, _Budgeted
from mlcb.river.experts import (
    RobustScale,
    absolute_loss,
    binary_label_note,
    check_target,
    last_step,
    log_loss,
    robust_loss,
)
from mlcb.validation import InputError, shown, shown_list


def _true_or_false(labels: list) -> bool:
    """Whether every label is ``True`` or ``False`` (``1`` and ``0`` are equal to them)."""
    return all(label in (True, False) for label in labels)


def _at_sample(error: InputError, sample: int) -> InputError:
    """``error`` with the number of the sample it is about (1 = the first sample learnt)."""
    return type(error)(f"{error} (sample {sample:,})")


class BudgetedClassifier(_Budgeted, ModelSelector, base.Classifier):
    """Train at most ``budget`` models per sample, chosen by an mlcb policy; predict with the
    deployed one.

    Parameters
    ----------
    models
        River classifiers, each its own object (the same object twice is refused).
    budget
        ``M``, the most models that learn from one sample (``1 <= budget <= len(models)``).
    rule
        ``"default"``: M-LCB's rule with the defaults for models that learn late (``"recent"``
        statistics, a burn-in in every rate, a warm start that grows with the budget);
        ``"plain"``: the paper's rule as it stands (``"trained"`` statistics, :data:`RATE`, no
        burn-in, the warm start of ``budget=1``). Parameters given explicitly override either.
        (Other policies than M-LCB take the plain defaults.)
    policy
        A registered policy (:func:`mlcb.policies.names`); ``"mlcb"`` by default.
    policy_params
        The policy's parameters (e.g. ``{"bonus_scale": 0.5}``).
    loss
        ``"zero-one"`` (default): 1 when the model's prediction is wrong. ``"log"``: the log-loss of
        the probability the model gives the true label, scaled so that a probability of
        :data:`~mlcb.river.experts.LOG_LOSS_FLOOR` or less costs 1: ``min(1, ln p / ln 0.01)``.
    statistics
        What the policy is told (the module's docstring), from the losses of the models it
        trains, each scored before the model learns the sample: ``"recent"``, a model's mean
        over its latest ``window`` training losses, of those the ones scored when it had at least
        half its current updates; ``"trained"``, the paper's, its mean over every sample it
        learnt. ``"pool"``: every model is scored on every sample (``K`` predictions per sample)
        and its mean taken over its window as for ``"recent"``; only M-LCB reads it (and then
        scans every bound on every sample: its ``selection`` is ``"scan"``). ``None`` (default):
        ``"recent"`` for M-LCB (``"mlcb"``, ``"mlcb-topm"``) under the default rule, ``"trained"``
        otherwise. ``"recent"`` and ``"trained"`` with M-LCB's theory bounds run on the lean
        session (:mod:`mlcb.engine.lean_session`): after the warm start only the trained models
        and the deployed one predict.
    window
        With ``"recent"`` and ``"pool"`` statistics, over how many of a model's latest scores its
        mean is taken at most (an integer >= 1, default :data:`WINDOW`, 200); of those, only the
        ones scored when the model had at least half its current updates count.
    delta
        The policy's confidence level, ``0 < delta < 1``.
    rate
        ``(beta, alpha)``: each model's heuristic rate ``min(n, burn_in + beta n^alpha sqrt(log(2
        n^2 / delta')))``, or a list of such pairs, one per model in the order given. ``None``
        (default): the same rate for every model, whatever its kind: M-LCB under the default rule
        :data:`MLCB_RATE`, ``(0.3, 1/2)`` (:class:`BudgetedRegressor`: ``REGRESSION_MLCB_RATE``,
        ``(0.1, 1/2)``); ``"pool"`` statistics :data:`POOL_RATE`, ``(0.3, 3/4)``
        (``REGRESSION_POOL_RATE``, ``(0.1, 3/4)``); the plain rule and other policies
        :data:`RATE`, ``(1/sqrt 2, 1/2)``. ``"curve"`` (with ``"pool"`` statistics): no rate is
        assumed, each model's lower bound is measured on the pool's scores, against the learning
        curve of the model that predicts at equal updates (:mod:`mlcb.river.curves`;
        ``policy_params``' ``bonus_scale`` scales its noise term).
    burn_in
        The constant term of every model's rate (a number >= 0): the regret a model may make in
        its first updates, while a model that learns late predicts little better than chance.
        ``None`` (default): M-LCB under the default rule :data:`BURN_IN`, 14
        (:class:`BudgetedRegressor`: ``REGRESSION_BURN_IN``, 5); otherwise 0.
    warm_start
        How many samples every model learns before the policy selects (an integer >= 1);
        ``None`` (default): :func:`default_warm_start`, ``floor(100 M / (K - M))`` between 1 and
        ``20 M``, plus ``floor(700 (M - 1) / (K - M))`` for the units of budget beyond the first
        (:class:`BudgetedRegressor`: ``floor(230 (M - 1) / (K - M))``; 14 for 8 models at ``M =
        1``, 149 at ``M = 2``, a regressor's 71; the plain rule and other policies take that of
        ``M = 1``): on a stream of 2,000 samples at most 1.05 updates per sample at ``M = 1``,
        2.45 at ``M = 2`` (a regressor: 2.21). Meanwhile the selector predicts with the checked model of
        smallest loss so far. The policy then observes each model once, with its mean loss and a
        count of ``warm_start``. (Policies that declare no warm start select from the first
        sample.)
    deploy
        Which model predicts, among the models whose predictions have been checked (scored after
        they learnt at least once; until one is, the selector predicts from the targets seen:
        the most frequent label, the mean target). ``"best"`` (default): the model with the
        smallest upper bound over *all* models, ties in canonical order, whichever the policy
        trains now: M-LCB's ``mean loss + bonus_scale sqrt(2 log(4 K n^2 / delta) / n)`` with
        the statistics' mean (``"pool"``: the smallest mean loss over its window, every model
        being scored on the same samples; a policy without bounds: that Hoeffding bound), the
        model whose loss is certified smallest. ``"policy"``: the policy's own deployed model
        (M-LCB: the smallest upper bound among the models it trains on the sample, so at
        ``budget=1`` the model being trained). The policy's statistics are the same either way;
        with ``budget`` equal to the number of models both rules agree.
    horizon
        Passed to horizon-dependent policies (and sizes M-LCB's look-up table); nothing stops
        after it.
    seed
        Seed of the policy's random draws (policies that draw).

    Examples
    --------
    >>> from river import datasets, linear_model, naive_bayes, optim, preprocessing
    >>> from mlcb.river import BudgetedClassifier
    >>> model = BudgetedClassifier(
    ...     [preprocessing.StandardScaler() | linear_model.LogisticRegression(optimizer=optim.SGD(0.1)),
    ...      naive_bayes.GaussianNB()],
    ...     budget=1,
    ... )
    >>> for x, y in datasets.Phishing().take(200):
    ...     _ = model.predict_one(x)
    ...     model.learn_one(x, y)
    >>> model.trained_counts  # both learn the first 20, then share the updates as M-LCB chooses
    [189, 31]
    """

    def __init__(
        self,
        models: list,
        budget: int = 1,
        rule: str = "default",
        policy: str = "mlcb",
        policy_params: dict | None = None,
        loss: str = "zero-one",
        statistics: str | None = None,
        window: int = WINDOW,
        delta: float = 0.1,
        rate: tuple | None = None,
        burn_in: float | None = None,
        warm_start: int | None = None,
        deploy: str = "best",
        horizon: int = 100_000,
        seed: int = 0,
    ) -> None:
        if loss not in _CLASSIFIER_LOSSES:
            raise InputError(f"loss must be one of {_CLASSIFIER_LOSSES}, got {loss!r}")
        self.loss = loss
        self._labels: Counter = Counter()  # the labels seen: what predicts while no model is checked
        self._init(models, base.Classifier, {k: v for k, v in locals().items() if k in _SHARED})

    def _note(self, y: Any) -> None:
        self._labels[y] += 1

    def _check_sample(self, x: Any, y: Any = None, target: bool = False) -> None:
        """Refuse, by name and with the sample's number, a sample that would poison the selector:
        :func:`~mlcb.river.experts.check_features`, and a label that is no label or of another
        kind than those seen (:func:`~mlcb.river.experts.check_target`)."""
        try:
            super()._check_sample(x)  # the features
            if target:
                check_target(y, False, type(self).__name__, self._labels)
                if len(self._labels) >= 2 and y not in self._labels:
                    self._check_third_label(y)
        except InputError as error:
            raise _at_sample(error, sum(self._labels.values()) + 1) from None

    def _check_third_label(self, y: Any) -> None:
        """Refuse a third label while the pool holds a binary classifier (river's linear
        classifiers learn two labels, and read any other as one of them: its predictions, and the
        selector's probabilities, would be wrong without a word), as river's own bridge to
        scikit-learn refuses a target that is not binary for such a model."""
        binary = [k for k, model in enumerate(self.models) if not model._multiclass]
        if binary:
            k = binary[0]
            raise InputError(
                f"{type(self).__name__}: the target {shown(y)} is a third label (the labels so far: "
                f"{shown_list(sorted(self._labels, key=str), most=6)}), but models[{k}] "
                f"({last_step(self.models[k])}) is a binary classifier: wrap it in river's "
                "multiclass.OneVsRestClassifier, or leave it out of the pool"
            )

    def _learn(self, k: int, x: dict, y: Any) -> None:
        try:
            super()._learn(k, x, y)
        except Exception as error:  # a binary model on a label it cannot read: say so
            if (note := binary_label_note(self.models[k], y)) is not None:
                error.add_note(note)
            raise

    def _prior(self) -> dict:
        """The labels' frequencies so far (empty before any label)."""
        total = sum(self._labels.values())
        return {label: count / total for label, count in self._labels.items()}

    @property
    def _multiclass(self) -> bool:
        return all(model._multiclass for model in self.models)

    def _loss(self, model: Any, x: dict, y: Any, answer: tuple | None = None) -> float:
        if self.loss == "zero-one":
            label = answer[0] if answer is not None else model.predict_one(x)
            return 0.0 if label == y else 1.0
        proba = answer[0] if answer is not None else model.predict_proba_one(x)
        return log_loss(proba.get(y, 0.0))

    def _answer(self, kind: str, prediction: Any) -> Any:
        return (prediction,) if kind == ("label" if self.loss == "zero-one" else "proba") else None

    def predict_proba_one(self, x: dict) -> dict:
        self._check_sample(x)
        if self._deployed is None:  # no model's predictions checked yet: the labels seen so far
            proba = self._prior()
        else:
            proba = self._guarded(self._deployed, lambda: self.best_model.predict_proba_one(x), x)
            self._remember("proba", x, proba)
        if self._multiclass or not _true_or_false([*proba, *self._labels]):
            # (Labels other than True and False, "spam" and "ham" say, of a binary model that
            # takes them: the deployed model's own answer, where it read 0.5 for True.)
            return proba
        # A binary selector answers for both labels, whatever labels its deployed model has seen.
        if True in proba or False in proba:
            p = float(proba.get(True, 1.0 - float(proba.get(False, 0.0))))
        else:
            p = 0.5
        return {False: 1.0 - p, True: p}

    def predict_one(self, x: dict, **kwargs: Any) -> Any:
        self._check_sample(x)
        if self._deployed is None:  # no model's predictions checked yet: the most frequent label
            return max(self._labels, key=self._labels.__getitem__) if self._labels else None
        label = self._guarded(self._deployed, lambda: self.best_model.predict_one(x, **kwargs), x)
        return label if kwargs else self._remember("label", x, label)

    @classmethod
    def _unit_test_params(cls):
        from river import linear_model, naive_bayes, optim, preprocessing, tree

        yield {
            "models": [
                preprocessing.StandardScaler() | linear_model.LogisticRegression(optimizer=optim.SGD(lr))
                for lr in (0.01, 0.1)
            ]
            + [naive_bayes.GaussianNB()],
            "budget": 1,
        }
        yield {
            "models": [tree.HoeffdingTreeClassifier(), naive_bayes.GaussianNB()],
            "budget": 2,
        }


class BudgetedRegressor(_Budgeted, ModelSelector, base.Regressor):
    """Train at most ``budget`` regressors per sample, chosen by an mlcb policy; predict with the
    deployed one.

    The loss of a prediction ``y_hat``, ``loss="absolute"`` (default), is
    :func:`mlcb.river.experts.absolute_loss`: ``|y - y_hat| / (4 scale)`` up to errors of ``3
    scale``, then still rising below 1, so that a model's mean loss ranks it as its mean absolute
    error does (the MAE a regressor is scored by) and a bad model is told from a terrible one.
    ``loss="robust"``, the former default, is :func:`mlcb.river.experts.robust_loss`, ``g(|y -
    y_hat| / scale)`` with ``g(x) = ln(1 + x) / (1 + ln(1 + x))``: it compresses every error, so
    that a model with a few large errors may rank before one with a smaller MAE. With
    ``scale=None`` (default) ``scale`` is a robust running estimate from the targets seen
    (:class:`mlcb.river.experts.RobustScale`: their median absolute deviation, positive from the
    first target on, recomputed on each of the first 64 targets and then once every 1/32 of the
    targets held); pass the target's typical deviation when it is known. Until a model's
    predictions have been checked (scored after it learnt), the selector predicts the mean of the
    targets seen so far.

    Parameters are those of :class:`BudgetedClassifier`, with ``loss`` (``"absolute"`` or
    ``"robust"``) and ``scale``.

    Examples
    --------
    >>> from river import datasets, linear_model, optim, preprocessing
    >>> from mlcb.river import BudgetedRegressor
    >>> model = BudgetedRegressor(
    ...     [preprocessing.StandardScaler() | linear_model.LinearRegression(optimizer=optim.SGD(lr))
    ...      for lr in (0.001, 0.01, 0.1)],
    ...     budget=2,
    ... )
    >>> for x, y in datasets.TrumpApproval().take(1_000):
    ...     _ = model.predict_one(x)
    ...     model.learn_one(x, y)
    >>> model.n_updates  # 3 x 270 in the warm start (it grows with the budget), then 2 per sample
    2270
    """

    def __init__(
        self,
        models: list,
        budget: int = 1,
        rule: str = "default",
        policy: str = "mlcb",
        policy_params: dict | None = None,
        loss: str = "absolute",
        scale: float | None = None,
        statistics: str | None = None,
        window: int = WINDOW,
        delta: float = 0.1,
        rate: tuple | None = None,
        burn_in: float | None = None,
        warm_start: int | None = None,
        deploy: str = "best",
        horizon: int = 100_000,
        seed: int = 0,
    ) -> None:
        if scale is not None and not (validation.is_real(scale) and scale > 0):
            raise InputError(f"scale must be None or a finite number > 0, got {scale!r}")
        if loss not in _REGRESSOR_LOSSES:
            raise InputError(f"loss must be one of {_REGRESSOR_LOSSES}, got {loss!r}")
        self.loss = loss
        self.scale = scale
        self._robust = RobustScale()  # the targets' scale, when none is given
        self._stale = 0  # targets added since the scale was last computed
        self._seen = [0.0, 0]  # the targets' sum and count: what predicts while no model is checked
        self._init(models, base.Regressor, {k: v for k, v in locals().items() if k in _SHARED})

    def _before(self, y: Any) -> None:
        if self.scale is None:
            # The scale moves slowly: recomputed on each of the first 64 targets, then once
            # every 1/32 of the targets held (a median of up to 1,000 numbers on each sample
            # would cost more than a linear model's prediction and update).
            robust = self._robust
            robust.add(float(y))
            self._stale += 1
            if self._stale * 32 >= len(robust.targets) or len(robust.targets) <= 64:
                robust.refresh()
                self._stale = 0

    def _note(self, y: Any) -> None:
        self._seen[0] += float(y)
        self._seen[1] += 1

    def _check_sample(self, x: Any, y: Any = None, target: bool = False) -> None:
        """Refuse, by name and with the sample's number, a sample that would poison the selector
        (:func:`~mlcb.river.experts.check_features`, :func:`~mlcb.river.experts.check_target`)."""
        try:
            super()._check_sample(x, y, target)
        except InputError as error:
            raise _at_sample(error, int(self._seen[1]) + 1) from None

    def _loss(self, model: Any, x: dict, y: Any, answer: tuple | None = None) -> float:
        prediction = answer[0] if answer is not None else model.predict_one(x)
        try:
            residual = float(y) - (0.0 if prediction is None else float(prediction))
        except (TypeError, ValueError):  # no number: no usable prediction
            return 1.0
        scale = float(self.scale) if self.scale is not None else self._robust.value
        if self.loss == "absolute":
            return absolute_loss(residual, scale)
        return robust_loss(residual, scale)

    def predict_one(self, x: dict) -> Any:
        self._check_sample(x)
        if self._deployed is None:  # no model's predictions checked yet: the mean target so far
            return self._seen[0] / self._seen[1] if self._seen[1] else 0.0
        return self._remember(
            "label", x, self._guarded(self._deployed, lambda: self.best_model.predict_one(x), x)
        )

    @classmethod
    def _unit_test_params(cls):
        from river import linear_model, optim, preprocessing

        yield {
            "models": [
                preprocessing.StandardScaler() | linear_model.LinearRegression(optimizer=optim.SGD(lr))
                for lr in (0.001, 0.01, 0.1)
            ],
            "budget": 1,
        }
