"""Tables of functions of a count and their compressed continuation (mlcb.kernels.tables)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlcb.kernels import tables


def smooth(n: np.ndarray) -> np.ndarray:
    """A smooth count function (second differences of its bit patterns: tens) with a jump, a
    change of regime that the codes cannot follow."""
    n = np.asarray(n, dtype=np.float64)
    return 1e6 + 0.37 * n + 1e-9 * n * n + np.where(n >= 1_500, 0.25, 0.0)


def build(length: int, size: int) -> tuple[np.ndarray, tables.Tail]:
    table = np.vstack(
        [smooth(np.maximum(np.arange(length), 1)), 3.0 * smooth(np.maximum(np.arange(length), 1))]
    )
    fills = [lambda start, out: out.__setitem__(slice(None), smooth(np.arange(start, start + len(out))))]
    fills.append(
        lambda start, out: out.__setitem__(slice(None), 3.0 * smooth(np.arange(start, start + len(out))))
    )
    return table, tables.encode(table, lambda row, start, out: fills[row](start, out), size)


def test_continuation_decodes_every_count_bit_for_bit():
    length, size = 1_000, 150_000
    table, tail = build(length, size)
    assert tail.codes.shape == (2, size)
    escaped = int((tail.codes == tables.ESCAPE).sum())
    assert tail.words.shape == (6 + escaped,) and 0 < escaped < 10  # the jump
    n = np.arange(length, length + size)
    for row, scale in enumerate((1.0, 3.0)):
        cursor = tables.new_cursors(1)[0]
        decoded = np.array([tables.decode(tail, length, row, int(k), cursor) for k in n])
        np.testing.assert_array_equal(decoded.view(np.int64), (scale * smooth(n)).view(np.int64))
        assert cursor[0] == n[-1] - (n[-1] - length) % tables.WINDOW  # the last block's first count


def test_decode_reads_its_block_and_the_next_and_refuses_what_it_cannot_give():
    length, size, window = 100, 1_000, tables.WINDOW
    _, tail = build(length, size)
    cursor = tables.new_cursors(1)[0]
    assert math.isnan(tables.decode(tail, length, 0, length + window, cursor))  # not from the start
    assert tables.decode(tail, length, 0, length + 5, cursor) == smooth(length + 5)  # the first block
    assert tables.decode(tail, length, 0, length, cursor) == smooth(length)  # back within it
    assert tables.decode(tail, length, 0, length + 5, cursor) == smooth(length + 5)  # again
    assert math.isnan(tables.decode(tail, length, 0, length + 2 * window, cursor))  # a block skipped
    assert tables.decode(tail, length, 0, length + window + 1, cursor) == smooth(length + window + 1)
    assert math.isnan(tables.decode(tail, length, 0, length + 3, cursor))  # a block left behind
    assert math.isnan(tables.decode(tail, length, 0, length - 1, cursor))  # inside the tables
    assert math.isnan(tables.decode(tail, length, 0, length + size, cursor))  # past the end
    empty = tables.empty_tail(2)
    assert math.isnan(tables.decode(empty, length, 1, length, tables.new_cursors(1)[0]))


def test_decode_refuses_the_counts_past_the_end_of_the_last_block():
    """The last block stops short of a window; the counts past it are not stored."""
    length, window = 100, tables.WINDOW
    size = 2 * window + 3
    _, tail = build(length, size)
    cursor = tables.new_cursors(1)[0]
    for n in range(length, length + size):
        assert tables.decode(tail, length, 1, n, cursor) == 3.0 * smooth(n)
    assert math.isnan(tables.decode(tail, length, 1, length + size, cursor))
    assert math.isnan(tables.decode(tail, length, 1, length + 3 * window - 1, cursor))


def test_as_float_reads_a_bit_pattern():
    values = np.array([0.1, -3.5, 1e-300, np.inf])
    for value, bits in zip(values, values.view(np.int64)):
        assert tables.as_float(int(bits)) == tables._as_float_python(bits) == value


def test_decode_as_python_gives_the_same_values():
    """What runs with NUMBA_DISABLE_JIT=1: the kernel's Python source on NumPy arrays."""
    python = getattr(tables.decode, "py_func", tables.decode)
    length, size = 1_000, 2_000
    _, tail = build(length, size)
    cursor = tables.new_cursors(1)[0]
    n = np.arange(length, length + size)
    decoded = np.array([python(tail, length, 1, int(k), cursor) for k in n])
    np.testing.assert_array_equal(decoded.view(np.int64), (3.0 * smooth(n)).view(np.int64))


@pytest.mark.parametrize(
    ("horizon", "length", "rows", "budget", "expected"),
    [
        (10**8, 2_000_000, 4, None, 98_000_002),
        (1_000, 1_002, 1, None, 0),
        (100, 0, 1, None, 0),
        (10**6, 10, 2, 100, 50),
    ],
)
def test_tail_length(horizon, length, rows, budget, expected):
    assert tables.tail_length(horizon, length, rows, budget) == expected
