"""M-LCB (Latypov, Suvorikova, Kroshnin, Gasnikov, Dorn 2025, arXiv 2510.22654), docs/theory.md §2.

Each round, with ``n = n_k`` and ``L_k`` the mean training loss of expert ``k``::

    LCB_k = L_k - s * U_k(n, delta / (2K)) / n
    UCB_k = L_k + s * sqrt(2 log(4 K n^2 / delta) / n)
    S_t   = the M experts with the smallest LCB           (ties: smaller identity first)
    i_t   = the expert of S_t with the smallest UCB       (ties: smaller identity)

The engine presents the experts in identity order (:mod:`mlcb.policies`): the kernels' "smaller
index" is the smaller identity.

``s`` is ``bonus_scale`` (1 is the theory; the ``practical`` calibration halves it). Both bounds
depend on ``n_k`` only, so only the trained experts' bounds are recomputed after a round.

``bounds="authors"`` reproduces the authors' reference code instead (docs/presets.md, calibrations):
with ``g = log(t / delta + 1) / n_k`` (``t`` the global round) and ``b = c sqrt(g) + 0.66 g``,
``LCB = L - U / n - b`` and ``UCB = L + b``; the bonus then changes every round for every expert,
so all K bounds are recomputed each round. It is outside the theory: no certificate.

With ``top_m=True`` (the multiple-play variant of the paper's section on Top-M regret) every
expert of ``S_t`` is deployed and the round costs their mean loss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from mlcb import validation
from mlcb.kernels import implements, tables
from mlcb.kernels.constants import Constants
from mlcb.kernels.jit import cold_kernel, kernel, nonnegative
from mlcb.policies import _heap
from mlcb.policies.base import BasePolicy
from mlcb.policies.hoeffding import hoeffding_table, hoeffding_tail, hoeffding_width
from mlcb.policies.selection import smallest


@dataclass(frozen=True)
class MLCBPaths(Constants):
    """The paths M-LCB's kernels take, as compile-time constants (:mod:`mlcb.kernels.constants`)."""

    authors: bool  # the authors' bounds (every bound recomputed each round)
    top_m: bool  # deploy all of S_t
    heap: bool  # incremental selection; False: the reference O(K M) scan
    ordered: bool  # the incremental selection keeps every expert in order (K <= ORDERED_LIMIT)
    scaled: bool  # bonus_scale is not 1 (at 1, s * x is x: no multiplication)
    tabulated: bool  # the Hoeffding table holds every count up to horizon + 1 (_theory_bounds)


class MLCBParams(NamedTuple):
    n_experts: int
    budget: int
    delta: float
    bonus_scale: float
    authors_c: float
    hoeffding: np.ndarray  # (L,) tabulated hoeffding_width(n) for n < L (hoeffding_table); (0,) none
    hoeffding_tail: tables.Tail  # its compressed continuation, one row
    paths: MLCBPaths


BOUNDS_DTYPE = np.dtype(
    [
        ("lcb", np.float64),
        ("ucb", np.float64),
        ("cursor", np.int64, (tables.CURSOR_FIELDS,)),  # reader of hoeffding_tail (mlcb.kernels.tables)
    ],
    align=True,
)


class MLCBState(NamedTuple):
    bounds: np.ndarray  # (K,) BOUNDS_DTYPE: each expert's current LCB and UCB
    lcb: np.ndarray  # (K,) float64 copy of bounds.lcb, contiguous for the selection
    heap: np.ndarray  # (K,) int64 the experts outside the last S_t, a heap on (lcb, index); or,
    # when paths.ordered, every expert observed so far in the order (lcb, index) of the last select
    position: np.ndarray  # (K,) int64 slot of each expert in heap; MEMBER in S_t, -1 neither
    size: np.ndarray  # (1,) int64 heap size
    members: np.ndarray  # (M,) int64 the last S_t, ascending (lcb, index) when it was chosen
    filled: np.ndarray  # (1,) int64 how many experts members holds; when paths.ordered, 1 when
    # an expert outside the last S_t was observed since (the order is then sorted again)


#: ``MLCBState.position`` of an expert in the last ``S_t`` (the heap holds the others).
MEMBER = -2
#: The most experts for which the incremental selection keeps them all in order (the experts
#: whose bounds changed move to their places, a few comparisons where the order changes little;
#: S_t is the first M) rather than S_t apart and the others in a heap (O(M log K) a round, whatever
#: the order's changes): with few experts the heap's bookkeeping costs more than the moves it saves.
ORDERED_LIMIT = 64


