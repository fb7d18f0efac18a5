"""Smooth CORRAL (Agarwal, Luo, Neyshabur, Schapire 2017; Pacchiano et al. 2020), docs/baselines.md §2.

A. Agarwal, H. Luo, B. Neyshabur, R. E. Schapire, "Corralling a Band of Bandit Algorithms", COLT
2017 (PMLR 65; arXiv 1612.06246), Algorithms 1 (CORRAL) and 2 (log-barrier OMD), in the stochastic
smoothed form of A. Pacchiano, M. Phan, Y. Abbasi-Yadkori, A. Rao, J. Zimmert, T. Lattimore,
Cs. Szepesvari, "Model Selection in Contextual Stochastic Bandit Problems", NeurIPS 2020 (arXiv
2003.01704): only the sampled expert is trained, with its own unweighted loss, and it is deployed
through the smoothing wrapper. Each round, with ``p`` the OMD iterate and ``pbar`` the sampling
distribution::

    i_t ~ pbar;  S_t = {i_t};  deploy wrapper(i_t);  train i_t
    f    = l_i | d | (l_i + d) / 2                    # loss_feed: training, deployed or mean loss
    lvec = f / pbar_i at i, 0 elsewhere               # importance weight with the SAMPLING pbar
    p    = log_barrier_omd(p, lvec, eta)              # OMD on p, not on pbar
    pbar = (1 - gamma) p + gamma / K
    for j:  if 1 / pbar_j > rho_j:  rho_j = 2 / pbar_j;  eta_j *= beta

with ``eta_j = sqrt(K / T)``, ``gamma = 1 / T``, ``beta = exp(1 / ln T)``, ``rho_j = 2K`` and
``p = pbar = 1/K`` at the start. The OMD step finds ``lambda`` with
``F(lambda) = sum_j 1 / (1/p_j + eta_j (lvec_j - lambda)) = 1`` (see :func:`omd_root`) and
returns ``q(lambda) / F(lambda)``.

The update runs in ``end_round``, once both the training loss (stored by ``observe``) and the
deployed loss are known. Random draws: stream ``key`` of :func:`mlcb.kernels.random.uniform`, counter
``t``, slot 0 (inversion of the cumulative ``pbar``; the last positive weight catches a target
rounded up to the sum).
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
from mlcb.policies.base import MAX_ROUNDS, BasePolicy
from mlcb.validation import InputError

#: Codes of ``loss_feed``: the loss that the master's update sees.
FEEDS = {"train": 0, "deployed": 1, "mean": 2}
SCHEDULES = ("run", "doubling")
#: Newton stops at ``|F(lambda) - 1| <= ROOT_TOLERANCE`` or after ``ROOT_ITERATIONS`` steps.
ROOT_TOLERANCE = 1e-12
ROOT_ITERATIONS = 100
#: ``end`` of the one epoch of ``schedule="run"``: never reached.
NEVER = np.iinfo(np.int64).max


class CorralParams(NamedTuple):
    n_experts: int  # K
    feed: int  # FEEDS code
    doubling: bool
    eta_scale: float


#: Per-expert state: the OMD iterate ``p``, the sampling distribution ``pbar``, the learning rate
#: ``eta``, the threshold ``rho`` and ``loss``, the importance-weighted loss vector of the round.
EXPERT_DTYPE = np.dtype(
    [("p", np.float64), ("pbar", np.float64), ("eta", np.float64), ("rho", np.float64), ("loss", np.float64)],
    align=True,
)

#: The master's epoch (one record): its last round ``end``, its length ``T_j``, ``gamma``,
#: ``beta``, and the training loss of the current round (stored by ``observe``).
MASTER_DTYPE = np.dtype(
    [
        ("end", np.int64),
        ("length", np.int64),
        ("gamma", np.float64),
        ("beta", np.float64),
        ("train_loss", np.float64),
    ],
    align=True,
)


class CorralState(NamedTuple):
    experts: np.ndarray  # (K,) EXPERT_DTYPE
    master: np.ndarray  # (1,) MASTER_DTYPE


@kernel
def _reset(params, state, length):
    """Start an epoch of ``length`` rounds: a fresh CORRAL master tuned for ``T = length``."""
    n_experts = params.n_experts
    master = state.master[0]
    master.length = length
    master.gamma = 1.0 / length
    master.beta = math.exp(1.0 / max(1.0, math.log(length)))
    eta = params.eta_scale * math.sqrt(n_experts / length)
    for k in range(n_experts):
        expert = state.experts[k]
        expert.p = 1.0 / n_experts
        expert.pbar = 1.0 / n_experts
        expert.eta = eta
        expert.rho = 2.0 * n_experts


@kernel
def omd_residual(experts, x):
    """``(F(x) - 1, F'(x))`` with ``F(x) = sum_j q_j(x)``, ``q_j = 1 / (1/p_j + eta_j (loss_j - x))``
    and ``F'(x) = sum_j eta_j q_j**2`` (``experts``: a record array with ``p``, ``eta``, ``loss``)."""
    total = 0.0
    slope = 0.0
    for j in range(experts.shape[0]):
        expert = experts[j]
        q = 1.0 / (1.0 / expert.p + expert.eta * (expert.loss - x))
        total += q
        slope += expert.eta * q * q
    return total - 1.0, slope


@kernel
def omd_root(experts):
    """The ``lambda`` of the log-barrier OMD step (Agarwal et al. 2017, Algorithm 2) and the
    number of iterations that found it.

    On ``x < pole = min_j (loss_j + 1 / (eta_j p_j))`` every ``q_j`` is positive, increasing and
    convex, so ``F`` is too; ``F(min loss) <= 1 <= F(max loss)`` unless the pole comes first, so the
    root lies in ``[min loss, min(max loss, pole))``. Newton's method started to the right of the
    root, where ``F >= 1``, decreases monotonically to it and never crosses the pole. The start is
    ``min(max loss, pole - 1 / eta_*)``, with ``*`` the expert attaining the pole, where
    ``q_* = 1`` and hence ``F >= 1``. A bracket ``[a, b]`` with ``F(a) <= 1 <= F(b)`` is kept; a
    step that leaves it (rounding) is replaced by bisection [ours]. Stops at
    ``|F - 1| <= ROOT_TOLERANCE``, when the bracket cannot shrink, or after ``ROOT_ITERATIONS``.
    """
    lo = math.inf
    top = -math.inf
    pole = math.inf
    pole_eta = 1.0
    for j in range(experts.shape[0]):
        expert = experts[j]
        lo = min(lo, expert.loss)
        top = max(top, expert.loss)
        at = expert.loss + 1.0 / (expert.eta * expert.p)
        if at < pole:
            pole = at
            pole_eta = expert.eta
    x = max(lo, min(top, pole - 1.0 / pole_eta))
    a = lo
    b = x
    for iteration in range(ROOT_ITERATIONS):
        residual, slope = omd_residual(experts, x)
        if abs(residual) <= ROOT_TOLERANCE:
            return x, iteration
        if residual > 0.0:
            b = x
        else:
            a = x
        step = x - residual / slope
        if not (a < step and step < b):
            step = 0.5 * (a + b)
            if not (a < step and step < b):
                return x, iteration + 1
        x = step
    return x, ROOT_ITERATIONS


@kernel
def omd_step(experts):
    """Replace ``p`` by the log-barrier OMD update for the losses in ``loss``; returns ``lambda``."""
    root, _ = omd_root(experts)
    total = 0.0
    for j in range(experts.shape[0]):
        expert = experts[j]
        q = 1.0 / (1.0 / expert.p + expert.eta * (expert.loss - root))
        expert.p = q
        total += q
    for j in range(experts.shape[0]):
        experts[j].p = experts[j].p / total
    return root


@implements("select", CorralParams)
@kernel
def _select(params, state, stats, t, key, selected, widths):
    experts = state.experts
    total = 0.0
    for k in range(params.n_experts):
        total += experts[k].pbar
    chosen = draw(experts.pbar, total, uniform(key, t, 0))
    selected[0] = chosen
    widths[0] = math.nan
    return 1, chosen


@implements("observe", CorralParams)
@kernel
def _observe(params, state, stats, k, loss, t):
    state.master[0].train_loss = loss


@implements("end_round", CorralParams)
@kernel
def _end_round(params, state, stats, selected, n_selected, deployed, loss, t):
    n_experts = params.n_experts
    experts = state.experts
    master = state.master[0]
    if params.feed == 0:
        feed = master.train_loss
    elif params.feed == 1:
        feed = loss
    else:
        feed = 0.5 * (master.train_loss + loss)
    for k in range(n_experts):
        experts[k].loss = 0.0
    sampled = experts[selected[0]]
    sampled.loss = feed / sampled.pbar
    omd_step(experts)
    gamma = master.gamma
    for k in range(n_experts):
        expert = experts[k]
        expert.pbar = (1.0 - gamma) * expert.p + gamma / n_experts
        if 1.0 / expert.pbar > expert.rho:
            expert.rho = 2.0 / expert.pbar
            expert.eta = expert.eta * master.beta
    if params.doubling and t == master.end:
        length = 2 * master.length
        master.end = master.end + length
        _reset(params, state, length)


def first_epoch(n_experts: int) -> int:
    """``T_0 = 2**ceil(log2(8K))`` of the doubling schedule (so ``ln T_0 >= 2``, ``gamma <= 1/(8K)``).

    Examples
    --------
    >>> first_epoch(10)
    128
    """
    return 1 << (8 * int(n_experts) - 1).bit_length()


@dataclass(frozen=True)
class SmoothCORRAL(BasePolicy):
    """Smooth CORRAL: a log-barrier OMD master with increasing rates over smoothed experts.

    Agarwal, Luo, Neyshabur and Schapire, "Corralling a Band of Bandit Algorithms", COLT 2017
    (Algorithms 1 and 2), with the smoothing wrapper and stochastic base updates of Pacchiano et
    al., "Model Selection in Contextual Stochastic Bandit Problems", NeurIPS 2020; docs/baselines.md,
    section 2, and the module docstring give the per-round rule. One expert, drawn from ``pbar``,
    is trained and deployed each round.

    Parameters
    ----------
    horizon : int or None
        ``T`` of ``schedule="run"``, in ``[1, 10**10]`` (:data:`~mlcb.policies.base.MAX_ROUNDS`);
        default ``None``: the run's horizon (CORRAL needs ``T``; the M-LCB authors passed the
        run's). Must be ``None`` with ``"doubling"``.
    schedule : {"run", "doubling"}
        ``"run"`` (default): one CORRAL master tuned for ``T`` for the whole run (it keeps its
        constants if the run is longer). ``"doubling"`` [ours, docs/baselines.md §2]: epochs of
        ``T_j = T_0 2**j`` rounds, ``T_0 = 2**ceil(log2(8K))``; each epoch restarts the master
        (``p = pbar = 1/K``, ``rho = 2K``, ``eta = eta_scale sqrt(K/T_j)``, ``gamma = 1/T_j``,
        ``beta = exp(1/ln T_j)``), while the experts and their statistics continue.
    loss_feed : {"train", "deployed", "mean"}
        The loss ``f`` fed to the master: the sampled expert's training loss (default, as the
        M-LCB authors), the deployed (smoothed) loss, or their mean [both ours].
    eta_scale : float
        Multiplier ``> 0`` (default 1) of the initial rate ``eta = sqrt(K/T)`` (M-LCB authors'
        trap script; SMPyBandits' default). pacchiano/modelselection uses ``1/sqrt(T)``, i.e.
        ``eta_scale = 1/sqrt(K)`` [the parameter is ours].

    Notes
    -----
    Other constants are CORRAL's: ``gamma = 1/T``, ``rho = 2K``, ``p = pbar = 1/K`` initially,
    ``beta = exp(1/ln T)`` (the M-LCB authors' code: ``exp(1/ln(T+1))``, immaterial). Departures:

    - Stochastic smoothed form (Pacchiano et al.): only the sampled expert is trained, with its
      unweighted loss; CORRAL sends importance-weighted losses to every base learner.
    - ``beta = exp(1 / max(1, ln T))`` [ours]: equal to CORRAL's for ``T >= 3``, finite for
      ``T = 1, 2``.
    - ``M > 1``: still one expert per round (``|S_t| = 1``); the rest of the budget is left
      unused (docs/baselines.md §0), and traces show ``-1`` in the unused places.
    - Anytime use: ``schedule="doubling"`` restarts the master only, never the experts (the
      classical doubling trick would restart the base learners too) [ours].
    - The OMD root is found by safeguarded Newton from the right (:func:`omd_root`) [ours];
      Agarwal et al. specify a line search on ``[min loss, max loss]``.
    - No warm start (an expert drawn before its first training step deploys its current
      decision), no confidence bounds (``widths`` are ``nan``), no certificate.
    - The smoothing wrapper is the simulation's; Pacchiano et al.'s default is the uniform past
      iterate (the presets choose it).

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("smooth-corral", schedule="doubling", loss_feed="mean").loss_feed
    'mean'
    """

    horizon: int | None = None
    schedule: str = "run"
    loss_feed: str = "train"
    eta_scale: float = 1.0

    name: ClassVar[str] = "smooth-corral"
    warm_start: ClassVar[bool] = False

    def __post_init__(self) -> None:
        validation.choice("schedule", self.schedule, SCHEDULES)
        if self.horizon is not None:
            whole = validation.whole_number(self.horizon)  # 1e4 is 10,000, as every count
            if whole is None or whole < 1:
                raise InputError(f"horizon must be None or an integer >= 1, got {self.horizon!r}")
            if whole > MAX_ROUNDS:
                raise InputError(
                    f"horizon must be None or an integer in [1, {MAX_ROUNDS:_}], got {self.horizon!r}"
                )
            if self.schedule == "doubling":
                raise InputError(
                    f"horizon must be None with schedule='doubling' (epochs start at "
                    f"2**ceil(log2(8K)) rounds), got {self.horizon!r}"
                )
        validation.choice("loss_feed", self.loss_feed, tuple(FEEDS))
        validation.positive("eta_scale", self.eta_scale)

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[CorralParams, CorralState]:
        """Kernel parameters and a fresh state; ``horizon`` is the run's, used as ``T`` unless
        the policy has its own or doubles (``delta`` and ``optimal`` unused)."""
        validation.budget(budget, n_experts)
        n_experts = int(n_experts)
        doubling = self.schedule == "doubling"
        params = CorralParams(n_experts, FEEDS[self.loss_feed], doubling, float(self.eta_scale))
        if doubling:
            length = first_epoch(n_experts)
            end = length
        else:
            length = int(self.horizon if self.horizon is not None else horizon)
            if length < 1:
                raise InputError(f"horizon must be an integer >= 1, got {horizon!r}")
            end = int(NEVER)
        master = np.zeros(1, dtype=MASTER_DTYPE)
        master[0]["end"] = end
        state = CorralState(experts=np.zeros(n_experts, dtype=EXPERT_DTYPE), master=master)
        _reset(params, state, length)
        return params, state
