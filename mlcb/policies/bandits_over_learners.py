"""Bandits over learners: epsilon-greedy, UCB1 and Thompson sampling with each learner an arm.

The way river's ``model_selection.BanditRegressor`` / ``BanditClassifier`` and CapyMOA's
``automl.BanditClassifier`` pick among online learners: every learner is an arm whose reward is
its running (progressive-validation) training loss; no rate functions. The three policies share
everything but the index that ranks the experts:

* every expert is trained once before round 1 (the warm start), then for ``ceil(K burn_in / M)``
  rounds the experts are trained cyclically as by ``round-robin``, so that each has at least
  ``burn_in`` updates besides its warm start (river's ``burn_in``, during which every model
  learns);
* afterwards the ``M`` best indices are trained (:class:`BanditEpsilonGreedy`,
  :class:`BanditUCB1`, :class:`BanditThompson` define the index);
* the deployed expert is ``argmin_k L_k``, the smallest mean training loss of all experts (river
  predicts with the best arm), where ``L_k`` is the mean of the expert's progressive-validation
  training losses since its first update.

The kernels read only the statistics the engine keeps (``n_k``, the summed training losses);
random numbers come from the policy's counter-based stream (:mod:`mlcb.kernels.random`, counter ``t``).
Ties go to the smaller expert index. No confidence bounds: the widths are ``nan`` and there is
no certificate. Departures from river: the arms are chosen for training (at most ``M`` a round)
and a separate deployed expert is the best empirical mean; river trains only the chosen model
after the burn-in and predicts with the best one, which is our ``M = 1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from mlcb import validation
from mlcb.kernels import implements
from mlcb.kernels.jit import kernel
from mlcb.kernels.random import uniform, ziggurat_normal
from mlcb.policies import _heap
from mlcb.policies.base import MAX_ROUNDS, BasePolicy, check_unit
from mlcb.policies.selection import (
    BLOCK,
    column_minima,
    cycle,
    insert_smallest,
    nan_widths,
    shuffle_prefix,
    smallest,
    smallest_blocked,
)

EPSILON_GREEDY, UCB1, THOMPSON = 0, 1, 2


class LearnerBanditParams(NamedTuple):
    n_experts: int  # K
    budget: int  # M
    mode: int  # EPSILON_GREEDY, UCB1 or THOMPSON
    epsilon: float
    decay: float
    c: float
    scale: float
    burn_rounds: int  # rounds of cyclic burn-in, ceil(K burn_in / M)


class LearnerBanditState(NamedTuple):
    index: np.ndarray  # type: ignore[assignment]  # (K,) float64 this round's index of every expert (scratch)
    permutation: np.ndarray  # (K,) int64 carried permutation for the uniform exploration draw
    total: np.ndarray  # (1,) int64 training steps so far, warm start included
    mean: np.ndarray  # (K,) float64 L_k = loss_sum_k / n_k, stored when k trains
    heap: np.ndarray  # (K,) int64 experts on a heap ordered by (L_k, k), when _heaped
    position: np.ndarray  # (K,) int64 slot of each expert in heap, -1 when out
    size: np.ndarray  # (1,) int64 heap size
    centre: np.ndarray  # (K,) float64 Thompson: loss_sum_k / (n_k + 1)
    spread: np.ndarray  # (K,) float64 Thompson: scale / sqrt(n_k + 1)
    lower: np.ndarray  # (K,) float64 UCB1: L_k - sqrt(reference / n_k), below the index
    count: np.ndarray  # type: ignore[assignment]  # (K,) float64 UCB1: n_k, stored when k trains
    column: np.ndarray  # (BLOCK,) float64 UCB1: the smallest lower bound of each column;
    #   Thompson: scratch of smallest_blocked (one array for both: the state's arrays are few)
    visit: np.ndarray  # (BLOCK,) int64 UCB1: scratch, the columns of smallest bounds
    reference: np.ndarray  # (1,) float64 UCB1: c ln(N_ref), at least this round's c ln N


@kernel
def _heaped(params):
    """Whether the experts are kept on the heap of means: for epsilon-greedy, which pops its
    ``M`` best indices from it, and above ``SCAN_UP_TO`` experts, where its top is the leader.
    Up to ``SCAN_UP_TO`` experts, UCB1 and Thompson sampling find ``argmin_k L_k`` by a scan of
    the stored means instead (cheaper than re-sifting the trained experts)."""
    return params.mode == EPSILON_GREEDY or params.n_experts > SCAN_UP_TO


@implements("select", LearnerBanditParams)
@kernel
def _bandit_select(params, state, stats, t, key, selected, widths):
    n_experts = params.n_experts
    budget = params.budget
    nan_widths(widths, budget)
    if _heaped(params):
        # Every expert is on the heap of means when a round starts: its top is argmin_k L_k.
        leader = state.heap[0]
    else:
        leader = np.int64(np.argmin(state.mean))  # ties: the smaller index
    if t <= params.burn_rounds:
        cycle(n_experts, budget, t, selected)
        return budget, leader
    index = state.index
    if params.mode == EPSILON_GREEDY:
        epsilon = params.epsilon * math.exp(-params.decay * t)
        if uniform(key, t, 0) < epsilon:
            shuffle_prefix(state.permutation, n_experts, budget, key, t, 1, selected, 0)
            return budget, leader
        for j in range(budget):  # the M smallest L_k; pushed back when they have trained
            selected[j] = _heap.pop(state.heap, state.position, state.size, state.mean)
        return budget, selected[0]
    if params.mode == UCB1:
        if n_experts > SCAN_UP_TO:
            _ucb_select(params, state, stats, selected)
            return budget, leader
        # L_k is state.mean[k] (loss_sum_k / n_k, stored when k trained) and c ln N is
        # evaluated once: the same IEEE operations as loss_sum_k / n_k - sqrt(c ln N / n_k).
        a = params.c * math.log(state.total[0])
        mean = state.mean
        for k in range(n_experts):
            index[k] = mean[k] - math.sqrt(a / stats[k].n)
    else:
        for k in range(n_experts):  # expert k's normal: the ziggurat draw at base slot k
            index[k] = state.centre[k] + state.spread[k] * ziggurat_normal(key, t, k)
    smallest_blocked(index, budget, selected, state.column)
    return budget, leader


#: UCB1 scans every index up to this many experts, and searches by columns above it.
SCAN_UP_TO = 64
#: UCB1's reference count looks this fraction of K training steps ahead of the count at which
#: its lower bounds were last computed.
LOOKAHEAD = 1.0 / 16.0


@kernel
def _ucb_index(state, stats, k, a, found, budget, selected):
    """Compute expert ``k``'s index and keep the ``M`` best."""
    n = stats[k].n
    state.index[k] = stats[k].loss_sum / n - math.sqrt(a / n)
    return insert_smallest(state.index, k, found, budget, selected)


