"""Bandit convex optimisation (Flaxman, Kalai and McMahan 2005) as a compiled expert family.

Each expert minimises the stochastic convex losses of :mod:`envs.convex` over its own domain, the
ball ``K`` of radius ``R`` in the first ``d`` coordinates, seeing only the loss at the one point it
plays: gradient descent without a gradient. At its own round ``j`` (its update count plus one),
with schedules ``a_j`` (shrink), ``delta_j`` (perturbation) and ``eta_j`` (step) and ``w_1 = 0``:

* its centre is ``x_j = (1 - a_j) w_j``, a point of the shrunk domain ``(1 - a_j) K``;
* it plays ``y_j = x_j + delta_j u_j``, ``u_j`` uniform on the unit sphere of ``R^d`` (``d``
  normals of :mod:`mlcb.kernels.random` at counters ``(j, 0 .. d-1)`` of its own key, normalised), and
  suffers ``l(y_j, xi_t)``: the training loss M-LCB averages;
* it forms FKM's one-point gradient estimate ``g_j = (d / delta_j) l(y_j, xi_t) u_j``, an unbiased
  estimate of the gradient of the smoothed loss ``L^_j(x) = E L(x + delta_j v)`` (``v`` uniform
  in the unit ball), and steps ``w_{j+1} = Proj_K(w_j - eta_j (1 - a_j) g_j)``.

For a constant ``a`` this is FKM's update ``x <- Proj_{(1-a)K}(x - eta' g)`` (``eta' = eta
(1 - a)^2``); carrying ``w`` rather than ``x`` lets the shrink decay without moving the
comparator (docs/rates.md §9). ``delta_j <= a_j R`` keeps ``y_j`` in ``K``.

Two cases, by what is assumed of the expected loss ``L`` (``p = perturbation * shrink``):

``"lipschitz"`` (``alpha = 3/4``; ``L`` is ``L_lip``-Lipschitz on ``K``)
    ``a_j = shrink j^(-1/4)``, ``delta_j = perturbation a_j R``,
    ``eta_j = step_scale sqrt(3) p R^2 / d j^(-3/4)``.
``"bounded"`` (``alpha = 5/6``; ``L`` convex with values in ``[0, 1]``, nothing more)
    ``a_j = shrink j^(-1/6)``, ``delta_j = perturbation a_j R j^(-1/6)``,
    ``eta_j = step_scale sqrt(10/3) p R^2 / d j^(-5/6)``.

Rate. FKM bound the *expected* regret; docs/rates.md §9 derives an anytime high-probability
bound on ``R(n) = sum of the training losses - n L_k*`` with every constant (the one-point
estimates are bounded by ``d / delta_j``, so the martingale of the gradient-descent analysis
obeys Freedman's inequality): with ``lam = L_lip R`` and ``l_n = log(4 n^2 / delta')``,

    ``U(n, delta') = min(n, rate_scale (OGD + SMOOTH + sqrt(2 V_n l_n) + (2/3) b_n l_n + sqrt((n/2) l_n)))``

* Lipschitz: ``OGD = (2/sqrt 3) (d/p) (1/s + s) n^(3/4)``,
  ``SMOOTH = (4/3) (lam p + shrink min(1, lam)) n^(3/4)``,
  ``V_n = (4d/p^2) (2/3) ((n+1)^(3/2) - 1)``, ``b_n = 2 min(lam, d n^(1/4) / (2p)) + 2 d n^(1/4) / p``;
* bounded: ``OGD = sqrt(6/5) (d/p) (1/s + s) n^(5/6)``,
  ``SMOOTH = (6/5) (perturbation (c + d/(d+1)) + shrink) n^(5/6)`` with
  ``c = min(1, 1 / ((d+1)(1 - perturbation)))`` (1 when ``perturbation = 1``),
  ``V_n = (4d/p^2) (3/5) ((n+1)^(5/3) - 1)``, ``b_n = 3 d n^(1/3) / p``,

``s = step_scale``. The rate holds for every value of the schedule constants (it is computed with
the actual ones); an expert is heuristic only when ``rate_scale`` is not 1, or in the Lipschitz
case on a stream whose expected loss has no finite Lipschitz constant.

Smoothing: the deployed decision is built from the *centres* ``x_j`` of the training rounds, not
from the played points: by convexity ``L(x_j) <= E_j L(y_j)`` (the mean of ``L`` over the sphere
around ``x_j``), so the centres' losses are bounded by the same upper confidence bound that
bounds the played points', with no exploration paid at deployment (a deployed decision does not
learn). ``"average"`` (the default) deploys the average of the past centres (convex losses,
Jensen), ``"uniform"`` one past centre drawn uniformly (keeps them all: memory grows with the
horizon, and a pool trained past the horizon it was built for is refused,
:data:`agents.family.UNIFORM_FULL`), ``"last"`` the current centre ``x_{n+1}`` (outside the
theory). An expert deployed before its first training round deploys its current centre, the
origin.

Examples
--------
>>> import agents
>>> expert = agents.make("bco", dim=2)
>>> expert.family.name, expert.alpha, expert.heuristic
('bco', 0.75, False)
>>> agents.make("bco-bounded").alpha
0.8333333333333334
>>> round(float(bco_rate(10**6, 0.005, "lipschitz", 2, lipschitz=0.5)[0]) / 10**6, 4)
0.8003
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from agents.family import UNIFORM_FULL, CompiledFamily, overflowed_norm, rate_values
from envs.convex import ConvexBanditEnv, expected_loss_at, loss_at
from mlcb import validation
from mlcb.contracts import BuildContext
from mlcb.kernels import DEPLOY_SLOTS, implements, kernel, smoothing
from mlcb.kernels.random import normal, uniform
from mlcb.validation import InputError

__all__ = [
    "BCO",
    "BCOFamily",
    "BCOParams",
    "BCOState",
    "BCO_FAMILY",
    "BOUNDED",
    "CASES",
    "LIPSCHITZ",
    "bco_rate",
    "rate",
    "schedule",
]

LIPSCHITZ, BOUNDED = 0, 1
#: The analyses, by name; the index is the kernels' case code.
CASES = ("lipschitz", "bounded")
#: ``eta_j``'s constant over ``p R^2 / d`` (it minimises the rate's gradient-descent term).
_STEP = (math.sqrt(3.0), math.sqrt(10.0 / 3.0))


class BCOParams(NamedTuple):
    """What the kernels read of a BCO pool (never written during a run)."""

    case: np.ndarray  # (K,) int64: LIPSCHITZ or BOUNDED
    dim: np.ndarray  # (K,) int64: d, the expert's coordinates
    radius: np.ndarray  # (K,) float64: R, the radius of its ball
    shrink: np.ndarray  # (K,) float64: a_1, the shrink schedule's constant
    perturbation: np.ndarray  # (K,) float64: delta_1 / (a_1 R)
    step: np.ndarray  # (K,) float64: eta_1, the step schedule's constant
    step_scale: np.ndarray  # (K,) float64
    lam: np.ndarray  # (K,) float64: L_lip R (inf when unknown)
    rate_scale: np.ndarray  # (K,) float64
    keys: np.ndarray  # (K,) uint64: each expert's random stream
    delta_prime: float  # delta / (2K): the level at which the policy reads the rates
    smoothing: int  # mlcb.kernels.smoothing code of the deploy wrapper


class BCOState(NamedTuple):
    """The learning state of a BCO pool (written by ``train`` only)."""

    weights: np.ndarray  # (K, d_max) w_j, the unshrunk iterate
    centre_sums: np.ndarray  # (K, d_max) the sum of the centres x_1 .. x_n of past training rounds
    direction: np.ndarray  # (K, d_max) scratch: u_j
    point: np.ndarray  # (K, d_max) scratch: y_j
    steps: np.ndarray  # (K,) int64: n, updates so far
    history: np.ndarray  # (K, H, d_max) every past centre (for "uniform"), H = 0 otherwise


# --- schedules and rate ----------------------------------------------------------------------------
@kernel
def schedule(case, shrink, perturbation, step, radius, j):
    """``(a_j, delta_j, eta_j)`` at the expert's own round ``j``."""
    if case == LIPSCHITZ:
        a = shrink * j**-0.25
        return a, perturbation * a * radius, step * j**-0.75
    a = shrink * j ** (-1.0 / 6.0)
    return a, perturbation * a * radius * j ** (-1.0 / 6.0), step * j ** (-5.0 / 6.0)


