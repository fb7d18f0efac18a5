"""Tables of functions of an integer count, shared by every replication of a run.

Most transcendental functions in M-LCB's bounds and in the experts depend on a count alone: the
Hoeffding width on ``n_k``, a theory rate ``U(n, delta')`` on the expert's own update count, the
epsilon-greedy schedule on its own round ``j``. A run of horizon ``T`` never sees a count above
``T + 1`` (warm start plus one update per round), so these functions are evaluated once for
``n = 0 .. L - 1`` by the *same* compiled scalar function the kernels would call, and the round
loop reads the table for counts below ``L`` and computes above (the reference path; tests hold
the two equal bit for bit). ``L = T + 2`` when the tables fit :data:`TABLE_BUDGET_BYTES` (64 MB,
8 bytes per count and row).

At longer horizons the tables keep the counts that fit, and a *continuation* (:class:`Tail`,
:func:`encode`, :func:`decode`) stores the counts from ``L`` on in one byte each, within
:data:`TAIL_BUDGET_BYTES`: a kernel reads a function at consecutive counts (an expert's update
count grows by one per training), so it can rebuild each value exactly from the two before it and
a one-byte second difference of their IEEE-754 bit patterns, which past a few million counts is
the rounding noise of the last bits. Values the byte cannot reach are stored whole. Counts past
both are computed. All three paths give the same bits. A reader decodes the continuation a block
of :data:`WINDOW` counts at a time into a window of its own, so that a read within the block is a
load and a few comparisons, and a block's decoding a few integer operations per count, instead
of the logarithms, square roots and powers of the computed path.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from mlcb.kernels.jit import JIT_DISABLED, cold_kernel, kernel, nonnegative

#: Largest total size of one set of tables; counts beyond it are computed.
TABLE_BUDGET_BYTES = 64 * 2**20


def frozen(array: np.ndarray) -> np.ndarray:
    """``array``, made read-only, and returned.

    Every table and continuation handed to a kernel is read-only, the empty ones too: Numba types
    a read-only array apart from a writable one, so a mix (full tables read-only, empty ones
    writable) would compile the round loop once for short horizons and again for long ones.
    """
    array.setflags(write=False)
    return array


#: An empty table: "compute, do not look up" (read-only, as every table: :func:`frozen`).
EMPTY = frozen(np.zeros((0, 0)))


def table_length(horizon: int, rows: int, budget: int | None = None) -> int:
    """Length of each of ``rows`` float64 rows within ``budget`` bytes (default
    :data:`TABLE_BUDGET_BYTES`): ``T + 2`` when they fit, else as many counts as fit; 0 (no
    tables) when not even two do.

    Examples
    --------
    >>> table_length(1_000, 2), table_length(10**9, 2, budget=800), table_length(10, 1, budget=8)
    (1002, 50, 0)
    """
    budget = TABLE_BUDGET_BYTES if budget is None else budget
    length = min(horizon + 2, budget // (8 * max(rows, 1)))
    return length if length >= 2 else 0


# --- beyond the tables: compressed continuations ----------------------------------------------
# Past the float64 tables a count function is still evaluated at consecutive counts: an expert's
# update count grows by one per training, and each kernel reads its functions at every count it
# passes. Such a run of values is stored exactly, in one byte per count, as the second difference
# of the values' IEEE-754 bit patterns (read as int64): the functions are smooth, so past a few
# million counts the second difference is the rounding noise of the last bits (|d2| <= 48 at
# n = 10^7, <= 4 at 5 x 10^7). A value whose second difference does not fit in a byte is stored
# whole, in order, in ``Tail.words``. Decoding needs the two previous values, so each reader keeps
# a cursor; it reproduces the computed values bit for bit because it stores nothing but them.
# The cursor decodes a block of counts at once into its window, and a read within the block is
# served from there, without the checks a decoding step makes (is this the next count? an
# exception?).

#: Largest total size of one set of compressed continuations (one byte per count and row).
TAIL_BUDGET_BYTES = 512 * 2**20
#: The code of a value stored whole (in ``Tail.words``).
ESCAPE = -128
#: Counts a reader decodes at once (a power of two): the continuation is read in blocks of this
#: many counts from the tables' length on, each decoded whole into the reader's window when a
#: read first reaches it, so that a read within the block is a load (:func:`decode`).
WINDOW = 32
#: Fields of a cursor (int64): the first count of the block in its window (0: none yet; the
#: counts read here are at least 2), the bit pattern of the block's last value, that value's
#: first difference, the position of the row's next exception; then the window, the bit patterns
#: of the block's :data:`WINDOW` values (the ``nan`` pattern past the continuation's end). A fresh
#: cursor is all zeros, as a new state record's field is.
CURSOR_FIELDS = 4 + WINDOW
#: The bit pattern of ``nan`` (a window's slot past the continuation).
_NAN_BITS = int(np.array(math.nan).view(np.int64))
_CHUNK = 1 << 16


class Tail(NamedTuple):
    """The compressed continuation of a set of tables ``(R, L)``: counts ``L .. L + N - 1``."""

    codes: np.ndarray  # (R, N) int8: second differences of the bit patterns, or ESCAPE
    # (3 R + E,) int64 bit patterns: for each row r, at 3r and 3r + 1 its values at counts L - 2
    # and L - 1, at 3r + 2 the position here of its first exception; then the E exceptions.
    words: np.ndarray


def empty_tail(rows: int) -> Tail:
    """No continuation of tables of ``rows`` rows (read-only arrays, typed as a continuation's)."""
    return Tail(frozen(np.zeros((rows, 0), dtype=np.int8)), frozen(np.zeros(3 * rows, dtype=np.int64)))


def tail_length(horizon: int, length: int, rows: int, budget: int | None = None) -> int:
    """Counts stored past tables of ``length`` (when they stop short of ``horizon + 2``) within
    ``budget`` bytes (default :data:`TAIL_BUDGET_BYTES`); 0 when none are needed or possible.

    >>> tail_length(10**8, 2_000_000, 4), tail_length(1_000, 1_002, 1), tail_length(100, 0, 1)
    (98000002, 0, 0)
    """
    budget = TAIL_BUDGET_BYTES if budget is None else budget
    if length < 2:
        return 0
    return max(0, min(horizon + 2 - length, budget // max(rows, 1)))


def new_cursors(*shape: int) -> np.ndarray:
    """Fresh cursors of shape ``(*shape, CURSOR_FIELDS)`` (int64 zeros)."""
    return np.zeros((*shape, CURSOR_FIELDS), dtype=np.int64)


def _as_float_python(bits: Any) -> float:
    """The float64 whose IEEE-754 bit pattern is the int64 ``bits`` (NumPy)."""
    return float(np.array(bits, dtype=np.int64).view(np.float64))


if JIT_DISABLED:
    as_float = _as_float_python
else:
    from llvmlite import ir
    from numba.core import types
    from numba.extending import intrinsic

    @intrinsic
    def _bitcast(typingctx, bits):
        if not isinstance(bits, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            value = context.cast(builder, args[0], signature.args[0], types.int64)
            return builder.bitcast(value, ir.DoubleType())

        return types.float64(bits), codegen

    @kernel
    def as_float(bits):
        """The float64 whose IEEE-754 bit pattern is the int64 ``bits`` (a bit cast)."""
        return _bitcast(bits)


def _encode_chunk(values: np.ndarray, codes: np.ndarray, previous: np.ndarray, exceptions: np.ndarray) -> int:
    """Encode ``values`` (consecutive counts) into ``codes``; ``previous`` holds the bit patterns
    of the two counts before them and is updated. Returns how many values went to
    ``exceptions``.

    Each value's code depends on the bit patterns alone (never on an earlier code), so the chunk
    is encoded in whole-array operations: nothing to compile, which a run past the tables would
    otherwise do once (the round loop it runs is the one a short run compiled)."""
    bits = np.concatenate([previous, values.view(np.int64)])
    with np.errstate(over="ignore"):
        differences = bits[1:] - bits[:-1]  # wraps where the patterns are far apart: escaped below
        first, step = differences[:-1], differences[1:]
        second = step - first
    limit = np.int64(1) << 61
    near = (first > -limit) & (first < limit) & (step > -limit) & (step < limit)
    small = near & (second > -128) & (second < 128)
    codes[:] = np.where(small, second, ESCAPE)
    escaped = values[~small]
    exceptions[: escaped.shape[0]] = escaped
    previous[:] = bits[-2:]
    return int(escaped.shape[0])


def encode(table: np.ndarray, fill: Any, length: int) -> Tail:
    """The continuation of ``table`` (R, L) over counts ``L .. L + length - 1``.

    ``fill(row, start, out)`` writes row ``row``'s values at counts ``start .. start +
    len(out) - 1`` into ``out``; it is called for consecutive chunks of each row, in order (so
    that it may carry a recurrence from one chunk to the next).
    """
    rows, start = table.shape
    if length <= 0 or start < 2:
        return empty_tail(rows)
    codes = np.empty((rows, length), dtype=np.int8)
    heads = np.zeros((rows, 3), dtype=np.int64)
    pieces, total = [], 3 * rows
    values, exceptions = np.empty(_CHUNK), np.empty(_CHUNK)
    for row in range(rows):
        heads[row, :2] = np.ascontiguousarray(table[row, start - 2 : start]).view(np.int64)
        heads[row, 2] = total
        previous = heads[row, :2].copy()
        for offset in range(0, length, _CHUNK):
            size = min(_CHUNK, length - offset)
            fill(row, start + offset, values[:size])
            count = _encode_chunk(values[:size], codes[row, offset : offset + size], previous, exceptions)
            if count:
                pieces.append(exceptions[:count].view(np.int64).copy())
                total += count
    words = np.concatenate([heads.ravel(), *pieces])
    return Tail(frozen(codes), frozen(words))


@kernel
def decode(tail, length, row, n, cursor):
    """Row ``row``'s value at count ``n >= length`` (``length`` the tables' length) from their
    continuation ``tail``, read through ``cursor`` (CURSOR_FIELDS int64): any count of the block
    in its window, or of the next block, which it then decodes (:func:`_advance`); ``nan`` when
    the continuation cannot give it: ``n`` past it, inside the tables, or further on than the next
    block (the caller then computes the value)."""
    start = cursor[0]
    offset = n - start
    if start > 0 and (offset & -WINDOW) == 0:  # 0 <= offset < WINDOW (a power of two): one test
        return as_float(cursor[4 + offset])
    return _advance(tail, length, row, n, cursor)


@cold_kernel
def _advance(tail, length, row, n, cursor):
    """:func:`decode` of a count outside the block in ``cursor``'s window: decode the block of
    ``n`` into the window when it is the first block (a fresh cursor) or the next one.

    Out of line (a call once in :data:`WINDOW` reads): a round loop past the tables reads up to
    three functions per trained expert, and inlined, each read carried a copy of this loop."""
    i = n - length
    if i < 0 or i >= tail.codes.shape[1]:
        return math.nan
    first = i - i % WINDOW  # the block's first position in the continuation
    if cursor[0] == 0:
        if first != 0:
            return math.nan
        head = 3 * row
        cursor[1] = tail.words[head + 1]
        cursor[2] = tail.words[head + 1] - tail.words[head]
        cursor[3] = tail.words[head + 2]
    elif length + first != cursor[0] + WINDOW:
        return math.nan
    bits, step, exception = cursor[1], cursor[2], cursor[3]
    for d in range(WINDOW):
        position = first + d
        if position >= tail.codes.shape[1]:
            cursor[4 + d] = _NAN_BITS
            continue
        code = tail.codes[row, position]
        if code == ESCAPE:
            value = tail.words[nonnegative(exception)]
            exception += 1
            step = value - bits
            bits = value
        else:
            step += code
            bits += step
        cursor[4 + d] = bits
    cursor[0], cursor[1], cursor[2], cursor[3] = length + first, bits, step, exception
    return as_float(cursor[4 + i - first])
