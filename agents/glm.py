"""Online GLM experts: projected online gradient descent on ``y_hat = f(w . x)`` (docs/theory.md §1, §7).

Expert ``k`` owns a link ``f_k`` (:mod:`envs.links`) and the ball ``W = {||w|| <= r}``. Trained
at its own round ``j``, it predicts with its current ``w``, suffers the normalised square loss of
the GLM stream (:mod:`envs.glm`) and steps

    w <- Proj_W(w - eta_j grad),  eta_j = step_scale * D / (G sqrt(j)),

with ``D = 2r`` and ``G = 2 L_f R_x / B`` the largest gradient norm on the ball (Hazan 2016,
Thm 3.1: regret ``<= 1.5 G D sqrt(n)`` for convex losses). Its rate (docs/rates.md §4, sharper form) is

    U(n, delta') = min(n, rate_scale (1.5 G D sqrt(n) + sqrt((n/2) log(2 n^2 / delta')))).

``rate="authors"`` gives instead the rate the paper's authors fed M-LCB in their GLM experiment,
the same for every link: ``3 D G sqrt(n)`` with ``D = G = 0.1`` (``rate_coef = 0.03``) on their
loss ``(y_hat - y)^2 / 2``, converted to the stream's loss ``(y_hat - y)^2 / B^2`` (a factor
``2 / B^2``):

    U(n) = min(n, rate_scale rate_coef (2 / B^2) sqrt(n)),

a heuristic: it is no bound on the expert's regret (for the default stream it is about 1/200 of
the valid rate's first term).

The square loss through a link is convex in ``w`` only for some links, and only on some streams
(:meth:`envs.glm.GLMEnv.convex`: it depends on the stream's radius, target and noise); where it
is not, the rate is *heuristic* and results say so. The family :data:`GLMS` decides this on the
environment being run.
The gradient is that of the unclipped loss ``(f - y)^2 / B^2`` (the clipping at 1 has negligible
probability by the choice of ``B``, which the stream sizes for balls of radius at most its
``weight_radius``: an expert of a larger ball is refused, :meth:`GLMFamily.check_environment`).

Smoothing: ``"average"`` deploys the average of the expert's past training iterates (valid for
convex losses, the default), ``"uniform"`` one past iterate drawn uniformly (general; keeps every
iterate, so memory grows with the horizon, and a pool trained past the horizon it was built for,
as a session driven beyond it would, is refused: :data:`agents.family.UNIFORM_FULL`), ``"last"``
the current iterate (outside the theory).
All experts of a replication start from one shared random point of norm ``init_norm``; an expert
deployed before its first training round deploys that point.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from agents.family import UNIFORM_FULL, CompiledFamily, overflowed_norm, rate_values
from agents.rates import Counts, Rate
from envs.glm import expected_loss, square_loss
from envs.links import LINK_NAMES, link_derivative, link_index, link_value
from mlcb import validation
from mlcb.contracts import BuildContext
from mlcb.kernels import DEPLOY_SLOTS, implements, smoothing, tables
from mlcb.kernels.jit import kernel, njit
from mlcb.kernels.random import uniform
from mlcb.validation import InputError

#: Per-expert parameters (record array, shape (K,)).
GLM_EXPERT_DTYPE = np.dtype(
    [
        ("link", np.int64),
        ("step", np.float64),  # eta_j = step / sqrt(j)
        ("radius", np.float64),  # r
        ("rate_coef", np.float64),  # of sqrt(n): 1.5 G D, or the authors' converted to the stream's loss
        ("rate_scale", np.float64),
        ("rate_row", np.int64),  # row of U(n) in the pool's tables, -1 to compute
        ("rate_kind", np.int64),  # RATE_KINDS: 0 the valid OGD bound, 1 the authors' c sqrt(n)
    ],
    align=True,
)


class GLMPoolParams(NamedTuple):
    experts: np.ndarray  # (K,) GLM_EXPERT_DTYPE
    tables: np.ndarray  # (R, L) tabulated rates, (0, 0) when none
    delta_prime: float
    smoothing: int


class GLMPoolState(NamedTuple):
    weights: np.ndarray  # (K, d) current iterates
    weight_sums: np.ndarray  # (K, d) sums of the iterates used in training (for "average")
    steps: np.ndarray  # (K,) int64 updates so far
    history: np.ndarray  # (K, H, d) every training iterate (for "uniform"), H = 0 otherwise


@implements("train", GLMPoolParams)
@kernel
def _train(params, state, env_params, env_state, k, t):
    expert = params.experts[k]
    j = state.steps[k] + 1
    x = env_state.x
    d = x.shape[0]
    z = 0.0
    for i in range(d):
        z += state.weights[k, i] * x[i]
    prediction = link_value(expert.link, z)
    loss = square_loss(env_params, prediction, env_state.y[0])
    coefficient = 2.0 * (prediction - env_state.y[0]) * link_derivative(expert.link, z)
    coefficient /= env_params.scale * env_params.scale
    eta = expert.step / math.sqrt(j)
    keep = state.history.shape[1] > 0
    if keep and j > state.history.shape[1]:  # (a session driven past its horizon)
        raise InputError(UNIFORM_FULL)
    squared = 0.0
    for i in range(d):
        w = state.weights[k, i]
        state.weight_sums[k, i] += w
        if keep:
            state.history[k, j - 1, i] = w
        w -= eta * coefficient * x[i]
        state.weights[k, i] = w
        squared += w * w
    norm = math.sqrt(squared)
    if norm > expert.radius:
        if norm == math.inf:  # a step so large that the squares overflow
            norm = overflowed_norm(state.weights[k : k + 1])
        shrink = expert.radius / norm
        for i in range(d):
            state.weights[k, i] *= shrink
    state.steps[k] = j
    if expert.rate_row >= 0 and j < params.tables.shape[1]:
        return loss, params.tables[expert.rate_row, j]
    return loss, glm_rate(expert.rate_kind, expert.rate_coef, expert.rate_scale, j, params.delta_prime)


@kernel
def _geometry(vector, divisor, x, direction):
    """``(v . x, v . e1, |v - (v . e1) e1|) / divisor`` for one decision vector ``v``."""
    z = 0.0
    along = 0.0
    squared = 0.0
    for i in range(x.shape[0]):
        z += vector[i] * x[i]
        along += vector[i] * direction[i]
        squared += vector[i] * vector[i]
    across = math.sqrt(max(squared - along * along, 0.0))
    return z / divisor, along / divisor, across / divisor


@implements("deploy", GLMPoolParams)
@kernel
def _deploy(params, state, env_params, env_state, k, t, key, slot):
    link = params.experts[k].link
    n = state.steps[k]
    if n == 0:  # never trained: no past iterate, deploy the current one
        z, along, across = _geometry(state.weights[k], 1.0, env_state.x, env_params.direction)
    elif params.smoothing == smoothing.AVERAGE:
        z, along, across = _geometry(state.weight_sums[k], float(n), env_state.x, env_params.direction)
    elif params.smoothing == smoothing.UNIFORM:
        drawn = min(int(uniform(key, t, slot * DEPLOY_SLOTS) * n), n - 1)
        z, along, across = _geometry(state.history[k, drawn], 1.0, env_state.x, env_params.direction)
    else:
        z, along, across = _geometry(state.weights[k], 1.0, env_state.x, env_params.direction)
    loss = square_loss(env_params, link_value(link, z), env_state.y[0])
    return loss, expected_loss(env_params, link, along, across)


class GLMFamily(CompiledFamily):
    """The OGD experts (:class:`OnlineGradientDescent`) as an :class:`mlcb.contracts.ExpertFamily`;
    its one instance is :data:`GLMS`.

    A pool of any size runs on a GLM stream (:class:`envs.glm.GLMEnv`). An expert's rate reads the
    stream's gradient bound ``G`` of its link and ball (:meth:`rate_input`); it is valid where its
    loss is convex on the stream being run and its step and rate are unscaled (:meth:`heuristic`).

    Examples
    --------
    >>> import envs
    >>> pool = [OnlineGradientDescent(link="affine"), OnlineGradientDescent(link="logistic")]
    >>> GLMS.heuristic(pool, envs.make("mlcb/GLM-v0"))
    [False, True]
    >>> GLMS.heuristic(pool, envs.make("mlcb/GLM-v0", radius=0.2))
    [False, False]
    """

    name = "glm"
    label = "GLM"
    smoothing = ("average", "uniform", "last")

    def check_environment(self, experts: list, env: Any) -> None:
        """A ``ValueError`` unless ``env`` is a GLM stream whose loss scale is sized for every
        expert's ball (:meth:`envs.glm.GLMEnv.within`: beyond its ``weight_radius`` the losses
        would be clipped, which the exact expected loss and the rate's gradient bound leave out)."""
        needed = ("lipschitz", "convex", "optimal_loss_of", "initial_weights")
        if getattr(env, "dim", None) is None or not all(callable(getattr(env, m, None)) for m in needed):
            raise InputError(
                f"experts: GLM experts need a GLM stream (e.g. mlcb/GLM-v0), got {type(env).__name__}"
            )
        within = getattr(env, "within", None)
        for k, expert in enumerate(experts):
            if getattr(type(expert), "family", None) is not self or within is None:
                continue  # (named by Family.check, which runs this first)
            try:
                within(expert.radius)
            except InputError as error:
                raise InputError(f"experts[{k}]: {error}") from None

    def optimal_losses(self, experts: list, env: Any, env_params: Any) -> np.ndarray:
        """``L_k*`` of every expert: the least expected loss of its link on its ball."""
        return np.array([env.optimal_loss_of(env_params, e.link, e.radius) for e in experts], dtype=float)

    def rate_input(self, expert: Any, env: Any, k: int) -> float:
        """What the expert's rate reads of this stream: the gradient bound ``G`` of its link on its
        ball (``rate="theory"``), or the loss scale ``B`` (``rate="authors"``, whose coefficient
        is in the unscaled loss)."""
        if expert.rate == "authors":
            return float(env.scale)
        return env.lipschitz(expert.link, expert.radius)

    def heuristic(self, experts: list, env: Any) -> list[bool]:
        """Whether each expert's rate is outside the theory on ``env``: a loss not convex on this
        stream (:meth:`envs.glm.GLMEnv.convex`), a rescaled step or rate, or the authors' rate."""
        return [
            not env.convex(e.link, e.radius)
            or e.step_scale != 1.0
            or e.rate_scale != 1.0
            or e.rate != "theory"
            for e in experts
        ]

    def build_pool(self, context: BuildContext) -> tuple[GLMPoolParams, GLMPoolState]:
        """Kernel parameters and fresh state of the pool on one GLM replication."""
        return _build_pool(context)


