"""Slow, obvious pure-Python twins of LimitedAdvice and Smooth CORRAL (docs/baselines.md §1, §2).

They read the same uniforms as the kernels (stream ``key``, counter ``t``, the slots documented in
:mod:`mlcb.policies.limited_advice` and :mod:`mlcb.policies.corral`) and are registered with
:func:`mlcb.testing.twins.core.register` on import. CORRAL's OMD root is found by the same Newton iteration
(:func:`newton_root`), so that results are bit-identical; :func:`bisection_root` is the plain
bisection that the tests hold it against.
"""

from __future__ import annotations

import math
from typing import Any

from mlcb.testing.twins.core import register, uniform


def _draw(weights: list[float], u: float) -> int:
    """Inversion of the cumulative weights at ``u * sum``; the last positive weight catches a
    target rounded up to the sum."""
    total = 0.0
    for w in weights:
        total += w
    target = u * total
    cumulative = 0.0
    for k, w in enumerate(weights):
        cumulative += w
        if target < cumulative:
            return k
    return max(k for k, w in enumerate(weights) if w > 0.0)


def draw_extra(key: int, t: int, K: int, M: int, chosen: int) -> list[int]:
    """The ``min(M - 1, K - 1)`` experts trained besides ``chosen``, without replacement.

    A partial Fisher-Yates shuffle of ``[K] \\ {chosen}``, listed as ``range(K)`` with ``chosen``
    swapped to the end; uniform slot ``1 + j`` draws the ``j``-th.
    """
    rest = list(range(K))
    rest[chosen], rest[K - 1] = rest[K - 1], rest[chosen]
    rest = rest[: K - 1]
    extra = []
    for j in range(min(M - 1, K - 1)):
        left = len(rest) - j
        r = j + min(int(uniform(key, t, 1 + j) * left), left - 1)
        rest[j], rest[r] = rest[r], rest[j]
        extra.append(rest[j])
    return extra


# --- LimitedAdvice -----------------------------------------------------------------------------
class TwinLimitedAdvice:
    warm_start = False

    def __init__(self, n_experts: int, budget: int, eta_scale: float, key: int) -> None:
        self.n_experts = n_experts
        self.budget = budget
        self.eta_scale = eta_scale
        self.key = key
        self.lhat = [0.0] * n_experts
        self.p = [0.0] * n_experts
        self.ties = False

    def select(self, t: int, stats):
        K, M = self.n_experts, self.budget
        if K == 1:
            self.p = [1.0]
            return [0], 0, [math.nan]
        eta = self.eta_scale * math.sqrt(M * math.log(K) / (K * t))
        low = min(self.lhat)
        weights = [math.exp(-eta * (v - low)) for v in self.lhat]
        chosen = _draw(weights, uniform(self.key, t, 0))
        total = 0.0
        for w in weights:
            total += w
        self.p = [w / total for w in weights]
        chosen_set = [chosen] + draw_extra(self.key, t, K, M, chosen)
        return chosen_set, chosen, [math.nan] * len(chosen_set)

    def inclusion(self, k: int) -> float:
        K, M = self.n_experts, self.budget
        ratio = min(M - 1, K - 1) / (K - 1) if K > 1 else 0.0
        return self.p[k] + (1.0 - self.p[k]) * ratio

    def observe(self, k: int, loss: float, t: int, stats) -> None:
        self.lhat[k] += loss / self.inclusion(k)

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        pass


def _limited_advice_twin(spec, n_experts, budget, delta, horizon, optimal, key):
    return TwinLimitedAdvice(n_experts, budget, float(spec.eta_scale), key)


# --- Smooth CORRAL -----------------------------------------------------------------------------
def _f(p, eta, loss, x):
    """(F(x) - 1, F'(x)) summed in index order, as the kernel."""
    total = slope = 0.0
    for j in range(len(p)):
        q = 1.0 / (1.0 / p[j] + eta[j] * (loss[j] - x))
        total += q
        slope += eta[j] * q * q
    return total - 1.0, slope