@kernel
def rate(case, d, lam, shrink, perturbation, step_scale, rate_scale, n, delta_prime):
    """``U(n, delta')`` of a BCO expert (docs/rates.md §9), capped at ``n``; 0 for ``n < 1``.

    ``lam`` is ``L_lip R`` (read in the Lipschitz case only), ``d`` the dimension; the other
    arguments are the expert's fields.
    """
    if n < 1:
        return 0.0
    p = perturbation * shrink
    s = step_scale
    ell = math.log(4.0 * n * n / delta_prime)
    if case == LIPSCHITZ:
        power = n**0.75
        quarter = n**0.25
        gradient = (2.0 / math.sqrt(3.0)) * (d / p) * (1.0 / s + s) * power
        smooth = (4.0 / 3.0) * (lam * p + shrink * min(1.0, lam)) * power
        variance = (4.0 * d / (p * p)) * (2.0 / 3.0) * ((n + 1.0) ** 1.5 - 1.0)
        bound = 2.0 * min(lam, d * quarter / (2.0 * p)) + 2.0 * d * quarter / p
    else:
        power = n ** (5.0 / 6.0)
        inner = 1.0
        if perturbation < 1.0:
            inner = min(1.0, 1.0 / ((d + 1.0) * (1.0 - perturbation)))
        gradient = math.sqrt(6.0 / 5.0) * (d / p) * (1.0 / s + s) * power
        smooth = (6.0 / 5.0) * (perturbation * (inner + d / (d + 1.0)) + shrink) * power
        variance = (4.0 * d / (p * p)) * (3.0 / 5.0) * ((n + 1.0) ** (5.0 / 3.0) - 1.0)
        bound = 3.0 * d * n ** (1.0 / 3.0) / p
    martingale = math.sqrt(2.0 * variance * ell) + (2.0 / 3.0) * bound * ell
    sampling = math.sqrt(0.5 * n * ell)
    return min(float(n), rate_scale * (gradient + smooth + martingale + sampling))


