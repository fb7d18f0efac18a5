"""Robust UCB for heavy tails (Bubeck, Cesa-Bianchi and Lugosi 2013) as a compiled expert family.

Each expert runs a UCB policy over its own arms of a bandit experts environment
(:mod:`envs.bandit`) whose mean estimates are *truncated means*, which concentrate under a moment
condition alone: if every arm's observation ``Z`` has ``E|Z|^(1+eps) <= u`` for some
``eps in (0, 1]``, the estimate's error after ``s`` samples is of order
``(log(1/delta) / s)^(eps / (1+eps))`` instead of Hoeffding's ``(log(1/delta) / s)^(1/2)``, and the
expert's regret exponent is ``alpha = 1 / (1 + eps)`` (``eps = 1``: ``alpha = 1/2``;
``eps = 1/2``: ``2/3``; ``eps = 1/3``: ``3/4``). docs/rates.md, section 6, derives the anytime
version used here; in loss space, with ``delta0 = delta' / 2`` and ``m`` arms:

* the ``t``-th sample ``Z_{a,t}`` of arm ``a`` is kept in the sum ``T_a`` if
  ``|Z_{a,t}| <= B_t = (u t / log(4 m t^2 / delta0))^(1/(1+eps))``, and counted as 0 otherwise
  (each sample is truncated once, on arrival);
* the expert plays every arm once (lowest index first), then the arm of smallest lower confidence
  bound ``T_a / N_a - rho(N_a)``, ties going to the lowest arm, with
  ``rho(s) = c_eps u^(1/(1+eps)) (log(4 m s^2 / delta0) / s)^(eps/(1+eps))`` and
  ``c_eps = 1 + eps + sqrt(2) + 2/3`` (:func:`agents.rates.heavy_tailed_constant`);
* its rate is :func:`agents.rates.heavy_tailed_rate`,
  ``U(n, delta') = min(n, 2 c_eps u^(1/(1+eps)) ((m-1) log(8 m n^2 / delta'))^(eps/(1+eps))
  n^(1/(1+eps)) + (m-1) + sqrt((n/2) log(4 n^2 / delta')))``, positive for every ``n >= 1``.

On the package's bandit environments the observation is the arm's loss in ``[0, 1]``, so
``E|Z|^(1+eps) <= 1`` and the default ``moment = 1`` makes the rate valid for every ``eps``:
the family is the heavy-tailed algorithm, with its heavier exploration, on bounded data. A
``moment`` below 1 (valid only when every arm's ``E|Z|^(1+eps)``, for a Bernoulli loss its mean,
is at most ``moment``) or a ``rate_scale`` other than 1 makes the expert heuristic.

Smoothing: the training decisions are single arms, so ``"counts"`` (the default), ``"average"``
and ``"uniform"`` all deploy an arm drawn from the pull counts; ``"last"`` deploys the current arm.

Examples
--------
>>> import agents
>>> expert = agents.make("robust-ucb", eps=0.5)
>>> expert.family.name, expert.alpha, expert.heuristic
('robust-ucb', 0.6666666666666666, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from agents.bandit_kernels import deploy_arm, deploy_by_counts
from agents.family import BanditEnvironmentFamily, rate_values
from agents.rates import Counts, Rate
from envs.bandit import arm_loss
from mlcb import validation
from mlcb.contracts import BuildContext
from mlcb.kernels import implements, kernel
from mlcb.kernels.smoothing import LAST
from mlcb.validation import InputError

__all__ = [
    "ROBUST_UCB_FAMILY",
    "RobustUCB",
    "RobustUCBFamily",
    "RobustUCBParams",
    "RobustUCBState",
    "radius",
    "rate",
    "robust_arm",
    "threshold",
]


class RobustUCBParams(NamedTuple):
    """What the kernels read of a robust UCB pool (never written during a run)."""

    n_arms: np.ndarray  # (K,) int64: m_k, expert k's arms
    eps: np.ndarray  # (K,) float64: moment order minus one, in (0, 1]
    moment: np.ndarray  # (K,) float64: u, the bound on E|Z|^(1+eps)
    rate_scale: np.ndarray  # (K,) float64: multiplier of the rate
    delta_prime: float  # delta / (2K): the level at which the policy reads the rates
    delta0: float  # delta' / 2: the internal confidence level of the estimates
    smoothing: int  # mlcb.kernels.smoothing code of the deploy wrapper


class RobustUCBState(NamedTuple):
    """The learning state of a robust UCB pool (written by ``train`` only)."""

    pulls: np.ndarray  # (K, m_max) int64: N_a
    sums: np.ndarray  # (K, m_max) float64: T_a, the sum of the arm's truncated samples
    steps: np.ndarray  # (K,) int64: n_k, updates so far


@kernel
def constant(eps):
    """``c_eps = 1 + eps + sqrt(2) + 2/3``."""
    return 1.0 + eps + math.sqrt(2.0) + 2.0 / 3.0


@kernel
def threshold(eps, moment, m, t, delta0):
    """``B_t = (u t / log(4 m t^2 / delta0))^(1/(1+eps))``: the ``t``-th sample's truncation level."""
    return (moment * t / math.log(4.0 * m * t * t / delta0)) ** (1.0 / (1.0 + eps))


@kernel
def radius(eps, moment, m, s, delta0):
    """``rho(s) = c_eps u^(1/(1+eps)) (log(4 m s^2 / delta0) / s)^(eps/(1+eps))``."""
    return (
        constant(eps)
        * moment ** (1.0 / (1.0 + eps))
        * (math.log(4.0 * m * s * s / delta0) / s) ** (eps / (1.0 + eps))
    )


