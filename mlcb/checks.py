"""Argument checks shared by the whole package.

Each returns the value in canonical form or raises a ``ValueError`` that names the parameter and
the allowed values, so that bad input is refused, clearly, before any work starts.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np


def is_real(value: Any) -> bool:
    """Whether ``value`` is a finite real number (bools excluded)."""
    real = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    return real and math.isfinite(value)


def integer(name: str, value: Any, minimum: int = 1) -> int:
    """``value`` as an int, or a ``ValueError``: ``name must be an integer >= minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


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