def bco_rate(
    n: Any,
    delta_prime: float,
    case: str = "lipschitz",
    dim: int = 2,
    lipschitz: float = math.inf,
    radius: float = 1.0,
    shrink: float = 1.0,
    perturbation: float = 1.0,
    step_scale: float = 1.0,
    rate_scale: float = 1.0,
) -> np.ndarray:
    """``U(n, delta')`` of a BCO expert at the counts ``n`` (docs/rates.md §9), capped at ``n``.

    Parameters
    ----------
    n : int or array_like of int
        Update counts, each ``>= 1``.
    delta_prime : float
        The confidence level, in ``(0, 1)``.
    case : {"lipschitz", "bounded"}
        Which analysis; ``"lipschitz"`` needs a finite ``lipschitz``.
    dim : int
        ``d``, the expert's dimension.
    lipschitz : float
        The Lipschitz constant of the expected loss on the expert's ball, ``>= 0``; ``inf`` (the
        default: unknown) only in the bounded case, which does not read it.
    radius : float
        ``R``, the radius of the ball.
    shrink, perturbation, step_scale, rate_scale : float
        The expert's fields (:class:`BCO`).

    Returns
    -------
    ndarray
        One value per count.

    Examples
    --------
    >>> bco_rate([1, 100], 0.005, "bounded", 2).round(3).tolist()
    [1.0, 100.0]
    """
    counts = np.atleast_1d(np.asarray(n))
    if counts.dtype.kind not in "iu" or np.any(counts < 1):
        raise InputError(f"n must hold integers >= 1, got {n!r}")
    validation.open_unit("delta_prime", delta_prime)
    expert = BCO(
        case=case,
        dim=dim,
        radius=radius,
        shrink=shrink,
        perturbation=perturbation,
        step_scale=step_scale,
        rate_scale=rate_scale,
    )
    # (0 is a Lipschitz constant: a flat expected loss, as the family computes it on such a stream)
    known = validation.is_real(lipschitz) and lipschitz >= 0
    if not (known or (expert.case == "bounded" and lipschitz == math.inf)):
        allowed = "a finite number >= 0" + (
            " (or inf in the bounded case)" if expert.case == "lipschitz" else " or inf"
        )
        raise InputError(f"lipschitz must be {allowed}, got {validation.shown(lipschitz)}")
    lam = float(lipschitz) * float(radius) if known else math.inf
    return expert.rate_function(counts.astype(np.int64), lam, float(delta_prime))


