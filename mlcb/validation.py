"""Argument checks shared by the whole package, and the exception of bad input.

Each check returns the value in canonical form or raises an :class:`InputError` (a ``ValueError``)
that names the parameter and the allowed values, so that bad input is refused, clearly, before any
work starts. Every error the package raises for what a user gave it (an argument, a file, a name)
is an :class:`InputError`: the command line shows exactly these as one line with exit status 2
(``MLCB_TRACEBACK=1`` shows their traceback too); any other exception is a fault of mlcb, shown
with its traceback.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import sys
from pathlib import Path
from typing import Any


class InputError(ValueError):
    """Bad input: a parameter, a file or a name given to mlcb, named in a one-line message with
    what is allowed. A ``ValueError``, so that code catching ``ValueError`` keeps working.

    Examples
    --------
    >>> try:
    ...     integer("horizon", 0)
    ... except ValueError as error:
    ...     print(type(error).__name__, error)
    InputError horizon must be an integer >= 1, got 0
    """


class InputTypeError(InputError, TypeError):
    """Bad input of the wrong kind (a dict where a setting is expected): an :class:`InputError`
    that is also a ``TypeError``."""


class InputNotFound(InputError, FileNotFoundError):
    """A path given to mlcb holds nothing it can read (no saved result, no such file): an
    :class:`InputError` that is also a ``FileNotFoundError``."""


def input_error(error: BaseException) -> InputError:
    """``error`` (a ``ValueError`` or ``TypeError`` raised by code that checks what a user gave,
    such as the constructor of a registered class) as an :class:`InputError` with the same message;
    an :class:`InputError` is returned as it is."""
    if isinstance(error, InputError):
        return error
    kind = InputTypeError if isinstance(error, TypeError) else InputError
    converted = kind(*error.args)
    converted.__cause__ = error
    return converted


def _is_bool(value: Any) -> bool:
    """Whether ``value`` is a bool or a NumPy bool (read from ``sys.modules``: a NumPy bool exists
    only once NumPy is imported, and the checks of the command line's arguments do not import it)."""
    if isinstance(value, bool):
        return True
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.bool_)


def is_real(value: Any) -> bool:
    """Whether ``value`` is a finite real number (bools excluded)."""
    real = isinstance(value, numbers.Real) and not _is_bool(value)
    return real and math.isfinite(value)


#: The largest whole number a float holds exactly (2^53): past it, a float written as a whole
#: number may not be the number meant, and is refused.
EXACT_FLOAT = 2**53


def whole_number(value: Any) -> int | None:
    """``value`` as an int when it is a whole number however written, else ``None``: an int
    (NumPy's too), or a finite float equal to an integer of at most :data:`EXACT_FLOAT` in size
    (``1e6``, ``1000.0``: how TOML and the command line may write a horizon). Bools, fractions
    and text are not whole numbers here (:func:`parse_whole_number` reads text).

    The one rule for every whole-number parameter (horizons, replications, budgets, seeds, sizes
    of environments and pools): :func:`integer`, :func:`budget` and the seed's check apply it.

    Examples
    --------
    >>> whole_number(10_000), whole_number(1e4), whole_number(2.5), whole_number(True)
    (10000, 10000, None, None)
    """
    if _is_bool(value):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(value):
        number = float(value)
        if number.is_integer() and abs(number) <= EXACT_FLOAT:
            return int(number)
    return None


def parse_whole_number(text: str) -> int | None:
    """The whole number written in ``text`` (the command line's ``--horizon 1e6``): ``1000``,
    ``1_000``, ``1e6``, ``1000.0``; ``None`` for anything else (:func:`whole_number`'s rule).

    Examples
    --------
    >>> parse_whole_number("1e6"), parse_whole_number("250_000"), parse_whole_number("2.5")
    (1000000, 250000, None)
    """
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return whole_number(float(text))
    except ValueError:
        return None


