"""The ten link functions of the "glm" instance (docs/presets.md) as compiled scalar kernels.

Expert ``k`` of the "glm" instance predicts ``y_hat = f_k(w . x)``; the target is ``f_9``. The
links, indexed as in :data:`LINK_NAMES`, are

====  ===========  ===============================================================
 k    name         ``f_k(z)``
====  ===========  ===============================================================
 0    affine       ``(z + 1) / 2``
 1    square       ``z^2``
 2    exp          ``(e^z - e^-1) / (e - e^-1)``
 3    logistic     ``1 / (1 + e^(-2z))``
 4    cubic        ``(z^3 + 1) / 2``
 5    arctan       ``(arctan(pi z / 2) + arctan(pi / 2)) / (2 arctan(pi / 2))``
 6    softplus     ``log(1 + e^z) / log(1 + e)``
 7    power        ``|z|^1.5 / 2``
 8    cosine       ``(1 - cos(pi z)) / 2``
 9    logcosh      ``log(e^z + e^-z) / log(1 + e)``
====  ===========  ===============================================================

:func:`link_value` and :func:`link_derivative` are ``kernel`` functions (no Numba runtime, no
allocation), callable from the round loop with an integer link; they return ``nan`` for an
unknown link, so callers validate once in Python with :func:`link_index`. They use overflow-free
forms: ``logistic`` through ``e^(-2|z|)``, ``softplus`` as ``max(z, 0) + log1p(e^-|z|)`` and
``logcosh`` as ``|z| + log1p(e^(-2|z|))``. :func:`link_values` and :func:`link_derivatives` apply
them elementwise to arrays through a compiled loop, so Python-side values are bit-identical to the
kernels'.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike

from mlcb.kernels.jit import kernel, njit
from mlcb.validation import InputError, did_you_mean

__all__ = [
    "LINK_NAMES",
    "N_LINKS",
    "link_index",
    "link_value",
    "link_derivative",
    "link_values",
    "link_derivatives",
]

#: Names of the links, in index order.
LINK_NAMES: tuple[str, ...] = (
    "affine",
    "square",
    "exp",
    "logistic",
    "cubic",
    "arctan",
    "softplus",
    "power",
    "cosine",
    "logcosh",
)

#: Number of links.
N_LINKS = len(LINK_NAMES)

_EXP_DENOM = math.e - math.exp(-1.0)  # e - e^-1
_EXP_SHIFT = math.exp(-1.0)  # e^-1
_ATAN_HALF_PI = math.atan(math.pi / 2.0)  # arctan(pi / 2)
_LOG_1P_E = math.log1p(math.e)  # log(1 + e)
_HALF_PI = math.pi / 2.0


def link_index(link: str | int, name: str | None = None) -> int:
    """Index of a link given by name or index.

    Parameters
    ----------
    link : str or int
        A name in :data:`LINK_NAMES` or an integer in ``0 .. N_LINKS - 1``.
    name : str, optional
        The parameter that gave ``link``, named at the head of the message of an unknown link
        (``target_link: unknown link 'cosh'; ...``).

    Returns
    -------
    int
        The link's index.

    Raises
    ------
    ValueError
        If ``link`` names no link.

    Examples
    --------
    >>> link_index("logcosh"), link_index(3)
    (9, 3)
    """
    allowed = ", ".join(f"{i} {name!r}" for i, name in enumerate(LINK_NAMES))
    if isinstance(link, str):
        if link in LINK_NAMES:
            return LINK_NAMES.index(link)
    elif isinstance(link, numbers.Integral) and not isinstance(link, bool):
        if 0 <= int(link) < N_LINKS:
            return int(link)
    head = f"{name}: " if name else ""
    raise InputError(f"{head}unknown link {link!r}{did_you_mean(link, LINK_NAMES)}; allowed: {allowed}")


@kernel
def link_value(link, z):
    """``f_link(z)`` for the integer ``link`` (table in the module docstring); ``nan`` if unknown.

    Examples
    --------
    >>> link_value(0, 1.0), link_value(8, 1.0)
    (1.0, 1.0)
    """
    if link == 0:
        return (z + 1.0) / 2.0
    elif link == 1:
        return z * z
    elif link == 2:
        return (math.exp(z) - _EXP_SHIFT) / _EXP_DENOM
    elif link == 3:
        e = math.exp(-2.0 * abs(z))
        if z >= 0.0:
            return 1.0 / (1.0 + e)
        return e / (1.0 + e)
    elif link == 4:
        return (z * z * z + 1.0) / 2.0
    elif link == 5:
        return (math.atan(_HALF_PI * z) + _ATAN_HALF_PI) / (2.0 * _ATAN_HALF_PI)
    elif link == 6:
        return (max(z, 0.0) + math.log1p(math.exp(-abs(z)))) / _LOG_1P_E
    elif link == 7:
        return abs(z) ** 1.5 / 2.0
    elif link == 8:
        return (1.0 - math.cos(math.pi * z)) / 2.0
    elif link == 9:
        a = abs(z)
        return (a + math.log1p(math.exp(-2.0 * a))) / _LOG_1P_E
    return math.nan


@kernel
def link_derivative(link, z):
    """``f_link'(z)`` for the integer ``link``; ``nan`` if unknown.

    The derivatives are ``1/2``, ``2z``, ``e^z / (e - e^-1)``, ``2 s (1 - s)`` with
    ``s = 1 / (1 + e^(-2z))``, ``3 z^2 / 2``, ``(pi / 2) / ((1 + (pi z / 2)^2) 2 arctan(pi / 2))``,
    ``sigmoid(z) / log(1 + e)``, ``(3 / 4) sign(z) |z|^(1/2)``, ``(pi / 2) sin(pi z)`` and
    ``tanh(z) / log(1 + e)``.

    Examples
    --------
    >>> link_derivative(0, 3.0), link_derivative(4, 2.0)
    (0.5, 6.0)
    """
    if link == 0:
        return 0.5
    elif link == 1:
        return 2.0 * z
    elif link == 2:
        return math.exp(z) / _EXP_DENOM
    elif link == 3:
        e = math.exp(-2.0 * abs(z))
        return 2.0 * e / ((1.0 + e) * (1.0 + e))
    elif link == 4:
        return 1.5 * z * z
    elif link == 5:
        u = _HALF_PI * z
        return _HALF_PI / ((1.0 + u * u) * 2.0 * _ATAN_HALF_PI)
    elif link == 6:
        e = math.exp(-abs(z))
        if z >= 0.0:
            return 1.0 / ((1.0 + e) * _LOG_1P_E)
        return e / ((1.0 + e) * _LOG_1P_E)
    elif link == 7:
        root = math.sqrt(abs(z))
        if z >= 0.0:
            return 0.75 * root
        return -0.75 * root
    elif link == 8:
        return _HALF_PI * math.sin(math.pi * z)
    elif link == 9:
        return math.tanh(z) / _LOG_1P_E
    return math.nan


@njit
def _link_values_loop(link, z, derivative):
    out = np.empty_like(z)
    for i in range(z.size):
        if derivative:
            out[i] = link_derivative(link, z[i])
        else:
            out[i] = link_value(link, z[i])
    return out


def _apply(link: str | int, z: ArrayLike, derivative: bool) -> np.ndarray:
    index = link_index(link)
    values = np.asarray(z, dtype=np.float64)
    flat = np.ascontiguousarray(values).reshape(-1)
    return _link_values_loop(index, flat, derivative).reshape(values.shape)


def link_values(link: str | int, z: ArrayLike) -> np.ndarray:
    """``f_link(z)`` elementwise, bit-identical to :func:`link_value`.

    Parameters
    ----------
    link : str or int
        Link name or index (see :data:`LINK_NAMES`).
    z : array_like
        Arguments ``z = w . x``.

    Returns
    -------
    numpy.ndarray
        ``f_link(z)``, float64, with the shape of ``z``.

    Examples
    --------
    >>> link_values("square", [1.0, -2.0]).tolist()
    [1.0, 4.0]
    """
    return _apply(link, z, False)


def link_derivatives(link: str | int, z: ArrayLike) -> np.ndarray:
    """``f_link'(z)`` elementwise, bit-identical to :func:`link_derivative`.

    Parameters
    ----------
    link : str or int
        Link name or index (see :data:`LINK_NAMES`).
    z : array_like
        Arguments ``z = w . x``.

    Returns
    -------
    numpy.ndarray
        ``f_link'(z)``, float64, with the shape of ``z``.

    Examples
    --------
    >>> link_derivatives("cubic", [0.0, 2.0]).tolist()
    [0.0, 6.0]
    """
    return _apply(link, z, True)
