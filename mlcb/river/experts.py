"""river and scikit-learn models as Python experts (:class:`mlcb.contracts.PythonExpert`).

:class:`RiverExpert` wraps any river classifier or regressor (``learn_one`` / ``predict_one`` /
``predict_proba_one``); :class:`SklearnExpert` wraps any scikit-learn estimator with
``partial_fit``. Both are driven by the Python engine like any learner of one's own: ``learn``
scores the model's current prediction on the round's sample, then makes one update; ``deploy``
scores it without learning.

Losses, all in ``[0, 1]``:

``"env"`` (the default)
    The environment's own loss: ``data.loss(prediction)`` of the round's data (the predicted
    label, or the predicted number of a regressor), the loss every other expert of the pool
    suffers too, compiled or not (:class:`mlcb.learners.MixedFamily`). On a stream whose data has no
    ``loss``: ``"zero-one"`` for classifiers, ``"squared"`` for regressors.
``"zero-one"``
    1 when the predicted label is wrong (also before the first update, when there is none).
``"log"``
    ``min(1, ln p / ln 0.01)`` with ``p`` the probability the model gives the true label: the
    log-loss, clipped at ``p = 0.01`` and scaled so that it costs 1 there.
``"squared"``
    ``min(1, ((y - y_hat) / scale)^2)``; ``scale`` given (the target's range, say), or by default
    a robust running estimate from the targets seen, as :class:`mlcb.river.BudgetedRegressor`'s
    (:class:`RobustScale`).

Which loss each environment gives (``data.loss``): ``mlcb/RealData-v0`` the 0-1 loss of the
label; ``mlcb/GLM-v0`` the normalised square loss ``min(1, (y_hat - y)^2 / B^2)``, ``B`` the
replication's loss scale ``data.params.scale`` (its targets lie within about ``R_x |w*|`` of 0);
``mlcb/Clustered-v0`` the clipped scaled square error for regression and the half Brier score
of a probability vector for classification (a river classifier there needs ``loss="zero-one"``,
a different loss than the stream's).

Rates are heuristic: ``rate = (beta, alpha)`` gives ``U(n) = beta n^alpha sqrt(log(2 n^2 /
delta'))`` (default ``(1.0, 0.5)``, the rate of a no-regret online learner) but no guarantee holds
for an arbitrary model, so ``heuristic`` is ``True`` and results mark M-LCB's certificate as not
valid.

What the adapters read from the round's data: ``features`` (a dict; else ``x`` as a dict keyed by
position) and ``y`` for river; ``x`` (an array) and ``y`` for scikit-learn, and ``classes`` (every
label, which ``partial_fit`` needs up front) when the data offers it. The real-data streams
(:mod:`envs.real_data`) give all of them.

river and scikit-learn are optional: building an adapter without its package raises one
``ImportError`` line saying what to install.

Examples
--------
>>> import mlcb
>>> from river import linear_model, naive_bayes, optim, preprocessing
>>> from mlcb.river.experts import RiverExpert
>>> pool = [RiverExpert(preprocessing.StandardScaler() | linear_model.LogisticRegression(optim.SGD(lr)))
...         for lr in (0.01, 0.1)] + [RiverExpert(naive_bayes.GaussianNB())]
>>> result = mlcb.simulate(env="mlcb/RealData-v0", env_params={"dataset": "phishing"},
...                        experts=pool, budget=1, horizon=300, replications=2, seed=0)
>>> result.metadata["settings"]["mlcb M=1"]["engine"]
'python'
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mlcb import validation
from mlcb.validation import InputError, shown, shown_list

#: The probability at or below which the scaled log-loss is 1.
LOG_LOSS_FLOOR = 0.01
#: The losses of a classifier and of a regressor; the first is the default.
CLASSIFIER_LOSSES = ("env", "zero-one", "log")
REGRESSOR_LOSSES = ("env", "squared")


class RobustScale:
    """A robust running estimate of the scale of a target: the median absolute deviation of the
    last ``window`` targets from their median (MAD); where that is 0 (most targets equal), their
    mean absolute deviation; where all are equal, ``1e-9 max(1, |median|)`` (never 0).

    The squared loss of :class:`RiverExpert` without a ``scale`` and the regression loss of
    :class:`mlcb.river.BudgetedRegressor` are measured in this unit: unlike the range of the
    targets seen so far it is positive from the first target on, and a single wild target
    does not move it.

    Examples
    --------
    >>> scale = RobustScale()
    >>> for y in (10.0, 10.0, 12.0, 8.0, 1e9):
    ...     scale.update(y)
    >>> scale.value
    2.0
    """

    def __init__(self, window: int = 1_000) -> None:
        from collections import deque

        self.targets: Any = deque(maxlen=window)
        self.value = 0.0

    def update(self, y: float) -> None:
        """Add a target and recompute the estimate."""
        self.targets.append(float(y))
        self.refresh()

    def add(self, y: float) -> None:
        """Add a target without recomputing the estimate (:meth:`refresh` does)."""
        self.targets.append(float(y))

    def refresh(self) -> None:
        """Recompute the estimate from the targets held."""
        a = np.fromiter(self.targets, dtype=np.float64, count=len(self.targets))
        median = float(np.median(a))
        deviation = np.abs(a - median)
        value = float(np.median(deviation))
        if not value > 0:
            value = float(deviation.mean())
        self.value = value if value > 0 else 1e-9 * max(1.0, abs(median))


def robust_loss(residual: float, scale: float) -> float:
    """``g(|r| / s)`` with ``g(x) = ln(1 + x) / (1 + ln(1 + x))``: about ``|r| / s`` for small
    errors, then logarithmic, so that it keeps telling a bad prediction (``|r| = 10 s``: 0.71)
    from a terrible one (``10^6 s``: 0.93; ``10^12 s``: 0.97) where a loss clipped at 1 would not;
    in ``[0, 1)``, 1 for a missing or non-finite prediction.

    >>> [round(robust_loss(r, 1.0), 2) for r in (0.0, 0.1, 1.0, 10.0, 1e6, 1e12)]
    [0.0, 0.09, 0.41, 0.71, 0.93, 0.97]
    """
    x = abs(residual) / scale
    if not x < math.inf:  # nan or inf: no usable prediction
        return 1.0
    g = math.log1p(x)
    return g / (1.0 + g)


#: :func:`absolute_loss` is ``|r| / (4 s)`` up to this value (errors up to ``3 s``).
ABSOLUTE_KNEE = 0.75


def absolute_loss(residual: float, scale: float) -> float:
    """The absolute error in units of four times the targets' scale ``s`` (their median absolute
    deviation, :class:`RobustScale`), ``u = |r| / (4 s)``, while it is at most 3/4 (errors up to
    ``3 s``); beyond, ``1 - (3/16) / u``: still rising, so that it tells a bad prediction
    (``10 s`` off: 0.93) from a terrible one (``10^6 s``: 0.999999), and below 1. Linear where
    the errors of the models worth choosing lie, so that the mean of these losses ranks models
    as their mean absolute error does (the MAE a regressor is scored by); 1 for a missing or
    non-finite prediction.

    >>> [round(absolute_loss(r, 1.0), 4) for r in (0.0, 1.0, -2.0, 3.0, 4.0, 10.0, 1e6)]
    [0.0, 0.25, 0.5, 0.75, 0.8125, 0.925, 1.0]
    """
    u = abs(residual) / (4.0 * scale)
    if u <= ABSOLUTE_KNEE:
        return u
    if not u < math.inf:  # nan or inf: no usable prediction
        return 1.0
    return 1.0 - ABSOLUTE_KNEE * (1.0 - ABSOLUTE_KNEE) / u


#: The largest size of a feature or of a regression target the river adapters take
#: (:data:`mlcb.validation.LARGEST`): models square and sum them (a scaler's variance, a Gaussian's
#: density, a gradient), which overflows well before the largest float.
LARGEST = validation.LARGEST


def what_is(obj: Any) -> str:
    """How an error names ``obj`` where a model was expected: its type's name, or, for a class
    given in place of a model (``LogisticRegression`` for ``LogisticRegression()``), that it is a
    class and what to give instead (its type, river's ``EstimatorMeta``, would say nothing).

    >>> from river import linear_model
    >>> what_is(linear_model.LogisticRegression), what_is(3)
    ('the class LogisticRegression (give an instance: LogisticRegression())', 'int')
    """
    if isinstance(obj, type):
        return f"the class {obj.__name__} (give an instance: {obj.__name__}())"
    return type(obj).__name__


def last_step(model: Any) -> str:
    """The name of ``model``'s class, of its last step for a pipeline: the model that learns.

    >>> from river import linear_model, preprocessing
    >>> last_step(preprocessing.StandardScaler() | linear_model.LogisticRegression())
    'LogisticRegression'
    """
    while isinstance(getattr(model, "steps", None), dict) and model.steps:
        model = list(model.steps.values())[-1]
    return type(model).__name__


def binary_label_note(model: Any, y: Any) -> str | None:
    """What to add to the error of a binary river classifier (``_multiclass`` False) that failed
    on a label other than True or False (river's logistic regression: "invalid literal for int()
    with base 10: 'path'"); ``None`` for any other model or label."""
    if getattr(model, "_multiclass", True) or y in (True, False):
        return None
    return (
        f"{last_step(model)} is a binary classifier, and the label {shown(y)} is not True or False: "
        "river's binary classifiers learn True/False labels; wrap it in river's "
        "multiclass.OneVsRestClassifier"
    )


def label_kind(y: Any) -> str:
    """The kind of a label, as :func:`check_target` compares them: ``bool``, ``number`` or ``str``
    (or the type's name)."""
    if isinstance(y, bool | np.bool_):
        return "bool"
    if isinstance(y, int | float | np.integer | np.floating):
        return "number"
    return "str" if isinstance(y, str) else type(y).__name__


def check_target(y: Any, regression: bool, model: str, labels: Any = None) -> None:
    """An :class:`~mlcb.validation.InputError` naming the target unless ``y`` is usable: a finite
    number of size at most :data:`LARGEST` for a regressor; for a classifier a label: not
    ``None`` nor a NaN, hashable (a list is not), and of the kind of the ``labels`` seen so far
    (a collection; a string class among ``True``/``False`` labels is refused: models would compare
    them). Every value is shown escaped and bounded."""
    if regression:
        number = isinstance(y, int | float | np.integer | np.floating) and not isinstance(y, bool | np.bool_)
        if not (number and _finite(y)):
            raise InputError(f"{model}: the target must be a finite number, got {shown(y)}")
        if _too_large(y):
            raise InputError(
                f"{model}: the target {shown(y)} is larger than {LARGEST:g} in size, which models "
                "cannot square; scale the target"
            )
        return
    if y is None or (isinstance(y, float | np.floating) and not math.isfinite(float(y))):
        raise InputError(f"{model}: the target must be a label, got {shown(y)}")
    try:
        seen = bool(labels) and y in labels
    except TypeError:  # unhashable: a list, a dict, an array
        raise InputError(
            f"{model}: the target must be a label (a string, a number or True/False), got {shown(y)}, "
            f"a {type(y).__name__}"
        ) from None
    if labels and not seen:
        kind, first = label_kind(y), next(iter(labels))
        if kind != label_kind(first):
            raise InputError(
                f"{model}: the target {shown(y)} is a {kind} label, but the labels so far are of kind "
                f"{label_kind(first)} ({shown_list(sorted(labels, key=str), most=6)}); give a stream's "
                "labels one kind"
            )


def _finite(value: Any) -> bool:
    """Whether a number is finite (a Python int of any size is; an int beyond a float's range is
    then too large, for :data:`LARGEST`)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return True


def _too_large(value: Any) -> bool:
    """Whether a number is larger than :data:`LARGEST` in size, compared as a float64 (a NumPy
    float32 compared with it as it is would turn :data:`LARGEST` into an infinity, with an
    overflow warning on every sample); a Python int of any size is compared exactly."""
    if isinstance(value, int):
        return abs(value) > LARGEST
    return abs(float(value)) > LARGEST


def check_features(x: Any, model: str) -> None:
    """An :class:`~mlcb.validation.InputError` naming the feature whose value is ``None``, a number
    that is not finite (NaN or infinite) or larger than :data:`LARGEST` in size, or naming ``x``
    when it is not a dict: such a sample would poison the models (river leaves a missing feature
    out of the dict; some models take ``None`` silently and learn garbage; 1e308 overflows)."""
    if not isinstance(x, dict):
        raise InputError(f"{model}: the features must be a dict {{name: value}}, got {type(x).__name__}")
    total: Any
    largest: Any
    try:  # the common case at C speed: all numbers, their sum finite (so is each) and none too large
        total = sum(x.values())
        largest = max(map(abs, x.values()), default=0)
    except (TypeError, OverflowError):  # a None, a string, an int beyond a float: one by one below
        total = largest = None
    small = largest is not None and not _too_large(largest)
    finite = isinstance(total, int) or (isinstance(total, float | np.floating) and math.isfinite(total))
    if small and finite:
        return
    for name, value in x.items():
        if value is None:
            raise InputError(
                f"{model}: feature {shown(name)} is None; leave a missing feature out of the dict"
            )
        if isinstance(value, float | np.floating) and not math.isfinite(float(value)):
            raise InputError(f"{model}: feature {shown(name)} is {value!r}; features must be finite numbers")
        if isinstance(value, int | float | np.integer | np.floating) and _too_large(value):
            raise InputError(
                f"{model}: feature {shown(name)} is {shown(value)}, larger than {LARGEST:g} in size, which "
                "models cannot square; scale the feature"
            )


def non_numbers(x: dict) -> list[str]:
    """The features of ``x`` whose values are not numbers (``None``, strings, ...), as
    ``name=value`` strings: what to name when a model that needs numbers fails on them."""
    return [
        f"{shown(name)}={shown(value)}"
        for name, value in x.items()
        if not isinstance(value, int | float | np.integer | np.floating) or isinstance(value, bool)
    ]


def _check_rate(rate: Any) -> tuple[float, float]:
    try:
        beta, alpha = (float(v) for v in rate)
    except (TypeError, ValueError):
        beta = alpha = math.nan
    if not (beta > 0 and math.isfinite(beta) and 0 < alpha <= 1):
        raise InputError(f"rate must be a pair (beta, alpha) with beta > 0 and 0 < alpha <= 1, got {rate!r}")
    return beta, alpha


def _check_loss(loss: str | None, classifier: bool, scale: Any) -> str:
    allowed = CLASSIFIER_LOSSES if classifier else REGRESSOR_LOSSES
    if loss is None:
        loss = allowed[0]
    if loss not in allowed:
        kind = "a classifier" if classifier else "a regressor"
        raise InputError(f"loss must be one of {allowed} for {kind}, got {loss!r}")
    if scale is not None and not (validation.is_real(scale) and scale > 0):
        raise InputError(
            f"scale must be None (a robust estimate from the targets) or a finite number > 0 (the "
            f"target's range), got {scale!r}"
        )
    return loss


def _check_classes(classes: Any) -> list:
    """``classes`` as a list: every label of the stream, each once (``partial_fit`` takes them
    up front); a string (``"ab"``, read as two labels ``'a'`` and ``'b'``), a number or an empty
    or repeating list is refused by name."""
    labels = None
    if not isinstance(classes, (str, bytes, dict)):
        try:
            labels = list(classes)
        except TypeError:
            labels = None
    try:
        distinct = labels is not None and len(set(labels)) == len(labels)
    except TypeError:  # an unhashable label
        distinct = False
    if not labels or not distinct:
        raise InputError(
            f"classes must be None or a list of every label of the stream, each once, got {shown(classes)}"
        )
    return labels


def log_loss(p: float) -> float:
    """``min(1, ln p / ln LOG_LOSS_FLOOR)``: the clipped, scaled log-loss of probability ``p``.

    A probability above 1 (a rounding in a model's normalisation) costs 0, like 1, not a negative
    loss; a missing one (``nan``) costs 1.

    >>> log_loss(1.0), log_loss(0.1), log_loss(0.0), log_loss(1.0000000000000002)
    (0.0, 0.5, 1.0, 0.0)
    """
    if not p > LOG_LOSS_FLOOR:
        return 1.0
    if p >= 1.0:
        return 0.0
    return min(1.0, math.log(p) / math.log(LOG_LOSS_FLOOR))


def squared_loss(y: float, prediction: Any, scale: float | None) -> float:
    """``min(1, ((y - prediction) / scale)^2)``; a missing or non-finite prediction (or a missing
    scale) costs 1."""
    if scale is None:
        return 1.0
    try:
        value = ((float(y) - float(prediction)) / scale) ** 2
    except (TypeError, ValueError):
        return 1.0
    return min(1.0, value) if value == value else 1.0


class _Adapter:
    """What both adapters share: the loss, the rate, the reference.

    The engine deploys before it trains: when the deployed model also learns the round's sample,
    ``learn`` reuses the score ``deploy`` just computed on the same ``data`` object (the model has
    not changed in between), so the model predicts once, not twice.
    """

    heuristic = True
    _scored: tuple | None = None  # (data, loss) of the last deploy, until the model learns
    _robust: RobustScale | None = None  # "squared" without a scale: the targets seen so far
    # Set by each adapter: the river model, its loss, scale and rate, and how it predicts and learns.
    model: Any
    loss: str
    scale: float | None
    rate: Any
    _classifier: bool
    _predict: Any
    _proba: Any
    _update: Any
    _features: Any

    def _name(self) -> str:
        return type(self.model).__name__

    def _check(self, data: Any) -> None:
        """Refuse a target or a feature that would poison the model (NaN, infinite, ``None``
        target), naming it and the model."""
        check_target(data.y, not self._classifier, self._name())
        features = getattr(data, "features", None)
        if isinstance(features, dict):
            check_features(features, self._name())
        else:
            x = np.asarray(getattr(data, "x", ()))
            if x.dtype.kind in "fc" and not np.isfinite(x).all():
                flat = x.reshape(-1)
                bad = int(np.flatnonzero(~np.isfinite(flat))[0])
                raise InputError(
                    f"{self._name()}: feature {bad} is {flat[bad]!r}; features must be finite numbers"
                )

    def _call(self, method: Any, data: Any) -> Any:
        """``method(data)``, where a model that needs numbers fails on a ``None`` or a string
        feature: a ``ValueError`` naming those features and the model."""
        try:
            return method(data)
        except (TypeError, ValueError) as error:
            features = getattr(data, "features", None)
            odd = non_numbers(features) if isinstance(features, dict) else []
            if not odd:
                raise
            raise InputError(
                f"{self._name()}: features {', '.join(odd)} are not numbers, which this model needs "
                f"({type(error).__name__}: {error})"
            ) from error

    def _squared(self, y: Any, prediction: Any) -> float:
        scale = self.scale
        if scale is None:
            robust = self._robust if self._robust is not None else RobustScale()
            robust.update(float(y))
            self._robust, scale = robust, robust.value
        return squared_loss(y, prediction, scale)

    def _score(self, data: Any) -> float:
        self._check(data)
        loss = self.loss
        if loss == "log":
            return log_loss(float(self._call(self._proba, data).get(data.y, 0.0)))
        prediction = self._call(self._predict, data)
        if loss == "env":
            own = getattr(data, "loss", None)
            if callable(own):
                if not self._classifier:
                    prediction = 0.0 if prediction is None else prediction
                return float(own(prediction))
            loss = "zero-one" if self._classifier else "squared"
        if loss == "zero-one":
            return 0.0 if prediction == data.y else 1.0
        return self._squared(data.y, prediction)

    def learn(self, data: Any) -> float:
        """The loss of the current prediction on ``data``, then one update on it.

        Round data with ``warm`` samples (the warm start of ``mlcb/RealData-v0`` with
        ``warm_start > 1``): each is scored and learnt in turn; the mean loss is returned and
        ``warm_updates`` says how many updates were made."""
        warm = getattr(data, "warm", None)
        if warm:
            total = 0.0
            for sample in warm:
                total += self._score(sample)
                self._call(self._update, sample)
            self._scored = None
            self.warm_updates = len(warm)
            return total / len(warm)
        scored = self._scored
        loss = scored[1] if scored is not None and scored[0] is data else self._score(data)
        self._scored = None
        self._call(self._update, data)
        return loss

    def deploy(self, data: Any) -> float:
        """The loss of the current prediction on ``data``; nothing learns."""
        loss = self._score(data)
        self._scored = (data, loss)
        return loss

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.model!r}, loss={self.loss!r}, scale={self.scale!r}, "
            f"rate={self.rate!r})"
        )


def seeds(model: Any, seed: int, unset_only: bool = False) -> dict:
    """The ``new_params`` of river's ``clone`` that set ``seed`` on ``model`` when it has such a
    parameter, and on every step of a pipeline (its steps are cloned with the parameters named
    after them) that has one: a stochastic model behind a scaler gets each replication's seed
    too, where it kept its own (``None``: another random stream on every run). With
    ``unset_only``, only the seeds left at ``None`` are set, and a seed given is kept.

    >>> from river import forest, preprocessing
    >>> seeds(preprocessing.StandardScaler() | forest.ARFClassifier(), 7)
    {'ARFClassifier': {'seed': 7}}
    >>> seeds(forest.ARFClassifier(seed=1), 7, unset_only=True)
    {}
    """
    params = model._get_params()
    if "seed" in params:
        return {"seed": seed} if not unset_only or params["seed"] is None else {}
    steps = getattr(model, "steps", None)
    if not isinstance(steps, dict):
        return {}
    return {name: sub for name, step in steps.items() if (sub := seeds(step, seed, unset_only))}


class RiverExpert(_Adapter):
    """A river classifier or regressor as a Python expert.

    Parameters
    ----------
    model : river estimator
        A ``river.base.Classifier`` or ``river.base.Regressor`` (a pipeline ending in one is fine).
    loss : {"env", "zero-one", "log"} for classifiers, {"env", "squared"} for regressors
        The module's losses; ``"env"`` (default) is the environment's own, the one every expert
        of a pool must share.
    scale : float, optional
        The target's range, for ``"squared"``; default a robust running estimate from the
        targets seen (:class:`RobustScale`).
    rate : (float, float)
        ``(beta, alpha)`` of the heuristic rate.

    Notes
    -----
    ``spawn(seed)`` clones the model (river's ``clone``), setting its ``seed`` parameter when it
    has one, and that of every step of a pipeline, so each replication gets an untrained copy
    with its own random stream. A NaN or infinite feature or target, or a ``None`` target, is
    refused by name before the model sees it; a ``None`` or string feature that the model cannot
    take is named with the model; so is a binary classifier on a stream of more than two labels.
    """

    def __init__(
        self, model: Any, loss: str | None = None, scale: float | None = None, rate: tuple = (1.0, 0.5)
    ) -> None:
        try:
            from river import base
        except ImportError:
            raise ImportError("RiverExpert needs river: pip install 'mlcb[river]'") from None
        if isinstance(model, base.Classifier):
            classifier = True
        elif isinstance(model, base.Regressor):
            classifier = False
        else:
            raise InputError(f"model must be a river classifier or regressor, got {what_is(model)}")
        self.model = model
        self._classifier = classifier
        self.loss = _check_loss(loss, classifier, scale)
        self.scale = None if scale is None else float(scale)
        self.rate = _check_rate(rate)
        # A binary river classifier (its _multiclass False), and the labels it met, up to three.
        self._binary = classifier and not bool(getattr(model, "_multiclass", True))
        self._labels: set = set()

    def _check(self, data: Any) -> None:
        super()._check(data)
        if self._binary:
            self._check_binary(data)

    def _check_binary(self, data: Any) -> None:
        """Refuse a stream of more than two labels (its ``classes``, or the labels met) to a
        binary classifier, which reads any label as one of two: river's logistic regression on
        the ten digits learnt and predicted True and False, and scored, without a word."""
        classes = getattr(data, "classes", None)
        if classes is None:  # the labels met so far (at most three: a third is refused)
            labels = self._labels
            labels.add(data.y)
            if len(labels) <= 2:
                return
            many = sorted(labels, key=str)
        elif len(classes) <= 2:
            return
        else:
            many = list(classes)
        raise InputError(
            f"{last_step(self.model)} is a binary classifier, but the stream has more than two labels "
            f"({shown_list(many, most=6)}): wrap it in river's multiclass.OneVsRestClassifier"
        )

    @staticmethod
    def _features(data: Any) -> dict:
        features = getattr(data, "features", None)
        if features is None:
            features = {i: float(v) for i, v in enumerate(np.asarray(data.x, dtype=float).reshape(-1))}
        return features

    def _predict(self, data: Any) -> Any:
        return self.model.predict_one(self._features(data))

    def _proba(self, data: Any) -> dict:
        return self.model.predict_proba_one(self._features(data))

    def _update(self, data: Any) -> None:
        try:
            self.model.learn_one(self._features(data), data.y)
        except Exception as error:
            if (note := binary_label_note(self.model, data.y)) is not None:
                error.add_note(note)
            raise

    def spawn(self, seed: int) -> RiverExpert:
        """An untrained clone, the ``seed`` of its model set to ``seed`` when it has one, and of
        every step of a pipeline that has one."""
        return RiverExpert(self.model.clone(seeds(self.model, int(seed))), self.loss, self.scale, self.rate)


class SklearnExpert(_Adapter):
    """A scikit-learn estimator with ``partial_fit`` as a Python expert.

    Parameters are those of :class:`RiverExpert`. Classifiers get every label of the stream
    (``data.classes``, or ``classes=`` here) on their first ``partial_fit``; before it they
    predict nothing (0-1 loss 1, log-loss 1) and regressors predict 0. ``spawn(seed)`` is
    ``sklearn.base.clone`` with every ``random_state`` set to ``seed``, the estimator's and its
    inner estimators' (``estimator__random_state``).
    """

    def __init__(
        self,
        estimator: Any,
        loss: str | None = None,
        scale: float | None = None,
        rate: tuple = (1.0, 0.5),
        classes: Any = None,
    ) -> None:
        try:
            from sklearn.base import is_classifier
        except ImportError:
            raise ImportError("SklearnExpert needs scikit-learn: pip install 'mlcb[sklearn]'") from None
        if not callable(getattr(estimator, "partial_fit", None)):
            raise InputError(f"estimator must have partial_fit, {type(estimator).__name__} has not")
        classifier = bool(is_classifier(estimator))
        self.model = estimator
        self.loss = _check_loss(loss, classifier, scale)
        if self.loss == "log" and not hasattr(estimator, "predict_proba"):
            raise InputError(f"loss 'log' needs predict_proba, {type(estimator).__name__} has none")
        self.scale = None if scale is None else float(scale)
        self.rate = _check_rate(rate)
        self.classes = None if classes is None else _check_classes(classes)
        self._classifier = classifier
        self._fitted = False

    @staticmethod
    def _row(data: Any) -> np.ndarray:
        return np.asarray(data.x, dtype=np.float64).reshape(1, -1)

    def _predict(self, data: Any) -> Any:
        if not self._fitted:
            return None if self._classifier else 0.0
        value = self.model.predict(self._row(data))[0]
        return value.item() if hasattr(value, "item") else value

    def _proba(self, data: Any) -> dict:
        if not self._fitted:
            return {}
        p = self.model.predict_proba(self._row(data))[0]
        return {c.item() if hasattr(c, "item") else c: float(v) for c, v in zip(self.model.classes_, p)}

    def _update(self, data: Any) -> None:
        y = np.asarray([data.y])
        if self._classifier and not self._fitted:
            classes = self.classes if self.classes is not None else getattr(data, "classes", None)
            if classes is None:
                raise InputError(
                    "a scikit-learn classifier needs every label up front: pass classes= or use a "
                    "stream whose data has classes"
                )
            self.model.partial_fit(self._row(data), y, classes=np.asarray(classes))
        else:
            self.model.partial_fit(self._row(data), y)
        self._fitted = True

    def spawn(self, seed: int) -> SklearnExpert:
        """An untrained clone, every ``random_state`` of it set to ``seed``."""
        from sklearn.base import clone

        estimator = clone(self.model)
        # Every random_state, its own and its inner estimators' (``estimator__random_state``):
        # an inner one left at None would draw another random stream on every run.
        names = [name for name in estimator.get_params() if name.split("__")[-1] == "random_state"]
        if names:
            estimator.set_params(**dict.fromkeys(names, int(seed)))
        return SklearnExpert(estimator, self.loss, self.scale, self.rate, self.classes)


def river_pool() -> list:
    """The presets' pool of eight diverse river classifiers (untrained, deterministic).

    Three logistic regressions trained by SGD with step sizes 0.005, 0.05, 0.5 and growing L2
    penalties, a perceptron and a passive-aggressive classifier (PA-I), all behind a running
    standard scaler; Gaussian naive Bayes; a Hoeffding tree; a k-nearest-neighbours classifier
    (k = 5 over a window of the last 500 scaled samples).

    >>> [type(m).__name__ for m in river_pool()][:3]
    ['Pipeline', 'Pipeline', 'Pipeline']
    """
    try:
        from river import linear_model, naive_bayes, neighbors, optim, preprocessing, tree
    except ImportError:
        raise ImportError("the river pool needs river: pip install 'mlcb[river]'") from None

    def scaled(model: Any) -> Any:
        return preprocessing.StandardScaler() | model

    return [
        scaled(linear_model.LogisticRegression(optimizer=optim.SGD(0.005))),
        scaled(linear_model.LogisticRegression(optimizer=optim.SGD(0.05), l2=0.001)),
        scaled(linear_model.LogisticRegression(optimizer=optim.SGD(0.5), l2=0.01)),
        scaled(linear_model.Perceptron()),
        scaled(linear_model.PAClassifier(C=0.01, mode=1)),
        naive_bayes.GaussianNB(),
        tree.HoeffdingTreeClassifier(grace_period=50),
        scaled(neighbors.KNNClassifier(n_neighbors=5, engine=neighbors.LazySearch(window_size=500))),
    ]
