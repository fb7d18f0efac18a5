"""Hedge (exponential weights) over N fixed predictors, as a compiled expert family.

Each expert of a bandit experts environment (:mod:`envs.bandit`) treats its ``N = n_arms[k]`` arms
as fixed predictors and learns with *full information*: on each of its training rounds it sees
the loss of every one of them under ``xi_t`` (the environment's ``arm_loss``), not only of the
one it plays. At its own round ``j`` (its update count plus one) its decision is the distribution

    ``p_{j,i} = exp(-eta_j (S_i - min_l S_l)) / sum_l exp(-eta_j (S_l - min_l S_l))``,
    ``eta_j = sqrt(8 ln N / j)``,

``S_i`` the cumulative loss of predictor ``i`` over the expert's past updates (subtracting the
smallest changes nothing but keeps the exponentials in range). The loss it records is the
*mixture loss* ``sum_i p_{j,i} l_i(xi_t)``, in ``[0, 1]`` and linear in ``p``, so its expected
loss is ``sum_i p_{j,i} mu_i`` and ``L_k*`` is the best predictor's loss mean.

Rate (docs/rates.md, section 5; Cesa-Bianchi and Lugosi 2006, Theorem 2.3, plus Hoeffding on the
best predictor's losses), :func:`agents.rates.hedge_rate`:

    ``U(n, delta') = min(n, sqrt(2 n ln N) + sqrt(ln N / 8) + sqrt((n/2) log(2 n^2 / delta')))``,

valid for every ``n >= 1`` (``alpha = 1/2``) and positive (its last term is). ``rate_scale``
other than 1 makes the expert heuristic.

Smoothing: ``"average"`` (the default) deploys the average of the past decisions ``p_1 .. p_n``,
``"last"`` the current ``p_{n+1}``; both pay the mixture loss of the deployed distribution.

Examples
--------
>>> expert = Hedge()
>>> expert.family, expert.heuristic, expert.alpha
(agents.hedge.HEDGE_FAMILY, False, 0.5)
>>> bool(expert.rate_function(10_000, 10, 0.005) < 0.06 * 10_000)  # U(n) / n, docs/rates.md §0
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from agents.family import BanditEnvironmentFamily, rate_values
from agents.rates import Counts, Rate
from envs.bandit import arm_loss
from mlcb import validation
from mlcb.contracts import BuildContext
from mlcb.kernels import implements, kernel
from mlcb.kernels.smoothing import LAST

__all__ = ["HEDGE_FAMILY", "Hedge", "HedgeFamily", "HedgeParams", "HedgeState", "learning_rate", "rate"]


class HedgeParams(NamedTuple):
    """What the kernels read of a Hedge pool (never written during a run)."""

    n_arms: np.ndarray  # (K,) int64: N_k, expert k's predictors (the environment's arms)
    rate_scale: np.ndarray  # (K,) float64: multiplier of the rate
    delta_prime: float  # delta / (2K): the level at which the policy reads the rates
    smoothing: int  # mlcb.kernels.smoothing code of the deploy wrapper


class HedgeState(NamedTuple):
    """The learning state of a Hedge pool (written by ``train`` only)."""

    cumulative: np.ndarray  # (K, m_max) float64: S_i, each predictor's cumulative loss
    weights: np.ndarray  # (K, m_max) float64: sum of the past decisions p_1 + ... + p_n
    steps: np.ndarray  # (K,) int64: n_k, updates so far


@kernel
def learning_rate(m, j):
    """``eta_j = sqrt(8 ln N / j)``."""
    return math.sqrt(8.0 * math.log(m) / j)


@kernel
def rate(m, scale, n, delta_prime):
    """``U(n, delta')`` of Hedge over ``m`` predictors (docs/rates.md, section 5), capped at ``n``;
    0 for ``n < 1``."""
    if n < 1:
        return 0.0
    log_m = math.log(m)
    value = (
        math.sqrt(2.0 * n * log_m)
        + math.sqrt(log_m / 8.0)
        + math.sqrt(0.5 * n * math.log(2.0 * n * n / delta_prime))
    )
    return min(float(n), scale * value)


@kernel
def _normaliser(cumulative, k, m, eta):
    """``(min_l S_l, sum_l exp(-eta (S_l - min_l S_l)))`` of expert ``k``."""
    smallest = math.inf
    for a in range(m):
        smallest = min(smallest, cumulative[k, a])
    total = 0.0
    for a in range(m):
        total += math.exp(-eta * (cumulative[k, a] - smallest))
    return smallest, total


# --- the kernels the engine calls ---------------------------------------------------------------
@implements("train", HedgeParams)
@kernel
def _train(params, state, env_params, env_state, k, t):
    m = params.n_arms[k]
    j = state.steps[k] + 1
    eta = learning_rate(m, j)
    smallest, total = _normaliser(state.cumulative, k, m, eta)
    loss = 0.0
    for a in range(m):
        # p_a reads S_a before this round's update (and smallest, total were computed before it).
        p = math.exp(-eta * (state.cumulative[k, a] - smallest)) / total
        one = arm_loss(env_params, t, k, a)
        loss += p * one
        state.weights[k, a] += p
        state.cumulative[k, a] += one  # full information: every predictor's loss is seen
    state.steps[k] = j
    return min(loss, 1.0), rate(m, params.rate_scale[k], j, params.delta_prime)


@implements("deploy", HedgeParams)
@kernel
def _deploy(params, state, env_params, env_state, k, t, key, slot):
    m = params.n_arms[k]
    means = env_params.loss_means  # (K, m_max): the predictors' loss means (expected losses)
    n = state.steps[k]
    loss = 0.0
    expected = 0.0
    # An expert never trained yet has no past decision: its current one is deployed.
    if params.smoothing == LAST or n == 0:
        eta = learning_rate(m, n + 1)
        smallest, total = _normaliser(state.cumulative, k, m, eta)
        for a in range(m):
            p = math.exp(-eta * (state.cumulative[k, a] - smallest)) / total
            loss += p * arm_loss(env_params, t, k, a)
            expected += p * means[k, a]
        return min(loss, 1.0), expected
    # The average of the past decisions.
    for a in range(m):
        p = state.weights[k, a] / n
        loss += p * arm_loss(env_params, t, k, a)
        expected += p * means[k, a]
    return min(loss, 1.0), expected


# --- the family ---------------------------------------------------------------------------------
class HedgeFamily(BanditEnvironmentFamily):
    """Hedge experts (:class:`Hedge`) as an :class:`mlcb.contracts.ExpertFamily`; its one instance
    is :data:`HEDGE_FAMILY`.

    A pool runs on a bandit experts environment (``mlcb/Trap-v0``, ``mlcb/BanditExperts-v0``):
    expert ``k``'s predictors are the environment's ``n_arms[k]`` arms, so a pool holds exactly
    ``env.n_experts`` experts; ``L_k*`` is the best arm's loss mean
    (:class:`agents.family.BanditEnvironmentFamily`). Rates are computed by the kernels' own
    :func:`rate` (:meth:`Hedge.rate_function`).
    """

    name = "hedge"
    smoothing = ("average", "last")

    def build_pool(self, context: BuildContext) -> tuple[HedgeParams, HedgeState]:
        # Hedge plays mixtures and draws nothing: the experts' keys are not needed.
        state = HedgeState(self.arm_zeros(context), self.arm_zeros(context), context.zeros(dtype=np.int64))
        return self.kernel_params(HedgeParams, context), state


#: The Hedge family (:class:`HedgeFamily`).
HEDGE_FAMILY = HedgeFamily()


@dataclass(frozen=True)
class Hedge:
    """Hedge over the expert's arms as fixed predictors, full information, ``eta_j = sqrt(8 ln N / j)``.

    ``rate_scale`` multiplies the rate (:func:`agents.rates.hedge_rate`); see :mod:`agents.hedge`.

    Examples
    --------
    >>> Hedge().alpha
    0.5
    """

    rate_scale: float = 1.0

    family: ClassVar[HedgeFamily] = HEDGE_FAMILY

    def __post_init__(self) -> None:
        validation.positive("rate_scale", self.rate_scale)

    @property
    def alpha(self) -> float:
        """The regret exponent, 1/2."""
        return 0.5

    @property
    def heuristic(self) -> bool:
        return self.rate_scale != 1.0

    def rate_function(self, n: Counts, n_arms: int, delta_prime: float) -> Rate:
        """``U(n, delta')`` over ``n_arms`` predictors, as the kernels report it (:func:`rate`):
        :func:`agents.rates.hedge_rate` times ``rate_scale``, capped at ``n``."""
        return rate_values(rate, n, (int(n_arms), float(self.rate_scale)), delta_prime)