@kernel
def _hoeffding_past_table(params, state, k, n):
    """The Hoeffding width at a count ``n`` past the table: from its continuation, or computed."""
    hoeffding = tables.decode(params.hoeffding_tail, params.hoeffding.shape[0], 0, n, state.bounds[k].cursor)
    if hoeffding != hoeffding:  # not stored (or not the count after the last one read)
        hoeffding = hoeffding_width(params.n_experts, params.delta, n)
    return hoeffding


#: :func:`_hoeffding_past_table` out of line, where the table holds every count of the horizon
#: (``paths.tabulated``): reached only by a session driven beyond the horizon it was built for,
#: and kept out of the round loop, which then carries no other path than the table's.
_hoeffding_past_horizon = cold_kernel(_hoeffding_past_table.py_func)


@kernel
def _theory_bounds(params, state, stats, k):
    expert = stats[k]
    n = nonnegative(expert.n)
    mean = expert.loss_sum / n
    if n < params.hoeffding.shape[0]:
        hoeffding = params.hoeffding[n]
    elif params.paths.tabulated:
        hoeffding = _hoeffding_past_horizon(params, state, k, n)
    else:
        hoeffding = _hoeffding_past_table(params, state, k, n)
    bounds = state.bounds[k]
    if params.paths.scaled:
        bounds.lcb = mean - params.bonus_scale * expert.rate / n
        bounds.ucb = mean + params.bonus_scale * hoeffding
    else:  # the same numbers: 1.0 * x == x for every float x
        bounds.lcb = mean - expert.rate / n
        bounds.ucb = mean + hoeffding
    state.lcb[k] = bounds.lcb


@kernel
def _authors_bounds(params, state, stats, t):
    for k in range(params.n_experts):
        expert = stats[k]
        n = expert.n
        mean = expert.loss_sum / n
        g = math.log(t / params.delta + 1.0) / n
        bonus = params.authors_c * math.sqrt(g) + 0.66 * g
        bounds = state.bounds[k]
        bounds.lcb = mean - expert.rate / n - bonus
        bounds.ucb = mean + bonus
        state.lcb[k] = bounds.lcb


@implements("select", MLCBParams)
@kernel
def _select(params, state, stats, t, key, selected, widths):
    paths = params.paths
    if paths.authors:
        _authors_bounds(params, state, stats, t)
    if paths.heap and paths.ordered and not paths.authors:
        _reorder(state, params.budget)
        return _first(params, state, selected, widths)
    if paths.heap and not paths.authors:
        n_selected = _members(params, state, selected)
    else:
        n_selected = smallest(state.lcb, params.budget, selected)
    chosen = nonnegative(selected[0])
    best = state.bounds[chosen].ucb
    for j in range(n_selected):
        k = nonnegative(selected[j])
        bounds = state.bounds[k]
        widths[j] = bounds.ucb - bounds.lcb
        if bounds.ucb < best or (bounds.ucb == best and k < chosen):
            chosen = k
            best = bounds.ucb
    if paths.top_m:
        return n_selected, -1
    return n_selected, nonnegative(chosen)  # (>= 0: the round loop's deployment of one expert)


@kernel
def _first(params, state, selected, widths):
    """:func:`_select` where the experts are kept in order: S_t the first M, in one pass."""
    n_selected = min(params.budget, state.size[0])
    chosen = nonnegative(state.heap[0])
    best = state.bounds[chosen].ucb
    if n_selected > 0:
        selected[0] = chosen
        widths[0] = best - state.bounds[chosen].lcb
    for j in range(1, n_selected):
        k = nonnegative(state.heap[j])
        selected[j] = k
        bounds = state.bounds[k]
        widths[j] = bounds.ucb - bounds.lcb
        if bounds.ucb < best or (bounds.ucb == best and k < chosen):
            chosen = k
            best = bounds.ucb
    if params.paths.top_m:
        return n_selected, -1
    return n_selected, nonnegative(chosen)


