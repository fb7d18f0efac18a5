"""Slow, obvious pure-Python twins of Dynamic Balancing and D3RB / ED2RB (docs/baselines.md §3, §4).

Written from the pseudocode, not from the kernels: selection by a full sort, every quantity
recomputed from the statistics when it is needed. Importing this module registers both twins
with :func:`mlcb.testing.twins.core.register`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from mlcb.policies.balancing import DataDrivenBalancing, DynamicBalancing
from mlcb.testing.twins import core as twin


def width(n_experts: int, delta: float, c: float, n: int) -> float:
    """w(n) = c sqrt(ln(K max(1, ln n) / delta) / n)."""
    return c * math.sqrt(math.log(n_experts * max(1.0, math.log(n)) / delta) / n)


def _tie(keys: list, order: list, count: int) -> bool:
    """Whether an exact tie among ``keys`` decided which ``count`` experts come first."""
    inside = [keys[k] for k in order[:count]]
    tie = len(set(inside)) < len(inside)
    return tie or (count < len(order) and keys[order[count]] == inside[-1])


def _ucb_choice(chosen: list, upper: Any, identity: list) -> int:
    return min(chosen, key=lambda k: (upper[k], identity[k]))


@dataclass
class TwinDynamicBalancing:
    n_experts: int
    budget: int
    delta: float = 0.05
    c: float = 1.0
    weights: Any = None  # per-expert weights; default 1 each
    comparator: str = "pessimistic"
    deploy: str = "head"
    warm_start: bool = True
    ties: bool = False
    active: list = field(default_factory=list)
    history: list = field(default_factory=list)  # the active set after each update

    def __post_init__(self) -> None:
        self.active = [True] * self.n_experts
        if self.weights is None:
            self.weights = [1.0] * self.n_experts

    def _key(self, k: int, stats) -> float:
        value = self.weights[k] * stats.rate[k]
        return -math.inf if value == math.inf else value  # +inf rates go first

    def _values(self, k: int, stats):
        n = stats.n[k]
        mean = stats.loss_sum[k] / n
        w = width(self.n_experts, self.delta, self.c, n)
        return mean, w, stats.rate[k] / n

    def select(self, t: int, stats):
        keys = [self._key(k, stats) for k in range(self.n_experts)]
        members = [k for k in range(self.n_experts) if self.active[k]]
        order = sorted(members, key=lambda k: (keys[k], stats.identity[k]))
        count = min(self.budget, len(members))
        chosen = order[:count]
        self.ties = self.ties or _tie(keys, order, count)
        if self.deploy == "ucb":
            upper = {}
            for k in chosen:
                mean, w, _ = self._values(k, stats)
                upper[k] = mean + w
            deployed = _ucb_choice(chosen, upper, stats.identity)
        else:
            deployed = chosen[0]
        return chosen, deployed, [math.nan] * count

    def _eliminate(self, stats) -> None:
        trained = [k for k in range(self.n_experts) if self.active[k] and stats.n[k] >= 1]
        comparators = []
        for j in trained:
            mean, w, _ = self._values(j, stats)
            comparators.append(mean - w if self.comparator == "optimistic" else mean + w)
        best = min(comparators, default=math.inf)
        for k in trained:
            mean, w, slack = self._values(k, stats)
            if mean - w - slack > best:
                self.active[k] = False
        self.history.append(list(self.active))

    def observe(self, k: int, loss: float, t: int, stats) -> None:
        if t == 0 and k == stats.by_identity()[-1]:  # the warm start's last expert
            self._eliminate(stats)

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        self._eliminate(stats)


@dataclass
class TwinDataDrivenBalancing:
    n_experts: int
    budget: int
    empirical: bool = False
    d_min: float = 1.0
    c: float = 1.0
    delta: float = 0.01
    max_coefficient: float = math.inf
    deploy: str = "head"
    warm_start: bool = True
    ties: bool = False
    dhat: list = field(default_factory=list)
    phi: list = field(default_factory=list)
    history: list = field(default_factory=list)  # (dhat, phi) after each update

    def __post_init__(self) -> None:
        self.dhat = [self.d_min] * self.n_experts
        self.phi = [self.d_min] * self.n_experts

    def _values(self, k: int, stats):
        n = stats.n[k]
        return stats.loss_sum[k] / n, width(self.n_experts, self.delta, self.c, n)

    def select(self, t: int, stats):
        order = sorted(range(self.n_experts), key=lambda k: (self.phi[k], stats.identity[k]))
        chosen = order[: self.budget]
        self.ties = self.ties or _tie(self.phi, order, len(chosen))
        if self.deploy == "ucb":
            upper = {}
            for k in chosen:
                mean, w = self._values(k, stats)
                upper[k] = mean + w
            deployed = _ucb_choice(chosen, upper, stats.identity)
        else:
            deployed = chosen[0]
        return chosen, deployed, [math.nan] * len(chosen)

    def _update(self, trained: list, stats) -> None:
        pessimistic = []
        for j in range(self.n_experts):
            if stats.n[j] >= 1:
                mean, w = self._values(j, stats)
                pessimistic.append(mean + w)
        best = min(pessimistic)
        for k in trained:
            n = stats.n[k]
            mean, w = self._values(k, stats)
            root = math.sqrt(n)
            if self.empirical:
                realized = n * (mean - w - best)
                self.dhat[k] = min(max(self.d_min, realized / root), self.max_coefficient)
                self.phi[k] = min(max(self.dhat[k] * root, self.phi[k]), 2.0 * self.phi[k])
            else:
                if mean - self.dhat[k] / root - w > best:
                    self.dhat[k] = min(2.0 * self.dhat[k], self.max_coefficient)
                self.phi[k] = self.dhat[k] * root
        self.history.append((list(self.dhat), list(self.phi)))

    def observe(self, k: int, loss: float, t: int, stats) -> None:
        if t == 0 and k == stats.by_identity()[-1]:  # the warm start's last expert
            self._update(list(range(self.n_experts)), stats)

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        self._update(list(chosen), stats)


def _dynamic_balancing_twin(spec, n_experts, budget, delta, horizon, optimal, key):
    weights = None if spec.weights is None else list(spec.weights)
    return TwinDynamicBalancing(n_experts, budget, spec.delta, spec.c, weights, spec.comparator, spec.deploy)


def _data_driven_twin(spec, n_experts, budget, delta, horizon, optimal, key):
    cap = math.inf if spec.max_coefficient is None else spec.max_coefficient
    return TwinDataDrivenBalancing(
        n_experts, budget, spec.empirical, spec.d_min, spec.c, spec.delta, cap, spec.deploy
    )


twin.register(DynamicBalancing, _dynamic_balancing_twin)
twin.register(DataDrivenBalancing, _data_driven_twin)
