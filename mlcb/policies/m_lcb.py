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
from mlcb.kernels.jit import kernel
from mlcb.policies import _heap
from mlcb.policies.base import BasePolicy
from mlcb.policies.hoeffding import hoeffding_table, hoeffding_tail, hoeffding_width
from mlcb.policies.selection import smallest


class MLCBParams(NamedTuple):
    n_experts: int
    budget: int
    delta: float
    bonus_scale: float
    authors: bool
    authors_c: float
    top_m: bool
    use_heap: bool  # incremental O(M log K) selection; False: the reference O(K M) scan
    hoeffding: np.ndarray  # (L,) tabulated hoeffding_width(n) for n < L (hoeffding_table); (0,) none
    hoeffding_tail: tables.Tail  # its compressed continuation, one row


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
    heap: np.ndarray  # (K,) int64 the experts outside the last S_t, a heap on (lcb, index)
    position: np.ndarray  # (K,) int64 slot of each expert in heap; MEMBER in S_t, -1 neither
    size: np.ndarray  # (1,) int64 heap size
    members: np.ndarray  # (M,) int64 the last S_t, ascending (lcb, index) when it was chosen
    filled: np.ndarray  # (1,) int64 how many experts members holds


#: ``MLCBState.position`` of an expert in the last ``S_t`` (the heap holds the others).
MEMBER = -2


@kernel
def _theory_bounds(params, state, stats, k):
    expert = stats[k]
    n = expert.n
    mean = expert.loss_sum / n
    if n < params.hoeffding.shape[0]:
        hoeffding = params.hoeffding[n]
    else:
        hoeffding = tables.decode(
            params.hoeffding_tail, params.hoeffding.shape[0], 0, n, state.bounds[k].cursor
        )
        if hoeffding != hoeffding:  # not stored (or not the count after the last one read)
            hoeffding = hoeffding_width(params.n_experts, params.delta, n)
    bounds = state.bounds[k]
    bounds.lcb = mean - params.bonus_scale * expert.rate / n
    bounds.ucb = mean + params.bonus_scale * hoeffding
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
    if params.authors:
        _authors_bounds(params, state, stats, t)
    if params.use_heap and not params.authors:
        n_selected = _members(params, state, selected)
    else:
        n_selected = smallest(state.lcb, params.budget, selected)
    chosen = selected[0]
    best = state.bounds[chosen].ucb
    for j in range(n_selected):
        k = selected[j]
        bounds = state.bounds[k]
        widths[j] = bounds.ucb - bounds.lcb
        if bounds.ucb < best or (bounds.ucb == best and k < chosen):
            chosen = k
            best = bounds.ucb
    if params.top_m:
        return n_selected, -1
    return n_selected, chosen


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
    count = state.filled[0]
    while count < params.budget and size[0] > 0:  # after the warm start, or a budget not yet full
        k = _heap.pop(heap, position, size, lcb)
        position[k] = MEMBER
        members[count] = k
        count += 1
    state.filled[0] = count
    for i in range(1, count):
        k = members[i]
        slot = i
        while slot > 0 and _heap.before(lcb, k, members[slot - 1]):
            members[slot] = members[slot - 1]
            slot -= 1
        members[slot] = k
    while count > 0 and size[0] > 0 and _heap.before(lcb, heap[0], members[count - 1]):
        k = heap[0]
        out = members[count - 1]
        position[k] = MEMBER
        heap[0] = out
        position[out] = 0
        _heap.sift_down(heap, position, lcb, 0, size[0])
        slot = count - 1
        while slot > 0 and _heap.before(lcb, k, members[slot - 1]):
            members[slot] = members[slot - 1]
            slot -= 1
        members[slot] = k
    for i in range(count):
        selected[i] = members[i]
    return count


@implements("observe", MLCBParams)
@kernel
def _observe(params, state, stats, k, loss, t):
    if not params.authors:
        _theory_bounds(params, state, stats, k)
        if params.use_heap:
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
        How ``S_t`` is found: incrementally, the last ``S_t`` re-sorted and traded against an
        indexed heap of the other experts (``M`` comparisons in a round where ``S_t`` stays,
        ``O(M log K)`` at most), or the reference scan of all K bounds (``O(K M)``). Both give
        identical results; ``"authors"`` bounds change every round and always scan.

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
        """Whether the recorded Delta(T) is the paper's certificate (theory bounds, scale 1)."""
        return self.bounds == "theory" and self.bonus_scale == 1.0

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[MLCBParams, MLCBState]:
        """Kernel parameters and a fresh state for ``n_experts`` experts, budget ``budget``
        (``optimal``, the experts' L_k*, is for reference policies only and not used here)."""
        validation.budget(budget, n_experts)
        hoeffding = np.zeros(0)
        if self.bounds == "theory":
            hoeffding = hoeffding_table(int(n_experts), float(delta), int(horizon), tables.TABLE_BUDGET_BYTES)
        params = MLCBParams(
            int(n_experts),
            int(budget),
            float(delta),
            float(self.bonus_scale),
            self.bounds == "authors",
            float(self.authors_c),
            bool(self.top_m),
            self.selection == "heap",
            hoeffding,
            hoeffding_tail(int(n_experts), float(delta), hoeffding, int(horizon)),
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
