"""Compiled selection helpers shared by the policies: the ``count`` smallest of many values, and
uniform draws of experts without replacement.

Every helper breaks ties by the smaller index, so a policy built on them keeps the package's tie
rule (the smaller expert identity, :mod:`mlcb.policies`). All of them are kernels
(:func:`mlcb.kernels.jit.kernel`): called from a policy's kernel, they compile into the round loop, and
they write into caller-owned arrays only.

:func:`smallest`
    the ``count`` indices with the smallest values, ascending, by insertion: O(K count) worst case;
:func:`smallest_blocked`
    the same indices in the same order for many values, by column minima (:data:`BLOCK` columns);
:func:`insert_smallest`
    insert one candidate into such a sorted selection, for candidates met in any order;
:func:`column_minima`
    the minimum of each column of :data:`BLOCK` values, in loops the compiler vectorises;
:func:`cycle`
    the next ``count`` experts of a cycle through all of them;
:func:`shuffle_prefix`
    ``count`` steps of a Fisher-Yates shuffle: a uniformly random ordered ``count``-subset;
:func:`draw_extra`
    the deployed expert and others drawn uniformly without replacement (:func:`extra_draws`,
    :func:`inclusion`: how many, and each expert's chance to train);
:func:`nan_widths`
    the widths a policy without confidence bounds reports.
"""

from __future__ import annotations

import math

import numpy as np

from mlcb.kernels.jit import KERNEL_OPTIONS, jit, kernel
from mlcb.kernels.random import uniform
from mlcb.policies import _heap

#: ``@kernel`` for the few-line helpers below that stand for loops a policy would otherwise write
#: in place: Numba inlines them into each caller (``inline="always"``), so that sharing one adds
#: no function call to a round. (LLVM does not inline one compiled kernel into another.)
inline_kernel = jit(inline="always", **KERNEL_OPTIONS)

#: Width of the rows in which :func:`smallest_blocked` reads its values.
BLOCK = 64


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


@kernel
def insert_smallest(values, k, found, count, selected):
    """Insert ``k`` into the ``found`` experts of ``selected`` (ascending ``(values[k], k)``,
    at most ``count`` kept); returns the new number kept.

    For candidates met in any order. :func:`smallest` keeps its own copy of this loop: it meets
    them in index order, so a value alone decides, and its inner comparison stays one load and
    one compare instead of this one's tie-breaking pair.
    """
    if found < count:
        position = found
        found += 1
    elif _heap.before(values, k, selected[count - 1]):
        position = count - 1
    else:
        return found
    while position > 0 and _heap.before(values, k, selected[position - 1]):
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


@inline_kernel
def cycle(n_experts, count, t, selected):
    """Round ``t``'s ``count`` experts of a cycle through all: ``selected[j] = (o_t + j) mod K``
    for ``j < count``, with ``o_t = ((t - 1) count) mod K``, so that after ``t`` rounds every
    expert was selected ``floor(t count / K)`` or ``ceil(t count / K)`` times."""
    offset = ((t - 1) * count) % n_experts
    for j in range(count):
        selected[j] = (offset + j) % n_experts


@inline_kernel
def shuffle_prefix(order, size, count, key, t, slot, out, start):
    """``count`` steps of a Fisher-Yates shuffle of ``order[:size]``, the drawn experts written to
    ``out[start : start + count]``.

    Step ``j`` swaps position ``j`` with position ``j + floor(u_j (size - j))`` (the ``floor``
    capped at ``size - 1 - j`` against rounding), ``u_j = uniform(key, t, slot + j)``, and writes
    the expert it brought to position ``j``. Whatever order ``order[:size]`` holds, the result is
    a uniformly random ordered ``count``-subset of it; the shuffled ``order`` may be carried to
    the next round (O(count), no reset).
    """
    for j in range(count):
        span = size - j
        r = j + min(np.int64(uniform(key, t, slot + j) * span), span - 1)
        k = order[r]
        order[r] = order[j]
        order[j] = k
        out[start + j] = k


def extra_draws(n_experts: int, budget: int) -> tuple[int, float]:
    """``(extra, ratio)`` of a policy that trains the expert it deploys and ``extra`` more, drawn
    uniformly (:func:`draw_extra`): ``extra = min(M - 1, K - 1)`` and ``ratio = extra / (K - 1)``
    (0 when K = 1), the chance that a given other expert is drawn, so that an expert deployed
    with probability ``p`` trains with probability :func:`inclusion` ``(p, ratio)``.

    Examples
    --------
    >>> extra_draws(5, 3)
    (2, 0.5)
    """
    extra = min(budget - 1, n_experts - 1)
    return extra, extra / (n_experts - 1) if n_experts > 1 else 0.0


@inline_kernel
def draw_extra(order, chosen, n_experts, extra, key, t, selected, widths):
    """Write the training set ``selected[: 1 + extra]``: the deployed expert ``chosen`` first,
    then ``extra`` experts drawn uniformly without replacement from ``[K] \\ {chosen}``
    (widths ``nan``); returns its size ``1 + extra``.

    The draw is a partial Fisher-Yates shuffle (:func:`shuffle_prefix`) of the identity with
    ``chosen`` swapped to the end, held in the scratch array ``order``: slot ``1 + j`` of the
    stream ``key`` at counter ``t`` for the ``j``-th draw.
    """
    selected[0] = chosen
    widths[0] = math.nan
    for k in range(n_experts):
        order[k] = k
    order[chosen] = n_experts - 1
    order[n_experts - 1] = chosen
    shuffle_prefix(order, n_experts - 1, extra, key, t, 1, selected, 1)
    for j in range(extra):
        widths[1 + j] = math.nan
    return 1 + extra


@inline_kernel
def inclusion(p, ratio):
    """``P(k in S_t) = p + (1 - p) ratio`` for an expert deployed with probability ``p``, when
    each other expert is drawn with probability ``ratio`` (:func:`extra_draws`)."""
    return p + (1.0 - p) * ratio


@inline_kernel
def nan_widths(widths, count):
    """``widths[:count] = nan``: the widths of a policy without confidence bounds."""
    for j in range(count):
        widths[j] = math.nan