# --- the kernels the engine calls ------------------------------------------------------------------
@implements("train", BCOParams)
@kernel
def _train(params, state, env_params, env_state, k, t):
    d = params.dim[k]
    j = state.steps[k] + 1
    a, delta, eta = schedule(
        params.case[k], params.shrink[k], params.perturbation[k], params.step[k], params.radius[k], j
    )
    key = params.keys[k]
    squared = 0.0
    for i in range(d):
        g = normal(key, j, i)
        state.direction[k, i] = g
        squared += g * g
    norm = math.sqrt(squared)
    keep = state.history.shape[1] > 0
    if keep and j > state.history.shape[1]:  # (a session driven past its horizon)
        raise InputError(UNIFORM_FULL)
    for i in range(d):
        u = state.direction[k, i] / norm if norm > 0.0 else (1.0 if i == 0 else 0.0)
        state.direction[k, i] = u
        x = (1.0 - a) * state.weights[k, i]
        state.centre_sums[k, i] += x
        if keep:
            state.history[k, j - 1, i] = x
        state.point[k, i] = x + delta * u
    loss = loss_at(env_params, env_state, state.point[k], 1.0, d)
    coefficient = eta * (1.0 - a) * (d / delta) * loss
    squared = 0.0
    for i in range(d):
        w = state.weights[k, i] - coefficient * state.direction[k, i]
        state.weights[k, i] = w
        squared += w * w
    radius = params.radius[k]
    if squared > radius * radius:
        norm = math.sqrt(squared)
        if norm == math.inf:  # a step so large that the squares overflow
            norm = overflowed_norm(state.weights[k : k + 1, :d])
        shrink = radius / norm
        for i in range(d):
            state.weights[k, i] *= shrink
    state.steps[k] = j
    value = rate(
        params.case[k],
        d,
        params.lam[k],
        params.shrink[k],
        params.perturbation[k],
        params.step_scale[k],
        params.rate_scale[k],
        j,
        params.delta_prime,
    )
    return loss, value


@implements("deploy", BCOParams)
@kernel
def _deploy(params, state, env_params, env_state, k, t, key, slot):
    d = params.dim[k]
    n = state.steps[k]
    if n > 0 and params.smoothing == smoothing.AVERAGE:
        vector, scale = state.centre_sums[k], 1.0 / n
    elif n > 0 and params.smoothing == smoothing.UNIFORM:
        drawn = min(int(uniform(key, t, slot * DEPLOY_SLOTS) * n), n - 1)
        vector, scale = state.history[k, drawn], 1.0
    else:  # "last", or never trained: the current centre
        a, _, _ = schedule(
            params.case[k], params.shrink[k], params.perturbation[k], params.step[k], params.radius[k], n + 1
        )
        vector, scale = state.weights[k], 1.0 - a
    return loss_at(env_params, env_state, vector, scale, d), expected_loss_at(env_params, vector, scale, d)