#: The GLM family (:class:`GLMFamily`).
GLMS = GLMFamily()


@dataclass(frozen=True)
class OnlineGradientDescent:
    """Projected OGD on a GLM with a fixed link (the "glm" experts of docs/presets.md).

    Parameters
    ----------
    link : str or int
        One of ``affine``, ``square``, ``exp``, ``logistic``, ``cubic``, ``arctan``,
        ``softplus``, ``power``, ``cosine``, ``logcosh`` (:data:`envs.links.LINK_NAMES`, or its
        index; ``mlcb list`` prints them).
    radius : float
        ``r``, the radius of the parameter ball.
    step_scale : float
        Multiplier of the theory step ``D / (G sqrt(j))``; anything but 1 leaves the theory.
    rate_scale : float
        Multiplier ``beta_k`` of the rate function; anything but 1 leaves the theory.
    init_norm : float
        Norm of the shared random starting point (0.5 in the authors' code).
    rate : {"theory", "authors"}
        ``"theory"``: the valid bound of projected OGD on this link (the default);
        ``"authors"``: the authors' code's rate, ``rate_coef sqrt(n)`` on their loss for every link,
        a heuristic (see the module's text).
    rate_coef : float
        With ``rate="authors"``, the coefficient of ``sqrt(n)`` on the authors' loss
        ``(y_hat - y)^2 / 2`` (default :data:`AUTHORS_RATE_COEF`, their ``3 D G`` with
        ``D = G = 0.1``); ignored by ``rate="theory"``.

    Examples
    --------
    >>> OnlineGradientDescent(link="logcosh").link
    'logcosh'
    >>> import envs
    >>> env = envs.make("mlcb/GLM-v0")
    >>> expert = OnlineGradientDescent(rate="authors")
    >>> round(float(expert.rate_function(10_000, GLMS.rate_input(expert, env, 0), 0.005)), 3)
    0.225
    """

    link: str | int = "logcosh"
    radius: float = 1.0
    step_scale: float = 1.0
    rate_scale: float = 1.0
    init_norm: float = 0.5
    rate: str = "theory"
    rate_coef: float = 0.03

    family: ClassVar[GLMFamily] = GLMS

    def __post_init__(self) -> None:
        link_index(self.link, "link")
        for name in ("radius", "step_scale", "rate_scale", "rate_coef"):
            validation.positive(name, getattr(self, name))
        validation.choice("rate", self.rate, RATE_KINDS)
        if not (validation.is_real(self.init_norm) and 0 <= self.init_norm <= self.radius):
            raise InputError(
                f"init_norm must be a number in [0, radius={self.radius}], got {self.init_norm!r}"
            )

    def rate_function(self, n: Counts, rate_input: float, delta_prime: float) -> Rate:
        """``U(n, delta')`` as the kernels report it (:func:`glm_rate`), with ``rate_input`` what
        :meth:`GLMFamily.rate_input` reads of the stream: for ``rate="theory"`` the gradient bound
        ``G`` (:func:`ogd_rate`, with ``1.5 G D`` and ``D = 2 radius``), for ``rate="authors"`` the
        loss scale ``B`` (``rate_coef 2 / B^2 sqrt(n)``)."""
        kind, coef = _kind_and_coef(self, rate_input)
        return rate_values(glm_rate, n, (kind, coef, float(self.rate_scale)), delta_prime)