@kernel
def _ucb_column(state, stats, b, a, found, budget, selected):
    """Compute the index of every expert of column ``b`` (``k = b, b + BLOCK, ...``) whose
    lower bound could beat the ``M``-th best index found, and keep the ``M`` best (an expert
    already kept is not computed again; one computed and dropped cannot come back)."""
    index, lower = state.index, state.lower
    for k in range(b, index.shape[0], BLOCK):
        if found == budget:
            worst = selected[budget - 1]
            bound = lower[k]
            if bound > index[worst] or (bound == index[worst] and k > worst):
                continue
        kept = False
        for j in range(found):
            kept = kept or selected[j] == k
        if not kept:
            found = _ucb_index(state, stats, k, a, found, budget, selected)
    return found


@kernel
def _ucb_select(params, state, stats, selected):
    """The ``M`` smallest UCB1 indices, exactly, without computing all ``K`` (branch and bound).

    ``lower_k = L_k - sqrt(c ln N_ref / n_k)`` with ``N_ref >= N`` is below expert ``k``'s index
    ``L_k - sqrt(c ln N / n_k)`` and changes only when ``k`` trains. The experts are read in
    columns of ``BLOCK`` (expert ``k`` in column ``k mod BLOCK``), each with the smallest lower
    bound of its experts. The experts holding the ``M`` smallest column bounds (the ``M``
    smallest bounds of all) get their index computed first; then every column whose bound is
    not above the ``M``-th best index found so far is searched, and in it only the experts whose
    own bound is not above it. When ``c ln N`` passes ``c ln N_ref``, every bound is recomputed
    with ``N_ref = N + max(1, K / 16)`` (a vectorised pass every ``K / (16 M)`` rounds or so).
    With ``c ln N`` evaluated as by the scan, the selection is identical to sorting all ``K``
    indices.
    """
    n_experts = params.n_experts
    budget = params.budget
    a = params.c * math.log(state.total[0])
    column, lower = state.column, state.lower
    if a > state.reference[0]:
        ahead = max(1.0, math.floor(n_experts * LOOKAHEAD))
        reference = params.c * math.log(state.total[0] + ahead)
        state.reference[0] = reference
        mean, count = state.mean, state.count
        for k in range(n_experts):  # contiguous arrays: a loop the compiler vectorises
            lower[k] = mean[k] - math.sqrt(reference / count[k])
        column_minima(lower, column)
    visit = state.visit
    found = 0
    for j in range(smallest(column, min(budget, BLOCK), visit)):
        b = visit[j]
        k = b
        while k < n_experts and lower[k] != column[b]:
            k += BLOCK
        if k < n_experts:
            found = _ucb_index(state, stats, k, a, found, budget, selected)
    index = state.index
    for b in range(BLOCK):
        if found < budget or not column[b] > index[selected[budget - 1]]:
            found = _ucb_column(state, stats, b, a, found, budget, selected)


