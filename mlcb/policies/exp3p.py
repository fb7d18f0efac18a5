"""EXP3.P (Auer, Cesa-Bianchi, Freund, Schapire 2002) over the experts: the adversarial reference.

Exponential weights with exploration and a bias that makes the bound hold with high probability
(:class:`EXP3P` gives the rule). The drawn expert is trained and deployed; with ``M > 1`` further
experts, drawn uniformly, are trained too, as in LimitedAdvice (:mod:`mlcb.policies.limited_advice`).
Random numbers come from the policy's counter-based stream (:mod:`mlcb.kernels.random`, counter ``t``);
no confidence bounds for the certificate (widths ``nan``).
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
from mlcb.policies.base import BasePolicy, check_unit
from mlcb.policies.selection import draw_extra, extra_draws, inclusion


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
    return draw_extra(state.order, chosen, n_experts, params.extra, key, t, selected, widths), chosen


@implements("observe", EXP3PParams)
@kernel
def _exp3p_observe(params, state, stats, k, loss, t):
    state.gain[k] = (1.0 - loss) / inclusion(state.p[k], params.ratio)


@implements("end_round", EXP3PParams)
@kernel
def _exp3p_end_round(params, state, stats, selected, n_selected, deployed, loss, t):
    for k in range(params.n_experts):
        state.log_weight[k] += params.step * (state.gain[k] + params.bias / state.p[k])
        state.gain[k] = 0.0


@dataclass(frozen=True)
class EXP3P(BasePolicy):
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

    def __post_init__(self) -> None:
        check_unit("gamma", self.gamma)
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
        n_experts, budget = int(n_experts), validation.budget(budget, n_experts)
        gamma, alpha = self.constants(n_experts, horizon, delta)
        step, bias = gamma / (3.0 * n_experts), alpha / math.sqrt(n_experts * int(horizon))
        params = EXP3PParams(n_experts, budget, gamma, step, bias, *extra_draws(n_experts, budget))
        state = EXP3PState(
            log_weight=np.zeros(n_experts),
            p=np.full(n_experts, 1.0 / n_experts),
            gain=np.zeros(n_experts),
            order=np.zeros(n_experts, dtype=np.int64),
        )
        return params, state