# --- the family --------------------------------------------------------------------------------------
class BCOFamily(CompiledFamily):
    """BCO experts (:class:`BCO`) as an :class:`mlcb.contracts.ExpertFamily`; its one instance is
    :data:`BCO_FAMILY`.

    A pool of any size runs on a convex stream (:class:`envs.convex.ConvexBanditEnv`); each
    expert's domain must lie in the stream's (``dim <= env.dim``, ``radius <= env.radius``).
    ``L_k*`` is the least expected loss on the expert's ball (:meth:`ConvexBanditEnv.optimal_loss_of`).

    Examples
    --------
    >>> import envs
    >>> env = envs.make("mlcb/ConvexBandit-v0")
    >>> pool = [BCO(dim=1), BCO(dim=4, case="bounded"), BCO(rate_scale=0.5)]
    >>> BCO_FAMILY.heuristic(pool, env)
    [False, False, True]
    >>> BCO_FAMILY.optimal_losses(pool, env, env.build(0, 0, 100)[0]).round(3).tolist()
    [0.3, 0.226, 0.25]
    """

    name = "bco"
    #: Smoothing wrappers (:mod:`mlcb.kernels.smoothing`), the default first.
    smoothing = ("average", "uniform", "last")

    def check_environment(self, experts: list, env: Any) -> None:
        """A ``ValueError`` unless ``env`` is a convex stream whose ball holds every expert's domain."""
        if not isinstance(env, ConvexBanditEnv):
            raise InputError(
                f"experts: BCO experts need a convex stream (mlcb/ConvexBandit-v0), got {type(env).__name__}"
            )
        for k, expert in enumerate(experts):
            if getattr(type(expert), "family", None) is not self:
                raise InputError(f"experts[{k}]: {expert!r} is not a bco expert")
            if expert.dim > env.dim or expert.radius > env.radius * (1.0 + 1e-12):
                raise InputError(
                    f"experts[{k}]: dim must be at most {env.dim} and radius at most {env.radius} (the "
                    f"stream's ball), got dim={expert.dim}, radius={expert.radius}"
                )

    def optimal_losses(self, experts: list, env: Any, env_params: Any) -> np.ndarray:
        """``L_k*`` of every expert: the least expected loss on its ball."""
        return np.array([env.optimal_loss_of(e.dim, e.radius) for e in experts], dtype=float)

    def rate_input(self, expert: Any, env: Any, k: int) -> float:
        """What the expert's rate reads of the stream: ``L_lip R`` on its ball (:meth:`_lam`)."""
        return self._lam(expert, env)

    def heuristic(self, experts: list, env: Any) -> list[bool]:
        """Whether each expert's rate is outside the theory on ``env``: a rescaled rate, or the
        Lipschitz case where the expected loss has no finite Lipschitz constant."""
        return [
            expert.heuristic or (expert.case == "lipschitz" and not math.isfinite(self._lam(expert, env)))
            for expert in experts
        ]

    def build_pool(self, context: BuildContext) -> tuple[BCOParams, BCOState]:
        """Kernel parameters and fresh state of the pool on one replication."""
        experts, env = context.experts, context.env
        d_max = max(int(e.dim) for e in experts)
        params = self.kernel_params(
            BCOParams,
            context,
            case=np.array([CASES.index(e.case) for e in experts], dtype=np.int64),
            dim=context.column("dim", np.int64),
            lam=np.array([self._lam(e, env) for e in experts], dtype=float),
        )
        depth = context.horizon + 2 if context.smoothing == "uniform" else 0
        state = BCOState(
            weights=context.zeros(d_max),
            centre_sums=context.zeros(d_max),
            direction=context.zeros(d_max),
            point=context.zeros(d_max),
            steps=context.zeros(dtype=np.int64),
            history=context.zeros(depth, d_max),
        )
        return params, state

    @staticmethod
    def _lam(expert: Any, env: Any) -> float:
        """``L_lip R`` of an expert on ``env`` (``inf`` when the stream has no finite constant)."""
        return float(env.lipschitz(expert.dim, expert.radius)) * expert.radius

    def __repr__(self) -> str:
        return "agents.bco.BCO_FAMILY"


#: The BCO family (:class:`BCOFamily`).
BCO_FAMILY = BCOFamily()


#: The largest ``radius`` and ``step_scale`` a BCO expert takes, and the smallest radius of its
#: first perturbation, ``perturbation * shrink * radius``: within them the one-point gradient
#: estimate ``d / delta_j`` and the step ``eta_j (1 - a_j) d / delta_j`` (about ``step_scale R /
#: sqrt(j)``) stay finite at every round of the longest horizon. Beyond them they overflow,
#: ``inf * 0`` makes the iterate ``nan``, and the stream, which clamps its losses to [0, 1],
#: charges the expert 0 every round: silently, an expert that looks perfect.
LARGEST = validation.LARGEST
SMALLEST_PERTURBATION = 1.0 / validation.LARGEST


def _in_unit_interval(name: str, value: Any) -> float:
    if not (validation.is_real(value) and 0.0 < value <= 1.0):
        raise InputError(f"{name} must be a number in (0, 1], got {value!r}")
    return float(value)