@kernel
def _members(params, state, selected):
    """S_t into ``selected`` (ascending ``(lcb, index)``); returns its size.

    The heap holds every expert outside the last ``S_t`` (``members``) in order (``observe``
    resifts one whose bounds change there); the members' bounds changed since they were chosen.
    They are sorted again (by insertion: usually no move), then, while the largest member comes
    after the heap's top, the two trade places. In the common round, where ``S_t`` stays, that
    is ``M`` comparisons and no heap operation; the result is the ``M`` smallest
    ``(lcb, index)`` in order, as popping a heap of all K would give.
    """
    members, lcb, heap, position, size = state.members, state.lcb, state.heap, state.position, state.size
    count = nonnegative(state.filled[0])
    while count < params.budget and size[0] > 0:  # after the warm start, or a budget not yet full
        k = _heap.pop(heap, position, size, lcb)
        position[k] = MEMBER
        members[count] = k
        count = nonnegative(count + 1)
    state.filled[0] = count
    for i in range(1, count):
        k = nonnegative(members[i])
        slot = i
        while slot > 0 and _heap.before(lcb, k, members[slot - 1]):
            members[slot] = members[slot - 1]
            slot = nonnegative(slot - 1)
        members[slot] = k
    while count > 0 and size[0] > 0 and _heap.before(lcb, heap[0], members[count - 1]):
        k = nonnegative(heap[0])
        out = nonnegative(members[count - 1])
        position[k] = MEMBER
        heap[0] = out
        position[out] = 0
        _heap.sift_down(heap, position, lcb, 0, size[0])
        slot = nonnegative(count - 1)
        while slot > 0 and _heap.before(lcb, k, members[slot - 1]):
            members[slot] = members[slot - 1]
            slot = nonnegative(slot - 1)
        members[slot] = k
    for i in range(count):
        selected[i] = nonnegative(members[i])
    return count


@kernel
def _sink(order, position, lcb, slot, size):
    """Move the expert at ``slot`` of ``order[:size]`` towards the end to its place, the experts
    after it being in order."""
    k = nonnegative(order[slot])
    while slot + 1 < size and _heap.before(lcb, order[slot + 1], k):
        other = nonnegative(order[slot + 1])
        order[slot] = other
        position[other] = slot
        slot = nonnegative(slot + 1)
    order[slot] = k
    position[k] = slot


@kernel
def _reorder(state, budget):
    """Bring the order ``state.heap`` of the experts observed so far up to date with their bounds.

    In the round loop the experts observed since the last select are the last S_t, the order's
    first ``min(M, size)`` (:func:`_queue`): each goes to its place among the experts after it, the
    last first, a few comparisons where the order changes little (the step of insertion sort).
    Where others were observed too (the warm start, a session that observes every expert), the
    whole order is sorted again by insertion."""
    size = nonnegative(state.size[0])
    first = min(budget, size) - 1
    if state.filled[0]:
        first = size - 2
        state.filled[0] = 0
    if first >= 0:  # (the last slot apart: a loop of a run-time length costs more than a step)
        _sink(state.heap, state.position, state.lcb, nonnegative(first), size)
    for slot in range(first - 1, -1, -1):
        _sink(state.heap, state.position, state.lcb, nonnegative(slot), size)


@kernel
def _queue(params, state, k):
    """Expert ``k``'s bounds changed: the order is brought up to date at the next select
    (:func:`_reorder`); an expert new to it is appended, and one outside the last S_t marks it
    for sorting again."""
    slot = state.position[k]
    if slot < 0:
        slot = nonnegative(state.size[0])
        state.heap[slot] = k
        state.position[k] = slot
        state.size[0] = slot + 1
        state.filled[0] = 1
    elif slot >= params.budget:
        state.filled[0] = 1


@implements("observe", MLCBParams)
@kernel
def _observe(params, state, stats, k, loss, t):
    if not params.paths.authors:
        _theory_bounds(params, state, stats, k)
        if params.paths.heap and params.paths.ordered:
            _queue(params, state, k)
        elif params.paths.heap:
            where = state.position[k]
            if where == -1:  # the warm start, or an expert observed outside S_t: into the heap
                _heap.push(state.heap, state.position, state.size, state.lcb, k)
            elif where >= 0:
                _heap.resift(state.heap, state.position, state.size, state.lcb, k)


_BOUNDS = ("theory", "authors")
_SELECTIONS = ("heap", "scan")