def integer(name: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an int, or a ``ValueError``: ``name must be an integer >= minimum`` (and
    ``<= maximum`` when one is given). A whole number written as a float (``1e4``) is that
    integer (:func:`whole_number`).

    Examples
    --------
    >>> integer("horizon", 1e4)
    10000
    >>> integer("horizon", 2.5)
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: horizon must be an integer >= 1, got 2.5
    """
    number = whole_number(value)
    if number is None or number < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if maximum is not None and number > maximum:
        raise InputError(f"{name} must be an integer in [{minimum}, {maximum:_}], got {value!r}")
    return number


def budget(value: Any, n_experts: Any) -> int:
    """The budget ``M`` as an int, checked against the pool's ``K``: an :class:`InputError`
    ``budget must be an integer in [1, n_experts=K], got M`` unless ``1 <= M <= K``.

    The one check of the rule ``1 <= M <= K``: settings, the policies' ``build``, the theory, the
    lower bound and the conformance checks all call it (the policy contract,
    :class:`mlcb.contracts.Policy`, says who checks what).

    Examples
    --------
    >>> budget(2, 10)
    2
    >>> budget(4, 3)
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: budget must be an integer in [1, n_experts=3], got 4
    """
    k = integer("n_experts", n_experts)
    number = whole_number(value)
    if number is None or not 1 <= number <= k:
        raise InputError(f"budget must be an integer in [1, n_experts={k}], got {value!r}")
    return number


def pair(name: str, value: Any, what: str, check: Any) -> tuple:
    """``value`` as a tuple of two items, each passed through ``check(item)`` (which returns the
    item converted, or ``None`` when it is not allowed); otherwise an :class:`InputError`:
    ``name must be a pair WHAT, got VALUE``.

    >>> pair("quadrature", [24, 48], "(n_radial, n_angular) of integers in [1, 2048]",
    ...      lambda q: int(q) if isinstance(q, int) and 1 <= q <= 2048 else None)
    (24, 48)
    """
    sequence = isinstance(value, (list, tuple)) or isinstance(value, _array_types())
    items: tuple[Any, ...] = tuple(value) if sequence else ()
    checked = tuple(check(item) for item in items) if len(items) == 2 else (None,)
    if any(item is None for item in checked):
        raise InputError(f"{name} must be a pair {what}, got {value!r}")
    return checked


def _array_types() -> tuple:
    """NumPy's array type when NumPy is imported (the checks of the command line do not import it)."""
    numpy = sys.modules.get("numpy")
    return (numpy.ndarray,) if numpy is not None else ()


def budgets(name: str, value: Any, n_experts: int | None = None) -> list[int]:
    """Budgets as a list of distinct ints: one int, or a non-empty list or tuple of them; otherwise
    an :class:`InputError` naming ``name``. Each is checked against ``n_experts`` with
    :func:`budget` where it is given; without it, the range is left to the settings built from the
    budgets (each checks its own with :func:`budget`, knowing ``K``).

    Examples
    --------
    >>> budgets("budget", [1, 2])
    [1, 2]
    >>> budgets("budget", [1, 1])
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: budget must be ... distinct integers >= 1, got [1, 1] (repeated: 1)
    """
    what = f"{name} must be an integer >= 1 or a non-empty list of distinct integers >= 1"
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    numbers_given = [whole_number(item) for item in items]
    if not items or any(number is None for number in numbers_given):
        raise InputError(f"{what}, got {value!r}")
    for item in items:
        if n_experts is not None:
            budget(item, n_experts)
    whole = [int(number) for number in numbers_given if number is not None]
    repeated = sorted({b for b in whole if whole.count(b) > 1})
    if repeated:
        raise InputError(f"{what}, got {value!r} (repeated: {', '.join(map(str, repeated))})")
    return whole


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}")


def plain_name(name: str, value: Any) -> str:
    """``value`` if it is a plain file name: 1 to 128 letters, digits, ``-``, ``_`` or ``.``, not
    starting with ``.`` (so never a path, ``..`` or a hidden file); else a ``ValueError``."""
    if not isinstance(value, str) or not _PLAIN_NAME.fullmatch(value):
        raise InputError(
            f"{name} must be a plain file name (1 to 128 letters, digits, '-', '_', '.', not starting "
            f"with '.'), got {value!r}"
        )
    return value


def path(name: str, value: Any) -> Path:
    """``value`` (a ``str`` or ``os.PathLike``) as a ``Path``, or a ``ValueError``; the empty string
    is refused, as ``Path("")`` would silently mean the current directory.

    Examples
    --------
    >>> path("out", "results")
    PosixPath('results')
    >>> path("out", "")
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: out must be a non-empty path (a directory or file name), got ''
    """
    if not isinstance(value, (str, os.PathLike)) or (isinstance(value, str) and not value):
        raise InputError(f"{name} must be a non-empty path (a directory or file name), got {value!r}")
    return Path(value)


