"""The selection rules practitioners already run over a pool of online learners.

Seven policies, each a learner-as-arm rule from the bandit or the hyper-parameter search
literature, adapted to the budgeted problem (each round: train at most ``M`` experts, deploy one):

:class:`BanditEpsilonGreedy`, :class:`BanditUCB1`, :class:`BanditThompson`
    river's ``model_selection.BanditRegressor`` / ``BanditClassifier`` and CapyMOA's
    ``automl.BanditClassifier`` way: every learner is an arm whose reward is its running
    (progressive-validation) training loss; no rate functions. After a burn-in in which the
    experts are trained cyclically, the ``M`` best indices are trained and the smallest
    empirical mean is deployed.
:class:`SuccessiveHalving`
    Jamieson and Talwalkar (2016) with a budget of training steps, and its anytime version
    with doubling budgets (Li et al. 2018, Hyperband's infinite-horizon loop): registered as
    ``successive-halving`` and ``hyperband``.
:class:`RisingUCB`
    R-ed-UCB (Metelli, Trovo, Pirola, Restelli 2022), built for arms whose expected reward
    rises with the number of pulls, as a learner's does with training.
:class:`EXP3P`
    EXP3.P (Auer, Cesa-Bianchi, Freund, Schapire 2002), the adversarial reference.

Every kernel only reads the statistics the engine keeps (``n_k``, the summed training losses)
and the losses it is shown; the random numbers come from the policy's counter-based stream
(:func:`mlcb.random.uniform` with counter ``t``). Ties go to the smaller expert index. None of
them has confidence bounds the certificate could use: their widths are ``nan``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from mlcb import validation
from mlcb._jit import kernel
from mlcb.errors import PolicyStateFull
from mlcb.kernels import implements
from mlcb.policies import _heap
from mlcb.policies.limited_advice import draw_extra
from mlcb.policies.selection import BLOCK, column_minima, insert_smallest, smallest, smallest_blocked
from mlcb.random import draw, uniform, ziggurat_normal


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


@kernel
def _nan_widths(widths, count):
    for j in range(count):
        widths[j] = math.nan


def _check_budget(n_experts: int, budget: int) -> tuple[int, int]:
    n_experts, budget = int(n_experts), int(budget)
    if not 1 <= budget <= n_experts:
        raise ValueError(f"budget must be an integer in [1, n_experts={n_experts}], got {budget!r}")
    return n_experts, budget


def _unit(name: str, value: object) -> None:
    if not (validation.is_real(value) and 0.0 <= value <= 1.0):
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")


# --- bandits over learners ---------------------------------------------------------------------
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
    index: np.ndarray  # (K,) float64 this round's index of every expert (scratch)
    permutation: np.ndarray  # (K,) int64 carried permutation for the uniform exploration draw
    total: np.ndarray  # (1,) int64 training steps so far, warm start included
    mean: np.ndarray  # (K,) float64 L_k = loss_sum_k / n_k, stored when k trains
    heap: np.ndarray  # (K,) int64 experts on a heap ordered by (L_k, k), when _heaped
    position: np.ndarray  # (K,) int64 slot of each expert in heap, -1 when out
    size: np.ndarray  # (1,) int64 heap size
    centre: np.ndarray  # (K,) float64 Thompson: loss_sum_k / (n_k + 1)
    spread: np.ndarray  # (K,) float64 Thompson: scale / sqrt(n_k + 1)
    lower: np.ndarray  # (K,) float64 UCB1: L_k - sqrt(reference / n_k), below the index
    count: np.ndarray  # (K,) float64 UCB1: n_k, stored when k trains
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
    _nan_widths(widths, budget)
    if _heaped(params):
        # Every expert is on the heap of means when a round starts: its top is argmin_k L_k.
        leader = state.heap[0]
    else:
        leader = np.int64(np.argmin(state.mean))  # ties: the smaller index
    if t <= params.burn_rounds:
        offset = ((t - 1) * budget) % n_experts
        for j in range(budget):
            selected[j] = (offset + j) % n_experts
        return budget, leader
    index = state.index
    if params.mode == EPSILON_GREEDY:
        epsilon = params.epsilon * math.exp(-params.decay * t)
        if uniform(key, t, 0) < epsilon:
            permutation = state.permutation
            for j in range(budget):
                span = n_experts - j
                r = j + min(np.int64(uniform(key, t, 1 + j) * span), span - 1)
                k = permutation[r]
                permutation[r] = permutation[j]
                permutation[j] = k
                selected[j] = k
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


class _LearnerBandit:
    """Shared build of the three bandits over learners (not registered itself)."""

    mode: ClassVar[int]
    warm_start: ClassVar[bool] = True
    has_certificate: ClassVar[bool] = False
    certificate_valid: ClassVar[bool] = False

    def _numbers(self) -> tuple[float, float, float, float]:
        return 0.0, 0.0, 0.0, 0.0

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[LearnerBanditParams, LearnerBanditState]:
        """Kernel parameters and a fresh state (``delta``, ``horizon`` and ``optimal`` unused)."""
        n_experts, budget = _check_budget(n_experts, budget)
        epsilon, decay, c, scale = self._numbers()
        burn_rounds = -(-n_experts * int(self.burn_in) // budget)
        params = LearnerBanditParams(n_experts, budget, self.mode, epsilon, decay, c, scale, burn_rounds)
        state = LearnerBanditState(
            index=np.zeros(n_experts),
            permutation=np.arange(n_experts, dtype=np.int64),
            total=np.zeros(1, dtype=np.int64),
            mean=np.zeros(n_experts),
            heap=np.zeros(n_experts, dtype=np.int64),
            position=np.full(n_experts, -1, dtype=np.int64),
            size=np.zeros(1, dtype=np.int64),
            centre=np.zeros(n_experts),
            spread=np.zeros(n_experts),
            lower=np.zeros(n_experts),
            count=np.zeros(n_experts),
            column=np.zeros(BLOCK),
            visit=np.zeros(BLOCK, dtype=np.int64),
            reference=np.full(1, -np.inf),
        )
        return params, state


@dataclass(frozen=True)
class BanditEpsilonGreedy(_LearnerBandit):
    """epsilon-greedy over learners on their mean training loss, with burn-in.

    River's ``model_selection.BanditRegressor`` / ``BanditClassifier`` with its
    ``bandit.EpsilonGreedy`` policy (and CapyMOA's ``automl.BanditClassifier``): each learner is
    an arm, the arm's reward its running training metric, no rate functions.
    Every expert is trained once before round 1 (the warm start), then for ``ceil(K burn_in / M)``
    rounds the experts are trained cyclically as by ``round-robin``, so that each has at least
    ``burn_in`` updates besides its warm start (river's ``burn_in``, during which every model
    learns). The deployed expert is ``argmin_k L_k``, the smallest mean training loss of all
    experts (river predicts with the best arm), where ``L_k`` is the mean of the expert's
    progressive-validation training losses since its first update.

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
        Updates ``>= 0`` every expert receives, cyclically, before the bandit rule starts
        (river's default 100).

    Notes
    -----
    Departures from river: the arms are chosen for training (at most ``M`` a round) and a
    separate deployed expert is the best empirical mean; river trains only the chosen model
    after the burn-in and predicts with the best one, which is our ``M = 1``. River's decay is
    per update; ours is per round. Anytime; no confidence bounds (widths ``nan``, no
    certificate). The experts sit on an indexed heap ordered by ``(L_k, k)``, re-sifted when
    one trains: O(M log K) per round.

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
        _unit("epsilon", self.epsilon)
        validation.non_negative("decay", self.decay)
        validation.integer("burn_in", self.burn_in, minimum=0)

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
    and ``n_k`` expert ``k``'s. ``S_t`` is the ``M`` smallest indices.
    Every expert is trained once before round 1 (the warm start), then for ``ceil(K burn_in / M)``
    rounds the experts are trained cyclically as by ``round-robin``, so that each has at least
    ``burn_in`` updates besides its warm start (river's ``burn_in``, during which every model
    learns). The deployed expert is ``argmin_k L_k``, the smallest mean training loss of all
    experts (river predicts with the best arm), where ``L_k`` is the mean of the expert's
    progressive-validation training losses since its first update.

    Parameters
    ----------
    c : float
        Exploration constant ``> 0``; 2 is UCB1's ``sqrt(2 ln N / n)``.
    burn_in : int
        Cyclic updates ``>= 0`` per expert before the index rule (river's default 100).

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
        validation.integer("burn_in", self.burn_in, minimum=0)

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
    and Tsang 2000, 256 layers; :func:`mlcb.random.ziggurat_normal`): ``Z_k`` reads the 64-bit
    words at slots ``k, k + 2^32, k + 2 * 2^32, ...`` in turn, almost always only the first
    (its low 8 bits pick a layer, bit 8 the sign, its top 53 bits the point in the layer; about
    1.5 % of the draws fall outside their layer's inner rectangle and read further words for the
    rejection test or the tail). Each ``Z_k`` is an exact N(0, 1) draw, up to double-precision
    rounding, and a pure function of the stream's key, ``t`` and ``k``. ``S_t`` is the ``M``
    smallest samples.
    Every expert is trained once before round 1 (the warm start), then for ``ceil(K burn_in / M)``
    rounds the experts are trained cyclically as by ``round-robin``, so that each has at least
    ``burn_in`` updates besides its warm start (river's ``burn_in``, during which every model
    learns). The deployed expert is ``argmin_k L_k``, the smallest mean training loss of all
    experts (river predicts with the best arm), where ``L_k`` is the mean of the expert's
    progressive-validation training losses since its first update.

    Parameters
    ----------
    scale : float
        Standard-deviation multiplier ``> 0`` of the posterior (1 in Agrawal and Goyal).
    burn_in : int
        Cyclic updates ``>= 0`` per expert before sampling (river's default 100).

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
        validation.integer("burn_in", self.burn_in, minimum=0)

    def _numbers(self) -> tuple[float, float, float, float]:
        return 0.0, 0.0, 0.0, float(self.scale)


# --- successive halving ------------------------------------------------------------------------
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
class SuccessiveHalving:
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
        Training steps ``>= 0`` of the (first) bracket; 0 picks the default above.

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
    warm_start: ClassVar[bool] = True
    has_certificate: ClassVar[bool] = False
    certificate_valid: ClassVar[bool] = False

    def __post_init__(self) -> None:
        validation.choice("variant", self.variant, _HALVING_VARIANTS)
        validation.integer("steps", self.steps, minimum=0)

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[HalvingParams, HalvingState]:
        """Kernel parameters and a fresh state (``horizon`` sizes the default budget of
        ``"once"``; ``delta`` and ``optimal`` unused)."""
        n_experts, budget = _check_budget(n_experts, budget)
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


# --- R-ed-UCB ----------------------------------------------------------------------------------
#: Doubling blocks an expert's history may use (counts below 2**62).
BLOCKS = 62


class RisingParams(NamedTuple):
    n_experts: int  # K
    budget: int  # M
    epsilon: float  # window fraction: h = floor(epsilon n)
    sigma: float  # sub-Gaussian constant of the rewards
    alpha: float  # confidence schedule delta_t = t^-alpha


#: Rows of ``RisingState.expert``, one float per expert each.
MU, BASE, SLOPE, COUNT, LAG, SPREAD, KEY = range(7)


class RisingState(NamedTuple):
    # Few arrays: the round loop passes the state to every kernel call field by field.
    expert: np.ndarray  # (7, K) float64, rows:
    #   MU the estimated reward at the expert's current count; BASE mu_k, +inf while h_k = 0
    #   (the index's first term); SLOPE the estimated reward increase per step; COUNT n_k;
    #   LAG h_k - 1; SPREAD h_k^-3/2 (0 while h_k = 0); KEY minus this round's index (scratch)
    mins: np.ndarray  # (BLOCK,) float64 scratch of smallest_blocked
    blocks: np.ndarray  # (K, BLOCKS) int64 arena offset of each doubling block, -1 unallocated
    history: np.ndarray  # (2, A) float64 arena: row 0 P(n) = sum of the first n rewards,
    #   row 1 Q(n) = sum over l <= n of (l - 1) x_l
    top: np.ndarray  # (1,) int64 arena cursor
    pulls: np.ndarray  # (K,) int64 rewards recorded per expert

    @property
    def mu(self) -> np.ndarray:
        """Each expert's estimated reward at its current count."""
        return self.expert[MU]

    @property
    def slope(self) -> np.ndarray:
        """Each expert's estimated reward increase per step."""
        return self.expert[SLOPE]


@kernel
def _slot(blocks, k, n):
    """Arena position of an expert's count ``n >= 1``: block ``b = floor(log2 n)``."""
    b = 0
    while (n >> (b + 1)) > 0:
        b += 1
    return blocks[k, b] + (n - (np.int64(1) << b))


@kernel
def _prefixes(state, k, n):
    if n == 0:
        return 0.0, 0.0
    s = _slot(state.blocks, k, n)
    return state.history[0, s], state.history[1, s]


@implements("select", RisingParams)
@kernel
def _rising_select(params, state, stats, t, key, selected, widths):
    confidence = math.sqrt(10.0 * params.alpha * math.log(t))
    sigma, now = params.sigma, float(t)
    expert = state.expert
    keys, base, slope, spread = expert[KEY], expert[BASE], expert[SLOPE], expert[SPREAD]
    count, lag, mu = expert[COUNT], expert[LAG], expert[MU]
    for k in range(params.n_experts):  # contiguous arrays: a loop the compiler vectorises
        # Integers below 2^53 are exact in binary64: ahead is t - n_k and ahead + lag is
        # t - n_k + h_k - 1 as integers. While h_k = 0, base is +inf and slope and spread are
        # 0, so the key is -inf.
        ahead = now - count[k]
        bonus = sigma * (ahead + lag[k]) * confidence * spread[k]
        keys[k] = -(base[k] + ahead * slope[k] + bonus)
    found = smallest_blocked(keys, params.budget, selected, state.mins)
    _nan_widths(widths, found)
    chosen = selected[0]
    for j in range(1, found):
        k = selected[j]
        if mu[k] > mu[chosen] or (mu[k] == mu[chosen] and k < chosen):
            chosen = k
    return found, chosen


@kernel
def _rising_room(state, first, n):
    """The arena size that recording counts ``first .. n`` of an expert needs: the cursor plus
    the new doubling blocks (one of size ``m`` at every power of two ``m`` in that range)."""
    need = state.top[0]
    if first == n and (n & (n - 1)) != 0:  # the usual case: one reward inside an existing block
        return need
    m = np.int64(1)
    while m < first:
        m *= 2
    while m <= n:
        need += m
        m *= 2
    return need


@kernel
def _rising_record(state, k, n, reward):
    """Record ``reward`` as expert ``k``'s ``n``-th (its count of rewards so far plus one);
    returns its arena slot."""
    if (n & (n - 1)) == 0:  # n is a power of two: a new block of n entries
        b = 0
        while (n >> (b + 1)) > 0:
            b += 1
        state.blocks[k, b] = state.top[0]
        state.top[0] += n
    before_p, before_q = _prefixes(state, k, n - 1)
    s = _slot(state.blocks, k, n)
    state.history[0, s] = before_p + reward
    state.history[1, s] = before_q + (n - 1) * reward
    return s


@implements("observe", RisingParams)
@kernel
def _rising_observe(params, state, stats, k, loss, t):
    n = stats[k].n
    reward = 1.0 - loss
    first = state.pulls[k] + 1
    if _rising_room(state, first, n) > state.history.shape[1]:
        raise PolicyStateFull("r-ed-ucb: no room left for the rewards; RisingUCB.grow makes room")
    # One observation may stand for several updates (a warm start in which a learner made
    # several, reported with their mean loss): each of them is recorded with that reward.
    if first > n:  # no new update: nothing to record
        s = _slot(state.blocks, k, n)
    else:
        s = _rising_record(state, k, first, reward)
        for m in range(first + 1, n + 1):
            s = _rising_record(state, k, m, reward)
        state.pulls[k] = n
    h = np.int64(params.epsilon * n)
    expert = state.expert
    expert[COUNT, k] = n
    if h > 0:
        p_n, q_n = state.history[0, s], state.history[1, s]
        p_h, q_h = _prefixes(state, k, n - h)
        p_2h, q_2h = _prefixes(state, k, n - 2 * h)
        a = p_n - p_h
        b_ = p_h - p_2h
        c = q_n - q_h
        d = q_h - q_2h
        hh = float(h) * float(h)
        mu = ((2 * h - n + 1) * (a - b_) + (c - d)) / hh
        expert[MU, k] = mu
        expert[BASE, k] = mu
        expert[SLOPE, k] = (a - b_) / hh
        expert[LAG, k] = h - 1
        expert[SPREAD, k] = 1.0 / (h * math.sqrt(h))


@dataclass(frozen=True)
class RisingUCB:
    """R-ed-UCB: optimistic forecasts for experts whose reward rises as they are trained.

    Metelli, Trovo, Pirola, Restelli, "Stochastic Rising Bandits", ICML 2022 (PMLR 162): the
    rested rising bandit, whose arms' expected rewards are non-decreasing and concave in their
    own pull count, which is how a learner's expected loss behaves as it is trained. With
    rewards ``x = 1 - loss`` (the training losses), ``n = n_k`` pulls of expert ``k`` (the warm
    start included) and the window ``h = floor(epsilon n)``, the index at round ``t`` is::

        mu_k   = (1/h) sum_{l=n-h+1}^{n} [x_l + (n + 1 - l)(x_l - x_{l-h}) / h]
        B_k(t) = mu_k + (t - n) (1/h^2) sum_{l=n-h+1}^{n} (x_l - x_{l-h})
                 + sigma (t - n + h - 1) sqrt(10 log(1/delta_t) / h^3),  delta_t = t^-alpha

    ``mu_k`` extrapolates the window's slope to the expert's next training step (exact for a
    linear curve) and the second term carries it ``t - n`` steps further: a forecast of the
    reward the expert would reach if it were trained every round until ``t``, plus its
    confidence width; ``B_k = +inf`` while ``h = 0``. The expression is the authors' (their
    ``mu_hat + gamma_hat + beta``). With ``M = 1`` (as published) the expert with the largest
    ``B_k`` is trained and deployed (ties: the smaller index). The window sums come in O(1)
    from prefix sums of each expert's rewards, kept in doubling blocks of an arena (memory
    twice the training steps), built for the warm start and ``horizon`` rounds; when it is full
    the policy raises :class:`mlcb.errors.PolicyStateFull` before writing, and :meth:`grow`
    makes room (the Python engine and :mod:`mlcb.river` call it). One observation that stands
    for ``c`` updates (a warm start in which a learner made several, reported with their mean
    loss) is recorded as ``c`` rewards of that value.

    Our generalisation to ``M > 1`` (not in the paper): train the ``M`` largest indices and
    deploy the one of them with the largest current estimate ``mu_k`` (0 while ``h = 0``; ties:
    the smaller index). A learner can be trained at most once a round, so the forecast horizon
    ``t - n`` is the same as with ``M = 1``.

    Parameters
    ----------
    epsilon : float
        Window fraction in ``(0, 1/2]``; the authors' code uses 1/4.
    sigma : float
        Sub-Gaussian constant ``> 0`` of the rewards: 1/2 bounds any reward in ``[0, 1]``
        (the authors' experiments use 0.1, their noise level).
    alpha : float
        Exponent ``> 0`` of ``delta_t = t^-alpha``; the authors' code uses 4.

    Notes
    -----
    Departures: the authors' code freezes the slope term ``(t - n) ...`` at the round the arm
    was last pulled; we use the current round, as the paper's estimator. Their code starts with
    two round-robin passes; here the warm start and the ``+inf`` index while ``h = 0`` train
    every expert until ``n >= 1 / epsilon``. Ties go to the smaller index, not at random.
    Anytime. No certificate. Every index moves with ``t``: all ``K`` are computed each round,
    in a loop the compiler vectorises, and the ``M`` largest found by column minima
    (:func:`mlcb.policies.selection.smallest_blocked`): O(K) per round.

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("r-ed-ucb", epsilon=0.25).sigma
    0.5
    """

    epsilon: float = 0.25
    sigma: float = 0.5
    alpha: float = 4.0

    name: ClassVar[str] = "r-ed-ucb"
    warm_start: ClassVar[bool] = True
    has_certificate: ClassVar[bool] = False
    certificate_valid: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if not (validation.is_real(self.epsilon) and 0.0 < self.epsilon <= 0.5):
            raise ValueError(f"epsilon must be a number in (0, 0.5], got {self.epsilon!r}")
        validation.positive("sigma", self.sigma)
        validation.positive("alpha", self.alpha)

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[RisingParams, RisingState]:
        """Kernel parameters and a fresh state; ``horizon`` sizes the history arena
        (``delta`` and ``optimal`` unused)."""
        n_experts, budget = _check_budget(n_experts, budget)
        arena = 2 * (n_experts + int(horizon) * budget) + 2 * n_experts
        params = RisingParams(n_experts, budget, float(self.epsilon), float(self.sigma), float(self.alpha))
        expert = np.zeros((7, n_experts))
        expert[BASE] = np.inf
        expert[LAG] = -1.0
        state = RisingState(
            expert=expert,
            mins=np.zeros(BLOCK),
            blocks=np.full((n_experts, BLOCKS), -1, dtype=np.int64),
            history=np.zeros((2, arena)),
            top=np.zeros(1, dtype=np.int64),
            pulls=np.zeros(n_experts, dtype=np.int64),
        )
        return params, state

    def grow(self, params: RisingParams, state: RisingState, updates: int) -> RisingState:
        """``state`` with room for ``updates`` more rewards than it was built for (its history
        holds twice the rewards it records, built for the warm start and ``horizon`` rounds of
        ``budget`` updates). The Python engine grows it when a warm start counts several updates
        per expert, the river selectors when a stream runs past ``horizon``."""
        extra = np.zeros((2, 2 * max(0, int(updates))))
        return state._replace(history=np.concatenate([state.history, extra], axis=1))


# --- EXP3.P ------------------------------------------------------------------------------------
class EXP3PParams(NamedTuple):
    n_experts: int  # K
    budget: int  # M
    gamma: float
    step: float  # gamma / (3K)
    bias: float  # alpha / sqrt(K T)
    extra: int  # min(M - 1, K - 1) uniformly drawn extra experts
    ratio: float  # extra / (K - 1): inclusion probability q_k = p_k + (1 - p_k) ratio


class EXP3PState(NamedTuple):
    log_weight: np.ndarray  # (K,) float64
    p: np.ndarray  # (K,) float64 this round's distribution
    gain: np.ndarray  # (K,) float64 this round's importance-weighted reward estimates
    order: np.ndarray  # (K,) int64 scratch of the extra experts' draw


@implements("select", EXP3PParams)
@kernel
def _exp3p_select(params, state, stats, t, key, selected, widths):
    n_experts = params.n_experts
    p = state.p
    if n_experts == 1:
        p[0] = 1.0
        selected[0] = 0
        widths[0] = math.nan
        return 1, 0
    high = state.log_weight[0]
    for k in range(1, n_experts):
        high = max(high, state.log_weight[k])
    total = 0.0
    for k in range(n_experts):
        weight = math.exp(state.log_weight[k] - high)
        p[k] = weight
        total += weight
    floor_ = params.gamma / n_experts
    mass = 0.0
    for k in range(n_experts):
        p[k] = (1.0 - params.gamma) * p[k] / total + floor_
        mass += p[k]
    chosen = draw(p, mass, uniform(key, t, 0))
    selected[0] = chosen
    widths[0] = math.nan
    draw_extra(state.order, chosen, n_experts, params.extra, key, t, selected, widths)
    return 1 + params.extra, chosen


@implements("observe", EXP3PParams)
@kernel
def _exp3p_observe(params, state, stats, k, loss, t):
    p = state.p[k]
    state.gain[k] = (1.0 - loss) / (p + (1.0 - p) * params.ratio)


@implements("end_round", EXP3PParams)
@kernel
def _exp3p_end_round(params, state, stats, selected, n_selected, deployed, loss, t):
    for k in range(params.n_experts):
        state.log_weight[k] += params.step * (state.gain[k] + params.bias / state.p[k])
        state.gain[k] = 0.0


@dataclass(frozen=True)
class EXP3P:
    """EXP3.P over the experts: exponential weights with a high-probability bias.

    Auer, Cesa-Bianchi, Freund, Schapire, "The nonstochastic multiarmed bandit problem", SIAM
    J. Comput. 32(1), 2002, section 6 (Exp3.P). Each round, with weights ``w``::

        p_k  = (1 - gamma) w_k / sum w + gamma / K
        i_t  ~ p                                       (deployed and trained)
        xhat_k = x_k / q_k if k was trained, else 0    (x = 1 - training loss)
        w_k *= exp(gamma / (3K) (xhat_k + alpha / (p_k sqrt(K T))))

    The defaults are those of the paper's Theorem 6.3 (horizon ``T`` known):
    ``alpha = 2 sqrt(ln(K T / delta))`` and ``gamma = min(3/5, 2 sqrt(3 K ln K / (5 T)))``
    with the simulation's ``delta`` and horizon. Weights are kept as logarithms and shifted
    by their maximum before exponentiating (the paper's common initial weight
    ``exp(alpha gamma sqrt(T/K) / 3)`` cancels). The deployed decision is the drawn expert's
    smoothed one, by the simulation's smoothing wrapper.

    Our generalisation to ``M > 1`` (not in the paper): as in LimitedAdvice, ``min(M - 1,
    K - 1)`` further experts drawn uniformly without replacement from the others are trained
    too, and each trained expert's reward is weighted by its inclusion probability ``q_k = p_k
    + (1 - p_k)(M - 1)/(K - 1)`` (``q = p`` at ``M = 1``, the paper's estimate).

    Parameters
    ----------
    gamma : float
        Exploration rate in ``[0, 1]``; 0 picks the theorem's value.
    alpha : float
        Bias constant ``>= 0``; 0 picks the theorem's value.

    Notes
    -----
    The experts learn, so the rewards are not an oblivious sequence and the paper's bound does
    not bound the regret against ``L*``: this is the adversarial reference that CORRAL-style
    analyses start from. No warm start (as in the paper). Horizon-dependent through ``T``;
    O(K) per round. Random draws: slot 0 for ``i_t`` (inversion of ``p``), slot ``1 + j`` for
    the ``j``-th extra expert. No certificate.

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("exp3p", gamma=0.1).gamma
    0.1
    """

    gamma: float = 0.0
    alpha: float = 0.0

    name: ClassVar[str] = "exp3p"
    warm_start: ClassVar[bool] = False
    has_certificate: ClassVar[bool] = False
    certificate_valid: ClassVar[bool] = False

    def __post_init__(self) -> None:
        _unit("gamma", self.gamma)
        validation.non_negative("alpha", self.alpha)

    def constants(self, n_experts: int, horizon: int, delta: float) -> tuple[float, float]:
        """``(gamma, alpha)`` for ``n_experts``, ``horizon`` and ``delta`` (the theorem's where
        the parameter is 0)."""
        k, horizon = int(n_experts), int(horizon)
        gamma = self.gamma or min(0.6, 2.0 * math.sqrt(3.0 * k * math.log(k) / (5.0 * horizon)))
        alpha = self.alpha or 2.0 * math.sqrt(math.log(k * horizon / delta))
        return float(gamma), float(alpha)

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[EXP3PParams, EXP3PState]:
        """Kernel parameters and a fresh state (``optimal`` unused)."""
        n_experts, budget = _check_budget(n_experts, budget)
        gamma, alpha = self.constants(n_experts, horizon, delta)
        extra = min(budget - 1, n_experts - 1)
        params = EXP3PParams(
            n_experts,
            budget,
            gamma,
            gamma / (3.0 * n_experts),
            alpha / math.sqrt(n_experts * int(horizon)),
            extra,
            extra / (n_experts - 1) if n_experts > 1 else 0.0,
        )
        state = EXP3PState(
            log_weight=np.zeros(n_experts),
            p=np.full(n_experts, 1.0 / n_experts),
            gain=np.zeros(n_experts),
            order=np.zeros(n_experts, dtype=np.int64),
        )
        return params, state
