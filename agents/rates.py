"""Anytime rate functions ``U(n, delta')`` of the expert families, vectorised (docs/rates.md).

Every expert handed to M-LCB must satisfy the paper's Assumption 2: with probability at least
``1 - delta'``, for all ``n >= 1`` at once, its regret after ``n`` own updates is at most
``U(n, delta')``. M-LCB reads the rates at ``delta' = delta / (2K)``. The functions below give
each family's ``U`` with all its constants, as NumPy functions of an array of counts ``n``, for
theory curves, certificates and tests; the compiled kernels of :mod:`agents.bandits` compute the
same numbers one count at a time (a test holds the two equal).

Every rate is capped at ``n``: the regret of ``n`` losses in ``[0, 1]`` never exceeds ``n``, so
``min(n, U)`` is as valid as ``U`` and stays non-decreasing (docs/rates.md §0).

==================================  ========================================  ===============
function                            rate                                      docs/rates.md
==================================  ========================================  ===============
:func:`ucb_delta_rate`              anytime UCB(delta0), delta0 = delta'/2    1a
:func:`ucb1_rate`                   UCB1 with radius sqrt(c ln j / N_a)       1b
:func:`epsilon_greedy_rate`         decaying epsilon-greedy, computable U#    2
:func:`epsilon_greedy_closed_form`  decaying epsilon-greedy, closed U_eG      2
:func:`thompson_rate`               clipped (valid) or vanilla (heuristic)    3
:func:`ogd_rate`                    projected online gradient descent         4
:func:`hedge_rate`                  Hedge over N fixed predictors             5
==================================  ========================================  ===============

:func:`authors_epsilon_greedy_rate` is the authors' heuristic. Every function takes ``capped``
(default ``True``); ``capped=False`` gives the value before the cap, which an expert's
``rate_scale`` multiplies before :func:`scale_and_cap` caps it. Each expert specification
carries its own rate as ``rate_function(n, rate_input, delta_prime)``, built from these formulas
or from its family's kernels (:mod:`agents.family`); :func:`expert_rate` reads it. This module
knows no specification. All logarithms are natural.

The parameters every rate shares (``n``, ``n_arms``, ``delta_prime``, ``capped``) and the
``Returns`` section are written once, in ``_SHARED``, and spliced into each docstring where it
says ``%(n)s`` and so on (:func:`_shared_doc`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from mlcb import validation
from mlcb.validation import InputError, InputTypeError

__all__ = [
    "authors_epsilon_greedy_rate",
    "check_counts",
    "epsilon_greedy_closed_form",
    "epsilon_greedy_rate",
    "epsilon_greedy_schedule",
    "expert_rate",
    "heavy_tailed_constant",
    "heavy_tailed_rate",
    "hedge_rate",
    "ogd_rate",
    "scale_and_cap",
    "thompson_rate",
    "ucb1_rate",
    "ucb_delta_rate",
]

#: A count or an array of counts ``n >= 1``.
Counts = npt.ArrayLike
#: A rate's values: a float for a scalar count, else a float64 array of the counts' shape.
Rate = np.float64 | npt.NDArray[np.float64]


# --- validation and the cap ------------------------------------------------------------------
def check_counts(n: Counts, name: str = "n") -> npt.NDArray[np.float64]:
    """``n`` as a float64 array, after checking that it holds integers ``>= 1``.

    Examples
    --------
    >>> check_counts([1, 2, 3])
    array([1., 2., 3.])
    >>> check_counts(0)
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: n must hold integers >= 1, got 0.0
    """
    try:
        array = np.asarray(n)
    except (ValueError, TypeError):  # ragged nesting ([[1], [2, 3]]) and the like
        raise InputError(f"{name} must hold integers >= 1, got {validation.shown(n)}") from None
    if array.dtype == bool or not np.issubdtype(array.dtype, np.number) or np.iscomplexobj(array):
        raise InputError(f"{name} must hold integers >= 1, got dtype {array.dtype}")
    values = array.astype(np.float64)
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(values) & (values >= 1) & (values == np.floor(values)))
    if np.any(bad):
        raise InputError(f"{name} must hold integers >= 1, got {float(values[bad].flat[0])!r}")
    return values


def _capped(n: npt.NDArray[np.float64], value: npt.NDArray[np.float64]) -> Rate:
    """``min(n, value)``; a float for a scalar count (docs/rates.md §0: regret never exceeds n)."""
    out = np.minimum(n, value)
    return out[()] if out.ndim == 0 else out


def _uncapped(value: npt.NDArray[np.float64]) -> Rate:
    value = np.asarray(value, dtype=np.float64)
    return value[()] if value.ndim == 0 else value


def _finish(counts: npt.NDArray[np.float64], value: npt.NDArray[np.float64], capped: bool) -> Rate:
    return _capped(counts, value) if capped else _uncapped(value)


def _checked(n: Counts, n_arms: int, delta_prime: float) -> tuple[npt.NDArray[np.float64], int, float]:
    """The counts, the number of arms and ``delta'``, checked (the arguments of most rates)."""
    return (
        check_counts(n),
        validation.integer("n_arms", n_arms),
        validation.open_unit("delta_prime", delta_prime),
    )


