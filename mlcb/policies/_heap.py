"""An indexed binary min-heap of expert indices, ordered by ``(keys[k], k)``.

Used by policies whose keys change only for the experts trained in a round (M-LCB's LCB depends
on ``n_k`` only): pop the ``M`` smallest, train them, push them back with their new keys:
``O(M log K)`` per round instead of scanning all ``K``. Ties go to the smaller index, exactly as
the reference scan :func:`mlcb.policies.selection.smallest`.

Arrays (caller-owned): ``heap`` (K,) int64 expert indices in heap order, ``position`` (K,) int64
each expert's slot in ``heap`` (-1 when out), ``size`` (1,) int64.
"""

from __future__ import annotations

import numpy as np

from mlcb.kernels.jit import kernel, nonnegative


def empty(n_experts: int) -> dict[str, np.ndarray]:
    """The arrays ``heap``, ``position`` and ``size`` of an empty heap for ``n_experts`` experts,
    by name, for a policy state that holds them (``State(..., **empty(n_experts))``).

    Examples
    --------
    >>> arrays = empty(3)
    >>> arrays["position"], arrays["size"]
    (array([-1, -1, -1]), array([0]))
    """
    return {
        "heap": np.zeros(n_experts, dtype=np.int64),
        "position": np.full(n_experts, -1, dtype=np.int64),
        "size": np.zeros(1, dtype=np.int64),
    }


@kernel
def before(keys, a, b):
    """Whether ``a`` comes before ``b`` in the order ``(keys[k], k)`` (both ``>= 0``)."""
    a = nonnegative(a)
    b = nonnegative(b)
    return keys[a] < keys[b] or (keys[a] == keys[b] and a < b)


@kernel
def _sift_up(heap, position, keys, slot):
    item = nonnegative(heap[slot])
    while slot > 0:
        parent = (slot - 1) >> 1
        other = nonnegative(heap[parent])
        if not before(keys, item, other):
            break
        heap[slot] = other
        position[other] = slot
        slot = parent
    heap[slot] = item
    position[item] = slot


@kernel
def sift_down(heap, position, keys, slot, size):
    """Move the item at ``slot`` down to its place (its key grew, or it replaced the top)."""
    slot = nonnegative(slot)
    item = heap[slot]
    while True:
        child = nonnegative(2 * slot + 1)
        if child >= size:
            break
        if child + 1 < size and before(keys, heap[child + 1], heap[child]):
            child += 1
        other = nonnegative(heap[child])
        if not before(keys, other, item):
            break
        heap[slot] = other
        position[other] = slot
        slot = child
    heap[slot] = item
    position[item] = slot


@kernel
def push(heap, position, size, keys, k):
    """Insert expert ``k`` (not in the heap) with key ``keys[k]``."""
    slot = nonnegative(size[0])
    heap[slot] = k
    size[0] = slot + 1
    _sift_up(heap, position, keys, slot)


@kernel
def pop(heap, position, size, keys):
    """Remove and return the expert with the smallest ``(keys[k], k)``."""
    top = nonnegative(heap[0])
    last = size[0] - 1
    size[0] = last
    position[top] = -1
    if last > 0:
        heap[0] = heap[last]
        sift_down(heap, position, keys, 0, last)
    return top


@kernel
def resift(heap, position, size, keys, k):
    """Insert ``k`` into the heap, or restore the order after its key changed while on it."""
    slot = position[k]
    if slot < 0:
        push(heap, position, size, keys, k)
    else:
        _sift_up(heap, position, keys, slot)
        sift_down(heap, position, keys, position[k], size[0])
