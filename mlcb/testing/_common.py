"""What every conformance check shares: the error, its messages, and comparisons of kernel data.

:class:`ConformanceError` and :func:`_fail` raise at the first violation with a message that
names the object and the fix; :func:`_raising` turns a failure of the object's own code into one.
The rest reads the ``(params, state)`` pairs that ``build`` methods return for the compiled
kernels: NamedTuples of arrays and scalars (:func:`_check_kernel_tuple`), compared leaf by leaf
and bit for bit (:func:`_leaves`, :func:`_same`, :func:`_build_difference`), with fresh state
arrays on every call (:func:`_check_build`). :func:`_run_probe` runs the small compiled probes
that drive an object's kernels and reports their failures. This module imports no other of the
package.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlcb.kernels.constants import Constants
from mlcb.kernels.jit import KERNEL_OPTIONS
from mlcb.validation import InputTypeError

#: The confidence level the checks evaluate rate functions at (``delta' = DELTA / (2 K)``).
DELTA = 0.1


class ConformanceError(AssertionError):
    """An object breaks its contract (:mod:`mlcb.contracts`); the message says where and how to fix it."""


@dataclass(frozen=True)
class CheckReport:
    """What a conformance check ran, returned when every check passed (a failure raises a
    :class:`ConformanceError` instead): the object checked, where, each check in a line, and
    what a user should know of it (``notes``). ``print(report)`` shows it all; in a notebook it
    shows itself; it is true.

    Examples
    --------
    >>> report = CheckReport("expert Mine", "mlcb/Trap-v0", ("learn: losses in [0, 1]",))
    >>> print(report)
    expert Mine on mlcb/Trap-v0: 1 check passed
      - learn: losses in [0, 1]
    """

    subject: str
    environment: str | None
    checks: tuple[str, ...]
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """Always ``True``: a report exists only for an object that passed."""
        return True

    def __bool__(self) -> bool:
        return True

    def _headline(self) -> str:
        where = f" on {self.environment}" if self.environment else ""
        count = len(self.checks)
        return f"{self.subject}{where}: {count} check{'s' if count != 1 else ''} passed"

    def __str__(self) -> str:
        lines = [self._headline(), *(f"  - {check}" for check in self.checks)]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<CheckReport: {self._headline()}>"

    def _repr_html_(self) -> str:
        import html

        items = "".join(f"<li>{html.escape(check)}</li>" for check in self.checks)
        notes = "".join(f"<p><em>note:</em> {html.escape(note)}</p>" for note in self.notes)
        return f"<p><strong>{html.escape(self._headline())}</strong></p><ul>{items}</ul>{notes}"


def _fail(who: str, message: str) -> None:
    raise ConformanceError(f"{who}: {message}")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


@contextlib.contextmanager
def _raising(what: str, fix: str | None = None, *, first_line: bool = False) -> Iterator[None]:
    """Any exception the object's code raises inside (a ``SystemExit`` too, not an interrupt)
    becomes a :class:`ConformanceError`: ``what: Type: message; fix`` (only the message's first
    line with ``first_line``: Numba's typing errors run over many lines)."""
    try:
        yield
    except ConformanceError:  # a check inside found a violation: it says so itself
        raise
    except (Exception, SystemExit) as error:  # noqa: BLE001 (a user's code, Numba's typing errors; sys.exit)
        detail = _first_line(error) if first_line else str(error)
        suffix = f"; {fix}" if fix else ""
        named = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
        raise ConformanceError(f"{what}: {named}{suffix}") from error


def _resolve(kind: str, argument: str, value: Any, params: dict | None, make: Callable[..., Any]) -> Any:
    """``make(value, **params)`` for a registered name ``value``, or ``value`` itself (then
    ``params`` must be empty): the object a check drives."""
    if isinstance(value, str):
        try:
            return make(value, **(params or {}))
        except (ValueError, TypeError) as error:
            raise ConformanceError(f"{kind} {value!r}: cannot be made: {error}") from error
    if params:
        raise InputTypeError(f"{argument}_params is for a registered {kind} name; pass {argument} as a name")
    return value


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _is_integer(value: Any, low: int, high: float = math.inf) -> bool:
    """``value`` is an integer (not a bool) in ``[low, high]``."""
    return not _is_bool(value) and isinstance(value, numbers.Integral) and low <= int(value) <= high


def _describe(value: Any) -> str:
    """``value`` and its type, briefly, for messages."""
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    kind = type(value).__name__
    if isinstance(value, (tuple, list)):
        kind = f"a {kind} of {len(value)}"
    return f"{text} ({kind})"


def _check_unit(who: str, value: Any, where: str, what: str, allow_nan: bool = False) -> float:
    """``value`` (what ``where`` returned) as a float in ``[0, 1]`` (or ``nan`` with ``allow_nan``)."""
    if not _is_real(value):
        _fail(who, f"{where} returned {_describe(value)}; {what} must be a float in [0, 1]")
    value = float(value)
    if math.isnan(value):
        if allow_nan:
            return value
        _fail(who, f"{where} returned nan; {what} must be a number in [0, 1], not nan")
    if not 0.0 <= value <= 1.0:
        _fail(
            who,
            f"{where} returned {value!r}, outside [0, 1]; {what} must lie in [0, 1] "
            "(M-LCB's Assumption 1): normalise or clip it",
        )
    return value


# --- kernel data: NamedTuples of arrays and scalars -----------------------------------------------
def _leaves(value: Any, path: str):
    """``(path, leaf)`` of every array or scalar of nested NamedTuples."""
    if _is_namedtuple(value):
        for name, item in zip(type(value)._fields, value):
            yield from _leaves(item, f"{path}.{name}")
    elif isinstance(value, tuple):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}[{i}]")
    else:
        yield path, value