def _schedule_constants(c: float, alpha: float) -> tuple[float, float]:
    """Epsilon-greedy's ``c > 0`` and ``alpha`` in ``(0, 1)``, checked."""
    return validation.positive("c", c), validation.open_unit("alpha", alpha)


def scale_and_cap(n: Counts, rate_scale: float, value: Any) -> Rate:
    """``min(n, rate_scale * value)``: an expert's rate from an uncapped formula (``capped=False``)
    and its ``rate_scale``, which multiplies before the cap (as the kernels do).

    Examples
    --------
    >>> float(scale_and_cap(100, 0.5, ucb_delta_rate(100, 2, 0.01, capped=False))) < 100
    True
    >>> float(scale_and_cap(4, 1.0, 10.0))
    4.0
    """
    counts = check_counts(n)
    scale = validation.positive("rate_scale", rate_scale)
    return _capped(counts, scale * np.asarray(value, dtype=np.float64))


#: Descriptions every rate function shares, spliced into the docstrings by :func:`_shared_doc`.
_SHARED = {
    "n": "n : int or array_like of int\n    The expert's own update counts, ``n >= 1``.",
    "n_arms": "n_arms : int\n    Number of arms ``m >= 1``.",
    "delta_prime": "delta_prime : float\n    Confidence level ``delta' = delta / (2K)`` in ``(0, 1)``.",
    "capped": (
        "capped : bool, default True\n"
        "    Cap at ``n`` (``False``: the uncapped value, which a ``rate_scale`` multiplies first)."
    ),
    "schedule": (
        "c : float\n    Scale of the schedule, ``c > 0``.\n"
        "alpha : float\n    Exponent of the schedule in ``(0, 1)``."
    ),
    "epsilon_greedy": "Parameters\n----------\n%(n)s\n%(n_arms)s\n%(schedule)s\n%(rest)s",
    "rest": "%(delta_prime)s\n%(capped)s\n\n%(returns)s",
    "returns": "Returns\n-------\nfloat or ndarray\n    ``U(n, delta')`` (float64), of the shape of ``n``.",
}


def _shared_doc(function: Any) -> Any:
    """``function`` with every ``%(key)s`` of its docstring replaced by ``_SHARED[key]``."""
    doc = function.__doc__
    for _ in range(3):  # a shared text may name others ("epsilon_greedy" names "rest")
        for key, text in _SHARED.items():
            doc = doc.replace(f"%({key})s", text.replace("\n", "\n    ").replace("\n    \n", "\n\n"))
    function.__doc__ = doc
    return function


# --- uncapped rate values (the public functions cap them, or not: capped=False) ------------------
def _ucb_delta_value(n: npt.NDArray[np.float64], m: int, delta_prime: float, factor: float = 1.0):
    # The expression order of the kernel agents.bandits.ucb_delta_value: the two agree to the last bits.
    return (
        factor * np.sqrt(2.0 * (m - 1) * n * np.log(8.0 * m * n * n / delta_prime))
        + np.sqrt(0.5 * n * np.log(4.0 * n * n / delta_prime))
        + (m - 1)
    )


def _ucb1_offset(m: int, c: float, delta_prime: float) -> float:
    """``(m - 1) + t0``, ``t0 = ceil((8m / delta')^(1 / (2c - 2)))`` (docs/rates.md §1b).

    For ``c`` close to 1 (``c = 1.001`` at ``delta' = 0.005``) ``t0`` is beyond the largest float:
    then ``inf``, and the rate is ``n`` once capped, the bound being vacuous for every count a run
    can reach."""
    try:
        return (m - 1) + math.ceil((8.0 * m / delta_prime) ** (1.0 / (2.0 * c - 2.0)))
    except OverflowError:
        return math.inf


