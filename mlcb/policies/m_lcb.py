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

``bounds="authors"`` reproduces the authors' reference code instead (docs/theory.md §8):
with ``g = log(t / delta + 1) / n_k`` (``t`` the global round) and ``b = c sqrt(g) + 0.66 g``,
``LCB = L - U / n - b`` and ``UCB = L + b``; the bonus then changes every round for every expert,
so all K bounds are recomputed each round. It is outside the theory: no certificate.

With ``top_m=True`` (the multiple-play variant of the paper's section on Top-M regret) every
expert of ``S_t`` is deployed and the round costs their mean loss.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from mlcb import tables, validation
from mlcb._jit import kernel, njit
from mlcb.kernels import implements
from mlcb.policies import _heap


class MLCBParams(NamedTuple):
    n_experts: int
    budget: int
    delta: float
    bonus_scale: float
    authors: bool
    authors_c: float
    top_m: bool
    use_heap: bool  # incremental O(M log K) selection; False: the reference O(K M) scan
    hoeffding: np.ndarray  # (L,) tabulated hoeffding_width(n) for n < L (mlcb.tables); (0,) none
    hoeffding_tail: tables.Tail  # its compressed continuation, one row


BOUNDS_DTYPE = np.dtype(
    [
        ("lcb", np.float64),
        ("ucb", np.float64),
        ("cursor", np.int64, (tables.CURSOR_FIELDS,)),  # reader of hoeffding_tail (mlcb.tables)
    ],
    align=True,
)


class MLCBState(NamedTuple):
    bounds: np.ndarray  # (K,) BOUNDS_DTYPE: each expert's current LCB and UCB
    lcb: np.ndarray  # (K,) float64 copy of bounds.lcb, contiguous for the selection
    heap: np.ndarray  # (K,) int64 experts not selected this round, a heap on (lcb, index)
    position: np.ndarray  # (K,) int64 slot of each expert in heap, -1 when out
    size: np.ndarray  # (1,) int64 heap size


@kernel
def hoeffding_width(n_experts, delta, n):
    """Width of M-LCB's upper bound: ``sqrt(2 log(4 K n^2 / delta) / n)``."""
    return math.sqrt(2.0 * math.log(4.0 * n_experts * n * n / delta) / n)


@njit
def _fill_hoeffding(n_experts, delta, start, out):
    for i in range(out.shape[0]):
        out[i] = hoeffding_width(n_experts, delta, start + i)


def _tabulate_hoeffding(n_experts, delta, length):
    table = np.zeros(length)
    if length > 1:
        _fill_hoeffding(n_experts, delta, 1, table[1:])
    return table


def _hoeffding_table(n_experts: int, delta: float, horizon: int, budget: int) -> np.ndarray:
    # Cached by length: every horizon whose table is cut at the budget shares one.
    return _hoeffding_table_of_length(n_experts, delta, tables.table_length(horizon, 1, budget))


@functools.lru_cache(maxsize=16)
def _hoeffding_table_of_length(n_experts: int, delta: float, length: int) -> np.ndarray:
    table = _tabulate_hoeffding(n_experts, delta, length) if length else np.zeros(0)
    table.setflags(write=False)
    return table


def _hoeffding_tail(n_experts: int, delta: float, table: np.ndarray, horizon: int) -> tables.Tail:
    """The continuation of ``table`` (mlcb.tables) up to count ``horizon + 1``, or none."""
    size = tables.tail_length(horizon, table.shape[0], 1)
    if size == 0:
        return tables.empty_tail(1)
    return _hoeffding_tail_of_size(n_experts, delta, table.shape[0], size)


@functools.lru_cache(maxsize=2)  # up to TAIL_BUDGET_BYTES each
def _hoeffding_tail_of_size(n_experts: int, delta: float, length: int, size: int) -> tables.Tail:
    table = _hoeffding_table_of_length(n_experts, delta, length)
    return tables.encode(
        table[None, :], lambda row, start, out: _fill_hoeffding(n_experts, delta, start, out), size
    )


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


@kernel
def smallest(values, count, selected):
    """Write the ``count`` indices with the smallest ``values`` into ``selected``, ascending.

    Ties go to the smaller index. Insertion into a sorted buffer: O(K count) worst case.
    """
    filled = 0
    for k in range(values.shape[0]):
        v = values[k]
        if filled < count:
            position = filled
            filled += 1
        elif v < values[selected[count - 1]]:
            position = count - 1
        else:
            continue
        while position > 0 and values[selected[position - 1]] > v:
            selected[position] = selected[position - 1]
            position -= 1
        selected[position] = k
    return filled


#: Width of the rows in which :func:`smallest_blocked` reads its values.
BLOCK = 64


@kernel
def insert_smallest(values, k, found, count, selected):
    """Insert ``k`` into the ``found`` experts of ``selected`` (ascending ``(values[k], k)``,
    at most ``count`` kept); returns the new number kept.

    For candidates met in any order. :func:`smallest` keeps its own copy of this loop: it meets
    them in index order, so a value alone decides, and calling this instead made it 12 % slower
    over 10 values and 55 % over 1000 (measured).
    """
    if found < count:
        position = found
        found += 1
    elif _heap._before(values, k, selected[count - 1]):
        position = count - 1
    else:
        return found
    while position > 0 and _heap._before(values, k, selected[position - 1]):
        selected[position] = selected[position - 1]
        position -= 1
    selected[position] = k
    return found


@kernel
def _smaller(a, b):
    return a if a < b else b


@kernel
def column_minima(values, mins):
    """``mins[b]``: the smallest of ``values[b], values[b + BLOCK], ...`` (``+inf`` for a column
    without values), in loops the compiler vectorises. Four rows are folded together before
    each update of ``mins``: the updates form a chain through memory, a quarter as long."""
    size = values.shape[0]
    rows = size // BLOCK
    for b in range(BLOCK):
        mins[b] = values[b] if rows else math.inf
    j = 1
    while j < rows:
        if j + 4 <= rows:
            r0 = values[j * BLOCK : (j + 1) * BLOCK]
            r1 = values[(j + 1) * BLOCK : (j + 2) * BLOCK]
            r2 = values[(j + 2) * BLOCK : (j + 3) * BLOCK]
            r3 = values[(j + 3) * BLOCK : (j + 4) * BLOCK]
            for b in range(BLOCK):
                low = _smaller(_smaller(r0[b], r1[b]), _smaller(r2[b], r3[b]))
                mins[b] = _smaller(low, mins[b])
            j += 4
        else:
            row = values[j * BLOCK : (j + 1) * BLOCK]
            for b in range(BLOCK):
                mins[b] = _smaller(row[b], mins[b])
            j += 1
    for b in range(size - rows * BLOCK):
        mins[b] = _smaller(values[rows * BLOCK + b], mins[b])


@kernel
def smallest_blocked(values, count, selected, mins):
    """:func:`smallest`, for many values: the same indices, in the same order (values without
    NaN), with ``mins`` a scratch of ``BLOCK`` floats.

    Up to ``2 BLOCK`` values (or above ``BLOCK`` selected), :func:`smallest` itself. Above, the
    values are read as rows of ``BLOCK`` (``k = j BLOCK + b``) and ``mins`` gets each column's
    minimum in one pass that the compiler vectorises. The ``count`` smallest column minima are
    ``count`` distinct values, so the ``count``-th smallest value of all is at most the largest
    of them, ``tau``; only the columns whose minimum is at most ``tau`` can hold a value at most
    ``tau``, and only those are searched, value by value. With distinct values that is
    ``count`` columns: O(K) vectorised plus O(count K / BLOCK).
    """
    # A small function the compiler inlines: small pools pay no extra call.
    if values.shape[0] <= 2 * BLOCK or count > BLOCK:
        return smallest(values, count, selected)
    return _smallest_by_columns(values, count, selected, mins)


@kernel
def _smallest_by_columns(values, count, selected, mins):
    column_minima(values, mins)
    smallest(mins, count, selected)
    tau = mins[selected[count - 1]]
    found = 0
    for b in range(BLOCK):
        if mins[b] <= tau:
            for k in range(b, values.shape[0], BLOCK):
                if values[k] <= tau:
                    found = insert_smallest(values, k, found, count, selected)
    return found


@implements("select", MLCBParams)
@kernel
def _select(params, state, stats, t, key, selected, widths):
    if params.authors:
        _authors_bounds(params, state, stats, t)
    if params.use_heap and not params.authors:
        n_selected = min(params.budget, state.size[0])
        for j in range(n_selected):
            selected[j] = _heap.pop(state.heap, state.position, state.size, state.lcb)
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


@implements("observe", MLCBParams)
@kernel
def _observe(params, state, stats, k, loss, t):
    if not params.authors:
        _theory_bounds(params, state, stats, k)
        if params.use_heap:
            _heap.push(state.heap, state.position, state.size, state.lcb, k)


_BOUNDS = ("theory", "authors")
_SELECTIONS = ("heap", "scan")


@dataclass(frozen=True)
class MLCB:
    """M-LCB: train the M smallest LCBs, deploy the smallest UCB among them (docs/theory.md §2).

    Parameters
    ----------
    bonus_scale : float
        Multiplier ``s > 0`` on both confidence widths; 1 is the theory value, 0.5 the
        ``practical`` calibration (a tuning of the valid rates, not the authors' constants; see
        docs/theory.md §8). Outside 1 the certificate is not a guarantee.
    bounds : {"theory", "authors"}
        ``"theory"``: docs/theory.md §2. ``"authors"``: the authors' reference code (module doc).
    authors_c : float
        The constant ``c`` of the authors' bonus (0.5 in their code).
    top_m : bool
        Deploy all of ``S_t`` (multiple-play variant) instead of the smallest UCB.
    selection : {"heap", "scan"}
        How ``S_t`` is found: an indexed heap updated for the trained experts only
        (``O(M log K)`` per round), or the reference scan of all K bounds (``O(K M)``). Both give
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
    def certificate_valid(self) -> bool:
        """Whether the recorded Delta(T) is the paper's certificate (theory bounds, scale 1)."""
        return self.bounds == "theory" and self.bonus_scale == 1.0

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[MLCBParams, MLCBState]:
        """Kernel parameters and a fresh state for ``n_experts`` experts, budget ``budget``
        (``optimal``, the experts' L_k*, is for reference policies only and not used here)."""
        hoeffding = np.zeros(0)
        if self.bounds == "theory":
            hoeffding = _hoeffding_table(
                int(n_experts), float(delta), int(horizon), tables.TABLE_BUDGET_BYTES
            )
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
            _hoeffding_tail(int(n_experts), float(delta), hoeffding, int(horizon)),
        )

        state = MLCBState(
            bounds=np.zeros(n_experts, dtype=BOUNDS_DTYPE),
            lcb=np.zeros(n_experts),
            heap=np.zeros(n_experts, dtype=np.int64),
            position=np.full(n_experts, -1, dtype=np.int64),
            size=np.zeros(1, dtype=np.int64),
        )
        return params, state