def newton_root(p, eta, loss, tolerance=1e-12, iterations=100):
    """The kernel's safeguarded Newton iteration (mlcb.policies.corral.omd_root), step by step."""
    lo, top = min(loss), max(loss)
    poles = [loss[j] + 1.0 / (eta[j] * p[j]) for j in range(len(p))]
    star = min(range(len(p)), key=lambda j: (poles[j], j))
    x = max(lo, min(top, poles[star] - 1.0 / eta[star]))
    a, b = lo, x
    for iteration in range(iterations):
        residual, slope = _f(p, eta, loss, x)
        if abs(residual) <= tolerance:
            return x, iteration
        if residual > 0.0:
            b = x
        else:
            a = x
        step = x - residual / slope
        if not a < step < b:
            step = 0.5 * (a + b)
            if not a < step < b:
                return x, iteration + 1
        x = step
    return x, iterations


def bisection_root(p, eta, loss):
    """Plain bisection of F(x) = 1 on [min loss, min(max loss, pole)] down to adjacent floats."""
    a = min(loss)
    pole = min(loss[j] + 1.0 / (eta[j] * p[j]) for j in range(len(p)))
    b = min(max(loss), pole)
    while True:
        middle = 0.5 * (a + b)
        if not a < middle < b:
            break
        if middle >= pole or _f(p, eta, loss, middle)[0] > 0.0:
            b = middle
        else:
            a = middle
    return a if abs(_f(p, eta, loss, a)[0]) <= abs(_f(p, eta, loss, b)[0]) or b >= pole else b


def omd(p, eta, loss, root):
    """p_new = q(root) / sum q(root), the update of Agarwal et al.'s Algorithm 2."""
    q = [1.0 / (1.0 / p[j] + eta[j] * (loss[j] - root)) for j in range(len(p))]
    total = 0.0
    for v in q:
        total += v
    return [v / total for v in q]


class TwinSmoothCORRAL:
    warm_start = False

    def __init__(self, n_experts, horizon, schedule, loss_feed, eta_scale, key) -> None:
        self.n_experts = n_experts
        self.doubling = schedule == "doubling"
        self.loss_feed = loss_feed
        self.eta_scale = eta_scale
        self.key = key
        self.ties = False
        if self.doubling:
            length = 1
            while length < 8 * n_experts:
                length *= 2
            self.end: Any = length  # the current doubling epoch ends after this round
        else:
            length = horizon
            self.end = None
        self.train_loss: Any = None  # the last training loss, once there is one
        self.reset(length)

    def reset(self, length: int) -> None:
        K = self.n_experts
        self.length = length
        self.gamma = 1.0 / length
        self.beta = math.exp(1.0 / max(1.0, math.log(length)))
        self.p = [1.0 / K] * K
        self.pbar = [1.0 / K] * K
        self.eta = [self.eta_scale * math.sqrt(K / length)] * K
        self.rho = [2.0 * K] * K

    def select(self, t: int, stats):
        i = _draw(self.pbar, uniform(self.key, t, 0))
        return [i], i, [math.nan]

    def observe(self, k: int, loss: float, t: int, stats) -> None:
        self.train_loss = loss

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        K = self.n_experts
        (i,) = chosen
        f = {
            "train": self.train_loss,
            "deployed": loss,
            "mean": 0.5 * (self.train_loss + loss),
        }[self.loss_feed]
        lvec = [0.0] * K
        lvec[i] = f / self.pbar[i]
        root, _ = newton_root(self.p, self.eta, lvec)
        self.p = omd(self.p, self.eta, lvec, root)
        self.pbar = [(1.0 - self.gamma) * v + self.gamma / K for v in self.p]
        for j in range(K):
            if 1.0 / self.pbar[j] > self.rho[j]:
                self.rho[j] = 2.0 / self.pbar[j]
                self.eta[j] = self.eta[j] * self.beta
        if self.doubling and t == self.end:
            self.end += 2 * self.length
            self.reset(2 * self.length)


def _corral_twin(spec, n_experts, budget, delta, horizon, optimal, key):
    T = spec.horizon if spec.horizon is not None else horizon
    return TwinSmoothCORRAL(n_experts, T, spec.schedule, spec.loss_feed, float(spec.eta_scale), key)


def _register() -> None:
    from mlcb.policies.corral import SmoothCORRAL
    from mlcb.policies.limited_advice import LimitedAdvice

    register(LimitedAdvice, _limited_advice_twin)
    register(SmoothCORRAL, _corral_twin)


_register()