def _ucb1_value(n: npt.NDArray[np.float64], m: int, c: float, delta_prime: float):
    return (
        2.0 * np.sqrt(c * (m - 1) * n * np.log(n))
        + _ucb1_offset(m, c, delta_prime)
        + np.sqrt(0.5 * n * np.log(4.0 * n * n / delta_prime))
    )


def _schedule(j: npt.NDArray[np.float64], m: int, c: float, alpha: float):
    # Same expression as the kernel agents.bandits.epsilon.
    ell = np.maximum(1.0, np.log(j))
    return np.minimum(1.0, c * (m * ell / j) ** (1.0 - alpha))


def _sharp_sums(length: int, m: int, c: float, alpha: float, delta_prime: float):
    """Running sums ``sum_{j<=n} [eps_j + (1 - eps_j) b_j]`` of U# for ``n = 1 .. length``.

    The per-step formula and the order of accumulation are those of the kernel
    ``agents.bandits.sharp_rate_step`` (``np.cumsum`` adds sequentially, like the kernel's loop).
    """
    j = np.arange(1, length + 1, dtype=np.float64)
    eps = _schedule(j, m, c, alpha)
    epsilon_sum = np.concatenate(([0.0], np.cumsum(eps)[:-1]))  # sum_{i<j} eps_i
    mu = epsilon_sum / m
    s = np.ceil(mu - np.sqrt(2.0 * mu * np.log(6.0 * m * j * j / delta_prime)))
    sampled = s >= 1
    s_safe = np.where(sampled, s, 1.0)
    radius = np.sqrt(2.0 * np.log(12.0 * m * s_safe * s_safe / delta_prime) / s_safe)
    b = np.where(sampled, np.minimum(1.0, radius), 1.0)
    return np.cumsum(eps + (1.0 - eps) * b)


def _epsilon_greedy_value(n: npt.NDArray[np.float64], m: int, c: float, alpha: float, delta_prime: float):
    if n.size == 0:
        return np.zeros(n.shape)
    sums = _sharp_sums(int(n.max()), m, c, alpha, delta_prime)
    return sums[n.astype(np.int64) - 1] + np.sqrt(0.5 * n * np.log(6.0 * n * n / delta_prime))


def _authors_epsilon_greedy_value(n: npt.NDArray[np.float64], m: int, alpha: float, coef: float):
    # ln 1 = 0: at n = 1 the trivial bound 1 (the kernel agents.bandits._rate does the same).
    return np.where(n == 1, 1.0, coef * n**alpha * (m * np.log(n)) ** (1.0 - alpha))


# --- public rates ------------------------------------------------------------------------------
@_shared_doc
def ucb_delta_rate(n: Counts, n_arms: int, delta_prime: float, capped: bool = True) -> Rate:
    r"""Anytime UCB(delta0) on ``m`` arms, built with ``delta0 = delta' / 2`` (docs/rates.md §1a).

    .. math::

        U(n, \delta') = \min\Bigl(n,\ \sqrt{2(m-1)\,n \log(8 m n^2/\delta')}
        + \sqrt{(n/2) \log(4 n^2/\delta')} + (m - 1)\Bigr).

    Valid for losses in ``[0, 1]`` and the policy that plays ``argmin_a mean_a - rho(N_a)`` with
    ``rho(s) = sqrt(log(4 m s^2 / delta0) / (2 s))`` after pulling each arm once. The exploitation
    term comes from Hoeffding plus a union bound over arms and sample counts, the second from
    Azuma-Hoeffding on the realized losses; ``alpha = 1/2``.

    Parameters
    ----------
    %(n)s
    %(n_arms)s
    %(rest)s

    Examples
    --------
    ``U(n) / n`` on two arms at ``delta' = 0.005`` (docs/rates.md §0):

    >>> n = np.array([10_000, 100_000, 250_000, 1_000_000])
    >>> np.round(ucb_delta_rate(n, n_arms=2, delta_prime=0.005) / n, 3)
    array([0.108, 0.037, 0.024, 0.013])
    """
    capped = validation.flag("capped", capped)
    counts, m, dp = _checked(n, n_arms, delta_prime)
    return _finish(counts, _ucb_delta_value(counts, m, dp), capped)


