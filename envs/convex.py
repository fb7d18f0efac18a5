"""A stream of stochastic convex losses for bandit convex optimisation (docs/rates.md §9).

Each round ``xi_t = (zeta_t, eps_t)`` fixes, for every point ``x`` of the ball of radius ``R`` in
``R^D``, the loss

    ``l(x, xi_t) = (1/2) (1 - kappa + (theta + sigma zeta_t) . x / R + kappa |x|^2 / R^2 + tau eps_t)``,

convex in ``x`` (affine plus ``kappa >= 0`` times a square). ``theta`` in ``R^D`` is the mean
slope, ``zeta_t`` has independent coordinates uniform on ``[-1, 1] / sqrt(D)`` (so
``|zeta_t| <= 1``) and ``eps_t`` is uniform on ``[-1, 1]``; the constructor requires
``|theta| + sigma + tau + kappa <= 1``, which puts every loss in ``[0, 1]``. A learner sees only
``l(y, xi_t)`` at the one point ``y`` it plays: the slope noise hides the gradient, the level
noise the value, so the feedback is a bandit's.

An expert's domain is the ball of radius ``r <= R`` in the first ``d <= D`` coordinates (its
points padded with zeros); experts of different dimension or radius have different optima. The
expected loss is exact, in closed form,

    ``L(x) = (1/2) (1 - kappa + theta . x / R + kappa |x|^2 / R^2)``,

and so are each domain's optimum ``L_k* = min over |x| <= r of L(x)`` (:func:`optimal_value`)
and the Lipschitz constant of ``L`` on it, ``(|theta_d| + 2 kappa r / R) / (2R)``, where
``theta_d`` holds the first ``d`` coordinates of ``theta``.

``xi_t`` comes from the counter-based stream of the replication (:mod:`mlcb.kernels.random`):
``zeta_t``'s coordinate ``i`` from the uniform at ``(t, i)``, ``eps_t`` from ``(t, D)``, so every
policy and every pool faces the same losses.

Examples
--------
>>> import envs
>>> env = envs.make("mlcb/ConvexBandit-v0")
>>> env.dim, env.optimal_loss_of(1, 1.0), env.optimal_loss_of(4, 1.0) < env.optimal_loss_of(2, 1.0)
(4, 0.3, True)
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from envs._stream import reset_request
from mlcb import validation
from mlcb.kernels import implements
from mlcb.kernels.jit import kernel
from mlcb.kernels.random import uniform
from mlcb.kernels.seeding import stream_keys
from mlcb.validation import InputError

__all__ = [
    "ConvexBanditEnv",
    "ConvexEnvParams",
    "ConvexEnvState",
    "ConvexRound",
    "expected_loss_at",
    "loss_at",
    "optimal_value",
]


class ConvexEnvParams(NamedTuple):
    theta: np.ndarray  # (D,) the mean slope
    radius: float  # R
    noise: float  # sigma, the scale of the slope noise zeta_t
    level_noise: float  # tau, the scale of the level noise eps_t
    curvature: float  # kappa
    key: np.uint64  # the env stream of this replication


class ConvexEnvState(NamedTuple):
    zeta: np.ndarray  # (D,) the round's slope noise
    level: np.ndarray  # (1,) the round's level noise eps_t


@implements("begin_round", ConvexEnvParams)
@kernel
def _begin_round(params, state, t):
    dim = state.zeta.shape[0]
    scale = 1.0 / math.sqrt(dim)
    for i in range(dim):
        state.zeta[i] = (2.0 * uniform(params.key, t, i) - 1.0) * scale
    state.level[0] = 2.0 * uniform(params.key, t, dim) - 1.0


@kernel
def loss_at(params, state, vector, scale, d):
    """``l(x, xi_t)`` at ``x = scale * vector[:d]`` (padded with zeros), clamped to ``[0, 1]``
    against rounding; ``state`` holds round ``t``'s draw (after ``begin_round``)."""
    inner = 0.0
    squared = 0.0
    for i in range(d):
        x = scale * vector[i]
        inner += (params.theta[i] + params.noise * state.zeta[i]) * x
        squared += x * x
    radius = params.radius
    kappa = params.curvature
    value = 0.5 * (1.0 - kappa + inner / radius + kappa * squared / (radius * radius))
    value += 0.5 * params.level_noise * state.level[0]
    return min(1.0, max(0.0, value))


@kernel
def expected_loss_at(params, vector, scale, d):
    """``L(x) = (1/2) (1 - kappa + theta . x / R + kappa |x|^2 / R^2)`` at ``x = scale * vector[:d]``."""
    inner = 0.0
    squared = 0.0
    for i in range(d):
        x = scale * vector[i]
        inner += params.theta[i] * x
        squared += x * x
    radius = params.radius
    kappa = params.curvature
    value = 0.5 * (1.0 - kappa + inner / radius + kappa * squared / (radius * radius))
    return min(1.0, max(0.0, value))


