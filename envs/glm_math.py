"""Exact expected losses, optimal losses and constants of the "glm" instance (docs/presets.md).

Setting. Expert ``k`` predicts ``y_hat = f_k(w . x)`` (links in :mod:`envs.links`) with ``w`` in the
ball ``||w|| <= r``. Each round ``x`` is uniform on the sphere of radius ``R_x`` in ``R^d`` and
``y = f_t(w* . x) + eps`` with ``eps ~ N(0, sigma^2)``. The loss is
``min(1, (f_k(w . x) - y)^2 / B^2)`` with a global scale ``B`` (:func:`loss_scale`).

Reduction to the plane. Write ``e1 = w* / ||w*||``, ``alpha = w . e1`` and
``beta = ||w - alpha e1|| >= 0``; when ``beta > 0`` put ``e2 = (w - alpha e1) / beta``. Then
``w . x = alpha x1 + beta x2`` and ``w* . x = ||w*|| x1`` with ``(x1, x2) = (x . e1, x . e2)``,
whose joint law does not depend on the choice of orthonormal ``e1, e2``. With the noise
independent of ``x``,

    L(w) = E[(f_k(alpha x1 + beta x2) - f_t(||w*|| x1))^2] / B^2 + sigma^2 / B^2,

a two-dimensional integral that :func:`plane_quadrature` evaluates to near machine precision
for the smooth links (to about ``1e-13`` relatively with the default 24 x 48 nodes). The
``power`` link ``|z|^1.5 / 2`` is not twice differentiable at 0, so there the rule converges
slowly: about ``1e-4`` relatively with the default nodes, ``1e-5`` with 96 x 192, so that a
``power`` expert's pseudo-regret is off by up to about ``1e-5`` per round (raise
``quadrature`` where that matters).
The clipping at 1 is ignored: for ``||w|| <= r`` (the experts' ball), ``B`` bounds
``|f_k(z) - y|`` whenever ``|eps| <= 10 sigma``, an event of probability ``1 - 1.5e-23``, so the
clipped and unclipped expectations agree far below any simulation's resolution.

Convexity (docs/rates.md §4). ``w -> (f(w . x) - y)^2`` is convex for every ``x`` exactly when
``g(z) = (f(z) - y)^2`` is convex on ``[-r R_x, r R_x]``, i.e. ``f'(z)^2 + (f(z) - y) f''(z) >= 0``;
:func:`is_convex_loss` checks it. Only for such links does projected OGD's regret bound
``1.5 G D sqrt(n)`` hold, with ``G = 2 L_f R_x / B`` and ``L_f`` from :func:`lipschitz`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from envs.links import link_derivative, link_derivatives, link_index, link_value, link_values
from mlcb import validation
from mlcb.kernels.jit import njit
from mlcb.validation import InputError

__all__ = [
    "PlaneQuadrature",
    "plane_quadrature",
    "expected_loss",
    "optimal_loss",
    "loss_scale",
    "lipschitz",
    "is_convex_loss",
]


class PlaneQuadrature(NamedTuple):
    """Nodes and weights of a quadrature for the law of ``(x . e1, x . e2)``.

    Attributes
    ----------
    x1, x2 : numpy.ndarray, shape (Q,)
        Node coordinates.
    weights : numpy.ndarray, shape (Q,)
        Positive weights summing to 1.
    """

    x1: np.ndarray
    x2: np.ndarray
    weights: np.ndarray


# --- argument checks ----------------------------------------------------------------------------


def _check_nodes(nodes: PlaneQuadrature | tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if len(nodes) != 3:
        raise InputError("nodes must be (x1, x2, weights) as returned by plane_quadrature")
    x1, x2, weights = (np.ascontiguousarray(a, dtype=np.float64).reshape(-1) for a in nodes)
    if not (x1.size == x2.size == weights.size) or x1.size == 0:
        raise InputError("nodes: x1, x2 and weights must be non-empty and of equal length")
    if not (np.all(np.isfinite(x1)) and np.all(np.isfinite(x2)) and np.all(weights >= 0.0)):
        raise InputError("nodes: coordinates must be finite and weights >= 0")
    return x1, x2, weights


# --- quadrature ---------------------------------------------------------------------------------
def plane_quadrature(dim: int, radius: float, n_radial: int = 24, n_angular: int = 48) -> PlaneQuadrature:
    """Quadrature for ``(x1, x2) = (x . e1, x . e2)``, ``x`` uniform on a sphere in ``R^dim``.

    For ``dim >= 3`` the pair has density proportional to ``(1 - rho^2)^((dim - 4) / 2)`` on the
    disk of radius ``radius``, with ``rho = |(x1, x2)| / radius``. In polar coordinates
    ``(x1, x2) = radius sqrt(u) (cos theta, sin theta)`` the variables are independent,
    ``u = rho^2 ~ Beta(1, (dim - 2) / 2)`` and ``theta`` uniform on ``[0, 2 pi)``. The rule takes
    ``n_radial`` Gauss-Jacobi nodes in ``u`` (weight ``(1 - u)^((dim - 4) / 2)``) times
    ``n_angular`` equispaced angles ``theta_j = 2 pi (j + 1/2) / n_angular`` with equal weights.
    The trapezoid rule in ``theta`` is exact for trigonometric polynomials of degree
    ``< n_angular``, and the angular average of a smooth function of ``(x1, x2)`` is a smooth
    function of ``u``, so the rule converges spectrally for a smooth integrand; it integrates
    ``x1^a x2^b`` exactly for ``a + b < min(n_angular, 2 n_radial)``. For ``dim == 2``, ``x``
    lies on the circle: the rule is the ``n_angular`` angles at radius ``radius`` (``n_radial`` is
    unused).

    Parameters
    ----------
    dim : int
        Dimension ``d >= 2`` of ``x``.
    radius : float
        Radius ``R_x > 0`` of the sphere.
    n_radial : int
        Number of Gauss-Jacobi nodes in ``u`` (``>= 1``).
    n_angular : int
        Number of angles (``>= 1``).

    Returns
    -------
    PlaneQuadrature
        ``(x1, x2, weights)``, each of shape ``(n_radial * n_angular,)`` (``(n_angular,)`` for
        ``dim == 2``); the weights sum to 1.

    Raises
    ------
    ValueError
        If ``dim < 2``, ``radius <= 0`` or a node count is below 1.

    Examples
    --------
    >>> x1, x2, w = plane_quadrature(5, 2.0)
    >>> round(float(w @ x1**2), 12)  # E x1^2 = R^2 / d
    0.8
    """
    dim = validation.integer("dim", dim, 2)
    radius = validation.positive("radius", radius)
    n_radial = validation.integer("n_radial", n_radial, 1)
    n_angular = validation.integer("n_angular", n_angular, 1)
    theta = 2.0 * np.pi * (np.arange(n_angular) + 0.5) / n_angular
    if dim == 2:
        weights = np.full(n_angular, 1.0 / n_angular)
        return PlaneQuadrature(radius * np.cos(theta), radius * np.sin(theta), weights)
    from scipy import special  # here: SciPy's optimisers and special functions take 0.2 s to import

    t, t_weights = special.roots_jacobi(n_radial, (dim - 4) / 2.0, 0.0)
    u = (1.0 + t) / 2.0
    rho = radius * np.sqrt(u)
    radial_weights = t_weights / t_weights.sum()
    x1 = np.outer(rho, np.cos(theta)).reshape(-1)
    x2 = np.outer(rho, np.sin(theta)).reshape(-1)
    weights = np.outer(radial_weights, np.full(n_angular, 1.0 / n_angular)).reshape(-1)
    return PlaneQuadrature(x1, x2, weights / weights.sum())


# --- expected loss ------------------------------------------------------------------------------
@njit
def _mean_squared_gap(link, alpha, beta, x1, x2, weights, target_values):
    """``s_i = sum_q w_q (f(alpha_i x1_q + beta_i x2_q) - t_q)^2`` and its gradient in (alpha, beta)."""
    n = alpha.size
    value = np.empty(n)
    grad_alpha = np.empty(n)
    grad_beta = np.empty(n)
    for i in range(n):
        s = 0.0
        ga = 0.0
        gb = 0.0
        for q in range(x1.size):
            z = alpha[i] * x1[q] + beta[i] * x2[q]
            gap = link_value(link, z) - target_values[q]
            s += weights[q] * gap * gap
            slope = 2.0 * weights[q] * gap * link_derivative(link, z)
            ga += slope * x1[q]
            gb += slope * x2[q]
        value[i] = s
        grad_alpha[i] = ga
        grad_beta[i] = gb
    return value, grad_alpha, grad_beta


@njit
def _mean_squared_value(link, alpha, beta, x1, x2, weights, target_values):
    """The values ``s_i`` of :func:`_mean_squared_gap` alone (the same sums, in the same order),
    for the search's grid, which needs no gradient: about half the work where the link's
    derivative costs as much as its value."""
    n = alpha.size
    value = np.empty(n)
    for i in range(n):
        s = 0.0
        for q in range(x1.size):
            z = alpha[i] * x1[q] + beta[i] * x2[q]
            gap = link_value(link, z) - target_values[q]
            s += weights[q] * gap * gap
        value[i] = s
    return value


def expected_loss(
    link: str | int,
    alpha: ArrayLike,
    beta: ArrayLike,
    target_link: str | int,
    target_norm: float,
    nodes: PlaneQuadrature | tuple,
    noise: float,
    scale: float,
) -> float | np.ndarray:
    """Expected scaled square loss ``L(w)`` of the decision ``w`` of an expert with link ``link``.

    With ``alpha = w . e1``, ``e1 = w* / ||w*||``, and ``beta = ||w - alpha e1||``,

        L(w) = sum_q weight_q (f_link(alpha x1_q + beta x2_q) - f_target(||w*|| x1_q))^2 / B^2
               + sigma^2 / B^2

    where ``(x1_q, x2_q, weight_q)`` is a :func:`plane_quadrature` rule, ``||w*||`` is
    ``target_norm``, ``sigma`` is ``noise`` and ``B`` is ``scale``. The clipping of the loss at 1
    is ignored: with ``B`` from :func:`loss_scale` it is an event of negligible probability.

    Parameters
    ----------
    link, target_link : str or int
        The expert's link and the target link (names or indices, :data:`envs.links.LINK_NAMES`).
    alpha, beta : array_like
        Coordinates of ``w`` along ``e1`` and orthogonal to it (``beta >= 0``); broadcast together.
    target_norm : float
        ``||w*|| >= 0``.
    nodes : PlaneQuadrature
        Quadrature for the law of ``(x . e1, x . e2)``.
    noise : float
        Noise standard deviation ``sigma >= 0``.
    scale : float
        Loss scale ``B > 0``.

    Returns
    -------
    float or numpy.ndarray
        ``L(w)``: a float for scalar ``alpha`` and ``beta``, else an array of their broadcast shape.

    Raises
    ------
    ValueError
        On an unknown link, a negative or non-finite ``beta``, or a bad scalar argument.

    Examples
    --------
    >>> nodes = plane_quadrature(5, 2.0)
    >>> float(expected_loss("logcosh", 0.8, 0.0, "logcosh", 0.8, nodes, 0.02, 1.0))  # sigma^2
    0.0004
    """
    link = link_index(link)
    target_link = link_index(target_link)
    target_norm = validation.non_negative("target_norm", target_norm)
    noise = validation.non_negative("noise", noise)
    scale = validation.positive("scale", scale)
    x1, x2, weights = _check_nodes(nodes)
    a, b = np.broadcast_arrays(np.asarray(alpha, dtype=np.float64), np.asarray(beta, dtype=np.float64))
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise InputError("alpha and beta must be finite")
    if np.any(b < 0.0):
        raise InputError("beta = ||w - alpha e1|| must be >= 0")
    target_values = link_values(target_link, target_norm * x1)
    gap, _, _ = _mean_squared_gap(
        link, np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1),
        x1, x2, weights, target_values,
    )  # fmt: skip
    loss = (gap + noise * noise) / (scale * scale)
    if a.ndim == 0:
        return float(loss[0])
    return loss.reshape(a.shape)


def optimal_loss(
    link: str | int,
    target_link: str | int,
    target_norm: float,
    radius_w: float,
    nodes: PlaneQuadrature | tuple,
    noise: float,
    scale: float,
    n_starts: int = 5,
) -> tuple[float, float, float]:
    """Optimal expected loss ``L_k* = min_{||w|| <= r} L(w)`` of the expert with link ``link``.

    ``L`` depends on ``w`` only through ``(alpha, beta)`` (see :func:`expected_loss`), and
    ``||w||^2 = alpha^2 + beta^2``, so ``L_k*`` is the minimum over the half disk
    ``alpha^2 + beta^2 <= r^2``, ``beta >= 0``. ``L`` need not be convex there, so the search
    evaluates a polar grid (33 radii times 65 angles), then refines the best ``n_starts`` grid local
    minima with L-BFGS-B in polar coordinates ``(rho, phi) in [0, r] x [0, pi]`` using the exact
    gradient. When ``link == target_link`` and ``target_norm <= r`` the answer is exact:
    ``sigma^2 / B^2`` at ``(target_norm, 0)``.

    Parameters
    ----------
    link, target_link : str or int
        The expert's link and the target link.
    target_norm : float
        ``||w*|| >= 0``.
    radius_w : float
        Radius ``r > 0`` of the experts' ball.
    nodes : PlaneQuadrature
        Quadrature for the law of ``(x . e1, x . e2)``.
    noise : float
        Noise standard deviation ``sigma >= 0``.
    scale : float
        Loss scale ``B > 0``.
    n_starts : int
        Number of local refinements (``>= 1``).

    Returns
    -------
    value : float
        ``L_k*``.
    alpha, beta : float
        A minimiser's coordinates (``beta >= 0``).

    Examples
    --------
    >>> nodes = plane_quadrature(5, 2.0)
    >>> value, alpha, beta = optimal_loss("affine", "logcosh", 0.8, 1.0, nodes, 0.02, 1.0)
    >>> value > 0.02**2
    True
    """
    from scipy import optimize

    link = link_index(link)
    target_link = link_index(target_link)
    target_norm = validation.non_negative("target_norm", target_norm)
    radius_w = validation.positive("radius_w", radius_w)
    noise = validation.non_negative("noise", noise)
    scale = validation.positive("scale", scale)
    n_starts = validation.integer("n_starts", n_starts, 1)
    x1, x2, weights = _check_nodes(nodes)
    noise_loss = noise * noise / (scale * scale)
    if link == target_link and target_norm <= radius_w:
        return noise_loss, target_norm, 0.0
    target_values = link_values(target_link, target_norm * x1)

    rho = np.linspace(0.0, radius_w, 33)
    phi = np.linspace(0.0, np.pi, 65)
    alpha = np.outer(rho, np.cos(phi))
    beta = np.maximum(np.outer(rho, np.sin(phi)), 0.0)
    grid = _mean_squared_value(link, alpha.reshape(-1), beta.reshape(-1), x1, x2, weights, target_values)
    grid = grid.reshape(alpha.shape)

    # Local minima of the grid (each point no larger than its 8 neighbours); the rho = 0 row is
    # one point, so only its first entry is kept.
    padded = np.pad(grid, 1, constant_values=np.inf)
    is_min = np.ones(grid.shape, dtype=bool)
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            if di or dj:
                shifted = padded[1 + di : 1 + di + grid.shape[0], 1 + dj : 1 + dj + grid.shape[1]]
                is_min &= grid <= shifted
    is_min[0, 1:] = False
    candidates = np.flatnonzero(is_min.reshape(-1))
    if candidates.size == 0:
        candidates = np.array([np.argmin(grid)])
    starts = candidates[np.argsort(grid.reshape(-1)[candidates], kind="stable")][:n_starts]

    def objective(p: np.ndarray) -> tuple[float, np.ndarray]:
        r, angle = float(p[0]), float(p[1])
        c, s = math.cos(angle), math.sin(angle)
        value, ga, gb = _mean_squared_gap(
            link, np.array([r * c]), np.array([max(r * s, 0.0)]), x1, x2, weights, target_values
        )
        grad = np.array([ga[0] * c + gb[0] * s, r * (-ga[0] * s + gb[0] * c)])
        return float(value[0]), grad

    best_index = int(np.argmin(grid))
    best = (float(grid.reshape(-1)[best_index]), float(alpha.reshape(-1)[best_index]),
            float(beta.reshape(-1)[best_index]))  # fmt: skip
    for start in starts:
        i, j = np.unravel_index(start, grid.shape)
        result = optimize.minimize(
            objective, np.array([rho[i], phi[j]]), jac=True, method="L-BFGS-B",
            bounds=[(0.0, radius_w), (0.0, np.pi)],
            options={"ftol": 1e-15, "gtol": 1e-13, "maxiter": 1000},
        )  # fmt: skip
        if result.fun < best[0]:
            r, angle = float(result.x[0]), float(result.x[1])
            best = (float(result.fun), r * math.cos(angle), max(r * math.sin(angle), 0.0))
    value, a, b = best
    return value / (scale * scale) + noise_loss, a, b


# --- constants ----------------------------------------------------------------------------------
def _maximum(function, lo: float, hi: float, n_grid: int = 20001) -> float:
    """``max f`` on ``[lo, hi]``: a grid (with both ends and 0 if inside), refined around its best point."""
    from scipy import optimize

    grid = np.linspace(lo, hi, n_grid)
    if lo < 0.0 < hi:
        grid = np.union1d(grid, [0.0])
    values = function(grid)
    i = int(np.argmax(values))
    best = float(values[i])
    left, right = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    if right > left:
        result = optimize.minimize_scalar(
            lambda z: -float(function(np.array([z]))[0]), bounds=(left, right), method="bounded",
            options={"xatol": 1e-13},
        )  # fmt: skip
        best = max(best, -float(result.fun))
    return best


def _range(link: int, lo: float, hi: float) -> tuple[float, float]:
    """``(min f, max f)`` of a link on ``[lo, hi]``."""
    top = _maximum(lambda z: link_values(link, z), lo, hi)
    bottom = -_maximum(lambda z: -link_values(link, z), lo, hi)
    return bottom, top


def loss_scale(
    links: Sequence[str | int],
    radius_x: float,
    radius_w: float,
    target_link: str | int,
    max_target_norm: float,
    noise: float,
    noise_margin: float = 10.0,
) -> float:
    """Global loss scale ``B``: the largest ``|f_k(z) - y|`` the experts can meet.

    ``B = max_k max(max f_k - y_min, y_max - min f_k)``, with ``f_k`` ranging over
    ``z in [-r R_x, r R_x]`` (``r = radius_w``, ``R_x = radius_x``) and
    ``[y_min, y_max] = [min f_t - m sigma, max f_t + m sigma]``, ``f_t`` ranging over
    ``[-a R_x, a R_x]`` (``a = max_target_norm``, ``m = noise_margin``). Extremes come from a fine
    grid containing the interval ends (and 0), refined around the best grid point. Then
    ``(f_k(w . x) - y)^2 / B^2 <= 1`` whenever ``|eps| <= m sigma``: with ``m = 10`` the loss is
    clipped with probability of about ``1.5e-23`` per prediction.

    Parameters
    ----------
    links : sequence of str or int
        The experts' links.
    radius_x : float
        Radius ``R_x > 0`` of the sphere of ``x``.
    radius_w : float
        Radius ``r > 0`` of the experts' ball.
    target_link : str or int
        The target link ``f_t``.
    max_target_norm : float
        Largest ``||w*||`` (``>= 0``).
    noise : float
        Noise standard deviation ``sigma >= 0``.
    noise_margin : float
        Number ``m >= 0`` of standard deviations of noise covered.

    Returns
    -------
    float
        ``B > 0``.

    Examples
    --------
    >>> round(loss_scale(["affine"], 2.0, 1.0, "affine", 1.0, 0.0), 9)  # f in [-0.5, 1.5]
    2.0
    """
    if isinstance(links, (str, bytes)) or len(links) == 0:
        raise InputError(f"links must be a non-empty sequence of link names or indices, got {links!r}")
    indices = [link_index(link) for link in links]
    target_link = link_index(target_link)
    radius_x = validation.positive("radius_x", radius_x)
    radius_w = validation.positive("radius_w", radius_w)
    max_target_norm = validation.non_negative("max_target_norm", max_target_norm)
    noise = validation.non_negative("noise", noise)
    noise_margin = validation.non_negative("noise_margin", noise_margin)
    reach = max_target_norm * radius_x
    target_min, target_max = _range(target_link, -reach, reach)
    y_min = target_min - noise_margin * noise
    y_max = target_max + noise_margin * noise
    bound = radius_w * radius_x
    scale = 0.0
    for link in indices:
        f_min, f_max = _range(link, -bound, bound)
        scale = max(scale, f_max - y_min, y_max - f_min)
    if not scale > 0.0:
        raise InputError("loss_scale: the predictions and the targets coincide; B would be 0")
    return float(scale)


def lipschitz(link: str | int, bound: float) -> float:
    """Lipschitz constant ``L_f = max |f'(z)|`` of a link over ``[-bound, bound]``.

    Computed on a fine grid containing the ends and 0, refined around the best grid point.

    Parameters
    ----------
    link : str or int
        The link.
    bound : float
        Half-width ``r R_x >= 0`` of the interval.

    Returns
    -------
    float
        ``L_f``.

    Examples
    --------
    >>> lipschitz("affine", 2.0), lipschitz("cubic", 2.0)
    (0.5, 6.0)
    """
    link = link_index(link)
    bound = validation.non_negative("bound", bound)
    return _maximum(lambda z: np.abs(link_derivatives(link, z)), -bound, bound)


def is_convex_loss(
    link: str | int,
    bound: float,
    y_min: float,
    y_max: float,
    n_grid: int = 4001,
    tol: float = 1e-8,
) -> bool:
    """Whether ``z -> (f(z) - y)^2`` is convex on ``[-bound, bound]`` for every ``y in [y_min, y_max]``.

    The second derivative is ``2 (f'(z)^2 + (f(z) - y) f''(z))``; the condition is affine in ``y``,
    so it suffices to check ``y = y_min`` and ``y = y_max``. It is checked on ``n_grid`` points
    (plus 0), with ``f''`` from central differences of :func:`envs.links.link_derivative`
    (step ``1e-5``) and a tolerance ``tol``. For a convex link loss, ``w -> ell(w)`` is convex and
    projected OGD's regret bound ``1.5 G D sqrt(n)`` (docs/rates.md §4) holds; otherwise the
    rate is "heuristic".

    Parameters
    ----------
    link : str or int
        The link.
    bound : float
        Half-width ``r R_x >= 0`` of the interval.
    y_min, y_max : float
        Range of the targets ``y`` (``y_min <= y_max``).
    n_grid : int
        Number of grid points (``>= 2``).
    tol : float
        Tolerance ``>= 0`` on ``f'^2 + (f - y) f''``.

    Returns
    -------
    bool
        ``True`` if the condition holds on the grid.

    Examples
    --------
    >>> is_convex_loss("affine", 2.0, 0.0, 2.0), is_convex_loss("square", 2.0, 0.5, 1.5)
    (True, False)
    """
    link = link_index(link)
    bound = validation.non_negative("bound", bound)
    y_min, y_max = float(y_min), float(y_max)
    if not (math.isfinite(y_min) and math.isfinite(y_max) and y_min <= y_max):
        raise InputError(f"need finite y_min <= y_max, got {y_min!r}, {y_max!r}")
    n_grid = validation.integer("n_grid", n_grid, 2)
    tol = validation.non_negative("tol", tol)
    step = 1e-5
    z = np.union1d(np.linspace(-bound, bound, n_grid), [0.0])
    f = link_values(link, z)
    slope = link_derivatives(link, z)
    curvature = (link_derivatives(link, z + step) - link_derivatives(link, z - step)) / (2.0 * step)
    worst = min(
        float(np.min(slope**2 + (f - y_min) * curvature)), float(np.min(slope**2 + (f - y_max) * curvature))
    )
    return worst >= -tol