@_shared_doc
def ucb1_rate(n: Counts, n_arms: int, c: float, delta_prime: float, capped: bool = True) -> Rate:
    r"""UCB1 with radius ``sqrt(c ln j / N_a)``, ``c > 1`` (docs/rates.md §1b).

    .. math::

        U(n, \delta') = \min\Bigl(n,\ 2\sqrt{c (m-1)\, n \ln n} + (m - 1) + t_0
        + \sqrt{(n/2) \log(4 n^2/\delta')}\Bigr),
        \qquad t_0 = \bigl\lceil (8m/\delta')^{1/(2c-2)} \bigr\rceil.

    ``j`` is the expert's own round; each arm is pulled once first. No internal confidence level is
    needed, the bound holds for every ``delta'``; the additive ``t0``, polynomial in
    ``1/delta'``, is the price of an anytime policy with logarithmic regret. Auer et al. (2002) use
    ``c = 2`` (``t0 = 57`` at ``m = 2, delta' = 0.005``). For ``c <= 1`` the argument gives no bound;
    as ``c`` falls to 1, ``t0`` grows without bound, and where it is beyond the largest float
    (``c = 1.001`` at ``delta' = 0.005``) the rate is ``n`` (``inf`` uncapped).

    Parameters
    ----------
    %(n)s
    %(n_arms)s
    c : float
        Radius constant, ``c > 1``.
    %(rest)s

    Raises
    ------
    ValueError
        If ``c <= 1`` (outside the theory of docs/rates.md §1b) or another argument is out of range.

    Examples
    --------
    With Auer et al.'s ``c = 2`` on two arms (``t0 = 57`` at ``delta' = 0.005``), ``U(n) / n`` falls
    as ``sqrt(ln n / n)``:

    >>> rates = ucb1_rate([10_000, 100_000, 250_000, 1_000_000], n_arms=2, c=2.0, delta_prime=0.005)
    >>> (rates / [10_000, 100_000, 250_000, 1_000_000]).round(3).tolist()
    [0.127, 0.043, 0.028, 0.015]
    """
    capped = validation.flag("capped", capped)
    counts, m, dp = _checked(n, n_arms, delta_prime)
    if not (validation.is_real(c) and c > 1):
        raise InputError(
            f"c must be a finite number > 1 for UCB1's rate (docs/rates.md §1b), got {validation.shown(c)}"
        )
    return _finish(counts, _ucb1_value(counts, m, float(c), dp), capped)


@_shared_doc
def epsilon_greedy_schedule(j: Counts, n_arms: int, c: float, alpha: float) -> Rate:
    r"""Exploration probabilities of decaying epsilon-greedy (docs/rates.md §2).

    .. math::

        \varepsilon_j = \min\bigl(1,\ c\,(m \ell_j / j)^{1-\alpha}\bigr), \qquad \ell_j = \max(1, \ln j).

    ``ell_j`` differs from ``ln j`` only for ``j <= 2``; it makes the schedule non-increasing and
    avoids ``eps_1 = 0``. The same expression as the kernel ``agents.bandits.epsilon``.

    Parameters
    ----------
    j : int or array_like of int
        The expert's own rounds, ``j >= 1``.
    %(n_arms)s
    c : float
        Scale ``c > 0``.
    alpha : float
        Rate exponent in ``(0, 1)``; the project's schedule is ``2/3``.

    Returns
    -------
    float or ndarray
        ``eps_j`` in ``(0, 1]``, of the shape of ``j``.

    Examples
    --------
    >>> np.round(epsilon_greedy_schedule([1, 10, 1000], n_arms=2, c=1.0, alpha=2 / 3), 4)
    array([1.    , 0.7722, 0.24  ])
    """
    rounds = check_counts(j, "j")
    m = validation.integer("n_arms", n_arms)
    scale, exponent = _schedule_constants(c, alpha)
    out = _schedule(rounds, m, scale, exponent)
    return out[()] if out.ndim == 0 else out


