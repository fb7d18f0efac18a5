"""LimitedAdvice (Seldin, Bartlett, Crammer, Abbasi-Yadkori 2014), docs/baselines.md §1.

Y. Seldin, P. Bartlett, K. Crammer, Y. Abbasi-Yadkori, "Prediction with Limited Advice and
Multiarmed Bandits with Paid Observations", ICML 2014 (PMLR 32). The paper queries M of N fixed
advice sequences per round and follows one; here the N advisers are our K learning experts and a
query is a training step. Each round ``t = 1, 2, ...``::

    eta_t = eta_scale * sqrt(M ln K / (K t))
    p     = softmax(-eta_t * (Lhat - min Lhat))            # shifted before exponentiating
    i_t   ~ p                                              # deployed expert
    S_t   = {i_t} + min(M - 1, K - 1) experts drawn uniformly without replacement from the rest
    for k in S_t:  Lhat_k += l_k / q_k,  q_k = p_k + (1 - p_k) (M - 1) / (K - 1) = P(k in S_t)

with ``l_k`` the training loss of expert ``k`` and ``p`` the distribution of the selection step.
``M = 1`` is EXP3 without forced exploration (``q = p``), ``M = K`` full information (``q = 1``).

Random draws (stream ``key`` of :func:`mlcb.kernels.random.uniform`, counter ``t``): slot 0 draws
``i_t`` by inversion of the cumulative weights; slot ``1 + j`` draws the ``j``-th extra expert by
one step of a partial Fisher-Yates shuffle of ``[K] \\ {i_t}`` (the identity with ``i_t`` swapped to
the end, held in a scratch array of the state): ``O(K)`` per round.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from mlcb import validation
from mlcb.kernels import implements
from mlcb.kernels.jit import kernel
from mlcb.kernels.random import draw, uniform
from mlcb.policies.base import BasePolicy
from mlcb.policies.selection import draw_extra, extra_draws, inclusion


class LimitedAdviceParams(NamedTuple):
    n_experts: int  # K
    budget: int  # M
    eta_scale: float
    log_k: float  # ln K
    extra: int  # min(M - 1, K - 1): uniformly drawn experts besides the deployed one
    ratio: float  # extra / (K - 1), 0 when K = 1: q_k = p_k + (1 - p_k) ratio


#: Per-expert state: ``lhat`` the importance-weighted cumulative loss, ``p`` the probability of
#: the last selection step (kept for the update of the same round).
EXPERT_DTYPE = np.dtype([("lhat", np.float64), ("p", np.float64)], align=True)


class LimitedAdviceState(NamedTuple):
    experts: np.ndarray  # (K,) EXPERT_DTYPE
    order: np.ndarray  # (K,) int64 scratch of the Fisher-Yates draw


@implements("select", LimitedAdviceParams)
@kernel
def _select(params, state, stats, t, key, selected, widths):
    n_experts = params.n_experts
    experts = state.experts
    if n_experts == 1:
        experts[0].p = 1.0
        selected[0] = 0
        widths[0] = math.nan
        return 1, 0
    eta = params.eta_scale * math.sqrt(params.budget * params.log_k / (n_experts * t))
    low = experts[0].lhat
    for k in range(1, n_experts):
        low = min(low, experts[k].lhat)
    total = 0.0
    for k in range(n_experts):
        weight = math.exp(-eta * (experts[k].lhat - low))
        experts[k].p = weight
        total += weight
    chosen = draw(experts.p, total, uniform(key, t, 0))
    for k in range(n_experts):
        experts[k].p = experts[k].p / total
    return draw_extra(state.order, chosen, n_experts, params.extra, key, t, selected, widths), chosen


@implements("observe", LimitedAdviceParams)
@kernel
def _observe(params, state, stats, k, loss, t):
    expert = state.experts[k]
    expert.lhat += loss / inclusion(expert.p, params.ratio)


@dataclass(frozen=True)
class LimitedAdvice(BasePolicy):
    """Exponential weights over importance-weighted losses with ``M - 1`` extra queries.

    Seldin, Bartlett, Crammer and Abbasi-Yadkori, "Prediction with Limited Advice and Multiarmed
    Bandits with Paid Observations", ICML 2014 (PMLR 32); docs/baselines.md §1 and the module
    docstring give the per-round rule. The deployed expert ``i_t`` is drawn from
    ``p = softmax(-eta_t Lhat)``; ``min(M - 1, K - 1)`` further experts, drawn uniformly without
    replacement from the others, are trained too (every trained expert's loss updates ``Lhat``
    with the inverse of its inclusion probability).

    Parameters
    ----------
    eta_scale : float
        Multiplier ``> 0`` (default 1) of the rate ``eta_t = eta_scale sqrt(M ln K / (K t))``.
        The schedule is the anytime one of Seldin et al.'s analysis; 1 is the M-LCB authors'
        ``eta_scaler=1`` (their ``stat_online/classical_bandits/algorithm.py``).

    Notes
    -----
    Departures from the paper and its setting:

    - The paper's advisers are fixed advice sequences; here they are learners whose losses
      depend on which of them were trained, so its ``O(sqrt((K/M) T ln K))`` bound does not
      bound the regret against ``L*``.
    - ``M > 1`` is native to the paper (M queries, one followed). ``K = 1`` trains and deploys
      the single expert. ``S_t`` lists ``i_t`` first, then the extra experts in draw order.
    - No warm start (as in the paper and the authors' code): an expert may be deployed before
      its first training step, and the pool then deploys its current decision.
    - Natively anytime: ``eta_t`` uses the round ``t`` only (``t`` = rounds so far + 1, as the
      authors' code); the run's horizon is not used.
    - No confidence bounds: ``widths`` are ``nan`` and there is no certificate.
    - The smoothing wrapper is the simulation's (the paper's authors deployed the sampled
      expert's current action, i.e. ``"last"``).

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("limited-advice", eta_scale=0.5).eta_scale
    0.5
    """

    eta_scale: float = 1.0

    name: ClassVar[str] = "limited-advice"
    warm_start: ClassVar[bool] = False

    def __post_init__(self) -> None:
        validation.positive("eta_scale", self.eta_scale)

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[LimitedAdviceParams, LimitedAdviceState]:
        """Kernel parameters and a fresh state (``delta``, ``horizon`` and ``optimal`` unused:
        the policy is anytime and has no confidence bounds)."""
        n_experts, budget = int(n_experts), validation.budget(budget, n_experts)
        extra, ratio = extra_draws(n_experts, budget)
        params = LimitedAdviceParams(
            n_experts, budget, float(self.eta_scale), math.log(n_experts), extra, ratio
        )
        state = LimitedAdviceState(
            experts=np.zeros(n_experts, dtype=EXPERT_DTYPE),
            order=np.zeros(n_experts, dtype=np.int64),
        )
        return params, state