def read_toml(role: str, value: Any) -> tuple[Path, dict]:
    """The TOML file ``value`` (a setting, a grid) as ``(path, table)``, or one line saying what is
    wrong: no such file (``role`` names what it was given as), a folder, not UTF-8 text, not
    valid TOML (the parser's line and column), or unreadable. Nothing in the file is run.

    Examples
    --------
    >>> read_toml("grid", "no-such-grid.toml")
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: grid: no such TOML file 'no-such-grid.toml'
    """
    import tomllib

    file = path(role, value)
    if not file.is_file():
        folder = " (a folder: name the TOML file inside it)" if file.is_dir() else ""
        raise InputError(f"{role}: no such TOML file {str(file)!r}{folder}")
    try:
        text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{file.name}: not UTF-8 text, which a TOML file must be (byte {error.start} is "
            f"{error.object[error.start : error.start + 1]!r})"
        ) from None
    except OSError as error:
        raise InputError(f"{file}: cannot be read ({error.strerror})") from None
    try:
        return file, tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"{file.name}: not valid TOML: {error}") from None


def positive(name: str, value: Any) -> float:
    """``value`` as a float, or a ``ValueError``: ``name must be a finite number > 0``."""
    if not (is_real(value) and value > 0):
        raise InputError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def non_negative(name: str, value: Any) -> float:
    """``value`` as a float, or a ``ValueError``: ``name must be a finite number >= 0``."""
    if not (is_real(value) and value >= 0):
        raise InputError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def open_unit(name: str, value: Any) -> float:
    """``value`` as a float, or a ``ValueError``: ``name must be a number in (0, 1)``."""
    if not (is_real(value) and 0 < value < 1):
        raise InputError(f"{name} must be a number in (0, 1), got {value!r}")
    return float(value)


def within(name: str, value: Any, low: float, high: float = math.inf, closed_low: bool = False) -> float:
    """``value`` as a float in ``(low, high)`` (``[low, high)`` with ``closed_low``), or a
    ``ValueError`` naming the interval."""
    ok = is_real(value) and (value >= low if closed_low else value > low) and value < high
    if not ok:
        lower = f"[{low}" if closed_low else f"({low}"
        upper = "inf)" if high == math.inf else f"{high})"
        raise InputError(f"{name} must be a finite number in {lower}, {upper}, got {value!r}")
    return float(value)


def did_you_mean(value: Any, names: Any) -> str:
    """`` (did you mean 'NAME'?)`` for the one of ``names`` closest to the mistyped ``value`` (case
    aside, by :func:`difflib.get_close_matches`), or ``""`` when none is close. What every name
    and ``value`` share at their start and end (``mlcb/`` and ``-v0``) is left out of the
    comparison, so that ``mlcb/Nope-v0`` is near none of ``mlcb/Trap-v0``, ``mlcb/GLM-v0``.

    Examples
    --------
    >>> did_you_mean("tarp", ["glm", "trap"]), did_you_mean("GLM", ["glm", "trap"])
    (" (did you mean 'trap'?)", " (did you mean 'glm'?)")
    >>> did_you_mean("x", ["glm"]), did_you_mean("mlcb/Nope-v0", ["mlcb/GLM-v0", "mlcb/Trap-v0"])
    ('', '')
    >>> did_you_mean("mlcb/trap-v0", ["mlcb/GLM-v0", "mlcb/Trap-v0"])
    " (did you mean 'mlcb/Trap-v0'?)"
    """
    import difflib
    import os.path

    if not isinstance(value, str) or not value:
        return ""
    known = {name.casefold(): name for name in names if isinstance(name, str)}
    given = value.casefold()
    everything = [*known, given]
    start = len(os.path.commonprefix(everything))
    end = len(os.path.commonprefix([text[::-1] for text in everything]))
    cores = {name[start : len(name) - end]: name for name in known}
    close = difflib.get_close_matches(given[start : len(given) - end], list(cores), n=1, cutoff=0.75)
    return f" (did you mean {known[cores[close[0]]]!r}?)" if close else ""


def choice(name: str, value: Any, allowed: tuple) -> Any:
    """``value`` if it is one of ``allowed``, else a ``ValueError`` listing them (and the one
    meant, when ``value`` is a near miss: :func:`did_you_mean`)."""
    if value not in allowed:
        raise InputError(f"{name} must be one of {allowed}, got {value!r}{did_you_mean(value, allowed)}")
    return value


def flag(name: str, value: Any) -> bool:
    """``value`` if it is a bool, else a ``ValueError``: ``name must be True or False``."""
    if not _is_bool(value):
        raise InputError(f"{name} must be True or False, got {value!r}")
    return bool(value)