@_shared_doc
def epsilon_greedy_rate(
    n: Counts, n_arms: int, c: float, alpha: float, delta_prime: float, capped: bool = True
) -> Rate:
    r"""Computable rate ``U#`` of decaying epsilon-greedy (docs/rates.md §2, the shipped rate).

    With ``mu_j = (1/m) sum_{i<j} eps_i`` and
    ``s_j = ceil(mu_j - sqrt(2 mu_j log(6 m j^2 / delta')))``, let
    ``b_j = min(1, sqrt(2 log(12 m s_j^2 / delta') / s_j))`` if ``s_j >= 1`` and ``b_j = 1``
    otherwise. Then

    .. math::

        U^\sharp(n, \delta') = \min\Bigl(n,\ \sum_{j \le n} \varepsilon_j
        + \sum_{j \le n} (1 - \varepsilon_j)\, b_j + \sqrt{(n/2) \log(6 n^2/\delta')}\Bigr).

    ``eps_j`` is :func:`epsilon_greedy_schedule`; the exploit arm is the smallest empirical mean,
    unsampled arms first. ``s_j`` lower-bounds every arm's sample count (Chernoff on the exploration
    coins), ``b_j`` bounds the exploit arm's gap (Hoeffding), and the last term is Azuma-Hoeffding;
    each event gets ``delta'/3``. ``U#`` is at most the closed form
    :func:`epsilon_greedy_closed_form`, of order ``n^max(alpha, 1 - alpha/2)``.

    The sums are accumulated in the kernel's order (``agents.bandits.sharp_rate_step``), so the
    result equals the compiled rate to rounding; the cost is ``O(max(n))``.

    %(epsilon_greedy)s

    Examples
    --------
    >>> n = np.array([10_000, 100_000, 250_000, 1_000_000])
    >>> np.round(epsilon_greedy_rate(n, n_arms=2, c=1.0, alpha=2 / 3, delta_prime=0.005) / n, 2)
    array([0.53, 0.26, 0.19, 0.12])
    """
    capped = validation.flag("capped", capped)
    counts, m, dp = _checked(n, n_arms, delta_prime)
    scale, exponent = _schedule_constants(c, alpha)
    return _finish(counts, _epsilon_greedy_value(counts, m, scale, exponent, dp), capped)


@_shared_doc
def epsilon_greedy_closed_form(
    n: Counts, n_arms: int, c: float, alpha: float, delta_prime: float, capped: bool = True
) -> Rate:
    r"""Closed-form rate ``U_eG`` of decaying epsilon-greedy (docs/rates.md §2).

    .. math::

        U_{\varepsilon G}(n, \delta') = \min\Bigl(n,\ \frac{c}{\alpha} (m \ell_n)^{1-\alpha} n^\alpha
        + \frac{2\sqrt{\alpha/(\theta c)}}{1 - \alpha/2}\, m^{\alpha/2} \sqrt{L_E}\, n^{1-\alpha/2}
        + J_0 + \sqrt{(n/2) \log(6 n^2/\delta')}\Bigr)

    with ``L_E = log(12 m n^2 / delta')``, ``L_N = log(6 m n^2 / delta')``,
    ``kappa = max(1, m c^(1/(1-alpha))) (1 - alpha) / alpha + 1``,
    ``theta = 8 m L_N / (8 m L_N + kappa)`` and
    ``J0 = ceil(((alpha / c) m^(alpha-1) (8 m L_N + kappa))^(1/alpha))``.

    Valid for the schedule of :func:`epsilon_greedy_schedule` (with ``ell_j = max(1, ln j)``), and
    an upper bound on :func:`epsilon_greedy_rate`. Its exponent is ``max(alpha, 1 - alpha/2)``:
    ``n^(2/3)`` at ``alpha = 2/3``.

    %(epsilon_greedy)s

    Examples
    --------
    At ``m = 2``, ``c = 1``, ``alpha = 2/3``, ``delta' = 0.005`` (docs/rates.md §2), ``U_eG / n`` at
    ``n = 10^4, 10^5, 2.5 10^5, 10^6``, an upper bound on ``U# / n``:

    >>> closed = epsilon_greedy_closed_form([10_000, 100_000, 250_000, 1_000_000], 2, 1.0, 2 / 3, 0.005)
    >>> (closed / [10_000, 100_000, 250_000, 1_000_000]).round(2).tolist()
    [1.0, 0.52, 0.38, 0.24]
    """
    capped = validation.flag("capped", capped)
    counts, m, dp = _checked(n, n_arms, delta_prime)
    scale, a = _schedule_constants(c, alpha)
    ell = np.maximum(1.0, np.log(counts))
    log_e = np.log(12.0 * m * counts * counts / dp)
    log_n = np.log(6.0 * m * counts * counts / dp)
    try:
        kappa = max(1.0, m * scale ** (1.0 / (1.0 - a))) * (1.0 - a) / a + 1.0
    except OverflowError:  # c^(1/(1-alpha)) beyond the largest float (c = 10, alpha = 0.999)
        kappa = math.inf
    # A term beyond the largest float (kappa or J0 infinite, theta = 0) makes the bound vacuous:
    # inf, n once capped.
    with np.errstate(over="ignore", divide="ignore"):
        theta = 8.0 * m * log_n / (8.0 * m * log_n + kappa)
        j0 = np.ceil(((a / scale) * m ** (a - 1.0) * (8.0 * m * log_n + kappa)) ** (1.0 / a))
        explore = (scale / a) * (m * ell) ** (1.0 - a) * counts**a
        exploit_coef = 2.0 * np.sqrt(a / (theta * scale)) / (1.0 - a / 2.0) * m ** (a / 2.0)
        exploit = exploit_coef * np.sqrt(log_e) * counts ** (1.0 - a / 2.0)
        sampling = np.sqrt(0.5 * counts * np.log(6.0 * counts * counts / dp))
        value = explore + exploit + j0 + sampling
    return _finish(counts, value, capped)


