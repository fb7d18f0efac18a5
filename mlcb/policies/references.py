"""Simple reference meta-policies (docs/baselines.md §5).

Five yardsticks for the budgeted expert-selection problem, none of them from a paper (the
generalisations and every detail below are this project's choices):

:class:`RoundRobin`
    train ``M`` experts cyclically, deploy the best empirical mean;
:class:`Uniform`
    train a uniform random ``M``-subset, deploy a uniform member of it (a sanity floor);
:class:`Greedy`
    train the ``M`` smallest empirical means and deploy the smallest, no exploration bonus;
:class:`FullBudget`
    train all ``K`` experts every round whatever the budget and deploy M-LCB's smallest UCB (the
    unlimited-budget reference);
:class:`Oracle`
    train and deploy the best expert ``k* = argmin_k L_k*`` only (a lower reference curve).

All but the Oracle train every expert once before round 1 (the warm start of M-LCB), so every
empirical mean ``L_k = loss_sum_k / n_k`` exists from round 1 on. Ties go to the smaller expert
index. None of them has confidence bounds: the widths they report are ``nan``, so the recorded
certificate is ``nan`` too, and ``has_certificate`` is False. All are anytime (nothing depends on
the horizon) and use the project's default smoothing wrapper.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from mlcb import validation
from mlcb.kernels import implements, tables
from mlcb.kernels.jit import kernel
from mlcb.kernels.random import uniform
from mlcb.policies import _heap
from mlcb.policies.base import BasePolicy
from mlcb.policies.hoeffding import hoeffding_table, hoeffding_width
from mlcb.policies.selection import cycle, nan_widths, shuffle_prefix
from mlcb.validation import InputError


# --- RoundRobin --------------------------------------------------------------------------------
class RoundRobinParams(NamedTuple):
    n_experts: int
    budget: int
    deploy_within_s: bool


class RoundRobinState(NamedTuple):
    mean: np.ndarray  # (K,) float64 L_k = loss_sum_k / n_k, nan while n_k = 0


@implements("select", RoundRobinParams)
@kernel
def _round_robin_select(params, state, stats, t, key, selected, widths):
    n_experts = params.n_experts
    cycle(n_experts, params.budget, t, selected)
    nan_widths(widths, params.budget)
    chosen = selected[0]
    best = math.inf
    if params.deploy_within_s:
        for j in range(params.budget):
            k = selected[j]
            value = state.mean[k]
            if stats[k].n > 0 and (value < best or (value == best and k < chosen)):
                chosen = k
                best = value
    else:
        found = False
        for k in range(n_experts):
            value = state.mean[k]
            if stats[k].n > 0 and (not found or value < best):  # ascending k: ties keep the first
                chosen = k
                best = value
                found = True
    return params.budget, chosen


@implements("observe", RoundRobinParams)
@kernel
def _round_robin_observe(params, state, stats, k, loss, t):
    state.mean[k] = stats[k].loss_sum / stats[k].n


@dataclass(frozen=True)
class RoundRobin(BasePolicy):
    """Round robin: train ``M`` experts cyclically, deploy the best empirical mean.

    Round ``t`` trains ``S_t = {(o_t + j) mod K : j < M}`` with ``o_t = ((t - 1) M) mod K``, so
    after ``t`` rounds every expert has ``floor(tM/K)`` or ``ceil(tM/K)`` updates besides its warm
    start. The deployed expert is ``argmin_k L_k`` over all trained experts (ties: smaller index),
    which may lie outside ``S_t``; with ``deploy_within_S`` it is the argmin within ``S_t``.

    Parameters
    ----------
    deploy_within_S : bool
        Deploy the best empirical mean among this round's trained experts instead of among all.

    Notes
    -----
    docs/baselines.md §5 ([ours]: no paper). Warm start: every expert trained once. Deterministic;
    ``O(K)`` per round for the global argmin (``O(M)`` with ``deploy_within_S``). No confidence
    bounds: widths ``nan``, no certificate.

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("round-robin", deploy_within_S=True).deploy_within_S
    True
    """

    deploy_within_S: bool = False  # the option's name in docs/baselines.md §5

    name: ClassVar[str] = "round-robin"

    def __post_init__(self) -> None:
        validation.flag("deploy_within_S", self.deploy_within_S)

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[RoundRobinParams, RoundRobinState]:
        """Kernel parameters and a fresh state (``delta``, ``horizon`` and ``optimal`` unused)."""
        validation.budget(budget, n_experts)
        params = RoundRobinParams(int(n_experts), int(budget), bool(self.deploy_within_S))
        return params, RoundRobinState(mean=np.full(n_experts, np.nan))


# --- Uniform -----------------------------------------------------------------------------------
class UniformParams(NamedTuple):
    n_experts: int
    budget: int


class UniformState(NamedTuple):
    permutation: np.ndarray  # (K,) int64 a permutation of 0..K-1, carried from round to round


@implements("select", UniformParams)
@kernel
def _uniform_select(params, state, stats, t, key, selected, widths):
    budget = params.budget
    shuffle_prefix(state.permutation, params.n_experts, budget, key, t, 0, selected, 0)
    nan_widths(widths, budget)
    position = min(np.int64(uniform(key, t, budget) * budget), budget - 1)
    return budget, selected[position]


@dataclass(frozen=True)
class Uniform(BasePolicy):
    """Uniform random selection: train a uniform random ``M``-subset, deploy a uniform member.

    ``S_t`` comes from ``M`` steps of a Fisher-Yates shuffle of a permutation of ``0..K-1`` kept
    in the state (``O(M)`` per round, no reset): step ``j = 0..M-1`` swaps position ``j`` with
    position ``j + floor(u_j (K - j))``, and ``S_t`` is the first ``M`` entries in that order.
    Whatever the permutation left by earlier rounds, the prefix is a uniformly random ordered
    ``M``-subset given the past. The deployed expert is entry ``floor(u_M M)`` of ``S_t``.
    Uniforms: ``u_s = uniform(key, t, s)`` with the policy's stream ``key`` and round ``t``,
    slot ``s = j`` for the swap ``j`` and slot ``s = M`` for the deployed member; every
    ``floor`` is capped at its range's last index against rounding.

    Notes
    -----
    Parameters: none; the randomness is the policy's own stream of the simulation's seed.
    docs/baselines.md §5. Warm start: every expert trained once. Regret linear in ``T``: a
    sanity floor, not a competitor. No confidence bounds: widths ``nan``, no certificate.

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("uniform").name
    'uniform'
    """

    name: ClassVar[str] = "uniform"

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[UniformParams, UniformState]:
        """Kernel parameters and a fresh state (``delta``, ``horizon`` and ``optimal`` unused);
        the permutation starts as the identity."""
        validation.budget(budget, n_experts)
        params = UniformParams(int(n_experts), int(budget))
        return params, UniformState(permutation=np.arange(n_experts, dtype=np.int64))


# --- Greedy ------------------------------------------------------------------------------------
class GreedyParams(NamedTuple):
    n_experts: int
    budget: int


class GreedyState(NamedTuple):
    mean: np.ndarray  # (K,) float64 L_k
    heap: np.ndarray  # (K,) int64 experts not selected this round, a heap on (mean, index)
    position: np.ndarray  # (K,) int64 slot of each expert in heap, -1 when out
    size: np.ndarray  # (1,) int64 heap size


@implements("select", GreedyParams)
@kernel
def _greedy_select(params, state, stats, t, key, selected, widths):
    n_selected = min(params.budget, state.size[0])
    for j in range(n_selected):
        selected[j] = _heap.pop(state.heap, state.position, state.size, state.mean)
        widths[j] = math.nan
    return n_selected, selected[0]


@implements("observe", GreedyParams)
@kernel
def _greedy_observe(params, state, stats, k, loss, t):
    state.mean[k] = stats[k].loss_sum / stats[k].n
    _heap.push(state.heap, state.position, state.size, state.mean, k)


@dataclass(frozen=True)
class Greedy(BasePolicy):
    """Greedy: train the ``M`` smallest empirical means, deploy the smallest; no bonus.

    ``S_t`` is the ``M`` experts with the smallest ``L_k`` in increasing order (ties: smaller
    index first) and the deployed expert is its head, ``argmin_k L_k``. As in M-LCB only the
    trained experts' keys change, so ``S_t`` is popped from an indexed heap (``O(M log K)`` per
    round).

    Notes
    -----
    Parameters: none; no exploration, hence no constant to set.
    docs/baselines.md §5. Warm start: every expert trained once, so an expert whose first
    losses were unlucky may never be trained again: the trap preset (fast-learning suboptimal
    experts look best early) is built to catch this. No confidence bounds: widths ``nan``, no
    certificate.

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("greedy").name
    'greedy'
    """

    name: ClassVar[str] = "greedy"

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[GreedyParams, GreedyState]:
        """Kernel parameters and a fresh state (``delta``, ``horizon`` and ``optimal`` unused)."""
        validation.budget(budget, n_experts)
        state = GreedyState(mean=np.zeros(n_experts), **_heap.empty(n_experts))
        return GreedyParams(int(n_experts), int(budget)), state


# --- FullBudget --------------------------------------------------------------------------------
class FullBudgetParams(NamedTuple):
    n_experts: int
    delta: float
    bonus_scale: float
    hoeffding: np.ndarray  # (L,) tabulated hoeffding_width(n) for n < L (mlcb.kernels.tables); (0,) none


class FullBudgetState(NamedTuple):
    ucb: np.ndarray  # (K,) float64 UCB_k


@implements("select", FullBudgetParams)
@kernel
def _full_budget_select(params, state, stats, t, key, selected, widths):
    chosen = 0
    for k in range(params.n_experts):
        selected[k] = k
        widths[k] = math.nan
        if state.ucb[k] < state.ucb[chosen]:
            chosen = k
    return params.n_experts, chosen


@implements("observe", FullBudgetParams)
@kernel
def _full_budget_observe(params, state, stats, k, loss, t):
    expert = stats[k]
    n = expert.n
    if n < params.hoeffding.shape[0]:
        width = params.hoeffding[n]
    else:
        width = hoeffding_width(params.n_experts, params.delta, n)
    state.ucb[k] = expert.loss_sum / n + params.bonus_scale * width


@dataclass(frozen=True)
class FullBudget(BasePolicy):
    """Full budget: train all ``K`` experts every round, deploy the smallest UCB.

    ``S_t = {0, ..., K-1}`` whatever the run's budget ``M`` (``selection_size`` is ``K``), so a
    round costs ``K/M`` times the budget. The deployed expert is ``argmin_k UCB_k`` (ties:
    smaller index) with M-LCB's upper bound (docs/theory.md §2, with ``M = K``; the LCB plays no
    role)::

        UCB_k = L_k + bonus_scale * sqrt(2 log(4 K n_k^2 / delta) / n_k)

    ``delta`` is the simulation's. It is the unlimited-budget reference.

    Parameters
    ----------
    bonus_scale : float
        Multiplier ``s > 0`` on the width, as M-LCB's (1 is the theory value).

    Notes
    -----
    docs/baselines.md §5. Warm start: every expert trained once. The widths it reports are
    ``nan``: M-LCB's certificate with ``M = K`` would weigh the summed widths by ``1/K``, but the
    engine divides them by the run's budget ``M``, so a number recorded there would be no
    certificate; ``has_certificate`` is False. The Top-M regret divides by ``K`` trained experts
    and compares with the best ``M``: not meaningful for this policy.

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("full-budget").selection_size(10, 2)
    10
    """

    bonus_scale: float = 1.0

    name: ClassVar[str] = "full-budget"

    def __post_init__(self) -> None:
        validation.positive("bonus_scale", self.bonus_scale)

    def selection_size(self, n_experts: int, budget: int) -> int:
        """Experts trained per round: all ``n_experts``, whatever the budget."""
        return int(n_experts)

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[FullBudgetParams, FullBudgetState]:
        """Kernel parameters and a fresh state (``budget`` and ``optimal`` unused; ``horizon``
        sizes the width table)."""
        validation.budget(budget, n_experts)
        hoeffding = hoeffding_table(int(n_experts), float(delta), int(horizon), tables.TABLE_BUDGET_BYTES)
        params = FullBudgetParams(int(n_experts), float(delta), float(self.bonus_scale), hoeffding)
        return params, FullBudgetState(ucb=np.zeros(n_experts))


# --- Oracle ------------------------------------------------------------------------------------
class OracleParams(NamedTuple):
    best: int  # k* = argmin_k L_k*


class OracleState(NamedTuple):
    pass


@implements("select", OracleParams)
@kernel
def _oracle_select(params, state, stats, t, key, selected, widths):
    selected[0] = params.best
    widths[0] = math.nan
    return 1, params.best


@dataclass(frozen=True)
class Oracle(BasePolicy):
    """Oracle: train and deploy the best expert ``k* = argmin_k L_k*`` every round.

    ``S_t = {k*}`` and ``i_t = k*``, with ``k*`` the smallest index among the minimisers of the
    experts' optimal losses ``L_k*``, which the simulator passes to :meth:`build` (no real policy
    may look at them). Its regret is ``k*``'s own learning regret: a lower reference curve, not a
    competitor.

    Notes
    -----
    Parameters: none; ``k*`` comes from the simulator at :meth:`build`.
    docs/baselines.md §5. No warm start (``warm_start`` is False): only ``k*`` is ever trained,
    and in round 1 it deploys its initial decision. It trains one expert per round and leaves the
    rest of the budget unused (docs/baselines.md §0, single-update methods). No confidence
    bounds: widths ``nan``, no certificate.

    Examples
    --------
    >>> import numpy as np
    >>> from mlcb.policies import make
    >>> params, state = make("oracle").build(3, 2, 0.1, 100, np.array([0.5, 0.2, 0.2]))
    >>> params.best
    1
    """

    name: ClassVar[str] = "oracle"
    warm_start: ClassVar[bool] = False

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[OracleParams, OracleState]:
        """Kernel parameters (``k*`` from ``optimal``) and the (empty) state."""
        validation.budget(budget, n_experts)
        values = np.asarray(optimal, dtype=float)
        if values.shape != (n_experts,) or not np.all(np.isfinite(values)):
            raise InputError(f"optimal must be {n_experts} finite L_k* values, got {optimal!r}")
        return OracleParams(int(np.argmin(values))), OracleState()