def _same(a: Any, b: Any) -> bool:
    """Bitwise equality of two leaves (NaN equals NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if _is_real(a) and _is_real(b):
        return a == b or (math.isnan(a) and math.isnan(b))
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 (an exotic leaf: compare what pickling gives)
        return pickle.dumps(a) == pickle.dumps(b)


def _first_difference(a: Any, b: Any, path: str) -> str | None:
    """The path of the first leaf where two nested NamedTuples differ, or ``None``."""
    left, right = list(_leaves(a, path)), list(_leaves(b, path))
    if [p for p, _ in left] != [p for p, _ in right]:
        return path
    for (where, x), (_, y) in zip(left, right):
        if not _same(x, y):
            return where
    return None


#: What a kernel's NamedTuple may hold: arrays, scalars and compile-time constants
#: (:class:`mlcb.kernels.constants.Constants`).
_LEAF_TYPES = (np.ndarray, np.generic, int, float, bool, complex, str, Constants)


def _build_difference(first: tuple, second: tuple) -> str | None:
    """Where two ``(params, state)`` pairs differ first, or ``None``."""
    for what, a, b in zip(("params", "state"), first, second):
        where = _first_difference(a, b, what)
        if where is not None:
            return where
    return None


def _check_kernel_tuple(who: str, value: Any, what: str, fix: str) -> None:
    """``value`` must be a NamedTuple of arrays, scalars and constants (what Numba compiles)."""
    if not _is_namedtuple(value):
        _fail(who, f"{what} is {_describe(value)}, not a NamedTuple; {fix}")
    for path, leaf in _leaves(value, what):
        if not isinstance(leaf, _LEAF_TYPES):
            _fail(
                who,
                f"{path} is {_describe(leaf)}; the compiled kernels read NamedTuples of NumPy arrays, "
                f"scalars and compile-time Constants (mlcb.kernels.constants) only: {fix}",
            )


def _check_fresh_state(who: str, first: Any, second: Any, what: str) -> None:
    """Two builds must not share a mutable array (replications run in parallel threads)."""
    for (path, a), (_, b) in zip(_leaves(first, what), _leaves(second, what)):
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.size and np.shares_memory(a, b):
            _fail(
                who,
                f"two calls return the same array {path}; the engine mutates the state and runs "
                "replications in parallel threads: allocate fresh state arrays in every call",
            )


def _two(who: str, value: Any, what: str) -> tuple[Any, Any]:
    if not (isinstance(value, tuple) and len(value) == 2):
        _fail(who, f"{what} returned {_describe(value)}; it must return a pair (params, state)")
    return value


def _check_build(
    build: Callable[[], Any], who: str, what: str, where: str, fix: str, repeatable: str | None = None
) -> tuple[tuple, tuple]:
    """Two calls of ``build``: each a pair ``(params, state)`` of kernel NamedTuples (``who``:
    ``what`` returned ..., then ``where``: ... and ``fix``), equal to each other where
    ``repeatable`` says why they must be (its text ends the message), with fresh state arrays."""
    first = _two(who, build(), what)
    for part, value in zip(("params", "state"), first):
        _check_kernel_tuple(where, value, part, fix)
    second = _two(who, build(), what)
    if repeatable is not None:
        difference = _build_difference(first, second)
        if difference is not None:
            _fail(where, f"is not deterministic: {difference} differs {repeatable}")
    _check_fresh_state(where, first[1], second[1], "state")
    return first, second


# --- compiled probes -------------------------------------------------------------------------------
_UNCACHED = {key: value for key, value in KERNEL_OPTIONS.items() if key != "cache"}
_PACKAGES = ("mlcb", "envs", "agents")


def _run_probe(cached: Callable, uncached: Callable, arguments: tuple, failure: str, fix: str) -> Any:
    """``probe(*arguments)``, ``arguments`` starting with ``params, state``: the cached probe when
    their types come from this project, its uncached twin otherwise (a user's types must never
    enter the on-disk cache's index). A failure, Numba's typing errors included, is a
    :class:`ConformanceError` ``failure: Type: first line of the message; fix``."""
    own = all(type(a).__module__.partition(".")[0] in _PACKAGES for a in arguments[:2])
    probe = cached if own else uncached
    with _raising(failure, fix, first_line=True):
        return probe(*arguments)