@_shared_doc
def thompson_rate(n: Counts, n_arms: int, delta_prime: float, clipped: bool, capped: bool = True) -> Rate:
    r"""Rate of Bernoulli Thompson sampling (docs/rates.md §3).

    Clipped TS (docs/rates.md §3, valid; internal level ``delta0 = delta' / 2``):

    .. math::

        U(n, \delta') = \min\Bigl(n,\ \tfrac32 \sqrt{2(m-1)\,n \log(8 m n^2/\delta')}
        + \sqrt{(n/2) \log(4 n^2/\delta')} + (m - 1)\Bigr).

    Each posterior sample is clipped into ``[mean - 2 rho, mean - rho]``, so the played arm's gap is
    at most ``3 rho`` on the UCB event: 3/2 times the exploitation term of :func:`ucb_delta_rate`.

    Vanilla TS (``clipped=False``) has no usable explicit high-probability bound (docs/rates.md §3: its
    regret tails are only polynomially small); this returns the UCB(delta0) formula
    :func:`ucb_delta_rate` as a **heuristic**, outside the theory.

    Parameters
    ----------
    %(n)s
    %(n_arms)s
    %(delta_prime)s
    clipped : bool
        The clipped variant (a valid rate) or vanilla TS (a heuristic).
    %(capped)s

    %(returns)s

    Examples
    --------
    >>> float(np.round(thompson_rate(10_000, n_arms=2, delta_prime=0.005, clipped=True), 1))
    1447.1
    """
    clipped = validation.flag("clipped", clipped)
    capped = validation.flag("capped", capped)
    counts, m, dp = _checked(n, n_arms, delta_prime)
    return _finish(counts, _ucb_delta_value(counts, m, dp, 1.5 if clipped else 1.0), capped)


@_shared_doc
def ogd_rate(n: Counts, lipschitz: float, diameter: float, delta_prime: float, capped: bool = True) -> Rate:
    r"""Projected online gradient descent, ``eta_n = D / (G sqrt(n))`` ("sharper version", docs/rates.md §4).

    .. math::

        U(n, \delta') = \min\Bigl(n,\ \tfrac32 G D \sqrt{n} + \sqrt{(n/2) \log(2 n^2/\delta')}\Bigr).

    Assumes convex losses in ``[0, 1]`` with gradients bounded by ``G`` on a convex set of diameter
    ``D``. The first term is Hazan's Theorem 3.1 (deterministic, anytime); the second is Hoeffding
    with a union bound over ``n`` on the i.i.d. losses of the best fixed decision. Where the loss is
    not convex in the parameters (e.g. square loss through a sigmoid link) the rate is heuristic.

    Parameters
    ----------
    %(n)s
    lipschitz : float
        Gradient bound ``G >= 0``.
    diameter : float
        Diameter ``D >= 0`` of the decision set (``2 r`` for a ball of radius ``r``).
    %(rest)s

    Examples
    --------
    >>> float(np.round(ogd_rate(10_000, lipschitz=1.0, diameter=2.0, delta_prime=0.005), 1))
    649.4
    """
    capped = validation.flag("capped", capped)
    counts = check_counts(n)
    gradient = validation.non_negative("lipschitz", lipschitz)
    size = validation.non_negative("diameter", diameter)
    dp = validation.open_unit("delta_prime", delta_prime)
    sampling = np.sqrt(0.5 * counts * np.log(2.0 * counts * counts / dp))
    return _finish(counts, 1.5 * gradient * size * np.sqrt(counts) + sampling, capped)


