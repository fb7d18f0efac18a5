"""A slow, obvious pure-Python twin of the BCO family (agents/bco.py) on the convex stream
(envs/convex.py).

Written from the definitions (docs/rates.md §9), not from the kernels: Python floats and lists,
every past centre kept in a list, the stream's draw recomputed from the counter-based generator of
:mod:`mlcb.testing.twins.core`. Only the instance (``theta`` and the scales) and the experts' keys
come from the package. Importing this module registers the world in :data:`mlcb.testing.twins.core.WORLDS`.
"""

from __future__ import annotations

import math

from mlcb.testing.twins import core as twin


class ConvexStream:
    """``l(x, xi_t)`` and ``L(x)`` of the convex stream at the round set by :meth:`begin`."""

    def __init__(self, env_params) -> None:
        self.theta = [float(v) for v in env_params.theta]
        self.radius = float(env_params.radius)
        self.noise = float(env_params.noise)
        self.level_noise = float(env_params.level_noise)
        self.curvature = float(env_params.curvature)
        self.key = int(env_params.key)

    def begin(self, t: int) -> None:
        dim = len(self.theta)
        self.zeta = [(2.0 * twin.uniform(self.key, t, i) - 1.0) * (1.0 / math.sqrt(dim)) for i in range(dim)]
        self.level = 2.0 * twin.uniform(self.key, t, dim) - 1.0

    def _value(self, slopes: list, point: list) -> float:
        inner = squared = 0.0
        for slope, x in zip(slopes, point):
            inner += slope * x
            squared += x * x
        r, kappa = self.radius, self.curvature
        return 0.5 * (1.0 - kappa + inner / r + kappa * squared / (r * r))

    def loss(self, point: list) -> float:
        slopes = [self.theta[i] + self.noise * self.zeta[i] for i in range(len(point))]
        value = self._value(slopes, point) + 0.5 * self.level_noise * self.level
        return min(1.0, max(0.0, value))

    def expected(self, point: list) -> float:
        return min(1.0, max(0.0, self._value(self.theta, point)))


class TwinBCO:
    """FKM's bandit gradient descent: centre x_j = (1 - a_j) w_j, play x_j + delta_j u_j, step
    w <- Proj(w - eta_j (1 - a_j) (d / delta_j) loss u_j)."""

    def __init__(self, spec, key: int, lam: float, delta_prime: float) -> None:
        self.lipschitz = spec.case == "lipschitz"
        self.d, self.radius = int(spec.dim), float(spec.radius)
        self.shrink, self.perturbation = float(spec.shrink), float(spec.perturbation)
        self.step_scale, self.rate_scale = float(spec.step_scale), float(spec.rate_scale)
        p = self.perturbation * self.shrink
        constant = math.sqrt(3.0) if self.lipschitz else math.sqrt(10.0 / 3.0)
        self.step = self.step_scale * constant * p * self.radius**2 / self.d
        self.key, self.lam, self.delta_prime = key, lam, delta_prime
        self.w = [0.0] * self.d
        self.centres: list = []
        self.sums = [0.0] * self.d

    def schedule(self, j: int) -> tuple[float, float, float]:
        if self.lipschitz:
            a = self.shrink * j**-0.25
            return a, self.perturbation * a * self.radius, self.step * j**-0.75
        a = self.shrink * j ** (-1.0 / 6.0)
        return a, self.perturbation * a * self.radius * j ** (-1.0 / 6.0), self.step * j ** (-5.0 / 6.0)

    def rate(self, n: int) -> float:
        d, lam, a0, rho, s = self.d, self.lam, self.shrink, self.perturbation, self.step_scale
        p = rho * a0
        ell = math.log(4.0 * n * n / self.delta_prime)
        if self.lipschitz:
            gradient = (2.0 / math.sqrt(3.0)) * (d / p) * (1.0 / s + s) * n**0.75
            smooth = (4.0 / 3.0) * (lam * p + a0 * min(1.0, lam)) * n**0.75
            variance = (4.0 * d / (p * p)) * (2.0 / 3.0) * ((n + 1.0) ** 1.5 - 1.0)
            bound = 2.0 * min(lam, d * n**0.25 / (2.0 * p)) + 2.0 * d * n**0.25 / p
        else:
            inner = min(1.0, 1.0 / ((d + 1.0) * (1.0 - rho))) if rho < 1.0 else 1.0
            gradient = math.sqrt(6.0 / 5.0) * (d / p) * (1.0 / s + s) * n ** (5.0 / 6.0)
            smooth = (6.0 / 5.0) * (rho * (inner + d / (d + 1.0)) + a0) * n ** (5.0 / 6.0)
            variance = (4.0 * d / (p * p)) * (3.0 / 5.0) * ((n + 1.0) ** (5.0 / 3.0) - 1.0)
            bound = 3.0 * d * n ** (1.0 / 3.0) / p
        value = gradient + smooth + (math.sqrt(2.0 * variance * ell) + (2.0 / 3.0) * bound * ell)
        return min(float(n), self.rate_scale * (value + math.sqrt(0.5 * n * ell)))

    def train(self, stream: ConvexStream) -> tuple[float, float]:
        j = len(self.centres) + 1
        a, delta, eta = self.schedule(j)
        normals = [twin.normal(self.key, j, i) for i in range(self.d)]
        squared = 0.0
        for g in normals:
            squared += g * g
        u = [g / math.sqrt(squared) for g in normals]
        centre = [(1.0 - a) * w for w in self.w]
        self.centres.append(centre)
        self.sums = [total + x for total, x in zip(self.sums, centre)]
        loss = stream.loss([x + delta * ui for x, ui in zip(centre, u)])
        coefficient = eta * (1.0 - a) * (self.d / delta) * loss
        self.w = [w - coefficient * ui for w, ui in zip(self.w, u)]
        squared = 0.0
        for w in self.w:
            squared += w * w
        if squared > self.radius * self.radius:
            factor = self.radius / math.sqrt(squared)
            self.w = [w * factor for w in self.w]
        return loss, self.rate(j)

    def deploy(self, smoothing: str, stream: ConvexStream, key: int, t: int, slot: int):
        n = len(self.centres)
        if n > 0 and smoothing == "average":
            point = [(1.0 / n) * total for total in self.sums]
        elif n > 0 and smoothing == "uniform":
            point = self.centres[min(int(twin.uniform(key, t, slot * twin.DEPLOY_SLOTS) * n), n - 1)]
        else:
            a = self.schedule(n + 1)[0]
            point = [(1.0 - a) * w for w in self.w]
        return stream.loss(point), stream.expected(point)


class ConvexWorld:
    """The convex stream and a pool of :class:`TwinBCO` experts, as
    :func:`mlcb.testing.twins.core.run` drives them."""

    def __init__(self, config, env, env_params, keys, replication: int) -> None:
        self.stream = ConvexStream(env_params)
        self.smoothing = config.smoothing
        self.deploy_key = int(keys.deploy)
        delta_prime = config.delta / (2.0 * config.n_experts)
        self.experts = [
            TwinBCO(
                spec,
                int(keys.experts[k]),
                float(env.lipschitz(spec.dim, spec.radius)) * spec.radius,
                delta_prime,
            )
            for k, spec in enumerate(config.experts)
        ]

    def begin(self, t: int) -> None:
        self.stream.begin(t)

    def train(self, k: int, t: int):
        return self.experts[k].train(self.stream)

    def deploy(self, k: int, t: int, slot: int):
        return self.experts[k].deploy(self.smoothing, self.stream, self.deploy_key, t, slot)


twin.WORLDS["bco"] = ConvexWorld
