"""Successive halving over the experts (Jamieson and Talwalkar 2016), and its anytime version by
doubling brackets (Hyperband's infinite-horizon loop, Li et al. 2018).

Registered as ``successive-halving`` (one bracket within a budget of training steps) and
``hyperband`` (doubling brackets). Each rung gives its survivors equal numbers of training steps,
spent ``M`` a round on consecutive survivors, then keeps the better half by the mean training
loss of that rung; the deployed expert is the best survivor of the last finished rung. The
kernels read only the statistics the engine keeps and the training losses they are shown; the
rule is deterministic, ties go to the smaller expert index, and there are no confidence bounds
(widths ``nan``, no certificate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from mlcb import validation
from mlcb.kernels import implements
from mlcb.kernels.jit import kernel
from mlcb.policies.base import MAX_STEPS, BasePolicy


@kernel
def _argmin_mean(stats):
    """The expert with the smallest mean training loss (ties: the smaller index)."""
    chosen = 0
    best = stats[0].loss_sum / stats[0].n
    for k in range(1, stats.shape[0]):
        value = stats[k].loss_sum / stats[k].n
        if value < best:
            chosen = k
            best = value
    return chosen


class HalvingParams(NamedTuple):
    n_experts: int  # K
    budget: int  # M
    steps: int  # training steps of the first (or only) bracket
    rungs: int  # ceil(log2 K), at least 1
    doubling: bool


#: Integer counters of the halving state: survivors, training steps per survivor in this rung,
#: steps taken in this rung, the deployed leader, finished flag, bracket.
ALIVE, PER, DONE, LEADER, FINISHED, BRACKET = 0, 1, 2, 3, 4, 5


class HalvingState(NamedTuple):
    alive: np.ndarray  # (K,) int64 survivors of the bracket, in training order
    rung_sum: np.ndarray  # (K,) float64 training losses of each expert in the current rung
    counters: np.ndarray  # (6,) int64 see ALIVE..BRACKET
    steps: np.ndarray  # (1,) int64 the current bracket's budget of training steps


@kernel
def _start_rung(params, state):
    counters = state.counters
    alive = counters[ALIVE]
    counters[PER] = max(1, state.steps[0] // (alive * params.rungs))
    counters[DONE] = 0
    for j in range(alive):
        state.rung_sum[state.alive[j]] = 0.0


@kernel
def _start_bracket(params, state):
    for k in range(params.n_experts):
        state.alive[k] = k
    state.counters[ALIVE] = params.n_experts
    _start_rung(params, state)


@implements("select", HalvingParams)
@kernel
def _halving_select(params, state, stats, t, key, selected, widths):
    counters = state.counters
    if counters[LEADER] < 0:
        counters[LEADER] = _argmin_mean(stats)
    if counters[FINISHED] == 1:
        selected[0] = state.alive[0]
        widths[0] = math.nan
        return 1, state.alive[0]
    alive = counters[ALIVE]
    remaining = alive * counters[PER] - counters[DONE]
    count = min(params.budget, alive, remaining)
    for j in range(count):
        selected[j] = state.alive[(counters[DONE] + j) % alive]
        widths[j] = math.nan
    counters[DONE] += count
    return count, counters[LEADER]


@implements("observe", HalvingParams)
@kernel
def _halving_observe(params, state, stats, k, loss, t):
    if t > 0:
        state.rung_sum[k] += loss


@implements("end_round", HalvingParams)
@kernel
def _halving_end_round(params, state, stats, selected, n_selected, deployed, loss, t):
    counters = state.counters
    alive = counters[ALIVE]
    if counters[FINISHED] == 1 or counters[DONE] < alive * counters[PER]:
        return
    # Rung over: every survivor took PER steps; keep the better half by the rung's mean loss
    # (equal step counts: the sum orders as the mean). Insertion sort on (sum, index).
    order = state.alive
    for j in range(1, alive):
        k = order[j]
        value = state.rung_sum[k]
        i = j
        while i > 0:
            other = order[i - 1]
            if state.rung_sum[other] > value or (state.rung_sum[other] == value and other > k):
                order[i] = other
                i -= 1
            else:
                break
        order[i] = k
    keep = (alive + 1) // 2
    counters[ALIVE] = keep
    counters[LEADER] = order[0]
    if keep > 1:
        _start_rung(params, state)
    elif params.doubling:
        counters[BRACKET] += 1
        state.steps[0] = 2 * state.steps[0]
        _start_bracket(params, state)
    else:
        counters[FINISHED] = 1


_HALVING_VARIANTS = ("once", "doubling")


@dataclass(frozen=True)
class SuccessiveHalving(BasePolicy):
    """Successive halving over the experts, with a budget of training steps; or its anytime
    version by doubling brackets.

    Jamieson and Talwalkar, "Non-stochastic best arm identification and hyperparameter
    optimization", AISTATS 2016 (river's ``model_selection.SuccessiveHalvingRegressor``):
    with ``B`` training steps and ``R = ceil(log2 K)`` rungs, rung ``r`` gives each of its
    ``s_r`` survivors ``max(1, floor(B / (s_r R)))`` training steps, then keeps the
    ``ceil(s_r / 2)`` with the smallest mean training loss *of that rung* (ties: the smaller
    index), until one is left.

    The budget of ``M`` steps a round is spent on consecutive survivors in a cycle, so every
    survivor takes the same number of steps in a rung; a round at the end of a rung trains only
    what the rung still needs (its unused budget is not carried over). The deployed expert is
    the *leader*: the best survivor of the last finished rung; before the first rung ends, the
    expert with the smallest warm-start loss.

    ``variant="once"`` (``successive-halving``) runs one bracket with ``B = steps`` (0: the
    run's whole budget ``horizon * M``); the winner is then trained (alone) and deployed for
    the rest of the run. ``variant="doubling"`` (``hyperband``) restarts a bracket over all
    ``K`` experts each time one ends, with twice the budget (Li, Jamieson, DeSalvo,
    Rostamizadeh, Talwalkar, "Hyperband", JMLR 18, 2018: the infinite-horizon loop that doubles
    the budget), so no horizon is needed: an anytime curve. Its first bracket has ``B = steps``
    (0: ``2 K R``).

    Parameters
    ----------
    variant : {"once", "doubling"}
        One bracket with a fixed budget, or doubling brackets (anytime).
    steps : int
        Training steps of the (first) bracket, in ``[0, 10**15]`` (:data:`~mlcb.policies.base.MAX_STEPS`);
        0 picks the default above.

    Notes
    -----
    Departures: the experts are learners that keep their state from bracket to bracket (a
    hyper-parameter search would restart its configurations); within each doubling bracket
    every expert starts again as a candidate, Hyperband's brackets with fewer candidates and
    more steps each are not run. Judging a rung by the mean of its own training losses is our
    reading of "the loss after the rung's pulls" for learners whose loss is only observed while
    they train. Warm start: every expert trained once. No confidence bounds, no certificate.
    O(M) per round, O(K^2) at the end of a rung (insertion sort; rare).

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("hyperband").variant
    'doubling'
    """

    variant: str = "once"
    steps: int = 0

    name: ClassVar[str] = "successive-halving"

    def __post_init__(self) -> None:
        validation.choice("variant", self.variant, _HALVING_VARIANTS)
        validation.integer("steps", self.steps, minimum=0, maximum=MAX_STEPS)

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[HalvingParams, HalvingState]:
        """Kernel parameters and a fresh state (``horizon`` sizes the default budget of
        ``"once"``; ``delta`` and ``optimal`` unused)."""
        n_experts, budget = int(n_experts), validation.budget(budget, n_experts)
        rungs = max(1, math.ceil(math.log2(n_experts))) if n_experts > 1 else 1
        doubling = self.variant == "doubling"
        steps = int(self.steps) or (2 * n_experts * rungs if doubling else int(horizon) * budget)
        params = HalvingParams(n_experts, budget, steps, rungs, doubling)
        state = HalvingState(
            alive=np.arange(n_experts, dtype=np.int64),
            rung_sum=np.zeros(n_experts),
            counters=np.zeros(6, dtype=np.int64),
            steps=np.array([steps], dtype=np.int64),
        )
        state.counters[LEADER] = -1
        state.counters[ALIVE] = n_experts
        state.counters[PER] = max(1, steps // (n_experts * rungs))
        if n_experts == 1:
            state.counters[FINISHED] = 1
        return params, state