@_shared_doc
def hedge_rate(n: Counts, n_predictors: int, delta_prime: float, capped: bool = True) -> Rate:
    r"""Hedge over ``N`` fixed predictors, ``eta_t = sqrt(8 ln N / t)``, mixture loss (docs/rates.md §5).

    .. math::

        U(n, \delta') = \min\Bigl(n,\ \sqrt{2 n \ln N} + \sqrt{\ln N / 8}
        + \sqrt{(n/2) \log(2 n^2/\delta')}\Bigr).

    Cesa-Bianchi & Lugosi (2006), Theorem 2.3, for losses in ``[0, 1]``, plus Hoeffding on the best
    predictor's i.i.d. losses. Assumes the expert records the mixture loss ``sum_i p_i l_i`` (not a
    sampled predictor's loss, which would need a second martingale term).

    Parameters
    ----------
    %(n)s
    n_predictors : int
        Number of predictors ``N >= 1``.
    %(rest)s

    Examples
    --------
    >>> n = np.array([10_000, 100_000, 250_000, 1_000_000])
    >>> np.round(hedge_rate(n, n_predictors=10, delta_prime=0.005) / n, 3)
    array([0.056, 0.019, 0.012, 0.006])
    """
    capped = validation.flag("capped", capped)
    counts = check_counts(n)
    size = validation.integer("n_predictors", n_predictors)
    dp = validation.open_unit("delta_prime", delta_prime)
    log_size = math.log(size)
    value = (
        np.sqrt(2.0 * counts * log_size)
        + math.sqrt(log_size / 8.0)
        + np.sqrt(0.5 * counts * np.log(2.0 * counts * counts / dp))
    )
    return _finish(counts, value, capped)


def heavy_tailed_constant(eps: float) -> float:
    r"""``c_eps = 1 + eps + sqrt(2) + 2/3``, the constant of the truncated mean's radius (docs/rates.md §6).

    The truncation bias contributes ``1 + eps``, Bernstein's inequality ``sqrt(2) + 2/3``; at most
    4.09 for ``eps <= 1``.

    Parameters
    ----------
    eps : float
        Moment order minus one, in ``(0, 1]``.

    Returns
    -------
    float
        ``c_eps``.

    Examples
    --------
    >>> round(heavy_tailed_constant(1.0), 4)
    4.0809
    """
    order = _eps(eps)
    return 1.0 + order + math.sqrt(2.0) + 2.0 / 3.0


@_shared_doc
def heavy_tailed_rate(
    n: Counts, n_arms: int, eps: float, delta_prime: float, moment: float = 1.0, capped: bool = True
) -> Rate:
    r"""Robust UCB with truncated means under ``E|Z|^(1+eps) <= u`` (docs/rates.md §6).

    .. math::

        U(n, \delta') = \min\Bigl(n,\ 2 c_\varepsilon u^{1/(1+\varepsilon)}
        \bigl((m-1) \log(8 m n^2/\delta')\bigr)^{\varepsilon/(1+\varepsilon)} n^{1/(1+\varepsilon)}
        + (m - 1) + \sqrt{(n/2) \log(4 n^2/\delta')}\Bigr),

    ``c_eps`` from :func:`heavy_tailed_constant`. The expert (:class:`agents.robust_ucb.RobustUCB`)
    is built with ``delta0 = delta' / 2``: on the event (probability ``>= 1 - delta0``) that every
    arm's truncated mean is within ``rho(s) = c_eps u^(1/(1+eps)) (log(4 m s^2 / delta0) / s)^(eps/(1+eps))``
    of its mean for every sample count ``s``, a suboptimal arm is played only while its gap is at
    most ``2 rho`` of its count; summing over arms (concavity) gives the first term, the warm-up
    pulls the second, Azuma-Hoeffding on the realized losses the third. Positive for every
    ``n >= 1`` (the last term is), exponent ``alpha = 1 / (1 + eps)``, up to the logarithm's power
    ``eps / (1 + eps)``. Adapted from Bubeck, Cesa-Bianchi and Lugosi (2013), Lemma 1 and
    Proposition 1, made anytime by a union bound over sample counts.

    Parameters
    ----------
    %(n)s
    %(n_arms)s
    eps : float
        Moment order minus one, in ``(0, 1]``.
    %(delta_prime)s
    moment : float, default 1.0
        ``u > 0``, a bound on every arm's ``E|Z|^(1+eps)`` (1 for losses in ``[0, 1]``).
    %(capped)s

    %(returns)s

    Examples
    --------
    >>> n = np.array([10_000, 100_000, 1_000_000, 10_000_000])
    >>> np.round(heavy_tailed_rate(n, n_arms=2, eps=0.5, delta_prime=0.005) / n, 3)
    array([1.   , 0.497, 0.24 , 0.115])
    """
    capped = validation.flag("capped", capped)
    counts, m, dp = _checked(n, n_arms, delta_prime)
    order = _eps(eps)
    u = validation.positive("moment", moment)
    exponent = 1.0 / (1.0 + order)
    # Same expression order as the kernel agents.robust_ucb.rate, so that the two agree to the last bits.
    value = (
        2.0
        * heavy_tailed_constant(order)
        * u**exponent
        * ((m - 1) * np.log(8.0 * m * counts * counts / dp)) ** (order / (1.0 + order))
        * counts**exponent
        + (m - 1)
        + np.sqrt(0.5 * counts * np.log(4.0 * counts * counts / dp))
    )
    return _finish(counts, value, capped)


