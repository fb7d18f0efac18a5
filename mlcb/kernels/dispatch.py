"""Calling a compiled kernel again without Numba's dispatch.

A Numba dispatcher types every argument of every call to choose its compiled function. For
plain arrays and numbers it does so in C, in microseconds; the round loop's arguments are named
tuples that hold compile-time constants (:mod:`mlcb.kernels.constants`), which its C code cannot
type, so every call was typed by Numba's Python code, array by array: about 0.5 ms a call on the
trap, against 1 µs for the call itself and 0.2 ms for a whole replication of 2,000 rounds. Each
replication paid it once, and each slice of a replication played in slices (progress shown, a
stop looked for) once more.

:func:`call` reads what the type of each argument depends on (:func:`types_key`: an array's
dtype, dimensions, layout and whether it is writeable; a named tuple's class; a constant's
values; a number's kind; a typed list's type) and, for argument types it has met, calls the
compiled function the dispatcher chose for them (:func:`direct`). Arguments it cannot read (an
object of one's own) go through the dispatcher every time. The compiled function is the same:
the results are the same bits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from mlcb.kernels.constants import Constants


class _Unread(Exception):
    """An argument :func:`types_key` cannot read."""


def _key(value: Any) -> Any:
    kind = type(value)
    if kind is np.ndarray:
        flags = value.flags
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        return (value.dtype, value.ndim, layout, flags.writeable)
    if isinstance(value, tuple):  # a named tuple's class is part of its type
        return (kind, *map(_key, value))
    if isinstance(value, Constants):
        return (kind, value.items())
    if kind is float or kind is bool:
        return kind
    if kind is int:  # as Numba types a Python int: int64, uint64 past it, else none
        bits = value.bit_length() if value >= 0 else (-value - 1).bit_length()
        return (int, "int64" if bits < 64 else "uint64" if bits == 64 and value >= 0 else None)
    if isinstance(value, np.generic):
        return (kind, value.dtype)
    try:  # a typed list or dict carries its Numba type
        return (kind, value._numba_type_)
    except Exception:  # noqa: BLE001 - none, or an empty list not typed yet
        raise _Unread from None


def types_key(arguments: tuple) -> Any:
    """What the Numba types of ``arguments`` depend on, or ``None`` where one cannot be read."""
    try:
        return _key(arguments)
    except _Unread:
        return None


def direct(dispatcher: Any, arguments: tuple) -> Callable:
    """The compiled function that ``dispatcher`` ran for ``arguments`` (called with them just
    before), to call again without the dispatch; ``dispatcher`` itself where that function cannot
    be told (or Numba's JIT is disabled): its only compiled function, or the one of exactly these
    argument types (typed here, once)."""
    overloads = getattr(dispatcher, "overloads", None)
    if not overloads:
        return dispatcher
    compiled_ones = list(overloads.values())  # at once: another thread may be compiling one
    if len(compiled_ones) == 1:
        return compiled_ones[0].entry_point
    compiled = overloads.get(tuple(dispatcher.typeof_pyval(argument) for argument in arguments))
    return dispatcher if compiled is None else compiled.entry_point


#: The compiled function of each dispatcher for each key of argument types met in this process.
_ENTRIES: dict[tuple[Any, Any], Callable] = {}
_LOCK = threading.Lock()


def call(dispatcher: Any, *arguments: Any) -> Any:
    """``dispatcher(*arguments)``, by the compiled function it chose for arguments of these types
    when it has met them before (module doc)."""
    key = types_key(arguments)
    if key is not None:
        entry = _ENTRIES.get((dispatcher, key))
        if entry is not None:
            return entry(*arguments)
    result = dispatcher(*arguments)
    if key is not None:
        entry = direct(dispatcher, arguments)
        if entry is not dispatcher:
            with _LOCK:
                _ENTRIES[(dispatcher, key)] = entry
    return result
