"""A clustered stream where capacity and routing matter: the task of mixture-of-experts pools.

Each round ``x_t`` is drawn from a mixture of ``C`` Gaussian clusters in ``R^d`` (a cluster chosen
uniformly, then ``x = mu_c + spread * N(0, I)``). The target depends on the *region* of ``x``:
``x`` belongs to the cluster whose centre is nearest (``c(x) = argmin_c |x - mu_c|``), and that
region has its own random small network ``g_c(x) = W2_c^T tanh(W1_c^T (x - mu_c) + b1_c) + b2_c``.
Because the region is a function of ``x``, the target is a deterministic function of ``x`` and the
Bayes predictor is known exactly.

``task="regression"``
    ``y = f(x) + sigma Z`` with ``f(x) = tanh(g_{c(x)}(x))`` in ``(-1, 1)`` and ``Z ~ N(0, 1)``.
    Loss of a prediction ``y_hat``: the clipped, scaled squared error
    ``min(1, ((y_hat - y) / B)^2)`` with the fixed scale ``B = 1`` (half the width of the target's
    range, so that the clipping only bites on bad predictions or extreme noise).
``task="classification"``
    ``n_classes`` classes; the clean label is ``argmax g_{c(x)}(x)``, replaced by a uniformly drawn
    class with probability ``label_noise``. A prediction is a probability vector ``q`` and its loss
    the half Brier score ``(1/2) sum_j (q_j - [y = j])^2``, which lies in ``[0, 1]`` by itself.

The reference loss (:meth:`ClusteredEnv.optimal_loss`) is the Bayes loss of the generating
process through the same transform: ``E min(1, (sigma Z / B)^2)`` (regression, the noise floor in
closed form) or ``(1 - sum_j p_j^2) / 2`` with ``p`` the true label distribution
(classification). No network in a pool can beat it, so regret measured against it is an upper
bound of the regret against the best pool member (whose own least loss is unknown for networks).

Expected losses of a decision are estimated on a fixed held-out sample of ``x`` drawn per
replication (``holdout`` points), with the expectation over the label noise computed exactly at
each point (:func:`expected_losses`).

``xi_t`` comes from the counter-based stream of uniforms at round ``t``: the cluster from slot
0, the normals of ``x`` from slots ``2 .. 2d + 1``, the regression noise from slots ``2d + 2`` and
``2d + 3`` and, for classification, the noise coin and the noisy class from slots ``2d + 4`` and
``2d + 6``: every policy meets the same stream.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, cast

import gymnasium as gym
import numpy as np

from envs._stream import FeatureRound, FeatureStreamEnv
from mlcb import validation
from mlcb.kernels import implements
from mlcb.kernels.jit import kernel, njit
from mlcb.kernels.random import normal, uniform
from mlcb.kernels.seeding import instance_rng, stream_keys
from mlcb.validation import InputError, shown

REGRESSION, CLASSIFICATION = 0, 1
TASKS = {"regression": REGRESSION, "classification": CLASSIFICATION}
#: The fixed scale ``B`` of the regression loss ``min(1, ((y_hat - y) / B)^2)``.
LOSS_SCALE = 1.0


class ClusteredEnvParams(NamedTuple):
    means: np.ndarray  # (C, d) cluster centres
    w1: np.ndarray  # (C, d, h) the regions' target networks
    b1: np.ndarray  # (C, h)
    w2: np.ndarray  # (C, h, O)
    b2: np.ndarray  # (C, O)
    spread: float
    noise: float  # sigma (regression)
    label_noise: float  # classification
    task: int
    scale: float  # B
    key: np.uint64
    holdout_x: np.ndarray  # (N, d) the held-out sample of x
    holdout_target: np.ndarray  # (N, O): f(x) (regression) or the label distribution p(x)


class ClusteredEnvState(NamedTuple):
    x: np.ndarray  # (d,) the round's features
    y: np.ndarray  # (1,) the round's target (the class index as a float for classification)
    logits: np.ndarray  # (O,) scratch: the round's g_{c(x)}(x)


@kernel
def _logits(params, x, out):
    """``g_{c(x)}(x)`` into ``out`` (O,), the region being that of the nearest centre."""
    n_clusters, d = params.means.shape
    best = 0
    best_distance = math.inf
    for c in range(n_clusters):
        distance = 0.0
        for i in range(d):
            diff = x[i] - params.means[c, i]
            distance += diff * diff
        if distance < best_distance:
            best_distance = distance
            best = c
    hidden = params.w1.shape[2]
    for o in range(out.shape[0]):
        out[o] = params.b2[best, o]
    for j in range(hidden):
        z = params.b1[best, j]
        for i in range(d):
            z += (x[i] - params.means[best, i]) * params.w1[best, i, j]
        a = math.tanh(z)
        for o in range(out.shape[0]):
            out[o] += a * params.w2[best, j, o]


@njit
def _logits_rows(params, x, out):
    """:func:`_logits` of every row of ``x`` into the rows of ``out``, in one compiled loop (a
    call per row from Python made a large held-out sample slow to build)."""
    for n in range(x.shape[0]):
        _logits(params, x[n], out[n])


@kernel
def _argmax(values):
    best = 0
    for j in range(1, values.shape[0]):
        if values[j] > values[best]:
            best = j
    return best


@implements("begin_round", ClusteredEnvParams)
@kernel
def _begin_round(params, state, t):
    n_clusters, d = params.means.shape
    c = min(int(uniform(params.key, t, 0) * n_clusters), n_clusters - 1)
    for i in range(d):
        state.x[i] = params.means[c, i] + params.spread * normal(params.key, t, 1 + i)
    out = state.logits
    _logits(params, state.x, out)
    if params.task == REGRESSION:
        state.y[0] = math.tanh(out[0]) + params.noise * normal(params.key, t, d + 1)
    else:
        label = _argmax(out)
        if uniform(params.key, t, 2 * (d + 2)) < params.label_noise:
            n = out.shape[0]
            label = min(int(uniform(params.key, t, 2 * (d + 3)) * n), n - 1)
        state.y[0] = label


def _normal_cdf(z: np.ndarray) -> np.ndarray:
    from scipy.special import ndtr

    return ndtr(z)


def regression_expected_loss(error: Any, noise: float, scale: float) -> Any:
    """``E_Z min(1, ((error - noise Z) / scale)^2)`` for ``Z ~ N(0, 1)``, elementwise, exact.

    ``error`` is ``y_hat - f(x)`` (an array). With ``l = (error - scale) / noise`` and
    ``h = (error + scale) / noise`` the squared error is below ``scale^2`` exactly for ``Z`` in
    ``(l, h)``; the truncated moments of the normal give the expectation in closed form.
    """
    a = np.asarray(error, dtype=np.float64)
    if noise == 0:
        return np.minimum(1.0, (a / scale) ** 2)
    low, high = (a - scale) / noise, (a + scale) / noise
    phi_low, phi_high = np.exp(-0.5 * low**2), np.exp(-0.5 * high**2)
    phi_low, phi_high = phi_low / math.sqrt(2 * math.pi), phi_high / math.sqrt(2 * math.pi)
    inside = _normal_cdf(high) - _normal_cdf(low)
    first = phi_low - phi_high  # E[Z; l < Z < h]
    second = inside + low * phi_low - high * phi_high  # E[Z^2; l < Z < h]
    within = a * a * inside - 2.0 * a * noise * first + noise * noise * second
    return within / (scale * scale) + (1.0 - inside)


def expected_losses(params: ClusteredEnvParams, predictions: Any) -> np.ndarray:
    """Expected loss, over the label noise, of ``predictions`` at the held-out points.

    ``predictions`` has shape (N,) or (N, 1) for regression (``y_hat``) and (N, n_classes) for
    classification (probability vectors); the mean of the result estimates the decision's
    expected loss ``L(u)``.
    """
    q = np.asarray(predictions, dtype=np.float64)
    if params.task == REGRESSION:
        error = q.reshape(-1) - params.holdout_target[:, 0]
        return regression_expected_loss(error, params.noise, params.scale)
    p = params.holdout_target
    return 0.5 * ((q * q).sum(axis=1) - 2.0 * (p * q).sum(axis=1) + 1.0)


def bayes_loss(task: int, noise: float, scale: float, label_noise: float, n_classes: int) -> float:
    """The Bayes loss of the stream through its loss transform (see the module docstring)."""
    if task == REGRESSION:
        return float(regression_expected_loss(np.zeros(1), noise, scale)[0])
    hit = 1.0 - label_noise + label_noise / n_classes
    miss = label_noise / n_classes
    return 0.5 * (1.0 - hit * hit - (n_classes - 1) * miss * miss)


class ClusteredRound(FeatureRound):
    """``xi_t = (x_t, y_t)`` as a Python expert sees it (:meth:`ClusteredEnv.round_data`).

    ``x`` (shape (d,), a copy), ``y`` (a float; the class index for classification), ``task``
    (``"regression"`` or ``"classification"``), ``loss(prediction)`` (the stream's loss) and
    ``params`` (the replication's parameters, for the held-out sample ``params.holdout_x``, whose
    expected losses :func:`expected_losses` gives).
    """

    __slots__ = ()
    params: ClusteredEnvParams

    @property
    def task(self) -> str:
        return "regression" if self.params.task == REGRESSION else "classification"

    def loss(self, prediction: Any) -> float:
        return stream_loss(self.params, prediction, self.y)


def stream_loss(params: ClusteredEnvParams, prediction: Any, y: float) -> float:
    """The loss of ``prediction`` against the target ``y``: clipped scaled square error
    (regression) or half Brier score (classification)."""
    q = np.asarray(prediction, dtype=np.float64).reshape(-1)
    if params.task == REGRESSION:
        if q.shape != (1,):
            raise InputError(f"prediction must be one number (the regression's y_hat), got shape {q.shape}")
        return float(min(1.0, ((q[0] - y) / params.scale) ** 2))
    n_classes = params.holdout_target.shape[1]
    if q.shape[0] != n_classes:
        raise InputError(
            f"prediction must be a probability vector of {n_classes} classes, got shape {q.shape}"
        )
    # Only a probability vector keeps the half Brier score in [0, 1]: scores or logits would
    # give a loss of any size (or nan), and rewards out of range. (The tolerance lets a float32
    # softmax through; the clipping at 1 absorbs what it adds.)
    if not (np.all(q >= 0.0) and q.sum() <= 1.0 + 1e-6):
        raise InputError(
            f"prediction must be a probability vector of {n_classes} classes (entries >= 0 "
            f"summing to at most 1), got {shown(prediction)}"
        )
    onehot = np.zeros(q.shape[0])
    onehot[int(y)] = 1.0
    return float(min(1.0, 0.5 * ((q - onehot) ** 2).sum()))


def _positive_int(name: str, value: Any, low: int) -> int:
    return validation.integer(name, value, minimum=low)


def _number(name: str, value: Any, low: float, high: float = math.inf, open_low: bool = False) -> float:
    ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (value > low if open_low else value >= low) and value <= high
    if not ok:
        bracket = "(" if open_low else "["
        raise InputError(f"{name} must be a number in {bracket}{low}, {high}], got {value!r}")
    return float(value)


class ClusteredEnv(FeatureStreamEnv):
    """Clustered regression or classification stream (see the module docstring), as a Gymnasium
    environment.

    Parameters
    ----------
    task : str
        ``"regression"`` (default) or ``"classification"``.
    dim : int
        ``d >= 1``, the dimension of ``x`` (4).
    clusters : int
        ``C >= 1``, Gaussian clusters, each a region with its own target network (4).
    separation : float
        Norm of the cluster centres (drawn as random directions times ``separation``; 3).
    spread : float
        Standard deviation of ``x`` around its centre (0.6).
    hidden : int
        Width of the regions' target networks (8).
    target_gain : float
        Standard deviation of the target networks' weights (1.5): larger, more wiggly targets.
    noise : float
        ``sigma`` of the regression noise (0.1).
    n_classes : int
        Classes of the classification variant (3).
    label_noise : float
        Probability in ``[0, 1]`` that a classification label is replaced by a uniform class (0.1).
    holdout : int
        Size of the held-out sample on which expected losses are estimated (256).

    Notes
    -----
    The engine and the expert families read (:class:`mlcb.contracts.Environment`):

    ``n_experts``
        ``None``: any number of experts can face the stream.
    ``build(seed, replication) -> (params, state)``
        One replication's clusters, target networks and held-out sample.
    ``optimal_loss(params, expert) -> float``
        The Bayes loss of the stream (the same for every expert), see :func:`bayes_loss`.
    ``round_data(params, state, t, expert) -> ClusteredRound``
        ``(x_t, y_t)``, the same for every expert.
    ``input_dim``, ``output_dim``
        The size of ``x`` and of a prediction (1 for regression, ``n_classes`` otherwise).

    The Gymnasium interface predicts one round at a time: the observation is ``x_t``, the action
    a prediction (shape (1,); for classification a probability vector of shape (n_classes,), in
    the action space ``Box(0, 1)``, whose other points are read as weights over the classes and
    normalised), the reward minus the loss, and ``info`` holds ``y_t``.
    ``reset(seed=s, options={"replication": r})`` reproduces replication ``r`` of a simulation
    with seed ``s``.
    """

    metadata: dict[str, Any] = {"render_modes": []}
    n_experts = None

    def __init__(
        self,
        task: str = "regression",
        dim: int = 4,
        clusters: int = 4,
        separation: float = 3.0,
        spread: float = 0.6,
        hidden: int = 8,
        target_gain: float = 1.5,
        noise: float = 0.1,
        n_classes: int = 3,
        label_noise: float = 0.1,
        holdout: int = 256,
    ) -> None:
        if task not in TASKS:
            raise InputError(f"task must be one of {sorted(TASKS)}, got {task!r}")
        self.task = TASKS[task]
        self.dim = _positive_int("dim", dim, 1)
        self.clusters = _positive_int("clusters", clusters, 1)
        self.hidden = _positive_int("hidden", hidden, 1)
        self.n_classes = _positive_int("n_classes", n_classes, 2)
        self.holdout = _positive_int("holdout", holdout, 1)
        self.separation = _number("separation", separation, 0.0)
        self.spread = _number("spread", spread, 0.0, open_low=True)
        self.target_gain = _number("target_gain", target_gain, 0.0, open_low=True)
        self.noise = _number("noise", noise, 0.0)
        self.label_noise = _number("label_noise", label_noise, 0.0, 1.0)
        self.scale = LOSS_SCALE
        self.input_dim = self.dim
        self.output_dim = 1 if self.task == REGRESSION else self.n_classes
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (self.dim,), dtype=np.float64)
        # (classification: probability vectors, and weights over the classes that step normalises)
        low, high = (-np.inf, np.inf) if self.task == REGRESSION else (0.0, 1.0)
        self.action_space = gym.spaces.Box(low, high, (self.output_dim,), dtype=np.float64)
        self._params: ClusteredEnvParams | None = None
        self._state: ClusteredEnvState | None = None
        self._round = 0

    @staticmethod
    def held_numbers(params: dict[str, Any]) -> int | None:
        """The numbers the arrays of one replication hold (:meth:`build`) for these parameters
        (defaults filled in), so that a setting sized beyond memory is refused before any work
        (:func:`mlcb.engine.sizes.check_environment_size`); ``None`` when a size is not a positive
        integer (the constructor names it). A whole number written as a float (``holdout =
        1e9`` in TOML) counts as the integer it is, as the constructor reads it."""
        given = [params.get(name) for name in ("clusters", "dim", "hidden", "n_classes", "holdout")]
        sizes = [v for v in map(validation.whole_number, given) if v is not None and v >= 1]
        if len(sizes) != len(given):
            return None
        c, d, h, n_classes, holdout = sizes
        o = 1 if params.get("task") == "regression" else n_classes
        return c * d + c * d * h + c * h + c * h * o + c * o + holdout * (d + o)

    # --- what the engine uses -------------------------------------------------------------
    def build(
        self, seed: int, replication: int, horizon: int
    ) -> tuple[ClusteredEnvParams, ClusteredEnvState]:
        """Kernel parameters and state of replication ``replication`` (any ``horizon``: the stream
        does not depend on it)."""
        rng = instance_rng(seed, replication)
        c, d, h, o = self.clusters, self.dim, self.hidden, self.output_dim
        directions = rng.standard_normal((c, d))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        means = self.separation * directions
        gain = self.target_gain
        w1 = rng.standard_normal((c, d, h)) * gain / math.sqrt(d * self.spread**2 + 1e-12)
        b1 = rng.standard_normal((c, h)) * 0.5
        w2 = rng.standard_normal((c, h, o)) * gain / math.sqrt(h)
        b2 = rng.standard_normal((c, o)) * 0.5
        which = rng.integers(0, c, self.holdout)
        holdout_x = means[which] + self.spread * rng.standard_normal((self.holdout, d))
        params = ClusteredEnvParams(
            means=np.ascontiguousarray(means),
            w1=np.ascontiguousarray(w1),
            b1=b1,
            w2=np.ascontiguousarray(w2),
            b2=b2,
            spread=self.spread,
            noise=self.noise,
            label_noise=self.label_noise,
            task=self.task,
            scale=self.scale,
            key=stream_keys(seed, replication, 0).env,
            holdout_x=np.ascontiguousarray(holdout_x),
            holdout_target=np.zeros((self.holdout, o)),
        )
        targets = self.targets(params, holdout_x)
        params = params._replace(holdout_target=np.ascontiguousarray(targets))
        return params, ClusteredEnvState(np.zeros(d), np.zeros(1), np.zeros(o))

    def targets(self, params: ClusteredEnvParams, x: Any) -> np.ndarray:
        """``f(x)`` (N, 1) for regression, the label distribution ``p(x)`` (N, n_classes) for
        classification, at the rows of ``x``."""
        x = np.ascontiguousarray(np.atleast_2d(np.asarray(x, dtype=np.float64)))
        logits = np.empty((x.shape[0], self.output_dim))
        _logits_rows(params, x, logits)
        if self.task == REGRESSION:
            return np.tanh(logits)
        p = np.full(logits.shape, self.label_noise / self.n_classes)
        p[np.arange(x.shape[0]), logits.argmax(axis=1)] += 1.0 - self.label_noise
        return p

    def optimal_loss(self, params: ClusteredEnvParams, expert: int) -> float:
        """The Bayes loss of the stream through its loss transform (:func:`bayes_loss`)."""
        return bayes_loss(self.task, self.noise, self.scale, self.label_noise, self.n_classes)

    def round_data(self, params: ClusteredEnvParams, state: ClusteredEnvState, t: int, expert: int):
        """``(x_t, y_t)`` of round ``t`` (after ``begin_round``), as a :class:`ClusteredRound`."""
        return ClusteredRound(params, state, t)

    # --- Gymnasium interface (reset / step from FeatureStreamEnv) ------------------------
    _begin_round = staticmethod(_begin_round)

    def action_loss(self, action, y: float) -> float:
        """The stream loss of a prediction (:func:`stream_loss`); for classification, weights
        >= 0 that do not sum to 1 (any other point of the action space) are normalised first."""
        if self.task == CLASSIFICATION:
            q = np.asarray(action, dtype=np.float64).reshape(-1)
            total = float(q.sum())
            if np.all(q >= 0.0) and total > 0.0 and abs(total - 1.0) > 1e-6:
                action = q / total
        return stream_loss(cast(ClusteredEnvParams, self._params), action, y)  # set by reset