@kernel
def _ucb_lower(params, state, k, n):
    """Expert ``k``'s new lower bound (it trained), and its column's smallest bound."""
    old = state.lower[k]
    new = state.mean[k] - math.sqrt(state.reference[0] / n)
    state.lower[k] = new
    b = k % BLOCK
    if new <= state.column[b]:
        state.column[b] = new
    elif old == state.column[b]:  # it was the column's smallest: look again
        smallest_bound = math.inf
        for j in range(b, params.n_experts, BLOCK):
            smallest_bound = min(smallest_bound, state.lower[j])
        state.column[b] = smallest_bound


@implements("observe", LearnerBanditParams)
@kernel
def _bandit_observe(params, state, stats, k, loss, t):
    state.total[0] += 1
    n = stats[k].n
    state.mean[k] = stats[k].loss_sum / n
    if _heaped(params):
        _heap.resift(state.heap, state.position, state.size, state.mean, k)
    if params.mode == UCB1:
        state.count[k] = n
        if state.reference[0] > -math.inf:
            _ucb_lower(params, state, k, n)
    elif params.mode == THOMPSON:
        m = n + 1.0
        state.centre[k] = stats[k].loss_sum / m
        state.spread[k] = params.scale / math.sqrt(m)


class _LearnerBandit(BasePolicy):
    """Shared build of the three bandits over learners (not registered itself)."""

    mode: ClassVar[int]
    burn_in: int  # a field of every subclass

    def _numbers(self) -> tuple[float, float, float, float]:
        return 0.0, 0.0, 0.0, 0.0

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[LearnerBanditParams, LearnerBanditState]:
        """Kernel parameters and a fresh state (``delta``, ``horizon`` and ``optimal`` unused)."""
        n_experts, budget = int(n_experts), validation.budget(budget, n_experts)
        epsilon, decay, c, scale = self._numbers()
        burn_rounds = -(-n_experts * int(self.burn_in) // budget)
        params = LearnerBanditParams(n_experts, budget, self.mode, epsilon, decay, c, scale, burn_rounds)
        state = LearnerBanditState(
            index=np.zeros(n_experts),
            permutation=np.arange(n_experts, dtype=np.int64),
            total=np.zeros(1, dtype=np.int64),
            mean=np.zeros(n_experts),
            centre=np.zeros(n_experts),
            spread=np.zeros(n_experts),
            lower=np.zeros(n_experts),
            count=np.zeros(n_experts),
            column=np.zeros(BLOCK),
            visit=np.zeros(BLOCK, dtype=np.int64),
            reference=np.full(1, -np.inf),
            **_heap.empty(n_experts),
        )
        return params, state


@dataclass(frozen=True)
class BanditEpsilonGreedy(_LearnerBandit):
    """epsilon-greedy over learners on their mean training loss, with burn-in.

    River's ``model_selection.BanditRegressor`` / ``BanditClassifier`` with its
    ``bandit.EpsilonGreedy`` policy (and CapyMOA's ``automl.BanditClassifier``): each learner is
    an arm, the arm's reward its running training metric, no rate functions. Warm start,
    burn-in and the deployed expert ``argmin_k L_k``: as every bandit over learners (module
    docstring).

    After the burn-in, round ``t`` explores with probability ``epsilon_t = epsilon
    exp(-decay t)`` (uniform ``u_0`` at slot 0 below it): ``S_t`` is a uniformly random
    ``M``-subset (``M`` steps of a Fisher-Yates shuffle of a carried permutation, slots
    ``1..M``, as the ``uniform`` reference). Otherwise ``S_t`` is the ``M`` experts with the
    smallest ``L_k`` (the ``M`` best indices). Exploration is decided once per round for the
    whole training set: our choice for ``M > 1``.

    Parameters
    ----------
    epsilon : float
        Exploration probability in ``[0, 1]`` (river's default 0.1).
    decay : float
        Exponential decay ``>= 0`` of the exploration probability per round (river's
        ``decay``, default 0: constant).
    burn_in : int
        Updates every expert receives, cyclically, before the bandit rule starts, in
        ``[0, 10**10]`` (:data:`~mlcb.policies.base.MAX_ROUNDS`; river's default 100).

    Notes
    -----
    River's decay is per update; ours is per round (the other departures from river: module
    docstring). Anytime; no confidence bounds (widths ``nan``, no certificate). The experts sit
    on an indexed heap ordered by ``(L_k, k)``, re-sifted when one trains: O(M log K) per round.

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("bandit-epsilon-greedy", epsilon=0.2).epsilon
    0.2
    """

    epsilon: float = 0.1
    decay: float = 0.0
    burn_in: int = 100

    name: ClassVar[str] = "bandit-epsilon-greedy"
    mode: ClassVar[int] = EPSILON_GREEDY

    def __post_init__(self) -> None:
        check_unit("epsilon", self.epsilon)
        validation.non_negative("decay", self.decay)
        validation.integer("burn_in", self.burn_in, minimum=0, maximum=MAX_ROUNDS)

    def _numbers(self) -> tuple[float, float, float, float]:
        return float(self.epsilon), float(self.decay), 0.0, 0.0


@dataclass(frozen=True)
class BanditUCB1(_LearnerBandit):
    """UCB1 over learners on their mean training loss, with burn-in.

    River's ``model_selection.BanditRegressor`` with its ``bandit.UCB`` policy; the index is
    UCB1's (Auer, Cesa-Bianchi, Fischer 2002, "Finite-time analysis of the multiarmed bandit
    problem", Machine Learning 47) written for losses::

        index_k = L_k - sqrt(c ln N / n_k)

    with ``N`` the training steps taken so far by all experts (river counts the arms' pulls)
    and ``n_k`` expert ``k``'s. ``S_t`` is the ``M`` smallest indices after the burn-in;
    warm start, burn-in and the deployed expert ``argmin_k L_k``: as every bandit over learners
    (module docstring).

    Parameters
    ----------
    c : float
        Exploration constant ``> 0``; 2 is UCB1's ``sqrt(2 ln N / n)``.
    burn_in : int
        Cyclic updates per expert before the index rule, in ``[0, 10**10]`` (river's default 100).

    Notes
    -----
    The losses are training losses of *learning* experts, not i.i.d. draws: UCB1's guarantee
    does not carry over (a slow learner's early losses understate it). The index changes every
    round for every expert (through ``ln N``). Up to 64 experts all indices are computed each
    round (O(K M)); above, the ``M`` smallest are found exactly by branch and bound over lower
    bounds that change only when an expert trains (recomputed every ``K / 16`` training steps),
    searched by columns of 64 experts, so a round computes the index of the few experts that
    could compete instead of all ``K``. No certificate.

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("bandit-ucb1", c=1.0).c
    1.0
    """

    c: float = 2.0
    burn_in: int = 100

    name: ClassVar[str] = "bandit-ucb1"
    mode: ClassVar[int] = UCB1

    def __post_init__(self) -> None:
        validation.positive("c", self.c)
        validation.integer("burn_in", self.burn_in, minimum=0, maximum=MAX_ROUNDS)

    def _numbers(self) -> tuple[float, float, float, float]:
        return 0.0, 0.0, float(self.c), 0.0


@dataclass(frozen=True)
class BanditThompson(_LearnerBandit):
    """Gaussian Thompson sampling over learners on their training losses, with burn-in.

    River's ``model_selection.BanditRegressor`` with its ``bandit.ThompsonSampling`` policy;
    the posterior is the Gaussian one of Agrawal and Goyal ("Further optimal regret bounds for
    Thompson sampling", AISTATS 2013), written for losses: with ``m = n_k + 1``::

        theta_k = loss_sum_k / m + scale * Z_k / sqrt(m),   Z_k ~ N(0, 1)

    The normals come from the policy stream at counter ``t`` by the ziggurat method (Marsaglia
    and Tsang 2000, 256 layers; :func:`mlcb.kernels.random.ziggurat_normal`): ``Z_k`` reads the 64-bit
    words at slots ``k, k + 2^32, k + 2 * 2^32, ...`` in turn, almost always only the first
    (its low 8 bits pick a layer, bit 8 the sign, its top 53 bits the point in the layer; about
    1.5 % of the draws fall outside their layer's inner rectangle and read further words for the
    rejection test or the tail). Each ``Z_k`` is an exact N(0, 1) draw, up to double-precision
    rounding, and a pure function of the stream's key, ``t`` and ``k``. ``S_t`` is the ``M``
    smallest samples after the burn-in; warm start, burn-in and the deployed expert
    ``argmin_k L_k``: as every bandit over learners (module docstring).

    Parameters
    ----------
    scale : float
        Standard-deviation multiplier ``> 0`` of the posterior (1 in Agrawal and Goyal).
    burn_in : int
        Cyclic updates per expert before sampling, in ``[0, 10**10]`` (river's default 100).

    Notes
    -----
    River's default Thompson sampler uses a Beta posterior on binary rewards; losses here are in
    ``[0, 1]`` and need not be binary, so we use the Gaussian form. One normal draw per expert
    and round (the ziggurat's one word each, where Box-Muller would take a logarithm, a square
    root, a cosine and a sine per pair), then the ``M`` smallest by column minima above 128
    experts (:func:`mlcb.policies.selection.smallest_blocked`): O(K) per round. No certificate.

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("bandit-thompson", scale=0.5).scale
    0.5
    """

    scale: float = 1.0
    burn_in: int = 100

    name: ClassVar[str] = "bandit-thompson"
    mode: ClassVar[int] = THOMPSON

    def __post_init__(self) -> None:
        validation.positive("scale", self.scale)
        validation.integer("burn_in", self.burn_in, minimum=0, maximum=MAX_ROUNDS)

    def _numbers(self) -> tuple[float, float, float, float]:
        return 0.0, 0.0, 0.0, float(self.scale)