@kernel
def rate(m, eps, moment, scale, n, delta_prime):
    """``U(n, delta')`` of a robust UCB expert with ``m`` arms (docs/rates.md, section 6), capped at
    ``n``; 0 for ``n < 1``."""
    if n < 1:
        return 0.0
    value = (
        2.0
        * constant(eps)
        * moment ** (1.0 / (1.0 + eps))
        * ((m - 1) * math.log(8.0 * m * n * n / delta_prime)) ** (eps / (1.0 + eps))
        * n ** (1.0 / (1.0 + eps))
        + (m - 1)
        + math.sqrt(0.5 * n * math.log(4.0 * n * n / delta_prime))
    )
    return min(float(n), scale * value)


@kernel
def robust_arm(pulls, sums, k, m, eps, moment, delta0):
    """The arm expert ``k`` plays: an unplayed arm (lowest first), else the arm of smallest
    ``T_a / N_a - rho(N_a)`` (lowest on ties)."""
    for a in range(m):
        if pulls[k, a] == 0:
            return a
    best = 0
    best_index = math.inf
    for a in range(m):
        s = pulls[k, a]
        index = sums[k, a] / s - radius(eps, moment, m, s, delta0)
        if index < best_index:
            best = a
            best_index = index
    return best


# --- the kernels the engine calls ---------------------------------------------------------------
@implements("train", RobustUCBParams)
@kernel
def _train(params, state, env_params, env_state, k, t):
    m = params.n_arms[k]
    eps = params.eps[k]
    moment = params.moment[k]
    j = state.steps[k] + 1
    arm = robust_arm(state.pulls, state.sums, k, m, eps, moment, params.delta0)
    loss = arm_loss(env_params, t, k, arm)
    s = state.pulls[k, arm] + 1  # this sample's index within its arm
    if abs(loss) <= threshold(eps, moment, m, s, params.delta0):
        state.sums[k, arm] += loss
    state.pulls[k, arm] = s
    state.steps[k] = j
    return loss, rate(m, eps, moment, params.rate_scale[k], j, params.delta_prime)


@implements("deploy", RobustUCBParams)
@kernel
def _deploy(params, state, env_params, env_state, k, t, key, slot):
    m = params.n_arms[k]
    n = state.steps[k]
    if params.smoothing == LAST or n == 0:  # never trained: no past decision, the current one
        arm = robust_arm(state.pulls, state.sums, k, m, params.eps[k], params.moment[k], params.delta0)
        return deploy_arm(env_params, k, t, arm)
    return deploy_by_counts(state.pulls, env_params, k, m, n, key, t, slot)


# --- the family ---------------------------------------------------------------------------------
class RobustUCBFamily(BanditEnvironmentFamily):
    """Robust UCB experts (:class:`RobustUCB`) as an :class:`mlcb.contracts.ExpertFamily`; its one
    instance is :data:`ROBUST_UCB_FAMILY`.

    A pool runs on a bandit experts environment (``mlcb/Trap-v0``, ``mlcb/BanditExperts-v0``):
    expert ``k`` plays the environment's ``n_arms[k]`` arms, so a pool holds exactly
    ``env.n_experts`` experts (:class:`agents.family.BanditEnvironmentFamily`).
    """

    name = "robust-ucb"
    smoothing = ("counts", "average", "uniform", "last")

    def build_pool(self, context: BuildContext) -> tuple[RobustUCBParams, RobustUCBState]:
        """Kernel parameters and fresh state of the pool on one replication; the estimates' level is
        ``delta0 = delta' / 2``. Robust UCB trains deterministically: the keys are not needed."""
        params = self.kernel_params(RobustUCBParams, context, delta0=context.delta_prime / 2.0)
        state = RobustUCBState(
            pulls=self.arm_zeros(context, np.int64),
            sums=self.arm_zeros(context),
            steps=context.zeros(dtype=np.int64),
        )
        return params, state


#: The robust UCB family (:class:`RobustUCBFamily`).
ROBUST_UCB_FAMILY = RobustUCBFamily()


@dataclass(frozen=True)
class RobustUCB:
    """UCB with truncated-mean estimates for observations with ``E|Z|^(1+eps) <= moment``.

    ``eps`` in ``(0, 1]`` sets the regret exponent ``alpha = 1 / (1 + eps)``; ``moment`` is ``u``
    (1 holds for losses in [0, 1]); ``rate_scale`` multiplies the rate. See
    :mod:`agents.robust_ucb` and docs/rates.md, section 6.

    Examples
    --------
    >>> RobustUCB(eps=1 / 3).alpha
    0.75
    """

    eps: float = 0.5
    moment: float = 1.0
    rate_scale: float = 1.0

    family: ClassVar[RobustUCBFamily] = ROBUST_UCB_FAMILY

    def __post_init__(self) -> None:
        if not (validation.is_real(self.eps) and 0 < self.eps <= 1):
            raise InputError(f"eps must be a number in (0, 1], got {self.eps!r}")
        validation.positive("moment", self.moment)
        validation.positive("rate_scale", self.rate_scale)

    @property
    def alpha(self) -> float:
        """The regret exponent ``1 / (1 + eps)``."""
        return 1.0 / (1.0 + self.eps)

    @property
    def heuristic(self) -> bool:
        return self.moment < 1.0 or self.rate_scale != 1.0

    def rate_function(self, n: Counts, n_arms: int, delta_prime: float) -> Rate:
        """``U(n, delta')`` on ``n_arms`` arms, as the kernels report it (:func:`rate`):
        :func:`agents.rates.heavy_tailed_rate` times ``rate_scale``, capped at ``n``."""
        coefficients = (int(n_arms), float(self.eps), float(self.moment), float(self.rate_scale))
        return rate_values(rate, n, coefficients, delta_prime)
