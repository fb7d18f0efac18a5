"""KL-UCB (Garivier and Cappe 2011) as a compiled expert family of its own: the worked example.

Each expert runs KL-UCB over its own Bernoulli arms of a bandit experts environment
(:mod:`envs.bandit`). Rewards are ``1 - loss``; the kernels work in *loss* space throughout: the
reward index of the paper, the largest ``q`` with ``N_a kl(rhat_a, q) <= f(j)``, is ``1 - `` the
smallest loss ``q`` with ``N_a kl(lhat_a, q) <= f(j)`` (``kl(p, q) = kl(1 - p, 1 - q)``), so an
expert plays the arm of smallest lower confidence bound on its loss mean:

* ``lhat_a`` the arm's empirical loss mean, ``N_a`` its pulls, ``j`` the expert's own round
  (its update count plus one), every arm played once first (lowest index first);
* exploration ``f(j) = log j + c log log j``, the ``c log log j`` term counted once ``log j > 1``
  (``j >= 3``) so that ``f`` is non-negative and non-decreasing; Garivier and Cappe prove their
  regret bound for ``c = 3`` and recommend ``c = 0`` in practice (the default);
* ``kl`` the Bernoulli Kullback-Leibler divergence; the bound is found by bisection on
  ``[0, lhat_a]`` (:data:`BISECTION_STEPS` halvings, about 1e-12), ties going to the lowest arm.

Rate. KL-UCB's guarantees bound the *expected* regret; its exploration function does not depend
on a confidence level, and no explicit anytime high-probability bound ``U(n, delta')`` for it is
used here. The family therefore reports the UCB-type rate

    ``U(n, delta') = min(n, sqrt(2 (m-1) n log(8 m n^2 / delta')) + sqrt((n/2) log(4 n^2 / delta'))
    + (m-1))``

(times ``rate_scale``) and marks every expert ``heuristic``: M-LCB's certificate is then reported
as not valid.

Smoothing: KL-UCB's training decisions are single arms, so the average of its past decisions is
the empirical distribution of its pulls: ``"counts"`` (the default), ``"average"`` and
``"uniform"`` all deploy an arm drawn from the pull counts; ``"last"`` deploys the current
KL-UCB arm.

As a family of one's own (docs/compiled-families.md), it writes only what is KL-UCB's: the
kernels (the index, :func:`rate`, ``train`` and ``deploy``), their params and state, the
specification :class:`KLUCB` with its ``rate_function`` (the kernel :func:`rate` at every count,
:func:`agents.family.rate_values`) and ``heuristic``, and :class:`KLUCBFamily` with its name, its
smoothing wrappers and ``build_pool``. Everything else comes from
:class:`agents.family.BanditEnvironmentFamily`.

Examples
--------
>>> import agents
>>> expert = agents.make("kl-ucb")
>>> expert.family.name, expert.heuristic
('kl-ucb', True)
>>> round(float(kl_lower_bound(0.5, 10, math.log(100.0))), 6)
0.112091
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from agents.bandit_kernels import deploy_arm, deploy_by_counts, ucb_delta_value
from agents.family import BanditEnvironmentFamily, rate_values
from agents.rates import Counts, Rate
from envs.bandit import arm_loss
from mlcb import validation
from mlcb.contracts import BuildContext
from mlcb.kernels import implements, kernel
from mlcb.kernels.smoothing import LAST

__all__ = [
    "BISECTION_STEPS",
    "KLUCB",
    "KLUCB_FAMILY",
    "KLUCBFamily",
    "KLUCBParams",
    "KLUCBState",
    "bernoulli_kl",
    "exploration",
    "kl_lower_bound",
    "klucb_arm",
    "rate",
]

#: Halvings of the bisection for the confidence bound: ``lhat 2**-40``, below 1e-12.
BISECTION_STEPS = 40
#: ``q`` is kept in ``[EPSILON, 1 - EPSILON]`` inside ``kl`` (finite logarithms).
EPSILON = 1e-15


class KLUCBParams(NamedTuple):
    """What the kernels read of a KL-UCB pool (never written during a run)."""

    n_arms: np.ndarray  # (K,) int64: m_k, expert k's arms (those of the environment)
    c: np.ndarray  # (K,) float64: exploration constant of f(j) = log j + c log log j
    rate_scale: np.ndarray  # (K,) float64: multiplier of the rate
    delta_prime: float  # delta / (2K): the level at which the policy reads the rates
    smoothing: int  # mlcb.kernels.smoothing code of the deploy wrapper


class KLUCBState(NamedTuple):
    """The learning state of a KL-UCB pool (written by ``train`` only)."""

    pulls: np.ndarray  # (K, m_max) int64: N_a
    losses: np.ndarray  # (K, m_max) float64: sum of the arm's losses
    steps: np.ndarray  # (K,) int64: n_k, updates so far


# --- the index ---------------------------------------------------------------------------------
@kernel
def bernoulli_kl(p, q):
    """``kl(p, q) = p log(p/q) + (1-p) log((1-p)/(1-q))`` (``0 log 0 = 0``; ``q`` clipped to
    ``[EPSILON, 1 - EPSILON]``)."""
    q = min(max(q, EPSILON), 1.0 - EPSILON)
    value = 0.0
    if p > 0.0:
        value += p * math.log(p / q)
    if p < 1.0:
        value += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return value


@kernel
def exploration(j, c):
    """``f(j) = log j + c log log j``, the second term counted once ``log j > 1``."""
    log_j = math.log(j)
    if log_j > 1.0:
        return log_j + c * math.log(log_j)
    return log_j


@kernel
def kl_lower_bound(mean, pulls, threshold):
    """The smallest ``q`` in ``[0, mean]`` with ``pulls kl(mean, q) <= threshold``, by bisection
    (the returned ``q`` satisfies the inequality; it is within ``mean 2**-BISECTION_STEPS`` of the
    smallest one)."""
    if mean <= 0.0:
        return 0.0
    low = 0.0
    high = mean
    for _ in range(BISECTION_STEPS):
        middle = 0.5 * (low + high)
        if pulls * bernoulli_kl(mean, middle) <= threshold:
            high = middle
        else:
            low = middle
    return high


@kernel
def klucb_arm(pulls, losses, k, m, c, j):
    """The arm expert ``k`` plays at its own round ``j``: an unplayed arm (lowest first), else the
    arm of smallest KL lower confidence bound on its loss mean (lowest on ties)."""
    for a in range(m):
        if pulls[k, a] == 0:
            return a
    threshold = exploration(j, c)
    best = 0
    best_index = math.inf
    for a in range(m):
        n = pulls[k, a]
        index = kl_lower_bound(losses[k, a] / n, n, threshold)
        if index < best_index:
            best = a
            best_index = index
    return best


@kernel
def rate(m, scale, n, delta_prime):
    """``U(n, delta')`` of a KL-UCB expert with ``m`` arms (the UCB-type heuristic rate), capped
    at ``n``; 0 for ``n < 1``."""
    if n < 1:
        return 0.0
    return min(float(n), scale * ucb_delta_value(m, n, delta_prime, 1.0))


# --- the kernels the engine calls ---------------------------------------------------------------
@implements("train", KLUCBParams)
@kernel
def _train(params, state, env_params, env_state, k, t):
    m = params.n_arms[k]
    j = state.steps[k] + 1
    arm = klucb_arm(state.pulls, state.losses, k, m, params.c[k], j)
    loss = arm_loss(env_params, t, k, arm)
    state.pulls[k, arm] += 1
    state.losses[k, arm] += loss
    state.steps[k] = j
    return loss, rate(m, params.rate_scale[k], j, params.delta_prime)


@implements("deploy", KLUCBParams)
@kernel
def _deploy(params, state, env_params, env_state, k, t, key, slot):
    m = params.n_arms[k]
    n = state.steps[k]
    # An expert never trained yet has no past decision: its current one is deployed.
    if params.smoothing == LAST or n == 0:
        return deploy_arm(env_params, k, t, klucb_arm(state.pulls, state.losses, k, m, params.c[k], n + 1))
    return deploy_by_counts(state.pulls, env_params, k, m, n, key, t, slot)


# --- the family ---------------------------------------------------------------------------------
class KLUCBFamily(BanditEnvironmentFamily):
    """KL-UCB experts (:class:`KLUCB`) as an :class:`mlcb.contracts.ExpertFamily`; its one
    instance is :data:`KLUCB_FAMILY`.

    All that is KL-UCB's own is here: its name, its smoothing wrappers and :meth:`build_pool`.
    The pool check (a bandit experts environment with one expert per expert of the environment),
    ``L_k*`` (each expert's best arm) and the rates and heuristic flags read from the
    specifications come from :class:`agents.family.BanditEnvironmentFamily`.
    """

    name = "kl-ucb"
    smoothing = ("counts", "average", "uniform", "last")

    def build_pool(self, context: BuildContext) -> tuple[KLUCBParams, KLUCBState]:
        """Kernel parameters (``n_arms``, ``c``, ``rate_scale``, ``delta_prime`` and ``smoothing``,
        filled by name: :meth:`~agents.family.CompiledFamily.kernel_params`) and fresh state of
        the pool on one replication. KL-UCB trains deterministically: no keys."""
        state = KLUCBState(
            pulls=self.arm_zeros(context, np.int64),  # (K, m_max)
            losses=self.arm_zeros(context),
            steps=context.zeros(dtype=np.int64),  # (K,)
        )
        return self.kernel_params(KLUCBParams, context), state


#: The KL-UCB family (:class:`KLUCBFamily`).
KLUCB_FAMILY = KLUCBFamily()


@dataclass(frozen=True)
class KLUCB:
    """KL-UCB over the expert's Bernoulli arms, exploration ``log j + c log log j``.

    ``c = 0`` (the default) is Garivier and Cappe's recommendation in practice, ``c = 3`` the
    constant of their theorem. The rate is heuristic (see :mod:`agents.klucb`); ``rate_scale``
    multiplies it.
    """

    c: float = 0.0
    rate_scale: float = 1.0

    family: ClassVar[KLUCBFamily] = KLUCB_FAMILY

    def __post_init__(self) -> None:
        validation.non_negative("c", self.c)
        validation.positive("rate_scale", self.rate_scale)

    @property
    def heuristic(self) -> bool:
        """Always ``True``: no explicit anytime high-probability bound is used (see :mod:`agents.klucb`)."""
        return True

    def rate_function(self, n: Counts, n_arms: int, delta_prime: float) -> Rate:
        """``U(n, delta')`` on ``n_arms`` arms, as the kernels report it (:func:`rate`): the UCB-type
        heuristic rate times ``rate_scale``, capped at ``n``."""
        return rate_values(rate, n, (int(n_arms), float(self.rate_scale)), delta_prime)