def optimal_value(slope: float, curvature: float, reach: float) -> float:
    """``min over 0 <= q <= reach of (1/2) (1 - kappa - slope q + kappa q^2)``: the least expected
    loss on a ball of radius ``reach * R`` whose mean slope has norm ``slope`` (the minimiser lies
    along ``-theta``, at ``q* = min(reach, slope / (2 kappa))``)."""
    q = reach if curvature <= 0.0 else min(reach, slope / (2.0 * curvature))
    return 0.5 * (1.0 - curvature - slope * q + curvature * q * q)


class ConvexRound:
    """``xi_t`` as a Python expert sees it (:meth:`ConvexBanditEnv.round_data`), the same object
    for every expert of a round.

    ``dim``, ``radius``
        ``D`` and ``R`` of the stream.
    ``loss(point) -> float``
        ``l(x, xi_t)`` at ``point`` (``d <= D`` coordinates, padded with zeros), the engine's own.
    ``expected_loss(point) -> float``
        ``L(x)`` at ``point``, exact.
    """

    __slots__ = ("_params", "_state", "dim", "radius", "t")

    def __init__(self, params: ConvexEnvParams, state: ConvexEnvState, t: int) -> None:
        self._params = params
        self._state = ConvexEnvState(state.zeta.copy(), state.level.copy())
        self.t = int(t)
        self.dim = int(params.theta.shape[0])
        self.radius = float(params.radius)

    def _point(self, point: Any) -> np.ndarray:
        x = np.asarray(point, dtype=float).reshape(-1)
        if not 1 <= x.shape[0] <= self.dim or not np.all(np.isfinite(x)):
            raise InputError(f"point must hold 1 to {self.dim} finite coordinates, got {point!r}")
        if float(x @ x) > self.radius**2 * (1.0 + 1e-12):
            norm = math.sqrt(x @ x)
            raise InputError(f"point must lie in the ball of radius {self.radius}, got norm {norm}")
        return x

    def loss(self, point: Any) -> float:
        x = self._point(point)
        return float(loss_at(self._params, self._state, x, 1.0, x.shape[0]))

    def expected_loss(self, point: Any) -> float:
        x = self._point(point)
        return float(expected_loss_at(self._params, x, 1.0, x.shape[0]))

    def __repr__(self) -> str:
        return f"ConvexRound(t={self.t}, dim={self.dim})"