@dataclass(frozen=True)
class BCO:
    """Flaxman, Kalai and McMahan's bandit gradient descent on a ball, anytime (see :mod:`agents.bco`).

    Parameters
    ----------
    case : {"lipschitz", "bounded"}
        Which analysis sets the schedules and the rate: ``alpha = 3/4`` or ``5/6``.
    dim : int
        ``d``, the expert's coordinates (the first ``d`` of the stream's).
    radius : float
        ``R`` in ``(0, 1e100]``, the radius of its ball.
    shrink : float
        ``a_1`` in ``(0, 1]``: the shrink schedule is ``a_j = shrink j^(-1/4)`` or ``j^(-1/6)``.
    perturbation : float
        In ``(0, 1]``: ``delta_j = perturbation a_j R`` (times ``j^(-1/6)`` in the bounded case).
        The first radius ``delta_1 = perturbation shrink R`` must be at least ``1e-100``
        (:data:`SMALLEST_PERTURBATION`): the gradient estimate divides by ``delta_j``.
    step_scale : float
        In ``(0, 1e100]``: multiplier of the step schedule (the rate accounts for it).
    rate_scale : float
        Multiplier of the rate; anything but 1 makes the expert heuristic.

    Examples
    --------
    >>> BCO(case="bounded", dim=3).alpha
    0.8333333333333334
    """

    case: str = "lipschitz"
    dim: int = 2
    radius: float = 1.0
    shrink: float = 1.0
    perturbation: float = 1.0
    step_scale: float = 1.0
    rate_scale: float = 1.0

    family: ClassVar[BCOFamily] = BCO_FAMILY

    def __post_init__(self) -> None:
        if self.case not in CASES:
            raise InputError(f"case must be one of {CASES}, got {self.case!r}")
        validation.integer("dim", self.dim)
        validation.positive("radius", self.radius)
        _in_unit_interval("shrink", self.shrink)
        _in_unit_interval("perturbation", self.perturbation)
        validation.positive("step_scale", self.step_scale)
        validation.positive("rate_scale", self.rate_scale)
        for name in ("radius", "step_scale"):
            value = getattr(self, name)
            if value > LARGEST:
                raise InputError(
                    f"{name} must be a finite number in (0, {LARGEST:g}], got {value!r}: beyond it the "
                    "expert's steps overflow"
                )
        first = float(self.perturbation) * float(self.shrink) * float(self.radius)
        if first < SMALLEST_PERTURBATION:
            raise InputError(
                f"perturbation * shrink * radius (the first perturbation's radius) must be at least "
                f"{SMALLEST_PERTURBATION:g}, got {first!r}: the gradient estimate divides by it"
            )

    @property
    def alpha(self) -> float:
        """The regret exponent: 3/4 (Lipschitz) or 5/6 (bounded)."""
        return 0.75 if self.case == "lipschitz" else 5.0 / 6.0

    @property
    def rate_exponent(self) -> float:
        """The exponent of the rate's growth in ``n`` (what the theory figures read): :attr:`alpha`."""
        return self.alpha

    @property
    def heuristic(self) -> bool:
        """Whether the rate is rescaled (on a stream, :meth:`BCOFamily.heuristic` decides)."""
        return self.rate_scale != 1.0

    @property
    def step(self) -> float:
        """``eta_1``, the step schedule's constant: ``step_scale c p R^2 / d`` with ``c = sqrt(3)``
        (Lipschitz) or ``sqrt(10/3)`` (bounded) and ``p = perturbation shrink``."""
        p = self.perturbation * self.shrink
        return self.step_scale * _STEP[CASES.index(self.case)] * p * self.radius**2 / self.dim

    def _rate_arguments(self, lam: float) -> tuple:
        """The arguments of :func:`rate` before the count: case, d, lam and the fields."""
        return (
            CASES.index(self.case),
            int(self.dim),
            float(lam),
            float(self.shrink),
            float(self.perturbation),
            float(self.step_scale),
            float(self.rate_scale),
        )

    def rate_function(self, n: Any, lam: float, delta_prime: float) -> Any:
        """``U(n, delta')`` at the counts ``n`` for ``lam = L_lip R`` on the stream: the kernels' own
        :func:`rate` (:func:`agents.family.rate_values`)."""
        return rate_values(rate, n, self._rate_arguments(lam), delta_prime)