#: The rates an OGD expert can report (:attr:`OnlineGradientDescent.rate`), in the order of their
#: kernel codes.
RATE_KINDS = ("theory", "authors")
#: The authors' rate coefficient in their GLM code: ``3 D G`` with ``D = G = 0.1``, on their loss
#: ``(y_hat - y)^2 / 2``.
AUTHORS_RATE_COEF = 0.03


def _kind_and_coef(expert: OnlineGradientDescent, rate_input: float) -> tuple[int, float]:
    """The kernel code of ``expert``'s rate and its coefficient of ``sqrt(n)`` on the stream's loss:
    ``1.5 G D`` (``rate_input = G``) or ``rate_coef 2 / B^2`` (``rate_input = B``)."""
    if expert.rate == "authors":
        return RATE_KINDS.index("authors"), float(expert.rate_coef) * 2.0 / (rate_input * rate_input)
    return RATE_KINDS.index("theory"), 1.5 * rate_input * 2.0 * expert.radius


@kernel
def ogd_rate(rate_coef, rate_scale, n, delta_prime):
    """``min(n, rate_scale (rate_coef sqrt(n) + sqrt((n/2) log(2 n^2 / delta'))))``."""
    value = rate_coef * math.sqrt(n) + math.sqrt(0.5 * n * math.log(2.0 * n * n / delta_prime))
    return min(float(n), rate_scale * value)


