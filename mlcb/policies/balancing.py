"""Regret balancing baselines: Dynamic Balancing / RBBE and D3RB / ED2RB (docs/baselines.md §3, §4).

The three policies (two classes) train the expert(s) whose regret, by some estimate, is the
smallest so far, so that the experts' regrets stay balanced; they differ in where that estimate
comes from:

``DynamicBalancing``
    A. Pacchiano, C. Dann, C. Gentile, P. Bartlett, "Regret Bound Balancing and Elimination for
    Model Selection in Bandits and RL", arXiv 2012.13045 (2020), and A. Cutkosky, C. Dann, A. Das,
    C. Gentile, A. Pacchiano, M. Purohit, "Dynamic Balancing for Model Selection in Bandits and
    RL", ICML 2021 (PMLR 139:2276-2285). Candidate ("putative") regret bounds, here the experts'
    rate functions, are balanced; an expert whose losses contradict its bound is eliminated.
``DataDrivenBalancing``
    C. Dann, C. Gentile, A. Pacchiano, "Data-Driven Online Model Selection With Regret
    Guarantees", AISTATS 2024 (PMLR 238:1531-1539; arXiv 2306.02869). No candidate bounds:
    each expert's regret coefficient is estimated online, by doubling on a misspecification test
    (D3RB) or from the data (ED2RB), and the balancing potentials are balanced.

Shared notation (loss form, K experts, budget M; the papers' number of learners is our K)::

    L_k  = loss_sum_k / n_k                                  mean training loss
    w(n) = c * sqrt(ln(K * max(1, ln n) / delta) / n)        confidence width
    B    = min over eligible j with n_j >= 1 of (L_j + w(n_j))   best pessimistic loss

(eligible: the active experts for Dynamic Balancing, every expert for D3RB / ED2RB.)

``c`` and ``delta`` are each policy's own constants, not the simulation's ``delta`` (which only
enters through the experts' rates ``U_k(n, delta / 2K)`` in ``stats.rate``). Selection breaks
ties by the smaller expert index and costs ``O(K M)`` per round (:func:`mlcb.policies.selection.smallest`).
No confidence bound of the deployed decision is claimed: every width passed to the engine is
``nan`` and no certificate is recorded.

The warm start trains every expert once on ``xi_0`` (round 0 of
:func:`mlcb.engine.compiled_loop.run_rounds`, experts ``0 .. K-1`` in order); after the last of
them the policy runs the update of a round whose training set is every expert, exactly as after
any other round.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from mlcb import validation
from mlcb.kernels import implements
from mlcb.kernels.jit import kernel
from mlcb.policies.base import BasePolicy
from mlcb.policies.selection import inline_kernel, nan_widths, smallest
from mlcb.validation import InputError

_COMPARATORS = ("pessimistic", "optimistic")
_DEPLOYS = ("head", "ucb")


# --- shared kernels ------------------------------------------------------------------------------
@kernel
def balancing_width(n_experts, delta, c, n):
    """``w(n) = c sqrt(ln(K max(1, ln n) / delta) / n)`` for ``n >= 1``.

    The guard ``max(1, ln n)`` (ln n < 1 for n < e, 0 at n = 1) keeps the logarithm's argument at
    least ``K / delta > 1``.
    """
    return c * math.sqrt(math.log(n_experts * max(1.0, math.log(n)) / delta) / n)


@kernel
def _smallest_upper(selected, n_selected, upper):
    """The expert of ``selected[:n_selected]`` with the smallest ``upper`` (ties: smaller index)."""
    chosen = selected[0]
    best = upper[chosen]
    for j in range(1, n_selected):
        k = selected[j]
        if upper[k] < best or (upper[k] == best and k < chosen):
            chosen = k
            best = upper[k]
    return chosen


@inline_kernel
def _train_smallest(keys, count, upper, deploy_ucb, selected, widths):
    """Select the ``count`` experts with the smallest ``keys`` (ties: smaller index) and deploy
    the first of them, or with ``deploy_ucb`` the one with the smallest ``upper``."""
    n_selected = smallest(keys, count, selected)
    nan_widths(widths, n_selected)
    if deploy_ucb:
        return n_selected, _smallest_upper(selected, n_selected, upper)
    return n_selected, selected[0]


# --- Dynamic Balancing / RBBE --------------------------------------------------------------------
class DynamicBalancingParams(NamedTuple):
    n_experts: int  # K
    budget: int  # M
    delta: float  # the policy's own confidence (0.05)
    c: float  # width multiplier (1)
    weights: np.ndarray  # (K,) float64 v_k: scale of the selection key v_k R_k(n_k) only
    optimistic: bool  # comparator: min_j (L_j - w_j) instead of min_j (L_j + w_j)
    deploy_ucb: bool  # deploy argmin over S of L_k + w(n_k) instead of the head of S


#: Per-expert data of Dynamic Balancing, refreshed when the expert trains. ``active`` false once
#: eliminated; ``lower`` ``L_k - w(n_k) - R_k(n_k) / n_k`` (the elimination test's left side);
#: ``optimistic`` ``L_k - w(n_k)`` (the public codes' comparator).
BALANCING_DTYPE = np.dtype(
    [("active", np.bool_), ("lower", np.float64), ("optimistic", np.float64)],
    align=True,
)


class DynamicBalancingState(NamedTuple):
    experts: np.ndarray  # (K,) BALANCING_DTYPE
    upper: np.ndarray  # (K,) float64 L_k + w(n_k): the pessimistic comparator, the UCB of deploy="ucb"
    key: np.ndarray  # (K,) float64 v_k R_k(n_k); -inf while R_k = +inf; +inf once eliminated
    n_active: np.ndarray  # (1,) int64 size of the active set


@kernel
def _eliminate(params, state, stats):
    """Remove every active expert whose test ``L_k - w - R_k / n_k > B`` fires (docs/baselines.md §3)."""
    best = math.inf
    for j in range(params.n_experts):
        expert = state.experts[j]
        if expert.active and stats[j].n >= 1:
            value = expert.optimistic if params.optimistic else state.upper[j]
            if value < best:
                best = value
    for k in range(params.n_experts):
        expert = state.experts[k]
        if expert.active and stats[k].n >= 1 and expert.lower > best:
            expert.active = False
            state.key[k] = math.inf
            state.n_active[0] -= 1


@implements("select", DynamicBalancingParams)
@kernel
def _balancing_select(params, state, stats, t, key, selected, widths):
    count = min(params.budget, state.n_active[0])
    return _train_smallest(state.key, count, state.upper, params.deploy_ucb, selected, widths)


@implements("observe", DynamicBalancingParams)
@kernel
def _balancing_observe(params, state, stats, k, loss, t):
    expert = stats[k]
    n = expert.n
    mean = expert.loss_sum / n
    width = balancing_width(params.n_experts, params.delta, params.c, n)
    own = state.experts[k]
    own.lower = mean - width - expert.rate / n
    own.optimistic = mean - width
    state.upper[k] = mean + width
    if own.active:
        value = params.weights[k] * expert.rate
        state.key[k] = -math.inf if value == math.inf else value
    if t == 0 and k == params.n_experts - 1:
        _eliminate(params, state, stats)  # the update after the warm start (S_0 = every expert)


@implements("end_round", DynamicBalancingParams)
@kernel
def _balancing_end_round(params, state, stats, selected, n_selected, deployed, loss, t):
    _eliminate(params, state, stats)


@dataclass(frozen=True)
class DynamicBalancing(BasePolicy):
    r"""Regret bound balancing and elimination / Dynamic Balancing with the experts' rates as bounds.

    Pacchiano, Dann, Gentile, Bartlett (2020), "Regret Bound Balancing and Elimination for Model
    Selection in Bandits and RL" (arXiv 2012.13045); Cutkosky, Dann, Das, Gentile, Pacchiano,
    Purohit (ICML 2021), "Dynamic Balancing for Model Selection in Bandits and RL". Specified in
    docs/baselines.md §3. Each round, over the active set ``A``::

        S_t = the min(M, |A|) experts of A with the smallest v_k R_k(n_k)   (ties: smaller index)
        i_t = S_t[0]                           (deploy="head")
            | argmin over S_t of L_k + w(n_k)  (deploy="ucb"; ties: smaller index)
        after training S_t:
        B   = min over active j of L_j + w(n_j)   ("pessimistic")  |  L_j - w(n_j)  ("optimistic")
        eliminate every active k with  L_k - w(n_k) - R_k(n_k) / n_k > B

    with ``R_k(n) = U_k(n, delta_sim / 2K)``, the expert's rate (``stats.rate``: the candidate
    regret bound, docs/baselines.md §3 [ours]), ``w`` the module's width and ``L_k`` the mean
    training loss. The expert attaining ``B`` passes its own test (``R_k >= 0``), so the active
    set never empties; an eliminated expert is never trained again. Never-trained experts stay
    active and are left out of ``B`` (only possible without the warm start). Anytime: nothing
    depends on the horizon.

    Parameters
    ----------
    delta : float
        The policy's confidence in ``w``, in (0, 1); default 0.05, the M-LCB authors'
        ``DynamicBalancing`` default. Not the yinglunz choice ``1 / sqrt(T)``, which would make
        the policy horizon-dependent.
    c : float
        Width multiplier, > 0; default 1 (the M-LCB authors' code and yinglunz
        ``linear_class.py``).
    weights : tuple of float or None
        DB's weights ``v_k > 0``, one per expert, scaling the selection key ``v_k R_k(n_k)``
        only (not the test); default ``None``, all 1 (yinglunz, after Section 7 of the DB paper).
    comparator : {"pessimistic", "optimistic"}
        ``B`` from the best pessimistic loss ``L_j + w`` (default: the papers' test) or from the
        best optimistic loss ``L_j - w`` (both public DB codes, yinglunz ``linear_class.py`` and
        the M-LCB authors' ``DynamicBalancing``: in reward form they compare with
        ``max_j (mean_j + w_j)``). The optimistic ``B`` is never larger, so that option eliminates
        *earlier*: every expert the pessimistic test removes and possibly more, and the best
        expert is no longer protected by its own valid bound. With unequal counts a barely
        trained expert's wide width drags ``B`` down: on the trap at the defaults, M = 3, it can
        eliminate experts (the best one included) after two trainings.
    deploy : {"head", "ucb"}
        ``"head"`` (default): the expert with the smallest key, the learner the original plays
        (with M = 1 the trained one). ``"ucb"``: M-LCB's rule, the smallest upper confidence bound
        within ``S_t``, with this policy's width: ``UCB_k = L_k + w(n_k)`` (the same ``c`` and
        ``delta``; not M-LCB's Hoeffding width).

    Notes
    -----
    Departures and choices, besides the rate functions as candidate bounds:

    * **M > 1 [ours]**: water-filling, the ``min(M, |A|)`` active experts with the smallest
      ``v_k R_k(n_k)``, so the spread of the candidate bounds over the active set stays within
      one increment. Fewer than M active experts leave the budget unused.
    * **Update order [ours for M > 1]**: the test runs once per round, after all of ``S_t`` has
      trained, with ``B`` recomputed from this round's statistics.
    * DB's bias terms ``b_k(n)`` are 0 (both public codes' default); they are not exposed.
    * A rate of ``+inf`` (possible for external rate functions until every arm was tried) sorts
      *first* in the balancing order (key ``-inf``), so that expert is trained until its bound is
      finite (docs/baselines.md §3, pitfalls); its test cannot fire meanwhile.
    * Not copied from public code: the active set recomputed from scratch every round over all
      experts (both public codes: an eliminated expert can come back, and ``B`` includes
      eliminated experts); here elimination is permanent and ``B`` ranges over the active set.
      Nor yinglunz's guard ``ln(max(K ln n / delta, 1))``, which gives ``w(1) = 0``.
    * With the defaults ``w(1) > 1``, so the test cannot fire right after the warm start.

    The deployed decision is the expert's current one or a smoothed one, as the simulation's
    ``smoothing`` says (the original plays the learner's current decision, "last"; docs/baselines.md).

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("dynamic-balancing", comparator="optimistic").comparator
    'optimistic'
    """

    delta: float = 0.05
    c: float = 1.0
    weights: tuple[float, ...] | None = None
    comparator: str = "pessimistic"
    deploy: str = "head"

    name: ClassVar[str] = "dynamic-balancing"

    def __post_init__(self) -> None:
        validation.within("delta", self.delta, 0.0, 1.0)
        validation.within("c", self.c, 0.0)
        if self.weights is not None:
            if isinstance(self.weights, (str, bytes)) or not hasattr(self.weights, "__len__"):
                raise InputError(f"weights must be None or a sequence of numbers > 0, got {self.weights!r}")
            for v in self.weights:
                validation.within("every entry of weights", v, 0.0)
            object.__setattr__(self, "weights", tuple(float(v) for v in self.weights))
        validation.choice("comparator", self.comparator, _COMPARATORS)
        validation.choice("deploy", self.deploy, _DEPLOYS)

    @property
    def label(self) -> str:
        return self.name

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[DynamicBalancingParams, DynamicBalancingState]:
        """Kernel parameters and a fresh state (``delta``, the simulation's confidence, enters
        through the experts' rates only; ``horizon`` and ``optimal`` are not used)."""
        validation.budget(budget, n_experts)
        if self.weights is None:
            weights = np.ones(n_experts)
        elif len(self.weights) != n_experts:
            raise InputError(
                f"weights must have one entry per expert (n_experts={n_experts}), got {len(self.weights)}"
            )
        else:
            weights = np.array(self.weights, dtype=np.float64)
        params = DynamicBalancingParams(
            int(n_experts),
            int(budget),
            float(self.delta),
            float(self.c),
            weights,
            self.comparator == "optimistic",
            self.deploy == "ucb",
        )
        experts = np.zeros(n_experts, dtype=BALANCING_DTYPE)
        experts["active"] = True
        state = DynamicBalancingState(
            experts=experts,
            upper=np.zeros(n_experts),
            key=np.zeros(n_experts),
            n_active=np.full(1, n_experts, dtype=np.int64),
        )
        return params, state


# --- D3RB / ED2RB --------------------------------------------------------------------------------
class DataDrivenParams(NamedTuple):
    n_experts: int  # K
    budget: int  # M
    delta: float  # the policy's own confidence (0.01)
    c: float  # width multiplier (1)
    d_min: float  # smallest regret coefficient (1)
    max_coefficient: float  # cap on dhat; inf for none
    empirical: bool  # ED2RB (True) or D3RB (False)
    deploy_ucb: bool  # deploy argmin over S of L_k + w(n_k) instead of the head of S


#: Per-expert data of D3RB / ED2RB: ``dhat`` the estimated regret coefficient; ``mean`` ``L_k``
#: and ``width`` ``w(n_k)``, refreshed when the expert trains.
DATA_DRIVEN_DTYPE = np.dtype(
    [("dhat", np.float64), ("mean", np.float64), ("width", np.float64)],
    align=True,
)


class DataDrivenState(NamedTuple):
    experts: np.ndarray  # (K,) DATA_DRIVEN_DTYPE
    phi: np.ndarray  # (K,) float64 balancing potentials (selection key)
    upper: np.ndarray  # (K,) float64 L_k + w(n_k): B and the UCB of deploy="ucb"


@kernel
def _best_pessimistic(params, state, stats):
    best = math.inf
    for j in range(params.n_experts):
        if stats[j].n >= 1 and state.upper[j] < best:
            best = state.upper[j]
    return best


@kernel
def _update_coefficient(params, state, stats, k, best):
    """D3RB's doubling test or ED2RB's estimate for expert ``k``, then its potential."""
    n = stats[k].n
    root = math.sqrt(n)
    expert = state.experts[k]
    if params.empirical:
        realized = n * (expert.mean - expert.width - best)  # lower estimate of k's realized regret
        dhat = min(max(params.d_min, realized / root), params.max_coefficient)
        expert.dhat = dhat
        phi = state.phi[k]
        state.phi[k] = min(max(dhat * root, phi), 2.0 * phi)
    else:
        if expert.mean - expert.dhat / root - expert.width > best:  # misspecification test
            expert.dhat = min(2.0 * expert.dhat, params.max_coefficient)
        state.phi[k] = expert.dhat * root


@implements("select", DataDrivenParams)
@kernel
def _data_driven_select(params, state, stats, t, key, selected, widths):
    return _train_smallest(state.phi, params.budget, state.upper, params.deploy_ucb, selected, widths)


@implements("observe", DataDrivenParams)
@kernel
def _data_driven_observe(params, state, stats, k, loss, t):
    expert = stats[k]
    n = expert.n
    own = state.experts[k]
    own.mean = expert.loss_sum / n
    own.width = balancing_width(params.n_experts, params.delta, params.c, n)
    state.upper[k] = own.mean + own.width
    if t == 0 and k == params.n_experts - 1:  # the update after the warm start (S_0 = every expert)
        best = _best_pessimistic(params, state, stats)
        for j in range(params.n_experts):
            _update_coefficient(params, state, stats, j, best)


@implements("end_round", DataDrivenParams)
@kernel
def _data_driven_end_round(params, state, stats, selected, n_selected, deployed, loss, t):
    best = _best_pessimistic(params, state, stats)
    for j in range(n_selected):
        _update_coefficient(params, state, stats, selected[j], best)


@dataclass(frozen=True)
class DataDrivenBalancing(BasePolicy):
    r"""D3RB (doubling) and ED2RB (estimating) data-driven regret balancing.

    Dann, Gentile, Pacchiano (AISTATS 2024), "Data-Driven Online Model Selection With Regret
    Guarantees" (arXiv 2306.02869); the reference code is pacchiano/modelselection
    (``algorithmsmodsel.py``, ``BalancingHyperparamDoublingDataDriven``, whose ``empirical``
    flag this class keeps). Specified in docs/baselines.md §4. Each expert has a regret
    coefficient estimate ``dhat_k`` (initially ``d_min``) and a balancing potential ``phi_k``
    (initially ``d_min``); each round::

        S_t = the M experts with the smallest phi_k          (ties: smaller index)
        i_t = S_t[0]                           (deploy="head")
            | argmin over S_t of L_k + w(n_k)  (deploy="ucb"; ties: smaller index)
        after training S_t:
        B = min over j with n_j >= 1 of L_j + w(n_j)          (best pessimistic loss)
        for k in S_t:
          D3RB:  if L_k - dhat_k / sqrt(n_k) - w(n_k) > B:  dhat_k = min(2 dhat_k, cap)
                 phi_k = dhat_k sqrt(n_k)
          ED2RB: dhat_k = min(max(d_min, n_k (L_k - w(n_k) - B) / sqrt(n_k)), cap)
                 phi_k  = clip(dhat_k sqrt(n_k), phi_k, 2 phi_k)

    so D3RB's ``dhat`` only doubles and ED2RB's ``phi`` never decreases and at most doubles per
    update. Anytime: nothing depends on the horizon.

    Parameters
    ----------
    empirical : bool
        ``False``: D3RB (registered as ``"d3rb"``); ``True``: ED2RB (``"ed2rb"``). Default False,
        as in pacchiano/modelselection.
    d_min : float
        Smallest regret coefficient and initial ``dhat``, ``phi``; > 0; default 1
        (pacchiano/modelselection and the M-LCB authors' code; the papers' "Medium"/"High"
        variants use 3 and 10).
    c : float
        Width multiplier, > 0; default 1 (both codes; the M-LCB paper tuned 0.1 for its GLM
        experiment).
    delta : float
        The policy's confidence in ``w``, in (0, 1); default 0.01 (pacchiano/modelselection; the
        M-LCB authors used 0.05 for the GLM and 1.0, degenerate, for bandits).
    max_coefficient : float or None
        Cap on ``dhat``, >= ``d_min``, or ``None`` for no cap; default ``1e4``, the
        ``maximum_putative`` of pacchiano/modelselection (the paper has no cap). With losses in
        [0, 1] it never binds before ``n = 2.5e7`` trainings of one expert: D3RB doubles only
        while ``dhat < sqrt(n)``, and ED2RB's estimate is at most ``sqrt(n)``.
    deploy : {"head", "ucb"}
        ``"head"`` (default): the expert with the smallest potential (with M = 1 the trained one,
        as in the paper; M > 1 as the M-LCB authors' bandit ``DDRB``). ``"ucb"``: M-LCB's rule,
        the smallest upper confidence bound within ``S_t`` with this policy's width:
        ``UCB_k = L_k + w(n_k)``.

    Notes
    -----
    Departures and choices:

    * **M > 1 [ours]**: the M smallest potentials are trained.
    * **Update order [ours for M > 1]**: ``B`` is computed once, after all of ``S_t`` has trained
      (it includes this round's statistics of every trained expert, the updated one too), then
      every expert of ``S_t`` is updated with it. With M = 1 this is the paper's order.
    * **Start**: the warm start trains every expert once and is followed by the update with
      ``S_0 = [K]``; afterwards all potentials equal ``d_min`` (with the defaults) and the tie
      rule trains the experts in index order. docs/baselines.md §4 calls the warm start
      equivalent to the tie rule; without it, ``phi = d_min sqrt(1) = d_min`` after the first
      training and expert 0 would be trained twice before expert 1.
    * The cap also bounds ED2RB's ``dhat`` (pacchiano/modelselection caps the doubling only);
      inactive in practice, see ``max_coefficient``.
    * Not copied from public code: pacchiano/modelselection's normalisation of cumulative rewards
      by ``sqrt(n)`` instead of ``n`` inside its bounds (scale-inconsistent with the paper's
      test); the M-LCB authors' bandit ``DDRB`` sizing ``dhat`` and ``phi`` by the budget instead
      of K (only experts ``0 .. M-1`` ever train). Untrained experts are left out of ``B``,
      ``ln ln n`` is guarded (``max(1, ln n)``) and ``delta < 1`` is enforced.

    The deployed decision is the expert's current one or a smoothed one, as the simulation's
    ``smoothing`` says (the paper plays the current decision, "last"; docs/baselines.md).

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("ed2rb").empirical
    True
    """

    empirical: bool = False
    d_min: float = 1.0
    c: float = 1.0
    delta: float = 0.01
    max_coefficient: float | None = 1e4
    deploy: str = "head"

    def __post_init__(self) -> None:
        if not isinstance(self.empirical, (bool, np.bool_)):
            raise InputError(f"empirical must be True (ED2RB) or False (D3RB), got {self.empirical!r}")
        validation.within("d_min", self.d_min, 0.0)
        validation.within("c", self.c, 0.0)
        validation.within("delta", self.delta, 0.0, 1.0)
        if self.max_coefficient is not None:
            validation.within("max_coefficient", self.max_coefficient, self.d_min, closed_low=True)
        validation.choice("deploy", self.deploy, _DEPLOYS)

    @property
    def name(self) -> str:
        return "ed2rb" if self.empirical else "d3rb"

    @property
    def label(self) -> str:
        return self.name

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[DataDrivenParams, DataDrivenState]:
        """Kernel parameters and a fresh state (``delta``, ``horizon`` and ``optimal`` unused)."""
        validation.budget(budget, n_experts)
        cap = math.inf if self.max_coefficient is None else float(self.max_coefficient)
        params = DataDrivenParams(
            int(n_experts),
            int(budget),
            float(self.delta),
            float(self.c),
            float(self.d_min),
            cap,
            bool(self.empirical),
            self.deploy == "ucb",
        )
        experts = np.zeros(n_experts, dtype=DATA_DRIVEN_DTYPE)
        experts["dhat"] = self.d_min
        state = DataDrivenState(
            experts=experts,
            phi=np.full(n_experts, float(self.d_min)),
            upper=np.zeros(n_experts),
        )
        return params, state
