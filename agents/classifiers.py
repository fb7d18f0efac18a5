"""Online linear classifiers on a real data stream, compiled: softmax regression and perceptron.

The experts of the paper's real-data runs (docs/real-data.md §3), for ``mlcb/RealData-v0``
(:mod:`envs.real_data`). Each expert sees its own subset of the columns (``features``), keeps a
weight matrix ``W`` (one row per class, a bias first) and its own running standardisation of
its columns, and predicts the class of largest score ``W z`` (ties: the smaller class index).

Standardisation without look-ahead. Expert ``k`` standardises column ``i`` with the mean and
standard deviation of the rows *it has trained on so far* (Welford's running moments; a
standard deviation of 0, as before the second row, counts as 1) and clips the result to
``[-clip, clip]``: ``z_i = clip((x_i - mean_i) / sd_i)``, ``z_0 = 1``. The statistics are part of
the expert's state, updated after each training step and frozen while it is not trained, so the
expert's decision before an update depends only on its own past; nothing is computed from rows
it has not met (no scaling fitted on the whole data set).

Training at the expert's ``j``-th update (row ``x``, label ``y``): the loss is the 0-1 loss of
the current prediction (the meta-level loss, in ``[0, 1]``); then

``OnlineSoftmax``
    one step of projected online gradient descent on the log loss of the softmax model,
    ``W <- Proj(W - eta_j (p - e_y) z^T)`` with ``p = softmax(W z)``, ``eta_j = step / sqrt(j)``,
    and ``Proj`` the projection onto the Frobenius ball ``||W|| <= radius``;
``OnlinePerceptron``
    the multiclass perceptron: on a mistake ``y_hat != y``, ``W[y] += z`` and ``W[y_hat] -= z``.

Both then fold ``x`` into the running moments.

Smoothing (the deployed decision, :mod:`mlcb.kernels.smoothing`): ``"last"`` (default) predicts with the
current ``W``, ``"average"`` with the average of the weight matrices used in the expert's
training rounds so far (for the softmax model the online-to-batch average, whose expected *log*
loss is at most the iterates' average by convexity; for the perceptron the averaged perceptron,
Freund and Schapire 1999). Both use the expert's current standardisation. ``"last"`` is the
default because the meta-level loss is the 0-1 loss of the argmax, which is not convex: the
average has no guarantee on it that the last iterate lacks, and the reference ``L_k*`` below is
the loss of the current iterate on each new row, so a deployed ``"last"`` expert is judged on the
very decisions its reference counts. ``"uniform"`` is not offered: it would keep every iterate
(memory ``K T C d``) for a guarantee the heuristic rates void anyway. The expected loss of a
decision on a real data set is not computed (``nan``): pseudo-regrets are not recorded.

Rates (docs/real-data.md §3), of the form ``U(n, delta') = min(n, rate_scale (c sqrt(n) +
sqrt((n/2) log(2 n^2 / delta'))))``:

* ``rate="zero-one"`` (the default of both models): ``c = 1``, the same for every classifier. No
  regret bound on the 0-1 loss exists for either model on data that are not linearly separable,
  and the 0-1 loss of the argmax does not depend on the scale of ``W``, which a bound on the log
  loss does (through ``step`` and ``radius``); one common heuristic leaves the ranking of the
  experts to their losses. Measured on the shipped cardiotocography stream (docs/paper.md), the
  0-1 loss's excess over its reference, ``sum_j (l_j - L_k*)``, is at most 2.2 to 4.3 ``sqrt(n)``
  for all 15 experts of :func:`mixed_pool`, whatever their step.
* ``OnlineSoftmax(rate="log-loss")``: ``c = (D^2 / (2 step) + G^2 step) / B`` with
  ``D = 2 radius``, ``G = sqrt(2) R``, ``R = sqrt(d clip^2 + 1)`` the largest norm of ``z`` and
  ``B = log C + 2 radius R`` the largest log loss on the ball: OGD's regret bound (Hazan 2016,
  Thm 3.1, with a step ``step / sqrt(j)``) on the log loss scaled into ``[0, 1]``, plus the Azuma
  term. It is a valid bound for that *surrogate* and not for the 0-1 loss. It grows as the step
  moves away from ``D / G`` (from 1 to 37 in :func:`mixed_pool` on cardiotocography) while the
  0-1 excess barely changes, so M-LCB, which trains the experts of smallest lower bound, spends
  its training on the badly tuned ones: at ``M = 1`` a third of it on the step-20 softmax, 13th
  of 15 (docs/paper.md). It was the default before; it is kept to show that.

Every expert is therefore flagged heuristic, and results mark M-LCB's certificate as not valid.

The reference ``L_k*`` (what regret is measured against, as for Python experts on real data) is
the mean 0-1 loss of expert ``k`` trained on every round ``0 .. T`` of the replication's stream,
over rounds ``1 .. T`` (``T`` the run's horizon): the best expert in hindsight
(:meth:`ClassifierFamily.in_hindsight`; one compiled pass over the pool, :mod:`mlcb.engine.hindsight`).

Examples
--------
>>> import mlcb
>>> from agents.classifiers import OnlinePerceptron, OnlineSoftmax
>>> pool = [OnlineSoftmax(step=0.5), OnlineSoftmax(features=(0, 1, 2)), OnlinePerceptron()]
>>> result = mlcb.simulate(env="mlcb/RealData-v0",
...                        env_params={"dataset": "breast-cancer", "order": "shuffle"},
...                        experts=pool, budget=1, horizon=400, replications=2, seed=0)
>>> result.metadata["settings"]["mlcb M=1"]["engine"]
'compiled'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from agents.family import CompiledFamily, overflowed_norm
from mlcb import validation
from mlcb.contracts import BuildContext
from mlcb.kernels import implements, smoothing
from mlcb.kernels.jit import kernel, njit
from mlcb.validation import InputError

#: ``OnlineSoftmax(rate=...)``: the rate's coefficient (module docstring).
RATE_KINDS = ("zero-one", "log-loss")

#: ``kind`` codes of the per-expert records.
SOFTMAX, PERCEPTRON = 0, 1

#: Per-expert parameters (record array, shape (K,)).
CLASSIFIER_DTYPE = np.dtype(
    [
        ("kind", np.int64),  # SOFTMAX or PERCEPTRON
        ("n_features", np.int64),  # d_k, its columns features[offset : offset + d_k]
        ("offset", np.int64),
        ("step", np.float64),  # softmax: eta_j = step / sqrt(j)
        ("radius", np.float64),  # softmax: the Frobenius ball; inf for the perceptron
        ("clip_at", np.float64),  # standardised values are clipped to [-clip_at, clip_at]
        ("rate_coef", np.float64),  # c of the rate
        ("rate_scale", np.float64),
    ],
    align=True,
)


class ClassifierParams(NamedTuple):
    experts: np.ndarray  # (K,) CLASSIFIER_DTYPE
    features: np.ndarray  # (sum d_k,) int64: every expert's columns, concatenated
    n_classes: int
    delta_prime: float
    smoothing: int


class ClassifierState(NamedTuple):
    weights: np.ndarray  # (K, C, 1 + d_max) current W, the bias in column 0
    weight_sums: np.ndarray  # (K, C, 1 + d_max) sum of the W used in training ("average" only)
    mean: np.ndarray  # (K, d_max) running mean of each column over the expert's training rows
    m2: np.ndarray  # (K, d_max) running sum of squared deviations (Welford)
    inverse_sd: np.ndarray  # (K, d_max) 1 / standard deviation (1 where it is 0)
    steps: np.ndarray  # (K,) int64 updates so far
    z: np.ndarray  # (K, 1 + d_max) train's scratch: the standardised row
    scores: np.ndarray  # (K, C) train's scratch: the scores, then the softmax's numerators


@kernel
def classifier_rate(rate_coef, rate_scale, n, delta_prime):
    """``min(n, rate_scale (rate_coef sqrt(n) + sqrt((n/2) log(2 n^2 / delta'))))``."""
    value = rate_coef * math.sqrt(n) + math.sqrt(0.5 * n * math.log(2.0 * n * n / delta_prime))
    return min(float(n), rate_scale * value)


@kernel
def _standardised(x, row, column, mean, inverse_sd, clip):
    """Column ``column`` of ``x[row]`` standardised by ``mean`` and ``inverse_sd``, clipped."""
    value = (x[row, column] - mean) * inverse_sd
    return min(max(value, -clip), clip)


@implements("train", ClassifierParams)
@kernel
def _train(params, state, env_params, env_state, k, t):
    expert = params.experts[k]
    row = env_state.row[0]
    x = env_params.x
    y = env_params.labels[row]
    d = expert.n_features
    offset = expert.offset
    j = state.steps[k] + 1
    z = state.z[k]
    z[0] = 1.0
    for i in range(d):
        z[i + 1] = _standardised(
            x, row, params.features[offset + i], state.mean[k, i], state.inverse_sd[k, i], expert.clip_at
        )
    weights = state.weights[k]
    scores = state.scores[k]
    predicted = 0
    best = -math.inf
    for c in range(params.n_classes):
        score = 0.0
        for i in range(d + 1):
            score += weights[c, i] * z[i]
        scores[c] = score
        if score > best:
            predicted = c
            best = score
    loss = 0.0 if predicted == y else 1.0
    if params.smoothing == smoothing.AVERAGE:
        for c in range(params.n_classes):
            for i in range(d + 1):
                state.weight_sums[k, c, i] += weights[c, i]
    if expert.kind == SOFTMAX:
        total = 0.0
        for c in range(params.n_classes):
            scores[c] = math.exp(scores[c] - best)
            total += scores[c]
        eta = expert.step / math.sqrt(j)
        squared = 0.0
        for c in range(params.n_classes):
            gradient = scores[c] / total - (1.0 if c == y else 0.0)
            for i in range(d + 1):
                w = weights[c, i] - eta * gradient * z[i]
                weights[c, i] = w
                squared += w * w
        norm = math.sqrt(squared)
        if norm > expert.radius:
            if norm == math.inf:  # a step so large that the squares overflow
                norm = overflowed_norm(weights[: params.n_classes, : d + 1])
            shrink = expert.radius / norm
            for c in range(params.n_classes):
                for i in range(d + 1):
                    weights[c, i] *= shrink
    elif predicted != y:
        for i in range(d + 1):
            weights[y, i] += z[i]
            weights[predicted, i] -= z[i]
    for i in range(d):
        value = x[row, params.features[offset + i]]
        change = value - state.mean[k, i]
        state.mean[k, i] += change / j
        state.m2[k, i] += change * (value - state.mean[k, i])
        variance = state.m2[k, i] / j
        state.inverse_sd[k, i] = 1.0 / math.sqrt(variance) if variance > 0.0 else 1.0
    state.steps[k] = j
    return loss, classifier_rate(expert.rate_coef, expert.rate_scale, j, params.delta_prime)


@implements("deploy", ClassifierParams)
@kernel
def _deploy(params, state, env_params, env_state, k, t, key, slot):
    expert = params.experts[k]
    row = env_state.row[0]
    x = env_params.x
    d = expert.n_features
    offset = expert.offset
    # The average of the past iterates predicts as their sum does (a positive multiple).
    averaged = params.smoothing == smoothing.AVERAGE and state.steps[k] > 0
    weights = state.weight_sums[k] if averaged else state.weights[k]
    predicted = 0
    best = -math.inf
    for c in range(params.n_classes):
        score = weights[c, 0]
        for i in range(d):
            column = params.features[offset + i]
            score += weights[c, i + 1] * _standardised(
                x, row, column, state.mean[k, i], state.inverse_sd[k, i], expert.clip_at
            )
        if score > best:
            predicted = c
            best = score
    loss = 0.0 if predicted == env_params.labels[row] else 1.0
    return loss, math.nan


@njit
def _tabulate(rate_coef, rate_scale, delta_prime, n):
    out = np.empty(n.shape[0])
    for i in range(n.shape[0]):
        out[i] = classifier_rate(rate_coef, rate_scale, n[i], delta_prime) if n[i] > 0 else 0.0
    return out


class ClassifierFamily(CompiledFamily):
    """The online classifiers (:class:`OnlineSoftmax`, :class:`OnlinePerceptron`, mixed in one
    pool) as an :class:`mlcb.contracts.ExpertFamily`; its one instance is :data:`CLASSIFIERS`.

    A pool of any size runs on ``mlcb/RealData-v0`` with ``warm_start = 1`` (one row per
    update). Every rate is heuristic on the 0-1 loss (module docstring).

    Examples
    --------
    >>> import envs
    >>> env = envs.make("mlcb/RealData-v0", dataset="breast-cancer")
    >>> CLASSIFIERS.heuristic([OnlineSoftmax(), OnlinePerceptron()], env)
    [True, True]
    """

    name = "classifiers"
    #: Smoothing wrappers (:mod:`mlcb.kernels.smoothing`), the default first.
    smoothing = ("last", "average")
    #: What regret is measured against (recorded in results, printed on figures).
    reference = "the best fixed expert (trained on every round)"

    #: How messages call one expert of the family.
    label = "classifier"

    def check_environment(self, experts: list, env: Any) -> None:
        """A ``ValueError`` unless ``env`` is a real-data stream with one row per round and every
        expert's columns exist."""
        table: Any = getattr(env, "table", None)
        if getattr(table, "labels", None) is None or not callable(getattr(env, "round_data", None)):
            raise InputError(
                f"experts: classifier experts need a real-data stream (mlcb/RealData-v0), got "
                f"{type(env).__name__}"
            )
        if getattr(env, "warm_start", 1) != 1:
            raise InputError(
                f"experts: classifier experts learn one row per update; use warm_start=1 (got "
                f"{env.warm_start})"
            )
        n_columns = table.x.shape[1]
        for k, expert in enumerate(experts):
            if getattr(expert, "features", None) is not None and max(expert.features) >= n_columns:
                raise InputError(
                    f"experts[{k}]: features must be column indices in [0, {n_columns}) of "
                    f"{env.dataset!r}, got {expert.features!r}"
                )

    def optimal_losses(self, experts: list, env: Any, env_params: Any) -> np.ndarray:
        """0 for every expert, a lower bound of every loss: the reference is the best expert in
        hindsight (:meth:`in_hindsight`), which the engine computes."""
        return np.zeros(len(experts))

    def in_hindsight(self, experts: list, env: Any) -> list[bool]:
        """Every expert: ``L_k*`` is its mean 0-1 loss over rounds ``1 .. T`` when trained on every
        round ``0 .. T`` of the replication's stream (:mod:`mlcb.engine.hindsight`, one compiled
        pass over the pool)."""
        return [True] * len(experts)

    def rate_input(self, expert: Any, env: Any, k: int) -> float:
        """The rate coefficient ``c`` of ``expert`` on ``env`` (module docstring): what its
        ``rate_function`` reads."""
        return _coefficients([expert], env)[0]

    def build_pool(self, context: BuildContext) -> tuple[ClassifierParams, ClassifierState]:
        """Kernel parameters and fresh state of the pool ``context.experts`` on one replication (the
        learners are deterministic: the keys, seed and replication are not read)."""
        return _build_pool(list(context.experts), context.env, context.delta, context.smoothing)


#: The classifier family (:class:`ClassifierFamily`).
CLASSIFIERS = ClassifierFamily()


class _Classifier:
    """What both classifier specifications share: the rate, exactly as the kernels compute it, and
    the flag that it is a heuristic on the 0-1 loss."""

    #: No rate bounds the 0-1 loss's regret against the reference (module docstring).
    heuristic: ClassVar[bool] = True
    #: The parameters that must be ``> 0``.
    _positive: ClassVar[tuple[str, ...]]
    features: tuple | None
    rate_scale: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", _check_features(self.features))
        for name in self._positive:
            validation.positive(name, getattr(self, name))
        validation.choice("rate", getattr(self, "rate", "zero-one"), RATE_KINDS)

    def rate_function(self, n: Any, coefficient: float, delta_prime: float) -> np.ndarray:
        """``U(n, delta')`` at the counts ``n`` for the rate coefficient ``coefficient`` (0 where
        ``n <= 0``)."""
        counts = np.atleast_1d(np.asarray(n, dtype=np.int64))
        return _tabulate(float(coefficient), float(self.rate_scale), float(delta_prime), counts)


def _check_features(features: Any) -> tuple[int, ...] | None:
    if features is None:
        return None
    try:
        columns = tuple(features)
    except TypeError:
        columns = ()
    if not columns or not all(
        isinstance(c, (int, np.integer)) and not isinstance(c, bool) and c >= 0 for c in columns
    ):
        raise InputError(
            f"features must be None or a non-empty list of column indices >= 0, got {features!r}"
        )
    if len(set(columns)) != len(columns):
        raise InputError(f"features must be distinct column indices, got {features!r}")
    return tuple(int(c) for c in columns)


@dataclass(frozen=True)
class OnlineSoftmax(_Classifier):
    """Multinomial softmax regression trained by projected OGD on the log loss.

    Parameters
    ----------
    features : tuple of int or None
        The columns the expert sees (indices into the data set's features); ``None``: all.
    step : float
        ``> 0``: the step ``eta_j = step / sqrt(j)`` at the expert's ``j``-th update.
    radius : float
        ``> 0``: the weights are projected onto the Frobenius ball of this radius.
    clip : float
        ``> 0``: standardised values are clipped to ``[-clip, clip]``.
    rate_scale : float
        ``> 0``: multiplier of the rate (module docstring).
    rate : {"zero-one", "log-loss"}
        The rate's coefficient ``c`` (module docstring): ``"zero-one"`` (default) 1, as for every
        classifier; ``"log-loss"`` the OGD bound on the log loss, which depends on ``step``.

    Examples
    --------
    >>> OnlineSoftmax(features=[0, 2], step=0.1).features
    (0, 2)
    """

    features: tuple | None = None
    step: float = 0.5
    radius: float = 10.0
    clip: float = 4.0
    rate_scale: float = 1.0
    rate: str = "zero-one"

    family: ClassVar[ClassifierFamily] = CLASSIFIERS
    kind: ClassVar[int] = SOFTMAX
    _positive: ClassVar[tuple[str, ...]] = ("step", "radius", "clip", "rate_scale")


@dataclass(frozen=True)
class OnlinePerceptron(_Classifier):
    """The multiclass perceptron (a mistake moves the true class's row towards ``z`` and the
    predicted one's away).

    Parameters
    ----------
    features : tuple of int or None
        The columns the expert sees; ``None``: all.
    clip : float
        ``> 0``: standardised values are clipped to ``[-clip, clip]``.
    rate_scale : float
        ``> 0``: multiplier of the heuristic rate (module docstring).

    Notes
    -----
    The perceptron has no step size: from ``W = 0`` its predictions do not change when every
    update is scaled by the same factor.

    Examples
    --------
    >>> OnlinePerceptron().features is None
    True
    """

    features: tuple | None = None
    clip: float = 4.0
    rate_scale: float = 1.0

    family: ClassVar[ClassifierFamily] = CLASSIFIERS
    kind: ClassVar[int] = PERCEPTRON
    _positive: ClassVar[tuple[str, ...]] = ("clip", "rate_scale")


def _columns(expert: Any, n_columns: int) -> tuple[int, ...]:
    return tuple(range(n_columns)) if expert.features is None else expert.features


def _coefficients(experts: list, env: Any) -> list[float]:
    """The rate coefficient ``c`` of every expert on ``env`` (module docstring)."""
    n_columns = env.table.x.shape[1]
    n_classes = len(env.table.classes)
    out = []
    for expert in experts:
        if expert.kind == PERCEPTRON or expert.rate == "zero-one":
            out.append(1.0)
            continue
        norm = math.sqrt(len(_columns(expert, n_columns)) * expert.clip**2 + 1.0)
        diameter, lipschitz = 2.0 * expert.radius, math.sqrt(2.0) * norm
        largest = math.log(n_classes) + 2.0 * expert.radius * norm
        out.append((diameter**2 / (2.0 * expert.step) + lipschitz**2 * expert.step) / largest)
    return out


def _build_pool(
    experts: list, env: Any, delta: float, smoothing_name: str
) -> tuple[ClassifierParams, ClassifierState]:
    n_experts = len(experts)
    n_columns = env.table.x.shape[1]
    n_classes = len(env.table.classes)
    columns = [_columns(e, n_columns) for e in experts]
    d_max = max(len(c) for c in columns)
    records = np.zeros(n_experts, dtype=CLASSIFIER_DTYPE)
    offset = 0
    for k, (expert, coefficient) in enumerate(zip(experts, _coefficients(experts, env))):
        softmax = expert.kind == SOFTMAX
        records[k] = (
            expert.kind,
            len(columns[k]),
            offset,
            expert.step if softmax else 1.0,
            expert.radius if softmax else math.inf,
            expert.clip,
            coefficient,
            expert.rate_scale,
        )
        offset += len(columns[k])
    params = ClassifierParams(
        records,
        np.array([c for cs in columns for c in cs], dtype=np.int64),
        n_classes,
        float(delta / (2.0 * n_experts)),
        smoothing.code(smoothing_name, CLASSIFIERS.smoothing),
    )
    state = ClassifierState(
        weights=np.zeros((n_experts, n_classes, d_max + 1)),
        weight_sums=np.zeros((n_experts, n_classes, d_max + 1)),
        mean=np.zeros((n_experts, d_max)),
        m2=np.zeros((n_experts, d_max)),
        inverse_sd=np.ones((n_experts, d_max)),
        steps=np.zeros(n_experts, dtype=np.int64),
        z=np.zeros((n_experts, d_max + 1)),
        scores=np.zeros((n_experts, n_classes)),
    )
    return params, state


#: The most experts :func:`mixed_pool` builds.
MIXED_POOL_SIZE = 15


#: The fewest feature columns :func:`mixed_pool` builds its pool on (it splits them in halves,
#: thirds and pairs).
MIN_FEATURES = 3


def mixed_pool(
    n_features: int, size: int = MIXED_POOL_SIZE, rate_scale: float = 1.0, rate: str = "zero-one"
) -> list:
    """A fixed, heterogeneous pool of ``size`` online classifiers over ``n_features`` columns: the
    paper's real-data experts (softmax and perceptron learners over different column subsets and
    step sizes).

    In order, with ``A`` all columns, ``H1``/``H2`` the first/second half, ``E``/``O`` the even/odd
    positions, ``F3`` the first third and ``S3`` every third column:

    ====  ==========  =======  ====================  ====  ==========  =======  ==================
    k     model       columns  step (radius)          k     model       columns  step (radius)
    ====  ==========  =======  ====================  ====  ==========  =======  ==================
    0     softmax     H1       2                      8     perceptron  H1
    1     perceptron  A                               9     softmax     A        20
    2     softmax     A        0.5                    10    softmax     F3       2
    3     softmax     H2       2                      11    perceptron  H2
    4     perceptron  E                               12    softmax     S3       0.5
    5     softmax     A        2                      13    softmax     A        5 (30)
    6     softmax     A        0.05                   14    perceptron  O
    7     softmax     O        0.5
    ====  ==========  =======  ====================  ====  ==========  =======  ==================

    The strongest learners (softmax on every column with step 2, or 5 with radius 30) are neither
    first nor last: M-LCB breaks ties by the smaller index, and a pool that puts its best expert
    first would favour it. The first 7 and the first 10 are the smaller pools of the paper's
    scaling run (nested, so a larger pool's best expert is never worse).

    Parameters
    ----------
    n_features : int
        ``>= 3``: the data set's columns.
    size : int
        ``1 <= size <= 15``: the first ``size`` experts.
    rate_scale : float
        ``> 0``: every expert's ``rate_scale``.
    rate : {"zero-one", "log-loss"}
        The softmax members' ``rate`` (the perceptrons' coefficient is 1 either way).

    Examples
    --------
    >>> pool = mixed_pool(18, 7)
    >>> [type(e).__name__ for e in pool[:3]], pool[0].features
    (['OnlineSoftmax', 'OnlinePerceptron', 'OnlineSoftmax'], (0, 1, 2, 3, 4, 5, 6, 7, 8))
    """
    validation.integer("n_features", n_features, minimum=MIN_FEATURES)
    validation.integer("size", size, maximum=MIXED_POOL_SIZE)
    validation.positive("rate_scale", rate_scale)
    validation.choice("rate", rate, RATE_KINDS)
    columns = tuple(range(n_features))
    first, second = columns[: n_features // 2], columns[n_features // 2 :]
    even, odd, third, every_third = columns[0::2], columns[1::2], columns[: n_features // 3], columns[0::3]

    def softmax(features: tuple | None, step: float, radius: float = 10.0) -> OnlineSoftmax:
        return OnlineSoftmax(features=features, step=step, radius=radius, rate_scale=rate_scale, rate=rate)

    def perceptron(features: tuple | None) -> OnlinePerceptron:
        return OnlinePerceptron(features=features, rate_scale=rate_scale)

    pool = [
        softmax(first, 2.0),
        perceptron(None),
        softmax(None, 0.5),
        softmax(second, 2.0),
        perceptron(even),
        softmax(None, 2.0),
        softmax(None, 0.05),
        softmax(odd, 0.5),
        perceptron(first),
        softmax(None, 20.0),
        softmax(third, 2.0),
        perceptron(second),
        softmax(every_third, 0.5),
        softmax(None, 5.0, radius=30.0),
        perceptron(odd),
    ]
    return pool[:size]