@kernel
def glm_rate(kind, rate_coef, rate_scale, n, delta_prime):
    """The rate of kernel code ``kind`` (:data:`RATE_KINDS`): :func:`ogd_rate` (0), or
    ``min(n, rate_scale rate_coef sqrt(n))`` (1, the authors')."""
    if kind == 1:
        return min(float(n), rate_scale * rate_coef * math.sqrt(n))
    return ogd_rate(rate_coef, rate_scale, n, delta_prime)


@njit
def _tabulate(kind, rate_coef, rate_scale, delta_prime, length):
    table = np.zeros(length)
    for n in range(1, length):
        table[n] = glm_rate(kind, rate_coef, rate_scale, n, delta_prime)
    return table


@functools.lru_cache(maxsize=32)
def _rate_tables(signatures: tuple, delta_prime: float, horizon: int, budget: int):
    length = tables.table_length(horizon, len(signatures), budget)
    if length == 0:
        return tables.EMPTY, {}
    out = np.stack([_tabulate(kind, coef, scale, delta_prime, length) for kind, coef, scale in signatures])
    out.setflags(write=False)
    return out, {signature: row for row, signature in enumerate(signatures)}


def _build_pool(context: BuildContext) -> tuple[GLMPoolParams, GLMPoolState]:
    """Kernel parameters and fresh state of a pool of OGD experts on one GLM replication."""
    experts, env, horizon = context.experts, context.env, context.horizon
    n_experts, dim, delta_prime = context.n_experts, env.dim, context.delta_prime
    records = np.zeros(n_experts, dtype=GLM_EXPERT_DTYPE)
    signatures = []
    for k, expert in enumerate(experts):
        lipschitz = env.lipschitz(expert.link, expert.radius)
        step = expert.step_scale * 2.0 * expert.radius / lipschitz if lipschitz > 0 else math.inf
        if not 0.0 < step < math.inf:
            raise InputError(
                f"expert {k} (link {LINK_NAMES[link_index(expert.link)]!r}, radius {expert.radius:g}, "
                f"step_scale {expert.step_scale:g}): its loss's largest gradient on the stream's ball "
                f"(env radius {env.radius:g}) is {lipschitz:.3g}, so its step step_scale * 2 * radius / "
                f"gradient is {step:.3g}, not a positive finite number; raise the radius of env_params "
                "or of the expert"
            )
        kind, coef = _kind_and_coef(expert, GLMS.rate_input(expert, env, k))
        signatures.append((kind, coef, float(expert.rate_scale)))
        records[k] = (link_index(expert.link), step, expert.radius, coef, expert.rate_scale, -1, kind)
    shared, rows = _rate_tables(
        tuple(dict.fromkeys(signatures)), delta_prime, horizon, tables.TABLE_BUDGET_BYTES
    )
    for k, signature in enumerate(signatures):
        records[k]["rate_row"] = rows.get(signature, -1)
    params = GLMPoolParams(records, shared, delta_prime, context.smoothing_code(GLMS.smoothing))
    start = np.zeros((n_experts, dim))
    for k, expert in enumerate(experts):
        start[k] = env.initial_weights(context.seed, context.replication, expert.init_norm)
    history = np.zeros((n_experts, horizon + 2 if context.smoothing == "uniform" else 0, dim))
    state = GLMPoolState(start, np.zeros((n_experts, dim)), np.zeros(n_experts, dtype=np.int64), history)
    return params, state
