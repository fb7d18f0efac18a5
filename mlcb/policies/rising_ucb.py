"""R-ed-UCB (Metelli, Trovo, Pirola, Restelli 2022): optimistic forecasts for experts whose reward
rises as they are trained.

The rested rising bandit of "Stochastic Rising Bandits" (ICML 2022) fits a learner: its expected
reward (one minus its expected loss) rises, concavely, with its own training count. Each round
every expert's reward is forecast at the current round from a window of its latest rewards, and
the experts with the largest optimistic forecasts are trained (:class:`RisingUCB` gives the
formula, the parameters and every departure). The window sums come in O(1) from prefix sums of
each expert's rewards kept in an arena of doubling blocks. Ties go to the smaller expert index;
no confidence bounds for the certificate (widths ``nan``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from mlcb import validation
from mlcb.errors import PolicyStateFull
from mlcb.kernels import implements
from mlcb.kernels.jit import kernel
from mlcb.policies.base import BasePolicy
from mlcb.policies.selection import BLOCK, nan_widths, smallest_blocked
from mlcb.validation import InputError

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
    nan_widths(widths, found)
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
class RisingUCB(BasePolicy):
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

    def __post_init__(self) -> None:
        if not (validation.is_real(self.epsilon) and 0.0 < self.epsilon <= 0.5):
            raise InputError(f"epsilon must be a number in (0, 0.5], got {self.epsilon!r}")
        validation.positive("sigma", self.sigma)
        validation.positive("alpha", self.alpha)

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[RisingParams, RisingState]:
        """Kernel parameters and a fresh state; ``horizon`` sizes the history arena
        (``delta`` and ``optimal`` unused)."""
        n_experts, budget = int(n_experts), validation.budget(budget, n_experts)
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
