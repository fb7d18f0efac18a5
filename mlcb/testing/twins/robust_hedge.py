"""Slow, obvious pure-Python twins of robust UCB (agents/robust_ucb.py) and Hedge (agents/hedge.py).

Written from the definitions (docs/rates.md, sections 5 and 6), not from the kernels: Python
floats and lists, every index recomputed from the raw state, the decision of Hedge as a list of
probabilities. Only the environment's draws come from :mod:`mlcb.testing.twins.core`'s ``loss_of``. Importing
this module registers both families in :data:`mlcb.testing.twins.core.BANDIT_WORLDS`.
"""

from __future__ import annotations

import math

from mlcb.testing.twins import core as twin


def c_eps(eps: float) -> float:
    return 1.0 + eps + math.sqrt(2.0) + 2.0 / 3.0


class TwinRobustUCB:
    """UCB on truncated means: sample t of an arm kept if |Z| <= B_t; index T_a/N_a - rho(N_a)."""

    def __init__(self, m: int, eps: float, moment: float, rate_scale: float, delta_prime: float) -> None:
        self.m, self.eps, self.moment, self.rate_scale = m, eps, moment, rate_scale
        self.delta_prime = delta_prime
        self.delta0 = delta_prime / 2.0
        self.pulls = [0] * m
        self.sums = [0.0] * m
        self.steps = 0

    def truncation(self, t: int) -> float:
        return (self.moment * t / math.log(4.0 * self.m * t * t / self.delta0)) ** (1.0 / (1.0 + self.eps))

    def rho(self, s: int) -> float:
        e = self.eps
        return (
            c_eps(e)
            * self.moment ** (1.0 / (1.0 + e))
            * (math.log(4.0 * self.m * s * s / self.delta0) / s) ** (e / (1.0 + e))
        )

    def arm(self) -> int:
        unplayed = [a for a in range(self.m) if self.pulls[a] == 0]
        if unplayed:
            return unplayed[0]
        index = [self.sums[a] / self.pulls[a] - self.rho(self.pulls[a]) for a in range(self.m)]
        return min(range(self.m), key=lambda a: (index[a], a))

    def rate(self, n: int) -> float:
        e, m, dp = self.eps, self.m, self.delta_prime
        value = (
            2.0
            * c_eps(e)
            * self.moment ** (1.0 / (1.0 + e))
            * ((m - 1) * math.log(8.0 * m * n * n / dp)) ** (e / (1.0 + e))
            * n ** (1.0 / (1.0 + e))
            + (m - 1)
            + math.sqrt(0.5 * n * math.log(4.0 * n * n / dp))
        )
        return min(float(n), self.rate_scale * value)

    def train(self, loss_of) -> tuple[float, float]:
        arm = self.arm()
        loss = loss_of(arm)
        self.pulls[arm] += 1
        if abs(loss) <= self.truncation(self.pulls[arm]):
            self.sums[arm] += loss
        self.steps += 1
        return loss, self.rate(self.steps)

    def deploy(self, smoothing: str, means, key: int, t: int, slot: int, loss_of):
        if smoothing == "last" or self.steps == 0:
            arm = self.arm()
            return loss_of(arm), means[arm]
        expected = 0.0
        for a in range(self.m):
            expected += self.pulls[a] * means[a]
        expected /= self.steps
        target = twin.uniform(key, t, slot * twin.DEPLOY_SLOTS) * self.steps
        cumulative = 0
        arm = self.m - 1
        for a in range(self.m):
            cumulative += self.pulls[a]
            if target < cumulative:
                arm = a
                break
        return loss_of(arm), expected


class TwinHedge:
    """Exponential weights over the arms, eta_j = sqrt(8 ln N / j), full information, mixture loss."""

    def __init__(self, m: int, rate_scale: float, delta_prime: float) -> None:
        self.m, self.rate_scale, self.delta_prime = m, rate_scale, delta_prime
        self.cumulative = [0.0] * m
        self.weights = [0.0] * m
        self.steps = 0

    def decision(self, j: int) -> list[float]:
        eta = math.sqrt(8.0 * math.log(self.m) / j)
        smallest = min(self.cumulative)
        raw = [math.exp(-eta * (s - smallest)) for s in self.cumulative]
        total = 0.0
        for value in raw:
            total += value
        return [value / total for value in raw]

    def rate(self, n: int) -> float:
        log_m = math.log(self.m)
        value = (
            math.sqrt(2.0 * n * log_m)
            + math.sqrt(log_m / 8.0)
            + math.sqrt(0.5 * n * math.log(2.0 * n * n / self.delta_prime))
        )
        return min(float(n), self.rate_scale * value)

    def train(self, loss_of) -> tuple[float, float]:
        p = self.decision(self.steps + 1)
        losses = [loss_of(a) for a in range(self.m)]
        loss = 0.0
        for a in range(self.m):
            loss += p[a] * losses[a]
            self.weights[a] += p[a]
            self.cumulative[a] += losses[a]
        self.steps += 1
        return min(loss, 1.0), self.rate(self.steps)

    def deploy(self, smoothing: str, means, key: int, t: int, slot: int, loss_of):
        if smoothing == "last" or self.steps == 0:
            p = self.decision(self.steps + 1)
        else:
            p = [w / self.steps for w in self.weights]
        loss = expected = 0.0
        for a in range(self.m):
            loss += p[a] * loss_of(a)
            expected += p[a] * means[a]
        return min(loss, 1.0), expected


def _robust_experts(config, env, keys, delta_prime):
    return [
        TwinRobustUCB(int(env.n_arms[k]), float(e.eps), float(e.moment), float(e.rate_scale), delta_prime)
        for k, e in enumerate(config.experts)
    ]


def _hedge_experts(config, env, keys, delta_prime):
    return [
        TwinHedge(int(env.n_arms[k]), float(e.rate_scale), delta_prime) for k, e in enumerate(config.experts)
    ]


twin.BANDIT_WORLDS["robust-ucb"] = _robust_experts
twin.BANDIT_WORLDS["hedge"] = _hedge_experts
