"""Links and exact quantities of the "glm" instance: envs/links.py and envs/glm_math.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from envs.glm_math import (
    expected_loss,
    is_convex_loss,
    lipschitz,
    loss_scale,
    optimal_loss,
    plane_quadrature,
)
from envs.links import (
    LINK_NAMES,
    N_LINKS,
    link_derivative,
    link_derivatives,
    link_index,
    link_value,
    link_values,
)

LOG_1P_E = math.log(1.0 + math.e)
ATAN_HALF_PI = math.atan(math.pi / 2.0)

# The links written the obvious way (fine at moderate |z|).
FORMULAS = {
    "affine": lambda z: (z + 1.0) / 2.0,
    "square": lambda z: z**2,
    "exp": lambda z: (math.exp(z) - math.exp(-1.0)) / (math.e - math.exp(-1.0)),
    "logistic": lambda z: 1.0 / (1.0 + math.exp(-2.0 * z)),
    "cubic": lambda z: (z**3 + 1.0) / 2.0,
    "arctan": lambda z: (math.atan(math.pi * z / 2.0) + ATAN_HALF_PI) / (2.0 * ATAN_HALF_PI),
    "softplus": lambda z: math.log(1.0 + math.exp(z)) / LOG_1P_E,
    "power": lambda z: abs(z) ** 1.5 / 2.0,
    "cosine": lambda z: (1.0 - math.cos(math.pi * z)) / 2.0,
    "logcosh": lambda z: math.log(math.exp(z) + math.exp(-z)) / LOG_1P_E,
}

# The "glm" instance (docs/theory.md §7).
DIM, RADIUS_X, RADIUS_W, NOISE, TARGET = 5, 2.0, 1.0, 0.02, 9


@pytest.fixture(scope="module")
def scale() -> float:
    return loss_scale(range(N_LINKS), RADIUS_X, RADIUS_W, TARGET, 0.95, NOISE)


@pytest.fixture(scope="module")
def nodes():
    return plane_quadrature(DIM, RADIUS_X)


# --- links ------------------------------------------------------------------------------------
def test_link_names_and_order():
    assert LINK_NAMES == tuple(FORMULAS)
    assert N_LINKS == 10
    assert [link_index(name) for name in LINK_NAMES] == list(range(10))
    assert link_index(np.int64(4)) == 4


@pytest.mark.parametrize("name", LINK_NAMES)
def test_link_value_matches_formula(name):
    k = link_index(name)
    for z in (-1.9, -0.7, -0.25, 0.0, 0.3, 1.0, 1.6):
        assert link_value(k, z) == pytest.approx(FORMULAS[name](z), rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("name", LINK_NAMES)
def test_link_derivative_matches_central_differences(name):
    k, h = link_index(name), 1e-6
    for z in (-1.9, -0.7, -0.25, 0.0, 0.3, 1.0, 1.6):
        numeric = (link_value(k, z + h) - link_value(k, z - h)) / (2.0 * h)
        assert link_derivative(k, z) == pytest.approx(numeric, rel=1e-7, abs=1e-7)


def test_links_are_stable_for_large_arguments():
    for k in range(N_LINKS):
        for z in (-50.0, 50.0):
            assert math.isfinite(link_value(k, z)) and math.isfinite(link_derivative(k, z))
    # Overflow-free forms, against references that are exact at z = +-50.
    assert link_value(3, 50.0) == 1.0
    assert link_value(3, -50.0) == pytest.approx(math.exp(-100.0), rel=1e-14)
    assert link_derivative(3, -50.0) == pytest.approx(2.0 * math.exp(-100.0), rel=1e-14)
    assert link_value(6, 50.0) == pytest.approx((50.0 + math.exp(-50.0)) / LOG_1P_E, rel=1e-15)
    assert link_value(6, -50.0) == pytest.approx(math.exp(-50.0) / LOG_1P_E, rel=1e-14)
    for z in (-50.0, 50.0):
        assert link_value(9, z) == pytest.approx(50.0 / LOG_1P_E, rel=1e-15)
        assert link_derivative(9, z) == pytest.approx(math.copysign(1.0, z) / LOG_1P_E, rel=1e-15)
    # Where the naive formulas overflow, the stable ones stay finite and exact.
    for z in (-800.0, 800.0):
        assert link_value(3, z) == (1.0 if z > 0 else 0.0)
        assert link_value(6, z) == pytest.approx(max(z, 0.0) / LOG_1P_E, rel=1e-15, abs=0.0)
        assert link_value(9, z) == pytest.approx(800.0 / LOG_1P_E, rel=1e-15)
        for k in (3, 6, 9):
            assert math.isfinite(link_derivative(k, z))


@pytest.mark.parametrize("name", LINK_NAMES)
def test_array_helpers_are_bit_identical_to_the_kernels(name):
    z = np.random.default_rng(3).uniform(-3.0, 3.0, size=(4, 5))
    k = link_index(name)
    values, slopes = link_values(name, z), link_derivatives(k, z)
    assert values.shape == slopes.shape == (4, 5)
    assert np.array_equal(values, [[link_value(k, float(v)) for v in row] for row in z])
    assert np.array_equal(slopes, [[link_derivative(k, float(v)) for v in row] for row in z])


def test_the_search_grid_sums_the_values_as_the_gradient_kernel_does():
    """The optimal loss's grid computes the values alone: the same sums, bit for bit, as the kernel
    that also computes the gradient (which the refinement uses), for every link."""
    from envs.glm_math import _mean_squared_gap, _mean_squared_value

    x1, x2, weights = plane_quadrature(5, 2.0, 6, 12)
    rng = np.random.default_rng(7)
    alpha, beta = rng.uniform(-1.0, 1.0, 40), rng.uniform(0.0, 1.0, 40)
    target = link_values("logcosh", 0.8 * x1)
    for k in range(N_LINKS):
        values, _, _ = _mean_squared_gap(k, alpha, beta, x1, x2, weights, target)
        assert np.array_equal(_mean_squared_value(k, alpha, beta, x1, x2, weights, target), values), k


@pytest.mark.parametrize("bad", ["relu", "Affine", 10, -1, 2.0, True, None])
def test_link_index_rejects_unknown_links(bad):
    with pytest.raises(ValueError, match="allowed: 0 'affine'.*9 'logcosh'"):
        link_index(bad)
    with pytest.raises(ValueError):
        link_values(bad, [0.0])


def test_kernels_return_nan_for_an_unknown_index():
    assert math.isnan(link_value(10, 0.5)) and math.isnan(link_derivative(-1, 0.5))


# --- quadrature -------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [2, 3, 5, 10])
@pytest.mark.parametrize("radius", [1.0, 2.0])
def test_quadrature_matches_sphere_moments(dim, radius):
    x1, x2, w = plane_quadrature(dim, radius)
    assert x1.shape == x2.shape == w.shape == ((48,) if dim == 2 else (24 * 48,))
    assert np.all(w > 0.0) and w.sum() == pytest.approx(1.0, abs=1e-14)
    assert np.all(x1**2 + x2**2 <= radius**2 * (1.0 + 1e-14))
    second, fourth = radius**2 / dim, radius**4 / (dim * (dim + 2))
    for value, exact in [
        (w @ x1**2, second),
        (w @ x2**2, second),
        (w @ x1**4, 3.0 * fourth),
        (w @ x2**4, 3.0 * fourth),
        (w @ (x1**2 * x2**2), fourth),
    ]:
        assert value == pytest.approx(exact, rel=1e-12)
    for odd in (x1, x2, x1 * x2, x1**3, x1**2 * x2, x1 * x2**3, x1**5):
        assert abs(w @ odd) < 1e-13
    if dim == 2:
        assert np.allclose(x1**2 + x2**2, radius**2, rtol=1e-14)


def test_quadrature_matches_a_higher_moment_of_the_beta_law():
    # E (x1^2 + x2^2)^3 = R^6 E u^3 with u ~ Beta(1, (d - 2) / 2).
    dim, radius = 7, 1.5
    x1, x2, w = plane_quadrature(dim, radius)
    b = (dim - 2) / 2.0
    exact = radius**6 * (1.0 * 2.0 * 3.0) / ((1.0 + b) * (2.0 + b) * (3.0 + b))
    assert w @ (x1**2 + x2**2) ** 3 == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dim": 1, "radius": 1.0},
        {"dim": 0, "radius": 1.0},
        {"dim": 2.5, "radius": 1.0},
        {"dim": 5, "radius": 0.0},
        {"dim": 5, "radius": -2.0},
        {"dim": 5, "radius": float("nan")},
        {"dim": 5, "radius": 2.0, "n_radial": 0},
        {"dim": 5, "radius": 2.0, "n_angular": 0},
    ],
)
def test_quadrature_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        plane_quadrature(**kwargs)


# --- expected loss ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("link", "alpha", "beta"), [(0, 0.3, 0.6), (2, -0.5, 0.4), (7, 0.9, 0.2), (8, 0.7, 0.1)]
)
def test_expected_loss_matches_monte_carlo(nodes, scale, link, alpha, beta):
    rng = np.random.default_rng(20250101 + link)
    n, target_norm = 1_000_000, 0.8
    basis, _ = np.linalg.qr(rng.standard_normal((DIM, 2)))  # random orthonormal e1, e2
    w_star = target_norm * basis[:, 0]
    w = alpha * basis[:, 0] + beta * basis[:, 1]
    g = rng.standard_normal((n, DIM))
    x = RADIUS_X * g / np.linalg.norm(g, axis=1, keepdims=True)
    y = link_values(TARGET, x @ w_star) + NOISE * rng.standard_normal(n)
    losses = (link_values(link, x @ w) - y) ** 2 / scale**2
    assert losses.max() <= 1.0  # no clipping with this scale
    exact = expected_loss(link, alpha, beta, TARGET, target_norm, nodes, NOISE, scale)
    assert isinstance(exact, float)
    error = losses.std() / math.sqrt(n)
    assert abs(losses.mean() - exact) < 5.0 * error


def test_expected_loss_is_vectorised(nodes, scale):
    alpha = np.linspace(-0.9, 0.9, 4)[:, None]
    beta = np.array([0.0, 0.2, 0.4])
    values = expected_loss("cosine", alpha, beta, "logcosh", 0.8, nodes, NOISE, scale)
    assert values.shape == (4, 3)
    for i in range(4):
        for j in range(3):
            single = expected_loss(8, float(alpha[i, 0]), float(beta[j]), 9, 0.8, nodes, NOISE, scale)
            assert values[i, j] == pytest.approx(single, rel=1e-14)


@pytest.mark.parametrize(
    "change",
    [
        {"beta": -0.1},
        {"beta": float("nan")},
        {"link": "relu"},
        {"target_link": 11},
        {"target_norm": -0.5},
        {"noise": -0.01},
        {"scale": 0.0},
        {"nodes": (np.zeros(3), np.zeros(2), np.ones(3))},
        {"nodes": (np.zeros(3), np.zeros(3))},
    ],
)
def test_expected_loss_rejects_bad_arguments(nodes, change):
    kwargs = {
        "link": 0, "alpha": 0.1, "beta": 0.2, "target_link": 9, "target_norm": 0.8,
        "nodes": nodes, "noise": NOISE, "scale": 2.0,
    }  # fmt: skip
    kwargs.update(change)
    with pytest.raises(ValueError):
        expected_loss(**kwargs)


# --- optimal loss -----------------------------------------------------------------------------
def test_optimal_loss_of_the_target_link_is_the_noise(nodes, scale):
    value, alpha, beta = optimal_loss(TARGET, TARGET, 0.8, RADIUS_W, nodes, NOISE, scale)
    assert (value, alpha, beta) == (NOISE**2 / scale**2, 0.8, 0.0)
    assert expected_loss(TARGET, alpha, beta, TARGET, 0.8, nodes, NOISE, scale) == pytest.approx(
        value, rel=1e-14
    )


def _random_half_disk(rng: np.random.Generator, n: int, radius: float) -> tuple[np.ndarray, np.ndarray]:
    rho = radius * np.sqrt(rng.uniform(size=n))
    rho[: n // 4] = radius  # a quarter on the boundary circle, where optima often lie
    phi = rng.uniform(0.0, np.pi, size=n)
    return rho * np.cos(phi), np.abs(rho * np.sin(phi))


@pytest.mark.parametrize("link", range(N_LINKS - 1))
def test_optimal_loss_of_other_links_is_larger_and_not_beaten(nodes, scale, link):
    value, alpha, beta = optimal_loss(link, TARGET, 0.8, RADIUS_W, nodes, NOISE, scale)
    assert value > NOISE**2 / scale**2 * 1.01
    assert beta >= 0.0 and alpha**2 + beta**2 <= RADIUS_W**2 * (1.0 + 1e-12)
    assert expected_loss(link, alpha, beta, TARGET, 0.8, nodes, NOISE, scale) == pytest.approx(
        value, rel=1e-12
    )
    a, b = _random_half_disk(np.random.default_rng(link), 3000, RADIUS_W)
    assert expected_loss(link, a, b, TARGET, 0.8, nodes, NOISE, scale).min() >= value * (1.0 - 1e-10)


def test_optimal_loss_of_an_out_of_reach_target_is_searched(nodes, scale):
    # ||w*|| = 0.95 > r = 0.5: the target link cannot reach w*, so L* exceeds the noise.
    value, alpha, beta = optimal_loss(TARGET, TARGET, 0.95, 0.5, nodes, NOISE, scale)
    assert value > NOISE**2 / scale**2 * 1.01
    a, b = _random_half_disk(np.random.default_rng(7), 3000, 0.5)
    assert expected_loss(TARGET, a, b, TARGET, 0.95, nodes, NOISE, scale).min() >= value * (1.0 - 1e-10)


def test_optimal_loss_rejects_bad_arguments(nodes):
    with pytest.raises(ValueError):
        optimal_loss(0, 9, 0.8, 0.0, nodes, NOISE, 2.0)
    with pytest.raises(ValueError):
        optimal_loss(0, 9, 0.8, 1.0, nodes, NOISE, 2.0, n_starts=0)
    with pytest.raises(ValueError):
        optimal_loss("sigmoid", 9, 0.8, 1.0, nodes, NOISE, 2.0)


# --- constants --------------------------------------------------------------------------------
def test_loss_scale_value_and_bound(scale):
    # The cubic link at z = -2 (-3.5) against the largest target f_9(0.95 * 2) + 10 sigma.
    top = math.log(math.exp(1.9) + math.exp(-1.9)) / LOG_1P_E + 10 * NOISE
    assert scale == pytest.approx(top + 3.5, rel=1e-12)
    rng = np.random.default_rng(11)
    z = rng.uniform(-RADIUS_W * RADIUS_X, RADIUS_W * RADIUS_X, 20_000)
    target = link_values(TARGET, rng.uniform(-0.95 * RADIUS_X, 0.95 * RADIUS_X, 20_000))
    y = target + np.clip(NOISE * rng.standard_normal(20_000), -10 * NOISE, 10 * NOISE)
    for k in range(N_LINKS):
        assert np.abs(link_values(k, z) - y).max() <= scale


def test_loss_scale_of_a_single_link():
    # f = (z + 1) / 2 on [-2, 2] is in [-0.5, 1.5]; targets f(z) on [-1, 1] are in [0, 1], +- 0.1.
    assert loss_scale(["affine"], 2.0, 1.0, "affine", 0.5, 0.01) == pytest.approx(1.6, rel=1e-12)


@pytest.mark.parametrize(
    "args",
    [
        ([], 2.0, 1.0, 9, 0.95, NOISE),
        ("affine", 2.0, 1.0, 9, 0.95, NOISE),
        ([0, 12], 2.0, 1.0, 9, 0.95, NOISE),
        ([0], 0.0, 1.0, 9, 0.95, NOISE),
        ([0], 2.0, -1.0, 9, 0.95, NOISE),
        ([0], 2.0, 1.0, 9, -0.1, NOISE),
        ([0], 2.0, 1.0, 9, 0.95, -NOISE),
    ],
)
def test_loss_scale_rejects_bad_arguments(args):
    with pytest.raises(ValueError):
        loss_scale(*args)


def test_lipschitz_constants():
    assert lipschitz("affine", 2.0) == 0.5 and lipschitz("affine", 0.3) == 0.5
    for bound in (0.5, 1.0, 2.0):
        assert lipschitz("cubic", bound) == pytest.approx(1.5 * bound**2, rel=1e-14)
    assert lipschitz("logistic", 2.0) == pytest.approx(0.5, rel=1e-12)
    assert lipschitz("cosine", 2.0) == pytest.approx(math.pi / 2.0, rel=1e-12)
    assert lipschitz("cosine", 0.3) == pytest.approx(math.pi / 2.0 * math.sin(0.3 * math.pi), rel=1e-12)
    assert lipschitz("power", 2.0) == pytest.approx(0.75 * math.sqrt(2.0), rel=1e-14)
    assert lipschitz("square", 0.0) == 0.0
    with pytest.raises(ValueError):
        lipschitz("affine", -1.0)


def test_convexity_of_the_link_losses():
    assert is_convex_loss("affine", 2.0, -5.0, 5.0)
    # (z^2 - y)^2 has second derivative 12 z^2 - 4 y: convex exactly when y <= 0.
    assert is_convex_loss("square", 2.0, -1.0, 0.0)
    assert not is_convex_loss("square", 2.0, -1.0, 0.01)
    # (|z|^1.5 / 2 - y)^2 has a concave cusp at 0 when y > 0.
    assert not is_convex_loss("power", 2.0, 0.1, 0.2)
    # The glm instance: only the affine link gives a convex loss on [-2, 2].
    y_min = link_value(TARGET, 0.0) - 10 * NOISE
    y_max = link_value(TARGET, 1.9) + 10 * NOISE
    assert [is_convex_loss(k, 2.0, y_min, y_max) for k in range(N_LINKS)] == [True] + [False] * 9
    with pytest.raises(ValueError):
        is_convex_loss("affine", 2.0, 1.0, 0.0)
    with pytest.raises(ValueError):
        is_convex_loss("affine", -2.0, 0.0, 1.0)
