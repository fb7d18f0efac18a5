"""Slow, obvious pure-Python twins of the practitioners' policies (bandits over learners, successive
halving and Hyperband, R-ed-UCB, EXP3.P: mlcb/policies/bandits_over_learners.py, halving.py,
rising_ucb.py, exp3p.py).

Each twin recomputes its choice from the definitions every round (full sorts over all experts,
means from the raw statistics, R-ed-UCB's window sums from each expert's whole reward history)
and reads the same random numbers as the kernels (stream ``key``, counter ``t``, the documented
slots). Registered with :func:`mlcb.testing.twins.core.register` on import.
"""

from __future__ import annotations

import math
from typing import Any

from mlcb.testing.twins.core import register, uniform, ziggurat_normal
from mlcb.testing.twins.limited_corral import _draw, draw_extra


def _means(stats) -> list[float]:
    return [stats.loss_sum[k] / stats.n[k] for k in range(len(stats.n))]


def _best(values, candidates=None) -> int:
    candidates = range(len(values)) if candidates is None else candidates
    return min(candidates, key=lambda k: (values[k], k))


def _m_smallest(values, count) -> list[int]:
    return sorted(range(len(values)), key=lambda k: (values[k], k))[:count]


class TwinLearnerBandit:
    warm_start = True

    def __init__(self, spec, n_experts: int, budget: int, key: int) -> None:
        self.spec = spec
        self.mode = type(spec).mode
        self.n_experts = n_experts
        self.budget = budget
        self.key = key
        self.burn_rounds = math.ceil(n_experts * spec.burn_in / budget)
        self.permutation = list(range(n_experts))
        self.ties = False

    def select(self, t: int, stats):
        K, M = self.n_experts, self.budget
        means = _means(stats)
        nan = [math.nan] * M
        if t <= self.burn_rounds:
            offset = ((t - 1) * M) % K
            return [(offset + j) % K for j in range(M)], _best(means), nan
        if self.mode == 0:
            if uniform(self.key, t, 0) < self.spec.epsilon * math.exp(-self.spec.decay * t):
                p = self.permutation
                for j in range(M):
                    span = K - j
                    r = j + min(int(uniform(self.key, t, 1 + j) * span), span - 1)
                    p[j], p[r] = p[r], p[j]
                return list(p[:M]), _best(means), nan
            chosen = _m_smallest(means, M)
            return chosen, chosen[0], nan
        if self.mode == 1:
            log_total = math.log(sum(stats.n))
            index = [means[k] - math.sqrt(self.spec.c * log_total / stats.n[k]) for k in range(K)]
        else:
            normals = [ziggurat_normal(self.key, t, k) for k in range(K)]
            index = []
            for k in range(K):
                m = stats.n[k] + 1.0
                index.append(stats.loss_sum[k] / m + self.spec.scale / math.sqrt(m) * normals[k])
        return _m_smallest(index, M), _best(means), nan

    def observe(self, k, loss, t, stats) -> None:
        pass

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        pass


