"""Argument checks shared by the whole package.

Each returns the value in canonical form or raises a ``ValueError`` that names the parameter and
the allowed values, so that bad input is refused, clearly, before any work starts.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from pathlib import Path
from typing import Any

import numpy as np


def is_real(value: Any) -> bool:
    """Whether ``value`` is a finite real number (bools excluded)."""
    real = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    return real and math.isfinite(value)


def integer(name: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an int, or a ``ValueError``: ``name must be an integer >= minimum`` (and
    ``<= maximum`` when one is given)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if maximum is not None and int(value) > maximum:
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum:_}], got {value!r}")
    return int(value)


def budgets(name: str, value: Any) -> list[int]:
    """Budgets as a list of distinct ints >= 1: one int, or a non-empty list or tuple of them;
    otherwise a ``ValueError`` naming ``name`` (a bad element: ``name must be an integer >= 1``)."""
    what = f"{name} must be an integer >= 1 or a non-empty list of distinct integers >= 1"
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items or not isinstance(value, (list, tuple, numbers.Integral)) or isinstance(value, bool):
        raise ValueError(f"{what}, got {value!r}")
    for item in items:
        integer(name, item)
    repeated = sorted({int(b) for b in items if list(items).count(b) > 1})
    if repeated:
        raise ValueError(f"{what}, got {value!r} (repeated: {', '.join(map(str, repeated))})")
    return [int(b) for b in items]


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}")


def plain_name(name: str, value: Any) -> str:
    """``value`` if it is a plain file name: 1 to 128 letters, digits, ``-``, ``_`` or ``.``, not
    starting with ``.`` (so never a path, ``..`` or a hidden file); else a ``ValueError``."""
    if not isinstance(value, str) or not _PLAIN_NAME.fullmatch(value):
        raise ValueError(
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
    ValueError: out must be a non-empty path (a directory or file name), got ''
    """
    if not isinstance(value, (str, os.PathLike)) or (isinstance(value, str) and not value):
        raise ValueError(f"{name} must be a non-empty path (a directory or file name), got {value!r}")
    return Path(value)


def positive(name: str, value: Any) -> float:
    """``value`` as a float, or a ``ValueError``: ``name must be a finite number > 0``."""
    if not (is_real(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def non_negative(name: str, value: Any) -> float:
    """``value`` as a float, or a ``ValueError``: ``name must be a finite number >= 0``."""
    if not (is_real(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def open_unit(name: str, value: Any) -> float:
    """``value`` as a float, or a ``ValueError``: ``name must be a number in (0, 1)``."""
    if not (is_real(value) and 0 < value < 1):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    return float(value)


def within(name: str, value: Any, low: float, high: float = math.inf, closed_low: bool = False) -> float:
    """``value`` as a float in ``(low, high)`` (``[low, high)`` with ``closed_low``), or a
    ``ValueError`` naming the interval."""
    ok = is_real(value) and (value >= low if closed_low else value > low) and value < high
    if not ok:
        lower = f"[{low}" if closed_low else f"({low}"
        upper = "inf)" if high == math.inf else f"{high})"
        raise ValueError(f"{name} must be a finite number in {lower}, {upper}, got {value!r}")
    return float(value)


def choice(name: str, value: Any, allowed: tuple) -> Any:
    """``value`` if it is one of ``allowed``, else a ``ValueError`` listing them."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def flag(name: str, value: Any) -> bool:
    """``value`` if it is a bool, else a ``ValueError``: ``name must be True or False``."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)
