"""The GLM stream of the paper's parametric experiment (docs/presets.md, "glm").

Each round ``x_t`` is uniform on the sphere of radius ``R_x`` in ``R^d`` and
``y_t = f_target(w* . x_t) + N(0, sigma^2)``; ``w*`` is a random direction with a norm drawn
uniformly from ``target_norm`` (per replication). A decision is a pair (link ``f``, weights ``w``)
predicting ``f(w . x)``; its loss is the normalised square loss
``min(1, (f(w . x) - y)^2 / B^2)`` with one scale ``B`` for all ten links
(:func:`envs.glm_math.loss_scale`, with a noise margin of 10 sigma so that the clipping at 1
practically never happens).

Expected losses are exact up to quadrature: ``(w . x, w* . x)`` is a two-dimensional projection of
the uniform law on the sphere, integrated with :func:`envs.glm_math.plane_quadrature`;
``L_k* = min_{||w|| <= r} L(w)`` by :func:`envs.glm_math.optimal_loss`.

``xi_t`` is drawn from the counter-based stream: ``x_t`` from the normals at ``(t, 0 .. d-1)``,
the noise at ``(t, d)``, so every policy sees the same stream.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from envs import glm_math
from envs._stream import FeatureRound, FeatureStreamEnv
from envs.links import LINK_NAMES, link_index, link_value
from mlcb import validation
from mlcb.kernels import implements
from mlcb.kernels.jit import kernel
from mlcb.kernels.random import normal
from mlcb.kernels.seeding import instance_rng, stream_keys
from mlcb.validation import InputError


class GLMEnvParams(NamedTuple):
    direction: np.ndarray  # (d,) unit vector w* / |w*|
    target_norm: float  # |w*|
    target_link: int
    radius: float  # R_x
    noise: float  # sigma
    scale: float  # B
    key: np.uint64
    nodes: np.ndarray  # (Q, 3) quadrature nodes (x1, x2) and weights of (x . e1, x . e2)
    target_values: np.ndarray  # (Q,) f_target(|w*| x1_q)
    weight_radius: float = 1.0  # r, the radius of the decisions the scale B is sized for


class GLMEnvState(NamedTuple):
    x: np.ndarray  # (d,) the round's features
    y: np.ndarray  # (1,) the round's target


@implements("begin_round", GLMEnvParams)
@kernel
def _begin_round(params, state, t):
    d = state.x.shape[0]
    squared = 0.0
    for i in range(d):
        g = normal(params.key, t, i)
        state.x[i] = g
        squared += g * g
    scale = params.radius / math.sqrt(squared)
    inner = 0.0
    for i in range(d):
        state.x[i] *= scale
        inner += state.x[i] * params.direction[i]
    state.y[0] = link_value(params.target_link, params.target_norm * inner) + params.noise * normal(
        params.key, t, d
    )


@kernel
def square_loss(params, prediction, y):
    """``min(1, (prediction - y)^2 / B^2)``."""
    residual = (prediction - y) / params.scale
    return min(1.0, residual * residual)


@kernel
def expected_loss(params, link, along, across):
    """``L(w)`` of the decision ``(link, w)`` with ``along = w . e1``, ``across = |w - along e1|``."""
    total = 0.0
    for q in range(params.nodes.shape[0]):
        node = params.nodes[q]
        residual = link_value(link, along * node[0] + across * node[1]) - params.target_values[q]
        total += node[2] * residual * residual
    scale2 = params.scale * params.scale
    return min(1.0, total / scale2 + params.noise * params.noise / scale2)


@functools.lru_cache(maxsize=8192)
def _optimal_loss(instance: tuple, link: int, target_norm: float, radius: float) -> float:
    """Cached :func:`envs.glm_math.optimal_loss` (the same instance recurs across budgets)."""
    dim, radius_x, noise, target_link, quadrature, scale = instance
    nodes = glm_math.plane_quadrature(dim, radius_x, *quadrature)
    value, _, _ = glm_math.optimal_loss(link, target_link, target_norm, radius, nodes, noise, scale)
    return float(value)


@functools.lru_cache(maxsize=1024)
def _lipschitz(link: int, bound: float) -> float:
    """Cached :func:`envs.glm_math.lipschitz` (asked for every expert of every replication)."""
    return float(glm_math.lipschitz(link, bound))


@functools.lru_cache(maxsize=1024)
def _is_convex(link: int, bound: float, low: float, high: float) -> bool:
    """Cached :func:`envs.glm_math.is_convex_loss`."""
    return bool(glm_math.is_convex_loss(link, bound, low, high))


#: Why a decision beyond the stream's ``weight_radius`` is refused, and what to do.
_BEYOND = (
    "beyond it losses are clipped at 1, which the exact expected loss leaves out, so that it "
    "would overstate the loss (and pseudo-regret); give env_params a larger weight_radius"
)


def _decision_loss(params: GLMEnvParams, link: str | int, weights: Any) -> float:
    """``L(w)`` of the decision ``(link, w)`` on the instance ``params``."""
    w = np.asarray(weights, dtype=float).reshape(-1)
    if w.shape != params.direction.shape:
        raise InputError(f"weights must have shape {params.direction.shape}, got {np.shape(weights)}")
    norm = float(np.linalg.norm(w))
    if not norm <= params.weight_radius * (1.0 + 1e-9):
        raise InputError(
            f"weights must have a norm of at most weight_radius = {params.weight_radius:g} (the ball "
            f"the stream's loss scale is sized for), got {norm:g}; {_BEYOND}"
        )
    along = float(w @ params.direction)
    across = math.sqrt(max(float(w @ w) - along * along, 0.0))
    return float(expected_loss(params, link_index(link), along, across))


class GLMRound(FeatureRound):
    """``xi_t = (x_t, y_t)`` as a Python expert sees it (:meth:`GLMEnv.round_data`).

    ``x``
        The round's features, a copy (shape (d,)).
    ``y``
        The round's target.
    ``loss(prediction) -> float``
        The normalised square loss ``min(1, (prediction - y)^2 / B^2)``, the engine's own.
    ``expected_loss(link, weights) -> float``
        ``L(w)`` of predicting ``f_link(w . x)``, on this replication (exact up to quadrature).
    ``params``
        The replication's parameters.
    """

    __slots__ = ()
    params: GLMEnvParams

    def loss(self, prediction: float) -> float:
        return float(square_loss(self.params, float(prediction), self.y))

    def expected_loss(self, link: str | int, weights: Any) -> float:
        return _decision_loss(self.params, link, weights)


#: The most nodes in either direction of the expected loss's quadrature (:class:`GLMEnv`).
MAX_QUADRATURE_NODES = 2048


def _node_count(value: Any) -> int | None:
    number = validation.whole_number(value)
    return number if number is not None and 1 <= number <= MAX_QUADRATURE_NODES else None


def _positive_number(value: Any) -> float | None:
    return float(value) if validation.is_real(value) and value > 0 else None


class GLMEnv(FeatureStreamEnv):
    """x uniform on a sphere, y from a target GLM plus Gaussian noise; as a Gymnasium environment.

    Parameters
    ----------
    dim : int
        ``d >= 2``, the dimension of ``x``.
    radius : float
        ``R_x``, the radius of the sphere ``x`` lives on (2 in the authors' code).
    noise : float
        ``sigma`` of the Gaussian label noise (0.02).
    target_link : str or int
        The link of the data-generating model (``"logcosh"``, link 9): one of ``affine``,
        ``square``, ``exp``, ``logistic``, ``cubic``, ``arctan``, ``softplus``, ``power``,
        ``cosine``, ``logcosh`` (:data:`envs.links.LINK_NAMES`; ``mlcb list`` prints them).
    target_norm : (float, float)
        Range of ``|w*|`` (uniform per replication).
    weight_radius : float
        Radius ``r`` of the experts' parameter ball, used to size the loss scale ``B``: a model
        of a larger ball (an OGD expert's ``radius``) is refused, since its losses would be
        clipped at 1, which the exact expected loss leaves out.
    quadrature : (int, int)
        Radial and angular nodes of the expected-loss quadrature.

    Notes
    -----
    The engine and the expert families read (:class:`mlcb.contracts.Environment`):

    ``n_experts``
        ``None``: any number of experts can face the stream.
    ``build(seed, replication) -> (params, state)``
        One replication's target ``w*``; the ``begin_round`` kernel draws ``(x_t, y_t)``.
    ``optimal_loss(params, expert) -> float``
        The Bayes loss of the stream, ``min(1, sigma^2 / B^2)``: the expected loss of predicting
        with the target function itself (noise only), a lower bound of every decision's loss.
    ``round_data(params, state, t, expert) -> GLMRound``
        ``(x_t, y_t)``, the same for every expert: ``x``, ``y``, ``loss(prediction)`` and
        ``expected_loss(link, weights)`` (:class:`GLMRound`).
    ``optimal_loss_of(params, link, radius)``, ``lipschitz(link, radius)``, ``convex(link, radius)``
        For a model ``f_link(w . x)`` with ``||w|| <= radius``: its least expected loss, its largest
        gradient norm and whether its loss is convex on this stream.
    ``initial_weights(seed, replication, norm)``
        A shared random starting point of norm ``norm``.

    The Gymnasium interface predicts one round at a time: the observation is ``x_t``, the action
    a prediction ``y_hat`` (shape (1,)), the reward ``-min(1, (y_hat - y_t)^2 / B^2)``, and
    ``info`` holds ``y_t``. ``reset(seed=s, options={"replication": r})`` reproduces replication
    ``r`` of a simulation with seed ``s``.
    """

    metadata: dict[str, Any] = {"render_modes": []}
    #: Any number of experts can face the stream.
    n_experts = None

    def __init__(
        self,
        dim: int = 5,
        radius: float = 2.0,
        noise: float = 0.02,
        target_link: str | int = "logcosh",
        target_norm: tuple[float, float] = (0.7, 0.95),
        weight_radius: float = 1.0,
        quadrature: tuple[int, int] = (24, 48),
    ) -> None:
        dim = validation.integer("dim", dim, minimum=2)
        for name, value in (("radius", radius), ("weight_radius", weight_radius)):
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise InputError(f"{name} must be a finite number > 0, got {value!r}")
        if not (isinstance(noise, (int, float)) and math.isfinite(noise) and noise >= 0):
            raise InputError(f"noise must be a finite number >= 0, got {noise!r}")
        norm = "(low, high) of finite numbers with 0 < low <= high"
        low, high = validation.pair("target_norm", target_norm, norm, _positive_number)
        if not low <= high:
            raise InputError(f"target_norm must be a pair {norm}, got {target_norm!r}")
        quadrature = validation.pair(
            "quadrature",
            quadrature,
            f"(n_radial, n_angular) of integers in [1, {MAX_QUADRATURE_NODES:_}]",
            _node_count,
        )
        self.dim = dim
        self.radius = float(radius)
        self.noise = float(noise)
        self.target_link = link_index(target_link, "target_link")
        self.target_norm = (float(low), float(high))
        self.weight_radius = float(weight_radius)
        self.quadrature = quadrature
        self.scale = glm_math.loss_scale(
            list(range(len(LINK_NAMES))), self.radius, self.weight_radius, self.target_link, high, self.noise
        )
        if not 0.0 < self.scale * self.scale < math.inf:
            raise InputError(
                f"radius = {self.radius:g}, weight_radius = {self.weight_radius:g}, target_norm = "
                f"{target_norm!r} and noise = {self.noise:g} make the largest loss the experts can meet "
                f"{self.scale:.3g}, whose square float64 cannot hold (every loss is divided by it); keep "
                "radius * weight_radius and radius * target_norm below about 350 (the 'exp' link) and "
                "noise below 1e150"
            )
        x1, x2, weights = glm_math.plane_quadrature(dim, self.radius, *self.quadrature)
        self._nodes = np.ascontiguousarray(np.stack([x1, x2, weights], axis=1))
        self.observation_space = gym.spaces.Box(-self.radius, self.radius, (dim,), dtype=np.float64)
        self.action_space = gym.spaces.Box(-np.inf, np.inf, (1,), dtype=np.float64)
        self._params: GLMEnvParams | None = None
        self._state: GLMEnvState | None = None
        self._round = 0

    # --- what the engine uses -------------------------------------------------------------
    def build(self, seed: int, replication: int, horizon: int) -> tuple[GLMEnvParams, GLMEnvState]:
        """Kernel parameters and state of replication ``replication`` (its own ``w*``; any
        ``horizon``: the stream does not depend on it)."""
        rng = instance_rng(seed, replication)
        direction = rng.standard_normal(self.dim)
        direction /= np.linalg.norm(direction)
        norm = float(rng.uniform(*self.target_norm))
        from envs.links import link_values

        params = GLMEnvParams(
            direction=direction,
            target_norm=norm,
            target_link=self.target_link,
            radius=self.radius,
            noise=self.noise,
            scale=self.scale,
            key=stream_keys(seed, replication, 0).env,
            nodes=self._nodes,
            target_values=link_values(self.target_link, norm * self._nodes[:, 0]),
            weight_radius=self.weight_radius,
        )
        return params, GLMEnvState(np.zeros(self.dim), np.zeros(1))

    def initial_weights(self, seed: int, replication: int, norm: float) -> np.ndarray:
        """The experts' shared random starting point of replication ``replication``."""
        rng = instance_rng(seed, replication)
        rng.standard_normal(self.dim)  # skip w*'s direction
        rng.uniform()  # and its norm
        start = rng.standard_normal(self.dim)
        return norm * start / np.linalg.norm(start)

    def optimal_loss(self, params: GLMEnvParams, expert: int) -> float:
        """The Bayes loss ``min(1, sigma^2 / B^2)`` of the stream, the same for every expert."""
        return min(1.0, (params.noise / params.scale) ** 2)

    def round_data(self, params: GLMEnvParams, state: GLMEnvState, t: int, expert: int) -> GLMRound:
        """``(x_t, y_t)`` of round ``t`` (after ``begin_round``), as a :class:`GLMRound`."""
        return GLMRound(params, state, t)

    def optimal_loss_of(self, params: GLMEnvParams, link: str | int, radius: float) -> float:
        """``min_{||w|| <= radius} L(w)`` of the link ``link`` on this replication."""
        instance = (self.dim, self.radius, self.noise, self.target_link, self.quadrature, self.scale)
        radius = self.within(radius)
        return _optimal_loss(instance, link_index(link), float(params.target_norm), radius)

    def lipschitz(self, link: str | int, radius: float) -> float:
        """``G = 2 L_f R_x / B``: the largest gradient norm of the loss on the ball ``||w|| <= radius``."""
        bound = self.within(radius) * self.radius
        return 2.0 * _lipschitz(link_index(link), bound) * self.radius / self.scale

    def convex(self, link: str | int, radius: float) -> bool:
        """Whether the loss of ``f_link(w . x)`` is convex in ``w`` on ``||w|| <= radius`` for every
        target this stream can draw (then projected OGD's regret bound holds)."""
        bound = self.within(radius) * self.radius
        low, high = self._target_range()
        return _is_convex(link_index(link), bound, low, high)

    def within(self, radius: Any) -> float:
        """``radius`` (a model's ball) if it lies in ``(0, weight_radius]``, else an
        :class:`~mlcb.validation.InputError` naming the limit: the loss scale ``B`` bounds every
        loss of a decision in the ball of ``weight_radius`` only (the GLM experts' family checks
        each expert's ball with it before any work)."""
        if not (validation.is_real(radius) and 0 < radius <= self.weight_radius * (1.0 + 1e-12)):
            raise InputError(
                f"radius must be a number in (0, {self.weight_radius:g}] (the stream's weight_radius, "
                f"the ball its loss scale is sized for), got {radius!r}; {_BEYOND}"
            )
        return float(radius)

    def _target_range(self) -> tuple[float, float]:
        from envs.links import link_values

        z = np.linspace(-1, 1, 2001) * self.target_norm[1] * self.radius
        values = link_values(self.target_link, z)
        margin = 10.0 * self.noise
        return float(values.min() - margin), float(values.max() + margin)

    # --- Gymnasium interface (reset / step from FeatureStreamEnv) ------------------------
    _begin_round = staticmethod(_begin_round)

    def action_loss(self, action, y: float) -> float:
        """The scaled square loss of the prediction ``action`` (a number or a 1-element array)."""
        return square_loss(self._params, float(np.asarray(action, dtype=float).reshape(-1)[0]), y)

    def expected_loss(self, link: str | int, weights: Any) -> float:
        """``L(w)`` of predicting ``f_link(w . x)`` on the current instance."""
        if self._params is None:
            raise RuntimeError("call reset() first")
        return _decision_loss(self._params, link, weights)
