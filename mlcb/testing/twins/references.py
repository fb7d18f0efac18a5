"""Slow, obvious pure-Python twins of the simple reference policies (mlcb/policies/references.py).

Each twin recomputes its choice from the definitions in docs/baselines.md §5 every round (full
sorts and scans over all experts, empirical means from the raw statistics) and is registered with
:func:`mlcb.testing.twins.core.register` on import, so that ``mlcb.testing.twins.core.run`` can
simulate the policy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mlcb.testing.twins import core as twin


def _means(stats: twin.Stats) -> list:
    return [stats.loss_sum[k] / stats.n[k] if stats.n[k] > 0 else math.nan for k in range(len(stats.n))]


def _argmin(candidates, values, identity) -> tuple[int, bool]:
    """The candidate with the smallest value (smaller identity on ties) and whether a tie decided."""
    best = min(candidates, key=lambda k: (values[k], identity[k]))
    return best, sum(values[k] == values[best] for k in candidates) > 1


@dataclass
class TwinRoundRobin:
    n_experts: int
    budget: int
    deploy_within_s: bool = False
    warm_start: bool = True
    ties: bool = False

    def select(self, t: int, stats: twin.Stats):
        offset = ((t - 1) * self.budget) % self.n_experts
        cycle = stats.by_identity()  # the cycle runs through the experts in identity order
        chosen = [cycle[(offset + j) % self.n_experts] for j in range(self.budget)]
        means = _means(stats)
        pool = chosen if self.deploy_within_s else range(self.n_experts)
        deployed, tie = _argmin([k for k in pool if stats.n[k] > 0], means, stats.identity)
        self.ties = self.ties or tie
        return chosen, deployed, [math.nan] * len(chosen)

    def observe(self, k, loss, t, stats) -> None:
        pass

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        pass


@dataclass
class TwinUniform:
    n_experts: int
    budget: int
    key: int
    warm_start: bool = True
    ties: bool = False
    permutation: list = field(default_factory=list)

    def select(self, t: int, stats: twin.Stats):
        if not self.permutation:
            self.permutation = stats.by_identity()  # starts as the identity order
        p = self.permutation
        for j in range(self.budget):
            span = self.n_experts - j
            r = j + min(int(twin.uniform(self.key, t, j) * span), span - 1)
            p[j], p[r] = p[r], p[j]
        chosen = p[: self.budget]
        position = min(int(twin.uniform(self.key, t, self.budget) * self.budget), self.budget - 1)
        return chosen, chosen[position], [math.nan] * self.budget

    def observe(self, k, loss, t, stats) -> None:
        pass

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        pass


@dataclass
class TwinGreedy:
    n_experts: int
    budget: int
    warm_start: bool = True
    ties: bool = False

    def select(self, t: int, stats: twin.Stats):
        means = _means(stats)
        order = sorted(range(self.n_experts), key=lambda k: (means[k], stats.identity[k]))
        chosen = order[: self.budget]
        inside = [means[k] for k in chosen]
        tie = len(set(inside)) < len(inside)
        tie = tie or (self.budget < self.n_experts and means[order[self.budget]] == inside[-1])
        self.ties = self.ties or tie
        return chosen, chosen[0], [math.nan] * len(chosen)

    def observe(self, k, loss, t, stats) -> None:
        pass

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        pass


@dataclass
class TwinFullBudget:
    n_experts: int
    delta: float
    bonus_scale: float = 1.0
    warm_start: bool = True
    ties: bool = False

    def select(self, t: int, stats: twin.Stats):
        ucb = []
        for k in range(self.n_experts):
            n = stats.n[k]
            width = math.sqrt(2.0 * math.log(4.0 * self.n_experts * n * n / self.delta) / n)
            ucb.append(stats.loss_sum[k] / n + self.bonus_scale * width)
        chosen = stats.by_identity()
        deployed, tie = _argmin(chosen, ucb, stats.identity)
        self.ties = self.ties or tie
        return chosen, deployed, [math.nan] * self.n_experts

    def observe(self, k, loss, t, stats) -> None:
        pass

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        pass


@dataclass
class TwinOracle:
    optimal: list
    warm_start: bool = False
    ties: bool = False

    def select(self, t: int, stats: twin.Stats):
        best = min(range(len(self.optimal)), key=lambda k: (self.optimal[k], stats.identity[k]))
        return [best], best, [math.nan]

    def observe(self, k, loss, t, stats) -> None:
        pass

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        pass


def _register() -> None:
    from mlcb.policies import references as r

    twin.register(
        r.RoundRobin,
        lambda spec, n, m, delta, horizon, optimal, key: TwinRoundRobin(n, m, spec.deploy_within_S),
    )
    twin.register(r.Uniform, lambda spec, n, m, delta, horizon, optimal, key: TwinUniform(n, m, key))
    twin.register(r.Greedy, lambda spec, n, m, delta, horizon, optimal, key: TwinGreedy(n, m))
    twin.register(
        r.FullBudget,
        lambda spec, n, m, delta, horizon, optimal, key: TwinFullBudget(n, delta, spec.bonus_scale),
    )
    twin.register(
        r.Oracle,
        lambda spec, n, m, delta, horizon, optimal, key: TwinOracle(list(optimal)),
    )


_register()
