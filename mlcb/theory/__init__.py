"""Theory curves of M-LCB: the rate of the main theorem, the lower bound, the certificate's bounds.

Pure vectorised functions (docs/theory.md §4, §5); each docstring states
the formula, its assumptions and where it comes from in Latypov et al. (2025, arXiv 2510.22654).
Notation: ``K`` experts (``n_experts``), budget ``M`` (``budget``) experts trained per round,
horizon ``T`` (``horizon``), confidence ``delta``; expert ``k`` has rate ``U_k(n, delta')`` with
``delta' = delta / (2K)`` (:mod:`agents.rates`). All logarithms are natural.

* :func:`theorem_rate`, :func:`lower_bound` -- the order of the regret (unit constants).
* :func:`confidence_width`, :func:`numeric_worst_case`, :func:`closed_form_bound`,
  :func:`ucb_pool_bound` -- explicit bounds on the certificate ``Delta(T)`` of the regret.
* :func:`loglog_slope` -- the fitted exponent of a regret curve.
* :func:`certificate_allowance` -- how many of ``R`` replications may violate the certificate.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import numpy.typing as npt

from mlcb import validation
from mlcb.validation import InputError

__all__ = [
    "certificate_allowance",
    "closed_form_bound",
    "confidence_width",
    "lower_bound",
    "loglog_slope",
    "numeric_worst_case",
    "theorem_rate",
    "ucb_pool_bound",
]

#: A float for scalar inputs, else a float64 array of the broadcast shape.
Curve = np.float64 | npt.NDArray[np.float64]


# --- validation --------------------------------------------------------------------------------


def _experts_and_budget(n_experts: Any, budget: Any) -> tuple[int, int]:
    experts = validation.integer("n_experts", n_experts)
    return experts, validation.budget(budget, experts)


def _best_expert(best_expert: Any, n_experts: int) -> int:
    integral = isinstance(best_expert, numbers.Integral) and not isinstance(best_expert, bool)
    if not (integral and 0 <= int(best_expert) < n_experts):
        raise InputError(
            f"best_expert must be an integer in [0, {n_experts - 1}], got {validation.shown(best_expert)}"
        )
    return int(best_expert)


def _array(name: str, value: npt.ArrayLike, minimum: float, text: str) -> npt.NDArray[np.float64]:
    """``value`` as float64 after checking that it is finite and ``>= minimum``."""
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):  # ragged nesting ([[1], [2, 3]]) and the like
        raise InputError(f"{name} must hold {text}, got {validation.shown(value)}") from None
    if array.dtype == bool or not np.issubdtype(array.dtype, np.number) or np.iscomplexobj(array):
        raise InputError(f"{name} must hold {text}, got dtype {array.dtype}")
    array = array.astype(np.float64)
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(array) & (array >= minimum))
    if np.any(bad):
        raise InputError(f"{name} must hold {text}, got {float(array[bad].flat[0])!r}")
    return array


def _horizon(horizon: npt.ArrayLike) -> npt.NDArray[np.float64]:
    return _array("horizon", horizon, 1.0, "finite numbers >= 1")


def _alpha(alpha: Any) -> float:
    if not (validation.is_real(alpha) and 0 <= alpha < 1):
        raise InputError(f"alpha must be a number in [0, 1), got {validation.shown(alpha)}")
    return float(alpha)


def _power_norm(values: npt.NDArray[np.float64], root: Any, axis: int, divisor: float = 1.0) -> Any:
    """``(sum_k values_k^(1/root) / divisor)^root`` over ``axis``, for ``values >= 0`` and ``root``
    in ``(0, 1]`` (one per entry of the result, or one for all).

    The terms ``values^(1/root)`` overflow or underflow long before the result does once ``root``
    is small (``1/root = 1/(1 - alpha)`` is 1000 at ``alpha = 0.999``): there the result is
    computed as ``max_k values_k * (sum_k (values_k / max)^(1/root) / divisor)^root``, whose terms
    lie in ``[0, 1]`` and whose largest is 1. Where the plain sum is a finite normal number the
    plain expression is kept, bit for bit.
    """
    with np.errstate(over="ignore", under="ignore"):
        sums = np.sum(values ** (1.0 / root), axis=axis)
        plain = (sums / divisor) ** root
        largest = np.max(values, axis=axis)
        lost = ~(np.isfinite(sums) & (sums >= np.finfo(np.float64).tiny)) & (largest > 0)
        if not np.any(lost):
            return plain
        safe = np.where(largest > 0, largest, 1.0)
        ratios = values / np.expand_dims(safe, axis)
        scaled = safe * (np.sum(ratios ** (1.0 / root), axis=axis) / divisor) ** root
    return np.where(lost, scaled, plain)


def _out(value: npt.NDArray[np.float64]) -> Curve:
    value = np.asarray(value, dtype=np.float64)
    return value[()] if value.ndim == 0 else value


# --- orders of the regret ----------------------------------------------------------------------
def theorem_rate(
    horizon: npt.ArrayLike,
    n_experts: int,
    budget: int,
    alpha: float,
    delta: float,
    c_delta: float = 1.0,
    beta: npt.ArrayLike | None = None,
    best_expert: int = 0,
) -> Curve:
    r"""Regret rate of M-LCB's main theorem, with unit constants (paper, Theorem "Convergence Rates").

    .. math::

        \sqrt{\frac{K T}{M} \log\frac{K T}{\delta}} + \Bigl(\frac{K}{M}\Bigr)^{1-\alpha} T^\alpha c(\delta).

    With heterogeneous constants ``beta_k`` (the paper's remark; ``U_k = O(beta_k n^alpha c(delta))``)
    the second term becomes

    .. math::

        T^\alpha c(\delta) \Bigl[\beta_{k^\star}
        + \Bigl(\frac1M \sum_k \beta_k^{1/(1-\alpha)}\Bigr)^{1-\alpha}\Bigr],

    which keeps the best expert's own learning term, absorbed in the ``O`` of the homogeneous form
    (with all ``beta_k = 1`` it exceeds the unit-constant curve by ``T^alpha c(delta)``).

    Assumptions: i.i.d. losses in ``[0, 1]`` (Asm. 1), every expert has an anytime rate
    ``U_k(n, delta) = O(n^alpha c(delta))`` known to M-LCB (Asm. 2), a smoothing wrapper (Asm. 3).
    The theorem then holds with probability ``>= 1 - delta``, for all ``T`` at once, up to constants.
    For ``alpha < 1/2`` the first term dominates, for ``alpha > 1/2`` the second. With ``M = 1`` it is
    the Smooth CORRAL / Dynamic Balancing rate ``sqrt(K T) + K^(1-alpha) T^alpha c(delta)``.

    Parameters
    ----------
    horizon : float or array_like
        Horizons ``T >= 1``.
    n_experts : int
        Number of experts ``K >= 1``.
    budget : int
        Experts trained per round, ``M`` in ``[1, K]``.
    alpha : float
        Rate exponent in ``[0, 1)``.
    delta : float
        Confidence level in ``(0, 1)``.
    c_delta : float, default 1.0
        The confidence factor ``c(delta) > 0`` of the experts' rates.
    beta : array_like of shape (K,), optional
        Per-expert constants ``beta_k > 0``; ``None`` for the homogeneous form.
    best_expert : int, default 0
        Index ``k*`` of the best expert (used with ``beta`` only).

    Returns
    -------
    float or ndarray
        The curve at each horizon.

    Examples
    --------
    >>> float(np.round(theorem_rate(10_000, n_experts=10, budget=2, alpha=0.5, delta=0.1), 2))
    1054.74
    """
    t = _horizon(horizon)
    k, m = _experts_and_budget(n_experts, budget)
    a = _alpha(alpha)
    d = validation.open_unit("delta", delta)
    c = validation.positive("c_delta", c_delta)
    star = _best_expert(best_expert, k)  # (read with beta only, checked always)
    first = np.sqrt(k * t / m * np.log(k * t / d))
    if beta is None:
        return _out(first + (k / m) ** (1.0 - a) * t**a * c)
    constants = _array("beta", beta, 0.0, "finite numbers > 0")
    if constants.shape != (k,) or np.any(constants <= 0):
        raise InputError(
            f"beta must be an array of {k} (n_experts) finite numbers > 0, got shape {constants.shape}"
        )
    norm = _power_norm(constants, 1.0 - a, axis=0, divisor=m)
    return _out(first + t**a * c * (constants[star] + norm))


def lower_bound(
    horizon: npt.ArrayLike, n_experts: int, budget: int, alpha: float, c1: float = 1.0, c2: float = 1.0
) -> Curve:
    r"""Minimax lower bound on M-LCB's problem (paper, Theorem "Minimax lower bound").

    .. math::

        c_1 \sqrt{K T / M} + c_2\, T^\alpha (K / M)^{1-\alpha}.

    For every ``alpha`` there is an "alpha-hard" class of experts (each algorithm suffers internal
    regret ``>= c n^alpha`` on some instance, built from two-armed heavy-tailed bandits) on which any
    meta-procedure training ``M`` of ``K`` experts per round has expected regret at least this, when
    ``sqrt(K log K / (M T))`` is small enough. The constants ``c1, c2`` are not explicit in the paper.
    Compared with :func:`theorem_rate`, M-LCB is minimax-optimal up to logarithmic factors.

    Parameters
    ----------
    horizon : float or array_like
        Horizons ``T >= 1``.
    n_experts : int
        Number of experts ``K >= 1``.
    budget : int
        Experts trained per round, ``M`` in ``[1, K]``.
    alpha : float
        Exponent of the hard class, in ``[0, 1)``.
    c1, c2 : float, default 1.0
        The constants, ``> 0``.

    Returns
    -------
    float or ndarray
        The curve at each horizon.

    Examples
    --------
    >>> float(lower_bound(10_000, n_experts=4, budget=1, alpha=0.5))
    400.0
    """
    t = _horizon(horizon)
    k, m = _experts_and_budget(n_experts, budget)
    a = _alpha(alpha)
    first = validation.positive("c1", c1)
    second = validation.positive("c2", c2)
    return _out(first * np.sqrt(k * t / m) + second * t**a * (k / m) ** (1.0 - a))


# --- explicit bounds on the certificate --------------------------------------------------------
def confidence_width(n: npt.ArrayLike, n_experts: int, delta: float, rate: npt.ArrayLike) -> Curve:
    r"""Width ``UCB - LCB`` of an expert's confidence interval after ``n`` updates (docs/theory.md §5).

    .. math::

        w(n) = \sqrt{\frac{2 \log(4 K n^2 / \delta)}{n}} + \frac{U(n, \delta/(2K))}{n}.

    M-LCB's ``UCB = L + H`` uses the Azuma-Hoeffding width ``H`` at level ``delta / (4 K n^2)`` and
    ``LCB = L - U(n, delta') / n`` the expert's rate at ``delta' = delta / (2K)`` (paper, Definition
    "UCB and LCB" and Lemma "Anytime Confidence Bounds"). The width depends on ``n`` alone.

    Parameters
    ----------
    n : float or array_like
        Update counts ``n >= 1``.
    n_experts : int
        Number of experts ``K >= 1``.
    delta : float
        Confidence level in ``(0, 1)``.
    rate : float or array_like
        ``U(n, delta / (2K)) >= 0`` at those counts (e.g. from :mod:`agents.rates`), broadcastable
        with ``n``.

    Returns
    -------
    float or ndarray
        ``w(n)``, of the broadcast shape of ``n`` and ``rate``.

    Examples
    --------
    >>> float(np.round(confidence_width(100, n_experts=10, delta=0.1, rate=50.0), 4))
    1.0514
    """
    counts = _array("n", n, 1.0, "finite numbers >= 1")
    k = validation.integer("n_experts", n_experts)
    d = validation.open_unit("delta", delta)
    values = _array("rate", rate, 0.0, "finite numbers >= 0")
    try:
        np.broadcast_shapes(counts.shape, values.shape)
    except ValueError:
        raise InputError(
            f"rate must be broadcastable with n (one value, or one per count), got shapes {values.shape} "
            f"and {counts.shape}"
        ) from None
    return _out(np.sqrt(2.0 * np.log(4.0 * k * counts * counts / d) / counts) + values / counts)


def numeric_worst_case(widths: npt.ArrayLike, best_expert: int, budget: int) -> Curve:
    r"""Numeric worst case ``B_num(T)`` of the certificate over all allocations (docs/theory.md §5).

    .. math::

        B_{num}(T) = \sum_{n \le T} w_{k^\star}(n)
        + \frac1M \bigl(\text{sum of the } M T \text{ largest values of } \{w_k(n) : k \le K, n \le T\}\bigr).

    The certificate of the paper's Lemma "Regret Bound" is
    ``Delta(T) = sum_{i <= nu_{k*}} w_{k*}(i) + (1/M) sum_k sum_{i <= nu_k} w_k(i)`` where ``nu_k`` is
    expert ``k``'s number of training rounds up to ``T``; since ``sum_k nu_k = M T`` and ``nu_k <= T``,
    the prefix sums are ``M T`` entries of the array and ``Delta(T) <= B_num(T)`` for every
    allocation. Exact given the rates, ``O(K T)`` (``np.partition``). ``T`` is the widths' length.

    Parameters
    ----------
    widths : array_like of shape (..., K, T)
        ``w_k(n)`` for ``n = 1 .. T`` (:func:`confidence_width`), finite and ``>= 0``; leading axes
        are independent problems.
    best_expert : int
        Index ``k*`` of the best expert.
    budget : int
        Experts trained per round, ``M`` in ``[1, K]``.

    Returns
    -------
    float or ndarray
        ``B_num(T)``, of the leading shape of ``widths``.

    Examples
    --------
    >>> widths = np.array([[3.0, 1.0], [4.0, 2.0]])
    >>> float(numeric_worst_case(widths, best_expert=0, budget=1))
    11.0
    """
    values = _array("widths", widths, 0.0, "finite numbers >= 0")
    if values.ndim < 2 or values.shape[-2] < 1 or values.shape[-1] < 1:
        raise InputError(f"widths must have shape (..., K, T) with K, T >= 1, got shape {values.shape}")
    k, t = values.shape[-2:]
    _, m = _experts_and_budget(k, budget)
    star = _best_expert(best_expert, k)
    own = values[..., star, :].sum(axis=-1)
    flat = values.reshape(values.shape[:-2] + (k * t,))
    first = k * t - m * t
    largest = np.partition(flat, first, axis=-1)[..., first:].sum(axis=-1)
    return _out(own + largest / m)


def closed_form_bound(
    horizon: npt.ArrayLike,
    coefficients: npt.ArrayLike,
    exponents: npt.ArrayLike,
    best_expert: int,
    budget: int,
) -> Curve:
    r"""Closed-form majorant ``B(T)`` of the certificate (docs/theory.md §5).

    If every width satisfies ``w_k(n) <= sum_j A_kj n^(gamma_j - 1)`` for ``n <= T``, with
    ``gamma_j`` in ``[0, 1)``, then for every allocation of the ``M T`` training rounds

    .. math::

        \Delta(T) \le B(T) = \sum_j A_{k^\star j} S_{\gamma_j}(T) + \frac1M \sum_j \Phi_j,

    with ``S_gamma(N) = N^gamma / gamma`` (``gamma > 0``), ``S_0(N) = 1 + ln N``, and
    ``Phi_j = (1/gamma_j) (sum_k A_kj^(1/(1-gamma_j)))^(1-gamma_j) (M T)^gamma_j`` for
    ``gamma_j > 0``, ``Phi_j = (1 + ln T) sum_k A_kj`` for ``gamma_j = 0``.

    Proof: ``sum_{n<=N} n^(gamma-1) <= S_gamma(N)``, then Hoelder with exponents ``1/(1-gamma)`` and
    ``1/gamma`` under ``sum_k nu_k = M T``: the paper's Cauchy-Schwarz / Jensen step of the main
    theorem, term by term. The coefficients may grow with ``T`` (logs, ``J0``); pass them evaluated
    at ``T`` itself, one row of leading axes per horizon, or at the largest horizon. Always
    ``B(T) >= B_num(T)`` (:func:`numeric_worst_case`).

    Parameters
    ----------
    horizon : float or array_like
        Horizons ``T >= 1``.
    coefficients : array_like of shape (..., K, J)
        ``A_kj >= 0``; leading axes broadcast with ``horizon``'s shape.
    exponents : array_like of shape (J,)
        ``gamma_j`` in ``[0, 1)``.
    best_expert : int
        Index ``k*`` of the best expert.
    budget : int
        Experts trained per round, ``M`` in ``[1, K]``.

    Returns
    -------
    float or ndarray
        ``B(T)``, of the broadcast shape of ``horizon`` and the leading axes of ``coefficients``.

    Examples
    --------
    Two experts with ``w(n) = n^(-1/2)``, one trained per round: ``2 sqrt(T) + 2 sqrt(2 T)``.

    >>> float(np.round(closed_form_bound(100, [[1.0], [1.0]], [0.5], best_expert=0, budget=1), 4))
    48.2843
    """
    t = _horizon(horizon)
    a = _array("coefficients", coefficients, 0.0, "finite numbers >= 0")
    g = _array("exponents", exponents, 0.0, "numbers in [0, 1)")
    if a.ndim < 2 or a.shape[-2] < 1:
        raise InputError(f"coefficients must have shape (..., K, J) with K >= 1, got shape {a.shape}")
    if g.ndim != 1 or g.shape[0] != a.shape[-1] or np.any(g >= 1):
        raise InputError(
            f"exponents must be {a.shape[-1]} (J) numbers in [0, 1), got shape {g.shape} and values {g}"
        )
    k = a.shape[-2]
    _, m = _experts_and_budget(k, budget)
    star = _best_expert(best_expert, k)
    try:
        np.broadcast_shapes(t.shape, a.shape[:-2])
    except ValueError:
        raise InputError(
            f"coefficients' leading axes must broadcast with horizon's shape {t.shape} (one row of "
            f"coefficients per horizon, or one for all), got shape {a.shape}"
        ) from None
    t = t[..., None]
    positive = g > 0
    safe = np.where(positive, g, 1.0)
    own = np.where(positive, t**g / safe, 1.0 + np.log(t))
    spread = np.where(positive, (m * t) ** g / safe, 1.0 + np.log(t))
    norms = _power_norm(a, 1.0 - g, axis=-2)
    return _out(np.sum(a[..., star, :] * own, axis=-1) + np.sum(norms * spread, axis=-1) / m)


def ucb_pool_bound(horizon: npt.ArrayLike, n_experts: int, budget: int, n_arms: int, delta: float) -> Curve:
    r"""Closed-form ``B(T)`` for a pool of ``K`` UCB(delta0) experts on ``m`` arms (docs/theory.md §5).

    .. math::

        B(T) = 2\bigl(\sqrt T + \sqrt{K T / M}\bigr)\Bigl[\sqrt{2 \Lambda_T}
        + \sqrt{2 (m-1) \log(16 K m T^2/\delta)} + \sqrt{\tfrac12 \log(8 K T^2/\delta)}\Bigr]
        + (m - 1)(1 + \ln T)(1 + K / M),

    ``Lambda_T = log(4 K T^2 / delta)``. This is :func:`closed_form_bound` for the widths
    :func:`confidence_width` with the rate :func:`agents.rates.ucb_delta_rate` at
    ``delta' = delta / (2K)`` (one ``n^(-1/2)`` term and one ``n^(-1)`` term, ``alpha = 1/2``): with
    probability ``>= 1 - delta`` the regret of M-LCB on such a pool is at most ``B(T)``, for all ``T``,
    up to the martingale term of the paper's Lemma "Regret Bound".

    Parameters
    ----------
    horizon : float or array_like
        Horizons ``T >= 1``.
    n_experts : int
        Number of experts ``K >= 1``.
    budget : int
        Experts trained per round, ``M`` in ``[1, K]``.
    n_arms : int
        Arms ``m >= 1`` of each expert.
    delta : float
        Confidence level in ``(0, 1)``.

    Returns
    -------
    float or ndarray
        ``B(T)`` at each horizon.

    Examples
    --------
    >>> float(np.round(ucb_pool_bound(10_000, n_experts=10, budget=2, n_arms=2, delta=0.1) / 10_000, 3))
    1.159
    """
    t = _horizon(horizon)
    k, m = _experts_and_budget(n_experts, budget)
    arms = validation.integer("n_arms", n_arms)
    d = validation.open_unit("delta", delta)
    width = (
        np.sqrt(2.0 * np.log(4.0 * k * t * t / d))
        + np.sqrt(2.0 * (arms - 1) * np.log(16.0 * k * arms * t * t / d))
        + np.sqrt(0.5 * np.log(8.0 * k * t * t / d))
    )
    offsets = (arms - 1) * (1.0 + np.log(t)) * (1.0 + k / m)
    return _out(2.0 * (np.sqrt(t) + np.sqrt(k * t / m)) * width + offsets)


# --- empirical checks --------------------------------------------------------------------------
def loglog_slope(rounds: npt.ArrayLike, values: npt.ArrayLike, tail: float = 0.5) -> float:
    r"""Least-squares slope of ``log(values)`` on ``log(rounds)`` over a curve's tail (docs/theory.md §5).

    Keeps the points with finite ``values > 0``, orders them by ``rounds`` and fits a line to the last
    ``ceil(tail * count)`` of them. For regret ``~ C T^a`` the slope estimates ``a``; compare with
    the theorem's ``max(1/2, alpha)`` (up to logarithmic factors, which bias the slope upwards).

    Parameters
    ----------
    rounds : array_like of shape (P,)
        Checkpoints ``> 0``.
    values : array_like of shape (P,)
        The curve at those checkpoints (e.g. mean regret); values ``<= 0`` or not finite are ignored.
    tail : float, default 0.5
        Fraction in ``(0, 1]`` of the positive points, the latest ones, used in the fit.

    Returns
    -------
    float
        The slope, or ``nan`` when fewer than two points (or a single distinct checkpoint) remain.

    Examples
    --------
    >>> rounds = np.array([10, 100, 1000, 10_000])
    >>> round(loglog_slope(rounds, 3.0 * rounds ** (2 / 3), tail=1.0), 6)
    0.666667
    """
    x = _array("rounds", rounds, 0.0, "finite numbers > 0")
    try:
        y = np.asarray(values)
        if y.dtype.kind in "USV":  # text, which float64 would read ("1" as 1.0) or not
            raise TypeError
        y = y.astype(np.float64)
    except (ValueError, TypeError):
        raise InputError(f"values must hold numbers, got {validation.shown(values)}") from None
    if x.ndim != 1 or y.shape != x.shape:
        raise InputError(f"rounds and values must be 1-d of one length, got shapes {x.shape} and {y.shape}")
    if np.any(x <= 0):
        raise InputError("rounds must hold finite numbers > 0")
    if not (validation.is_real(tail) and 0 < tail <= 1):
        raise InputError(f"tail must be a number in (0, 1], got {validation.shown(tail)}")
    keep = np.isfinite(y) & (y > 0)
    x, y = x[keep], y[keep]
    order = np.argsort(x, kind="stable")
    count = math.ceil(tail * x.size)
    if count < 2:
        return math.nan
    log_x = np.log(x[order][-count:])
    log_y = np.log(y[order][-count:])
    centred = log_x - log_x.mean()
    spread = float(np.dot(centred, centred))
    if spread == 0.0:
        return math.nan
    return float(np.dot(centred, log_y - log_y.mean()) / spread)


def certificate_allowance(
    replications: npt.ArrayLike, delta: float, alpha: float = 1e-3
) -> np.int64 | npt.NDArray[np.int64]:
    r"""How many of ``R`` replications may violate the certificate before a test fails (docs/theory.md §4).

    The smallest integer ``c`` with ``P(Bin(R, delta) > c) <= alpha``, i.e. ``binom.ppf(1 - alpha,
    R, delta)`` checked against ``binom.sf`` (guarding the floating point of ``1 - alpha``).

    With probability ``>= 1 - delta`` a run stays within its certificate, for all ``T`` (the paper's
    main theorem and Lemma "Regret Bound"), so the number of violating runs among ``R`` independent
    replications is stochastically at most ``Bin(R, delta)``; more than ``c`` violations reject the
    implementation at level ``alpha``.

    Parameters
    ----------
    replications : int or array_like of int
        Numbers of independent replications ``R >= 1``.
    delta : float
        The certificate's failure probability in ``(0, 1)``.
    alpha : float, default 1e-3
        Significance level of the test in ``(0, 1)``.

    Returns
    -------
    int or ndarray of int
        The allowance ``c``, of the shape of ``replications``.

    Examples
    --------
    >>> certificate_allowance([30, 100, 1000], delta=0.1).tolist()
    [9, 20, 130]
    """
    try:
        r = np.asarray(replications)
    except (ValueError, TypeError):  # ragged nesting
        r = np.asarray(None)
    if r.dtype == bool or not np.issubdtype(r.dtype, np.integer) or (r.size and np.any(r < 1)):
        raise InputError(f"replications must hold integers >= 1, got {validation.shown(replications)}")
    d = validation.open_unit("delta", delta)
    a = validation.open_unit("alpha", alpha)
    from scipy import stats  # here: the rest of the module serves simulations without scipy

    c = stats.binom.ppf(1.0 - a, r, d)
    c = np.where((c > 0) & (stats.binom.sf(c - 1, r, d) <= a), c - 1, c)
    c = np.where(stats.binom.sf(c, r, d) > a, c + 1, c).astype(np.int64)
    return c[()] if c.ndim == 0 else c