@dataclass(frozen=True)
class MLCB(BasePolicy):
    """M-LCB: train the M smallest LCBs, deploy the smallest UCB among them (docs/theory.md §2).

    Parameters
    ----------
    bonus_scale : float
        Multiplier ``s > 0`` on both confidence widths; 1 is the theory value, 0.5 the
        ``practical`` calibration (a tuning of the valid rates, not the authors' constants; see
        docs/presets.md, calibrations). Outside 1 the certificate is not a guarantee.
    bounds : {"theory", "authors"}
        ``"theory"``: docs/theory.md §2. ``"authors"``: the authors' reference code (module doc).
    authors_c : float
        The constant ``c`` of the authors' bonus (0.5 in their code).
    top_m : bool
        Deploy all of ``S_t`` (multiple-play variant) instead of the smallest UCB.
    selection : {"heap", "scan"}
        How ``S_t`` is found: incrementally (``"heap"``), from the order kept since the last
        round: up to :data:`ORDERED_LIMIT` experts, all of them in the order of their lower
        bounds, each one whose bounds change moved to its place (a few comparisons where the
        order changes little) and ``S_t`` the first ``M``; with more, the last ``S_t`` re-sorted
        and traded against an indexed heap of the others (``M`` comparisons in a round where
        ``S_t`` stays, ``O(M log K)`` at most). Or the reference scan of all K bounds
        (``O(K M)``). All give identical results; ``"authors"`` bounds change every round and
        always scan.

    Examples
    --------
    >>> from mlcb.policies import make
    >>> make("mlcb", bonus_scale=0.5).bonus_scale
    0.5
    """

    bonus_scale: float = 1.0
    bounds: str = "theory"
    authors_c: float = 0.5
    top_m: bool = False
    selection: str = "heap"

    name: ClassVar[str] = "mlcb"
    has_certificate: ClassVar[bool] = True

    def __post_init__(self) -> None:
        validation.positive("bonus_scale", self.bonus_scale)
        validation.choice("bounds", self.bounds, _BOUNDS)
        validation.positive("authors_c", self.authors_c)
        validation.choice("selection", self.selection, _SELECTIONS)
        validation.flag("top_m", self.top_m)

    @property
    def label(self) -> str:
        return "mlcb-topm" if self.top_m else "mlcb"

    @property
    def certificate_valid(self) -> bool:  # type: ignore[override]  # a class attribute elsewhere
        """Whether the recorded Delta(T) is the paper's certificate (theory bounds, scale 1) for the
        pseudo-regret recorded. Not with ``top_m``: Delta bounds the loss of deploying ``i_t``, and
        the multiple-play variant pays the mean loss of all of ``S_t``, exploring members included
        (two experts of mean losses 0.1 and 0.9 at ``M = 2``: a pseudo-regret of 0.4 a round)."""
        return self.bounds == "theory" and self.bonus_scale == 1.0 and not self.top_m

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[MLCBParams, MLCBState]:
        """Kernel parameters and a fresh state for ``n_experts`` experts, budget ``budget``
        (``optimal``, the experts' L_k*, is for reference policies only and not used here)."""
        validation.budget(budget, n_experts)
        hoeffding = np.zeros(0)
        if self.bounds == "theory":
            hoeffding = hoeffding_table(int(n_experts), float(delta), int(horizon), tables.TABLE_BUDGET_BYTES)
        tail = hoeffding_tail(int(n_experts), float(delta), hoeffding, int(horizon))
        ordered = self.selection == "heap" and self.bounds == "theory" and int(n_experts) <= ORDERED_LIMIT
        params = MLCBParams(
            int(n_experts),
            int(budget),
            float(delta),
            float(self.bonus_scale),
            float(self.authors_c),
            hoeffding,
            tail,
            MLCBPaths(
                authors=self.bounds == "authors",
                top_m=bool(self.top_m),
                heap=self.selection == "heap",
                ordered=ordered,
                scaled=float(self.bonus_scale) != 1.0,
                tabulated=hoeffding.shape[0] >= int(horizon) + 2,
            ),
        )

        state = MLCBState(
            bounds=np.zeros(n_experts, dtype=BOUNDS_DTYPE),
            lcb=np.zeros(n_experts),
            **_heap.empty(n_experts),
            members=np.zeros(budget, dtype=np.int64),
            filled=np.zeros(1, dtype=np.int64),
        )
        return params, state

    def upper_bounds(self, params: MLCBParams, state: MLCBState, stats: np.ndarray) -> np.ndarray:
        """Each expert's upper confidence bound ``UCB_k`` (identity order) as the kernels last set
        it (``observe``; with ``bounds="authors"``, ``select``), ``inf`` for an expert not yet
        observed: what an adapter deploys by (:mod:`mlcb.engine.session`).

        Examples
        --------
        >>> import numpy as np
        >>> from mlcb.kernels.stats import new_stats
        >>> policy = MLCB()
        >>> params, state = policy.build(2, 1, 0.1, 100, np.zeros(2))
        >>> policy.upper_bounds(params, state, new_stats(2)).tolist()
        [inf, inf]
        """
        return np.where(stats["n"] > 0, state.bounds["ucb"], np.inf)