class ConvexBanditEnv(gym.Env):
    """Stochastic convex losses on a ball, seen one point at a time; as a Gymnasium environment.

    Parameters
    ----------
    theta : sequence of float
        The mean slope, one number per coordinate (its length is the dimension ``D``).
    radius : float
        ``R``, the radius of the ball the losses are defined on.
    noise : float
        ``sigma >= 0``, the scale of the slope noise.
    level_noise : float
        ``tau >= 0``, the scale of the level noise.
    curvature : float
        ``kappa >= 0``, the weight of the quadratic term (0: affine losses).

    Notes
    -----
    ``|theta| + noise + level_noise + curvature <= 1`` keeps every loss in ``[0, 1]``.

    The engine and the expert families read (:class:`mlcb.contracts.Environment`):

    ``n_experts``
        ``None``: any number of experts can face the stream, each with its own domain.
    ``build(seed, replication) -> (params, state)``
        The instance and the replication's stream key; the ``begin_round`` kernel draws ``xi_t``.
    ``optimal_loss(params, expert) -> float``
        The least expected loss on the whole ball (``D`` coordinates, radius ``R``): a lower bound
        of every expert's ``L_k*``.
    ``optimal_loss_of(dim, radius)``, ``lipschitz(dim, radius)``
        For the ball of radius ``radius`` in the first ``dim`` coordinates: the least expected
        loss and the Lipschitz constant of ``L`` on it.
    ``round_data(params, state, t, expert) -> ConvexRound``
        ``xi_t``, the same for every expert: ``loss(point)`` and ``expected_loss(point)``
        (:class:`ConvexRound`).

    The Gymnasium interface plays one point per step: the action is a point of ``R^D`` (a point
    outside the ball is projected onto it), the observation carries nothing (``Discrete(1)``),
    the reward is minus the point's loss under ``xi_t``, and ``info`` holds the round and the
    point's expected loss. ``reset(seed=s, options={"replication": r})`` reproduces replication
    ``r`` of a simulation with seed ``s``; its ``info`` holds ``"optimal_loss"``.
    """

    metadata: dict[str, Any] = {"render_modes": []}
    #: Any number of experts can face the stream.
    n_experts = None
    #: One round data object serves every expert of a round.
    round_data_shared = True

    def __init__(
        self,
        theta: Any = (0.4, 0.3, 0.2, 0.1),
        radius: float = 1.0,
        noise: float = 0.25,
        level_noise: float = 0.15,
        curvature: float = 0.0,
    ) -> None:
        try:
            if validation.not_a_number(theta):
                raise ValueError(theta)
            slope = np.asarray(theta, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise InputError(f"theta must be a non-empty sequence of finite numbers, got {theta!r}") from None
        if slope.size < 1 or np.ndim(theta) != 1 or not np.all(np.isfinite(slope)):
            raise InputError(f"theta must be a non-empty sequence of finite numbers, got {theta!r}")
        validation.positive("radius", radius)
        for name, value in (("noise", noise), ("level_noise", level_noise), ("curvature", curvature)):
            validation.non_negative(name, value)
        total = float(np.linalg.norm(slope)) + noise + level_noise + curvature
        if total > 1.0 + 1e-12:
            raise InputError(
                "|theta| + noise + level_noise + curvature must be at most 1 (so that every loss lies in "
                f"[0, 1]), got {total!r}"
            )
        self.theta = slope
        self.dim = int(slope.size)
        self.radius = float(radius)
        self.noise = float(noise)
        self.level_noise = float(level_noise)
        self.curvature = float(curvature)
        self.observation_space = gym.spaces.Discrete(1)
        self.action_space = gym.spaces.Box(-self.radius, self.radius, (self.dim,), dtype=np.float64)
        self._params: ConvexEnvParams | None = None
        self._state: ConvexEnvState | None = None
        self._round = 0

    # --- what the engine and the families use ----------------------------------------------
    def build(self, seed: int, replication: int, horizon: int) -> tuple[ConvexEnvParams, ConvexEnvState]:
        """Kernel parameters (the instance and replication ``replication``'s stream key) and state
        (any ``horizon``: the stream does not depend on it)."""
        params = ConvexEnvParams(
            theta=self.theta.copy(),
            radius=self.radius,
            noise=self.noise,
            level_noise=self.level_noise,
            curvature=self.curvature,
            key=stream_keys(seed, replication, 0).env,
        )
        return params, ConvexEnvState(np.zeros(self.dim), np.zeros(1))

    def optimal_loss(self, params: ConvexEnvParams, expert: int) -> float:
        """The least expected loss on the whole ball: a lower bound of every expert's ``L_k*``."""
        return self.optimal_loss_of(self.dim, self.radius)

    def optimal_loss_of(self, dim: int, radius: float) -> float:
        """``min L(x)`` over the ball of radius ``radius`` in the first ``dim`` coordinates."""
        dim, radius = self._domain(dim, radius)
        slope = float(np.linalg.norm(self.theta[:dim]))
        return optimal_value(slope, self.curvature, radius / self.radius)

    def lipschitz(self, dim: int, radius: float) -> float:
        """The Lipschitz constant of ``L`` on that ball: ``(|theta_d| + 2 kappa r / R) / (2R)``."""
        dim, radius = self._domain(dim, radius)
        slope = float(np.linalg.norm(self.theta[:dim]))
        return (slope + 2.0 * self.curvature * radius / self.radius) / (2.0 * self.radius)

    def round_data(self, params: ConvexEnvParams, state: ConvexEnvState, t: int, expert: int) -> ConvexRound:
        """``xi_t`` of round ``t`` (after ``begin_round``), as a :class:`ConvexRound`."""
        return ConvexRound(params, state, t)

    def _domain(self, dim: Any, radius: Any) -> tuple[int, float]:
        dim = validation.integer("dim", dim, 1, self.dim)
        radius = validation.positive("radius", radius)
        if radius > self.radius * (1.0 + 1e-12):
            raise InputError(
                f"radius must be a number in (0, {self.radius}] (the stream's ball), got {radius!r}"
            )
        return dim, radius

    # --- Gymnasium interface -------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._params, self._state = self.build(*reset_request(seed, options))
        self._round = 0
        return 0, {"optimal_loss": self.optimal_loss(self._params, 0)}

    def step(self, action):
        if self._params is None:
            raise RuntimeError("call reset() before step()")
        point = np.array(validation.point(f"action (a point of R^{self.dim})", action, self.dim))
        norm = float(np.linalg.norm(point))
        if norm > self.radius:
            point = point * (self.radius / norm)
        self._round += 1
        _begin_round(self._params, self._state, self._round)
        loss = float(loss_at(self._params, self._state, point, 1.0, self.dim))
        expected = float(expected_loss_at(self._params, point, 1.0, self.dim))
        info = {"round": self._round, "expected_loss": expected}
        return 0, -loss, False, False, info

    def expected_loss(self, point: Any) -> float:
        """``L(x)`` of a point of the current instance (``d <= D`` coordinates)."""
        if self._params is None:
            raise RuntimeError("call reset() first")
        empty = ConvexEnvState(np.zeros(self.dim), np.zeros(1))
        return ConvexRound(self._params, empty, 0).expected_loss(point)