class TwinHalving:
    warm_start = True

    def __init__(self, spec, n_experts: int, budget: int, horizon: int) -> None:
        self.n_experts = n_experts
        self.budget = budget
        self.doubling = spec.variant == "doubling"
        self.rungs = max(1, math.ceil(math.log2(n_experts))) if n_experts > 1 else 1
        self.steps = spec.steps or (2 * n_experts * self.rungs if self.doubling else horizon * budget)
        self.leader: Any = None  # the deployed expert, once chosen
        self.finished = n_experts == 1
        self.ties = False
        self._bracket()

    def _bracket(self) -> None:
        self._rung(list(range(self.n_experts)))

    def _rung(self, survivors) -> None:
        self.survivors = survivors
        self.per = max(1, self.steps // (len(survivors) * self.rungs))
        self.queue = [survivors[q % len(survivors)] for q in range(len(survivors) * self.per)]
        self.rung_loss = {k: 0.0 for k in survivors}

    def select(self, t: int, stats):
        if self.leader is None:
            self.leader = _best(_means(stats))
        if self.finished:
            return [self.survivors[0]], self.survivors[0], [math.nan]
        count = min(self.budget, len(self.survivors), len(self.queue))
        chosen, self.queue = self.queue[:count], self.queue[count:]
        return chosen, self.leader, [math.nan] * count

    def observe(self, k, loss, t, stats) -> None:
        if t > 0 and not self.finished:
            self.rung_loss[k] += loss

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        if self.finished or self.queue:
            return
        ranked = sorted(self.survivors, key=lambda k: (self.rung_loss[k], k))
        keep = ranked[: (len(ranked) + 1) // 2]
        self.leader = keep[0]
        if len(keep) > 1:
            self._rung(keep)
        elif self.doubling:
            self.steps *= 2
            self._bracket()
        else:
            self.survivors = keep
            self.finished = True


class TwinRising:
    warm_start = True

    def __init__(self, spec, n_experts: int, budget: int) -> None:
        self.spec = spec
        self.n_experts = n_experts
        self.budget = budget
        self.rewards: list[list[float]] = [[] for _ in range(n_experts)]
        self.ties = False

    def _index(self, k: int, t: int) -> tuple[float, float]:
        x = self.rewards[k]
        n = len(x)
        h = int(self.spec.epsilon * n)
        if h == 0:
            return math.inf, 0.0
        prefix, weighted = [0.0], [0.0]
        for count, value in enumerate(x, start=1):
            prefix.append(prefix[-1] + value)
            weighted.append(weighted[-1] + (count - 1) * value)
        a = prefix[n] - prefix[n - h]
        b = prefix[n - h] - prefix[n - 2 * h]
        c = weighted[n] - weighted[n - h]
        d = weighted[n - h] - weighted[n - 2 * h]
        hh = float(h) * float(h)
        mu = ((2 * h - n + 1) * (a - b) + (c - d)) / hh
        slope = (a - b) / hh
        ahead = t - n
        confidence = math.sqrt(10.0 * self.spec.alpha * math.log(t))
        bonus = self.spec.sigma * (ahead + h - 1) * confidence * (1.0 / (h * math.sqrt(h)))
        return mu + ahead * slope + bonus, mu

    def select(self, t: int, stats):
        assert [len(x) for x in self.rewards] == list(stats.n)
        keys, mu = [], []
        for k in range(self.n_experts):
            index, estimate = self._index(k, t)
            keys.append(-index)
            mu.append(estimate)
        chosen = _m_smallest(keys, self.budget)
        deployed = min(chosen, key=lambda k: (-mu[k], k))
        return chosen, deployed, [math.nan] * len(chosen)

    def observe(self, k, loss, t, stats) -> None:
        # An observation standing for several updates gives each of them its reward.
        while len(self.rewards[k]) < stats.n[k]:
            self.rewards[k].append(1.0 - loss)

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        pass


class TwinEXP3P:
    warm_start = False

    def __init__(self, spec, n_experts: int, budget: int, delta: float, horizon: int, key: int) -> None:
        self.n_experts = n_experts
        self.budget = budget
        self.key = key
        K, T = n_experts, horizon
        self.gamma = spec.gamma or min(0.6, 2.0 * math.sqrt(3.0 * K * math.log(K) / (5.0 * T)))
        self.alpha = spec.alpha or 2.0 * math.sqrt(math.log(K * T / delta))
        self.horizon = horizon
        self.log_weight = [0.0] * K
        self.p = [1.0 / K] * K
        self.gain = [0.0] * K
        self.ties = False

    def select(self, t: int, stats):
        K, M = self.n_experts, self.budget
        if K == 1:
            self.p = [1.0]
            return [0], 0, [math.nan]
        high = max(self.log_weight)
        weights = [math.exp(v - high) for v in self.log_weight]
        total = 0.0
        for w in weights:
            total += w
        self.p = [(1.0 - self.gamma) * w / total + self.gamma / K for w in weights]
        chosen = _draw(self.p, uniform(self.key, t, 0))
        chosen_set = [chosen] + draw_extra(self.key, t, K, M, chosen)
        return chosen_set, chosen, [math.nan] * len(chosen_set)

    def observe(self, k, loss, t, stats) -> None:
        K, M = self.n_experts, self.budget
        ratio = min(M - 1, K - 1) / (K - 1) if K > 1 else 0.0
        self.gain[k] = (1.0 - loss) / (self.p[k] + (1.0 - self.p[k]) * ratio)

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        K = self.n_experts
        step = self.gamma / (3.0 * K)
        bias = self.alpha / math.sqrt(K * self.horizon)
        for k in range(K):
            self.log_weight[k] += step * (self.gain[k] + bias / self.p[k])
            self.gain[k] = 0.0


def _register() -> None:
    from mlcb.policies.bandits_over_learners import BanditEpsilonGreedy, BanditThompson, BanditUCB1
    from mlcb.policies.exp3p import EXP3P
    from mlcb.policies.halving import SuccessiveHalving
    from mlcb.policies.rising_ucb import RisingUCB

    for cls in (BanditEpsilonGreedy, BanditUCB1, BanditThompson):
        register(cls, lambda spec, n, m, delta, horizon, optimal, key: TwinLearnerBandit(spec, n, m, key))
    register(
        SuccessiveHalving, lambda spec, n, m, delta, horizon, optimal, key: TwinHalving(spec, n, m, horizon)
    )
    register(RisingUCB, lambda spec, n, m, delta, horizon, optimal, key: TwinRising(spec, n, m))
    register(
        EXP3P, lambda spec, n, m, delta, horizon, optimal, key: TwinEXP3P(spec, n, m, delta, horizon, key)
    )


_register()