def _eps(eps: float) -> float:
    if not (validation.is_real(eps) and 0 < eps <= 1):
        raise InputError(f"eps must be a number in (0, 1], got {validation.shown(eps)}")
    return float(eps)


@_shared_doc
def authors_epsilon_greedy_rate(
    n: Counts, n_arms: int, alpha: float, coef: float = 0.5, capped: bool = True
) -> Rate:
    r"""The authors' epsilon-greedy rate, a heuristic without ``delta`` and without proof (docs/rates.md §2).

    .. math::

        U(n) = \min\bigl(n,\ \mathrm{coef}\; n^\alpha (m \ln n)^{1-\alpha}\bigr), \quad n \ge 2,
        \qquad U(1) = 1.

    The formula vanishes at ``n = 1``; the trivial bound ``U(1) = 1`` (the regret of one loss in
    ``[0, 1]``) keeps the rate positive, so that under M-LCB's count-only bounds an expert whose
    single warm-start loss was 1 starts at ``LCB <= 0`` like every other and is retried.

    The authors' code uses ``coef = 0.5`` and ``alpha = 2/3``. (Their UCB1 rate,
    ``coef sqrt(ln n) sum_a sqrt(N_a)``, depends on the pull counts and has no count-only form.)

    Parameters
    ----------
    %(n)s
    %(n_arms)s
    alpha : float
        Exponent in ``(0, 1)``.
    coef : float, default 0.5
        Constant ``> 0``.
    %(capped)s

    Returns
    -------
    float or ndarray
        ``U(n)`` (float64), of the shape of ``n``.

    Examples
    --------
    >>> float(np.round(authors_epsilon_greedy_rate(1000, n_arms=2, alpha=2 / 3), 3))
    119.975
    """
    capped = validation.flag("capped", capped)
    counts = check_counts(n)
    m = validation.integer("n_arms", n_arms)
    exponent = validation.open_unit("alpha", alpha)
    constant = validation.positive("coef", coef)
    return _finish(counts, _authors_epsilon_greedy_value(counts, m, exponent, constant), capped)


@_shared_doc
def expert_rate(expert: Any, n: Counts, n_arms: int, delta_prime: float) -> Rate:
    r"""``U(n, delta')`` of an expert specification, as M-LCB reads it: its own
    ``rate_function(n, n_arms, delta_prime)``, as float64, capped at ``n`` (a no-op for a
    conforming rate).

    Every specification of the package carries its rate (:mod:`agents.family`): the bandit
    experts of :mod:`agents.bandits` compute it with this module's formulas (``rate_scale``
    multiplies the uncapped rate, then the cap applies, as in the kernels), the compiled families
    of :mod:`agents.klucb`, :mod:`agents.robust_ucb` and :mod:`agents.hedge` with their own rate
    kernels. The authors' UCB1 rate depends on the arms' pull counts and has no count-only form
    (``ValueError``).

    Parameters
    ----------
    expert : object
        An expert specification with a method ``rate_function(n, rate_input, delta_prime)``.
    %(n)s
    n_arms : int
        What the environment tells the rate, passed on as ``rate_input``: the number of arms
        ``m >= 1`` of an expert of a bandit experts environment.
    %(delta_prime)s

    %(returns)s

    Raises
    ------
    ValueError
        For a rate that depends on more than the count (the authors' UCB1 rate) or bad arguments.
    TypeError
        For an object without ``rate_function``.

    Examples
    --------
    >>> from agents.bandits import UCB1
    >>> float(expert_rate(UCB1(c=2.0), 10_000, n_arms=2, delta_prime=0.005)) == float(
    ...     ucb1_rate(10_000, n_arms=2, c=2.0, delta_prime=0.005))
    True
    """
    rate_function = getattr(expert, "rate_function", None)
    if not callable(rate_function):
        raise InputTypeError(
            "expert_rate needs an expert specification with a method rate_function(n, n_arms, "
            f"delta_prime), got {type(expert).__name__}"
        )
    counts = check_counts(n)
    return _capped(counts, np.asarray(rate_function(n, n_arms, delta_prime), dtype=np.float64))
