"""Bandit experts: UCB1, decaying epsilon-greedy and Bernoulli Thompson sampling (docs/theory.md §1).

Each expert runs its algorithm over its own arms (:mod:`envs.bandit`); a trained expert samples an
arm from its current decision, observes that arm's loss under ``xi_t`` and updates. Every family
ships its anytime rate function ``U(n, delta')`` (docs/rates.md), always capped at ``n``.

Families and rates (``n`` the expert's own update count, ``m`` its arms, ``delta' = delta / 2K``):

* :class:`UCB1` -- index ``mean_a - sqrt(c ln j / N_a)`` (``j`` its own round), each arm once
  first. ``rate="theory"`` (docs/rates.md §1b, needs ``c > 1``):
  ``2 sqrt(c (m-1) n ln n) + (m-1) + t0 + sqrt((n/2) log(4 n^2 / delta'))``,
  ``t0 = ceil((8m / delta')^(1/(2c-2)))``. ``rate="authors"``: ``0.5 sqrt(ln n) sum_a sqrt(N_a)``
  for ``n >= 2``.
* :class:`EpsilonGreedy` -- ``eps_j = min(1, c (m l_j / j)^(1-alpha))``, ``l_j = max(1, ln j)``;
  exploit the smallest empirical mean, unsampled arms first. ``rate="theory"``: the computable
  ``U#`` of docs/rates.md §2 (running sums, O(1) per update); ``rate="authors"``:
  ``0.5 n^alpha (m ln n)^(1-alpha)`` for ``n >= 2``. Both authors' formulas vanish at ``n = 1``
  (``ln 1 = 0``); there they take the trivial value ``U(1) = 1`` (one loss in ``[0, 1]``), so
  that every rate is positive and an expert whose single warm-start loss was 1 is retried under
  M-LCB's count-only bounds (with 0 its lower bound would stay at 1 for ever).
* :class:`ThompsonSampling` -- Beta(1 + losses, 1 + non-losses) posterior on each arm's loss,
  play the smallest sample. Vanilla TS has no usable explicit high-probability bound (docs/rates.md §3):
  its rate is the UCB(delta0) formula and it is flagged ``heuristic``. ``clipped=True`` is the
  clipped variant of docs/rates.md §3, valid with
  ``1.5 sqrt(2 (m-1) n log(8 m n^2 / delta')) + sqrt((n/2) log(4 n^2 / delta')) + (m-1)``.

``rate_scale`` multiplies a rate (a user's ``beta_k``); anything but 1 leaves the theory.

The family itself is :data:`BANDITS` (a :class:`mlcb.contracts.ExpertFamily`): it checks a pool
against its environment, builds the compiled pool, and reports ``L_k*``, the rates and which of
them are heuristic. Each specification class names it in ``family``; its integer ``code`` selects
the algorithm inside the kernels.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from agents import rates
from agents.family import BanditEnvironmentFamily
from envs.bandit import arm_loss
from mlcb import validation
from mlcb.contracts import BuildContext
from mlcb.kernels import DEPLOY_SLOTS, implements, smoothing, tables
from mlcb.kernels.jit import cold_kernel, kernel, njit
from mlcb.kernels.random import GAMMA_SLOTS, beta, uniform
from mlcb.validation import InputError

UCB1_FAMILY, EPSILON_GREEDY_FAMILY, THOMPSON_FAMILY, CLIPPED_THOMPSON_FAMILY = 0, 1, 2, 3
THEORY_RATE, AUTHORS_RATE = 0, 1
_RATES = ("theory", "authors")


#: Per-expert parameters of a bandit pool (record array, shape (K,)).
EXPERT_DTYPE = np.dtype(
    [
        ("code", np.int64),  # algorithm code (UCB1_FAMILY, ...)
        ("n_arms", np.int64),  # m_k
        ("rate_kind", np.int64),  # THEORY_RATE or AUTHORS_RATE
        ("c", np.float64),  # UCB1 radius constant; epsilon-greedy scale
        ("alpha", np.float64),  # epsilon-greedy exponent
        ("rate_coef", np.float64),  # constant of the authors' rates
        ("rate_scale", np.float64),  # the user's multiplier beta_k
        ("rate_offset", np.float64),  # (m - 1) + t0 of the UCB1 theory rate
        ("rate_row", np.int64),  # row of U(n) in the pool's tables, -1 to compute
        ("epsilon_row", np.int64),  # row of eps_j in the pool's tables, -1 to compute
        ("key", np.uint64),  # random stream, counters (own round, slot)
    ],
    align=True,
)
#: Per-arm state (record array, shape (K, m_max)).
ARM_DTYPE = np.dtype(
    [
        ("pulls", np.int64),  # N_a
        ("losses", np.float64),  # sum of the arm's losses
        ("weight", np.float64),  # running sum of the decisions' probability of the arm
    ],
    align=True,
)
#: Per-expert state (record array, shape (K,)).
EXPERT_STATE_DTYPE = np.dtype(
    [
        ("steps", np.int64),  # n_k, updates so far
        ("epsilon_sum", np.float64),  # sum of past eps_j (for U#)
        ("rate_sum", np.float64),  # sum of eps_j + (1 - eps_j) b_j (for U#)
        ("b_count", np.float64),  # the last s_j >= 1 for which b_j was computed (0: none)
        ("b_value", np.float64),  # b_j at that s_j (a function of s_j alone)
        ("cursors", np.int64, (2, tables.CURSOR_FIELDS)),  # readers of the tables' continuation:
        # the rate row, the epsilon row (mlcb.kernels.tables.decode)
    ],
    align=True,
)


class BanditPoolParams(NamedTuple):
    experts: np.ndarray  # (K,) EXPERT_DTYPE
    tables: np.ndarray  # (R, L) float64 functions of a count (mlcb.kernels.tables), (0, 0) when none
    tail: tables.Tail  # the tables' compressed continuation, counts L .. L + N - 1 (N >= 0)
    tails: np.ndarray  # (R, 2) U#'s running sums after count L + N - 1 (rate rows of eps-greedy)
    delta_prime: float  # delta / (2K), the level at which M-LCB reads the rates
    delta0: float  # delta / (4K), internal level of clipped Thompson sampling
    smoothing: int  # mlcb.kernels.smoothing code


class BanditPoolState(NamedTuple):
    arms: np.ndarray  # (K, m_max) ARM_DTYPE
    experts: np.ndarray  # (K,) EXPERT_STATE_DTYPE


def new_state(arms_shape: tuple, n_experts: int) -> BanditPoolState:
    """A fresh :class:`BanditPoolState`."""
    return BanditPoolState(
        np.zeros(arms_shape, dtype=ARM_DTYPE), np.zeros(n_experts, dtype=EXPERT_STATE_DTYPE)
    )


# --- arm choice ------------------------------------------------------------------------------
@cold_kernel
def epsilon(c, alpha, m, j):
    """Exploration probability ``min(1, c (m max(1, ln j) / j)^(1 - alpha))`` at own round j."""
    ell = max(1.0, math.log(j))
    return min(1.0, c * (m * ell / j) ** (1.0 - alpha))


@kernel
def _smallest_index(arms, k, m, width):
    """The arm of expert ``k`` with the smallest index ``mean_a - sqrt(width / N_a)`` (the
    smallest empirical mean for ``width = 0``), an unplayed arm first, ties to the lowest."""
    best = 0
    best_index = math.inf
    for a in range(m):
        arm = arms[k, a]
        if arm.pulls == 0:
            return a
        index = arm.losses / arm.pulls
        if width > 0.0:
            index -= math.sqrt(width / arm.pulls)
        if index < best_index:
            best = a
            best_index = index
    return best


@kernel
def _greedy_arm(arms, k, m):
    return _smallest_index(arms, k, m, 0.0)


@kernel
def _ucb1_arm(c, arms, k, m, j):
    """UCB1's arm at the expert's own round ``j``: index ``mean_a - sqrt(c ln j / N_a)``."""
    return _smallest_index(arms, k, m, c * math.log(j))


@kernel
def _rho(s, m, delta0):
    return math.sqrt(math.log(4.0 * m * s * s / delta0) / (2.0 * s))


@kernel
def _thompson_arm(arms, k, m, key, counter, slot, clipped, delta0):
    best = 0
    best_value = math.inf
    for a in range(m):
        arm = arms[k, a]
        if clipped and arm.pulls == 0:
            return a
        value = beta(key, counter, slot + 2 * GAMMA_SLOTS * a, 1.0 + arm.losses, 1.0 + arm.pulls - arm.losses)
        if clipped:
            mean = arm.losses / arm.pulls
            radius = _rho(arm.pulls, m, delta0)
            value = min(max(value, mean - 2.0 * radius), mean - radius)
        if value < best_value:
            best = a
            best_value = value
    return best


@kernel
def _epsilon_of(tables_, tail, expert, progress, j):
    """Epsilon-greedy expert's exploration probability at its own round ``j``: tabulated, stored
    in the tables' continuation, or computed (``progress`` is its state record)."""
    row = expert.epsilon_row
    if row >= 0 and j < tables_.shape[1]:
        return tables_[row, j]
    eps = math.nan
    if row >= 0:
        eps = tables.decode(tail, tables_.shape[1], row, j, progress.cursors[1])
    if eps != eps:  # not stored: computed
        eps = epsilon(expert.c, expert.alpha, expert.n_arms, j)
    return eps


@kernel
def _current_arm(expert, arms, k, j, key, counter, slot, delta0, eps):
    """Arm played by expert ``k`` at its own round ``j``; randomness at ``(counter, slot..)``;
    ``eps`` is an epsilon-greedy expert's exploration probability (:func:`_epsilon_of`).

    Returns ``(arm, eps, greedy)``: for epsilon-greedy the exploration probability and the
    exploit arm (its decision is ``(1 - eps) [greedy] + eps / m``); otherwise ``eps = -1``.
    """
    m = expert.n_arms
    code = expert.code
    if code == EPSILON_GREEDY_FAMILY:
        greedy = _greedy_arm(arms, k, m)
        arm = greedy
        if uniform(key, counter, slot) < eps:
            arm = min(int(uniform(key, counter, slot + 1) * m), m - 1)
        return arm, eps, greedy
    if code == UCB1_FAMILY:
        arm = _ucb1_arm(expert.c, arms, k, m, j)
    else:
        arm = _thompson_arm(arms, k, m, key, counter, slot, code == CLIPPED_THOMPSON_FAMILY, delta0)
    return arm, -1.0, arm


# --- kernels ---------------------------------------------------------------------------------
@implements("train", BanditPoolParams)
@kernel
def _train(params, state, env_params, env_state, k, t):
    expert = params.experts[k]
    progress = state.experts[k]
    j = progress.steps + 1
    row = expert.rate_row
    tabulated = row >= 0 and j < params.tables.shape[1]
    # Counts below `stored` are read: from the tables, then from their continuation.
    stored = params.tables.shape[1] + params.tail.codes.shape[1]
    schedule = -1.0
    if expert.code == EPSILON_GREEDY_FAMILY:
        schedule = _epsilon_of(params.tables, params.tail, expert, progress, j)
    arm, eps, greedy = _current_arm(expert, state.arms, k, j, expert.key, j, 0, params.delta0, schedule)
    # The decisions' running sums serve the deployments that draw from them alone.
    weights = params.smoothing == smoothing.AVERAGE or params.smoothing == smoothing.UNIFORM
    if eps >= 0.0:
        m = expert.n_arms
        if weights:
            for a in range(m):
                state.arms[k, a].weight += eps / m
            state.arms[k, greedy].weight += 1.0 - eps
        if expert.rate_kind == THEORY_RATE and not (row >= 0 and j < stored):
            if row >= 0 and j == stored:
                # The first count past what is stored: the running sums it stopped at.
                progress.epsilon_sum = params.tails[row, 0]
                progress.rate_sum = params.tails[row, 1]
            _sharp_rate_step_in_place(progress, m, j, eps, params.delta_prime)
    elif weights:
        state.arms[k, arm].weight += 1.0
    loss = arm_loss(env_params, t, k, arm)
    played = state.arms[k, arm]
    played.pulls += 1
    played.losses += loss
    progress.steps = j
    if tabulated:
        return loss, params.tables[row, j]
    if row >= 0 and j < stored:
        # Every count is read once, in order: the cursor always has the one before.
        return loss, tables.decode(params.tail, params.tables.shape[1], row, j, progress.cursors[0])
    return loss, _rate(expert, state, k, j, params.delta_prime)


@kernel
def sharp_rate_step(epsilon_sum, rate_sum, m, j, eps, delta_prime):
    """One step of the computable rate U# (docs/rates.md §2): the running sums after round ``j``.

    ``epsilon_sum`` is the sum of ``eps_i`` for ``i < j``; returns the sums including round j.
    """
    s = _sharp_count(epsilon_sum, m, j, delta_prime)
    b = 1.0
    if s >= 1:
        b = _sharp_gap(m, s, delta_prime)
    return epsilon_sum + eps, rate_sum + (eps + (1.0 - eps) * b)


@cold_kernel
def _sharp_count(epsilon_sum, m, j, delta_prime):
    """``s_j``, the lower bound on every arm's sample count."""
    mu = epsilon_sum / m
    return math.ceil(mu - math.sqrt(2.0 * mu * math.log(6.0 * m * j * j / delta_prime)))


@cold_kernel
def _sharp_gap(m, s, delta_prime):
    """``b_j`` for ``s_j = s >= 1``."""
    return min(1.0, math.sqrt(2.0 * math.log(12.0 * m * s * s / delta_prime) / s))


@cold_kernel
def _sharp_rate_step_in_place(progress, m, j, eps, delta_prime):
    """:func:`sharp_rate_step` on an expert's state; ``b_j`` depends on ``s_j`` alone and ``s_j``
    changes rarely, so it is recomputed only when ``s_j`` moves (the same numbers, cheaper)."""
    s = _sharp_count(progress.epsilon_sum, m, j, delta_prime)
    b = 1.0
    if s >= 1:
        if s != progress.b_count:
            progress.b_count = s
            progress.b_value = _sharp_gap(m, s, delta_prime)
        b = progress.b_value
    progress.epsilon_sum += eps
    progress.rate_sum += eps + (1.0 - eps) * b


@cold_kernel
def _rate(expert, state, k, n, dp):
    """``U(n, delta')`` of expert ``k`` (docs/rates.md), capped at ``n``."""
    m = expert.n_arms
    code = expert.code
    if expert.rate_kind == AUTHORS_RATE and n == 1:
        value = 1.0  # ln 1 = 0 would make the heuristic 0: take the trivial bound, one loss <= 1
    elif expert.rate_kind == AUTHORS_RATE and code == UCB1_FAMILY:
        root_sum = 0.0
        for a in range(m):
            root_sum += math.sqrt(state.arms[k, a].pulls)
        value = expert.rate_coef * math.sqrt(math.log(n)) * root_sum
    elif expert.rate_kind == AUTHORS_RATE and code == EPSILON_GREEDY_FAMILY:
        value = expert.rate_coef * n**expert.alpha * (m * math.log(n)) ** (1.0 - expert.alpha)
    elif code == UCB1_FAMILY:
        value = (
            2.0 * math.sqrt(expert.c * (m - 1) * n * math.log(n))
            + expert.rate_offset
            + math.sqrt(0.5 * n * math.log(4.0 * n * n / dp))
        )
    elif code == EPSILON_GREEDY_FAMILY:
        value = state.experts[k].rate_sum + math.sqrt(0.5 * n * math.log(6.0 * n * n / dp))
    else:
        value = ucb_delta_value(m, n, dp, 1.5 if code == CLIPPED_THOMPSON_FAMILY else 1.0)
    return min(float(n), expert.rate_scale * value)


@cold_kernel
def ucb_delta_value(m, n, delta_prime, factor):
    """The UCB(delta0) rate before the cap (docs/rates.md §1a), its first term times ``factor``:
    1 for UCB(delta0) and the heuristic rates that borrow it (vanilla Thompson sampling,
    KL-UCB), 3/2 for clipped Thompson sampling (docs/rates.md §3)."""
    return (
        factor * math.sqrt(2.0 * (m - 1) * n * math.log(8.0 * m * n * n / delta_prime))
        + math.sqrt(0.5 * n * math.log(4.0 * n * n / delta_prime))
        + (m - 1)
    )


@kernel
def _mixture(arms, means, k, m, u, by_pulls):
    """Arm drawn by inverse CDF with uniform ``u`` from expert ``k``'s pulls (``by_pulls``) or
    decision weights, and the expected loss of that mixture."""
    total = 0.0
    weighted = 0.0
    for a in range(m):
        w = float(arms[k, a].pulls) if by_pulls else arms[k, a].weight
        total += w
        weighted += w * means[k, a]
    target = u * total
    cumulative = 0.0
    for a in range(m):
        cumulative += float(arms[k, a].pulls) if by_pulls else arms[k, a].weight
        if target < cumulative:
            return a, weighted / total
    return m - 1, weighted / total


@kernel
def _deploy_current(params, state, env_params, k, t, key, base):
    """Deploy expert ``k``'s current decision at round ``t`` (randomness from ``key`` at slots
    from ``base``): ``(loss, expected loss)``."""
    expert = params.experts[k]
    m = expert.n_arms
    means = env_params.loss_means
    j = state.experts[k].steps + 1
    schedule = -1.0
    if expert.code == EPSILON_GREEDY_FAMILY:
        schedule = _epsilon_of(params.tables, params.tail, expert, state.experts[k], j)
    arm, eps, greedy = _current_arm(expert, state.arms, k, j, key, t, base, params.delta0, schedule)
    if eps < 0.0:
        return arm_loss(env_params, t, k, arm), means[k, arm]
    expected = (1.0 - eps) * means[k, greedy]
    for a in range(m):
        expected += eps / m * means[k, a]
    return arm_loss(env_params, t, k, arm), expected


@implements("deploy", BanditPoolParams)
@kernel
def _deploy(params, state, env_params, env_state, k, t, key, slot):
    expert = params.experts[k]
    m = expert.n_arms
    means = env_params.loss_means
    base = slot * DEPLOY_SLOTS
    # An expert never trained yet has no past iterate: its current decision is deployed.
    if params.smoothing == smoothing.LAST or state.experts[k].steps == 0:
        return _deploy_current(params, state, env_params, k, t, key, base)
    arm, expected = _mixture(
        state.arms, means, k, m, uniform(key, t, base), params.smoothing == smoothing.COUNTS
    )
    return arm_loss(env_params, t, k, arm), expected


@kernel
def deploy_arm(env_params, k, t, arm):
    """Deploy arm ``arm`` of expert ``k`` at round ``t``: ``(loss, expected_loss)``, its loss and
    its loss mean. Shared by the families whose decisions are single arms (KL-UCB, robust UCB)."""
    return arm_loss(env_params, t, k, arm), env_params.loss_means[k, arm]


@kernel
def deploy_by_counts(pulls, env_params, k, m, n, key, t, slot):
    """Deploy an arm of expert ``k`` drawn from its empirical distribution of pulls (``n >= 1``
    pulls over its ``m`` arms): returns ``(loss, expected_loss)``, the drawn arm's loss at round
    ``t`` and the distribution's expected loss. The arm inverts the cumulative counts at one
    uniform of the deploy stream (this call's first slot). Shared by the families whose training
    decisions are single arms and whose state keeps ``pulls`` (KL-UCB, robust UCB)."""
    means = env_params.loss_means  # (K, m_max): the arms' loss means (expected losses)
    expected = 0.0
    for a in range(m):
        expected += pulls[k, a] * means[k, a]
    expected /= n
    target = uniform(key, t, slot * DEPLOY_SLOTS) * n
    arm = m - 1
    cumulative = 0
    for a in range(m):
        cumulative += pulls[k, a]
        if target < cumulative:
            arm = a
            break
    return arm_loss(env_params, t, k, arm), expected


# --- the family ------------------------------------------------------------------------------
class BanditFamily(BanditEnvironmentFamily):
    """The bandit experts (:class:`UCB1`, :class:`EpsilonGreedy`, :class:`ThompsonSampling`) as an
    :class:`mlcb.contracts.ExpertFamily`; its one instance is :data:`BANDITS`.

    A pool runs on a bandit experts environment (:mod:`envs.bandit`): expert ``k`` plays the
    environment's ``n_arms[k]`` arms, so a pool holds exactly ``env.n_experts`` experts
    (:class:`agents.family.BanditEnvironmentFamily`). Rates and heuristic flags are the
    specifications' own; a pool with the authors' UCB1 rate, which reads pull counts, has no
    count-only rates (``None``).

    Examples
    --------
    >>> import envs
    >>> env = envs.make("mlcb/Trap-v0", n_experts=3)
    >>> pool = [UCB1(), UCB1(rate="authors", c=0.25), ThompsonSampling()]
    >>> BANDITS.heuristic(pool, env)
    [False, True, True]
    >>> BANDITS.rates(pool, env, [1, 10], 0.01) is None  # the authors' UCB1 rate reads pull counts
    True
    """

    name = "bandit"
    smoothing = ("counts", "average", "uniform", "last")

    def build_pool(self, context: BuildContext) -> tuple[BanditPoolParams, BanditPoolState]:
        """Kernel parameters and fresh state of the pool ``context.experts`` on one replication."""
        return _build_pool(context)


#: The bandit family (:class:`BanditFamily`).
BANDITS = BanditFamily()


# --- expert specifications -------------------------------------------------------------------
class _BanditExpert:
    """What every bandit specification shares: its family, :data:`BANDITS`."""

    family: ClassVar[BanditFamily] = BANDITS


class _TheoryOrAuthors(_BanditExpert):
    """What UCB1 and epsilon-greedy share: the constant ``c > 0`` of their arm choice, and a rate
    chosen by ``rate`` (``"theory"`` or ``"authors"``, the latter with the constant
    ``rate_coef``), multiplied by ``rate_scale``."""

    # Fields of both specifications.
    c: float
    rate_coef: float
    rate: str
    rate_scale: float

    def _check_rate(self) -> None:
        validation.positive("c", self.c)
        validation.positive("rate_coef", self.rate_coef)
        validation.choice("rate", self.rate, _RATES)
        validation.positive("rate_scale", self.rate_scale)

    @property
    def heuristic(self) -> bool:
        """Whether the rate is outside the theory: the authors' rate, or a rescaled one."""
        return self.rate != "theory" or self.rate_scale != 1.0


@dataclass(frozen=True)
class UCB1(_TheoryOrAuthors):
    """UCB1 over the expert's arms, radius ``sqrt(c ln j / N_a)`` (Auer et al. 2002: c = 2).

    ``rate="theory"`` needs ``c > 1`` (docs/rates.md §1b); the authors' code used ``c = 0.25`` (their
    radius ``0.5 sqrt(ln j / N_a)``) with ``rate="authors"``, outside the theory.

    Examples
    --------
    >>> UCB1(c=2.0).heuristic
    False
    """

    c: float = 2.0
    rate: str = "theory"
    rate_coef: float = 0.5
    rate_scale: float = 1.0

    code: ClassVar[int] = UCB1_FAMILY

    def __post_init__(self) -> None:
        self._check_rate()
        if self.rate == "theory" and self.c <= 1:
            raise InputError(
                f"c must be > 1 for UCB1's theory rate (docs/rates.md §1b), got {self.c!r}; "
                "use rate='authors' for c <= 1 (outside the theory)"
            )

    @property
    def count_only(self) -> bool:
        """Whether the rate depends on the update count alone (not the authors' rate)."""
        return self.rate != "authors"

    def rate_function(self, n: rates.Counts, n_arms: int, delta_prime: float) -> rates.Rate:
        """``U(n, delta')`` on ``n_arms`` arms: :func:`agents.rates.ucb1_rate` times ``rate_scale``,
        capped at ``n``; a ``ValueError`` for the authors' rate, which reads the pull counts."""
        if not self.count_only:
            raise InputError(
                "the authors' UCB1 rate coef * sqrt(ln n) * sum_a sqrt(N_a) depends on the arms' pull "
                "counts, not on n alone: it has no count-only form (use rate='theory')"
            )
        value = rates.ucb1_rate(n, n_arms, self.c, delta_prime, capped=False)
        return rates.scale_and_cap(n, self.rate_scale, value)


@dataclass(frozen=True)
class EpsilonGreedy(_TheoryOrAuthors):
    """Decaying epsilon-greedy, ``eps_j = min(1, c (m max(1, ln j) / j)^(1 - alpha))``.

    ``alpha = 2/3`` (the project's schedule) gives regret of order ``n^(2/3)``: the family with
    ``alpha > 1/2`` that exercises the second term of M-LCB's bound.
    """

    c: float = 1.0
    alpha: float = 2.0 / 3.0
    rate: str = "theory"
    rate_coef: float = 0.5
    rate_scale: float = 1.0

    code: ClassVar[int] = EPSILON_GREEDY_FAMILY

    def __post_init__(self) -> None:
        if not (isinstance(self.alpha, (int, float)) and 0 < self.alpha < 1):
            raise InputError(f"alpha must be a number in (0, 1), got {self.alpha!r}")
        self._check_rate()

    def rate_function(self, n: rates.Counts, n_arms: int, delta_prime: float) -> rates.Rate:
        """``U(n, delta')`` on ``n_arms`` arms: :func:`agents.rates.epsilon_greedy_rate` (``U#``) or
        :func:`agents.rates.authors_epsilon_greedy_rate`, times ``rate_scale``, capped at ``n``."""
        if self.rate == "authors":
            value = rates.authors_epsilon_greedy_rate(n, n_arms, self.alpha, self.rate_coef, capped=False)
        else:
            value = rates.epsilon_greedy_rate(n, n_arms, self.c, self.alpha, delta_prime, capped=False)
        return rates.scale_and_cap(n, self.rate_scale, value)


@dataclass(frozen=True)
class ThompsonSampling(_BanditExpert):
    """Bernoulli Thompson sampling with a uniform Beta(1, 1) prior on each arm's loss.

    ``clipped=True`` keeps each sample inside ``[mean - 2 rho, mean - rho]`` (docs/rates.md §3), which
    has an explicit rate; vanilla TS is ``heuristic`` (no usable high-probability bound).
    """

    clipped: bool = False
    rate_scale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "clipped", validation.flag("clipped", self.clipped))
        validation.positive("rate_scale", self.rate_scale)

    @property
    def code(self) -> int:
        return CLIPPED_THOMPSON_FAMILY if self.clipped else THOMPSON_FAMILY

    @property
    def rate(self) -> str:
        return "theory"

    @property
    def heuristic(self) -> bool:
        return not self.clipped or self.rate_scale != 1.0

    def rate_function(self, n: rates.Counts, n_arms: int, delta_prime: float) -> rates.Rate:
        """``U(n, delta')`` on ``n_arms`` arms: :func:`agents.rates.thompson_rate` (clipped, or the
        UCB(delta0) formula as a heuristic) times ``rate_scale``, capped at ``n``."""
        value = rates.thompson_rate(n, n_arms, delta_prime, self.clipped, capped=False)
        return rates.scale_and_cap(n, self.rate_scale, value)


def _tabulate_rate(expert, m, delta_prime, length):
    """``U(n)`` for ``n < length`` by the kernels' own scalar code (count-only rates)."""
    return _tabulate_rate_and_tail(expert, m, delta_prime, length)[0]


def _tabulate_rate_and_tail(expert, m, delta_prime, length):
    """``U(n)`` for ``n < length`` and U#'s running sums after ``n = length - 1`` (zeros for
    other rates), from which the kernel carries on past the table."""
    table, sums = np.zeros(length), np.zeros(2)
    if length > 1:
        _fill_rate(expert, m, delta_prime, new_state((1, m), 1), sums, 1, table[1:])
    return table, sums


@njit
def _fill_rate(expert, m, delta_prime, pool_state, sums, start, out):
    """``U(n)`` at ``n = start .. start + len(out) - 1`` into ``out``, by the kernels' own scalar
    code; ``sums`` holds U#'s running sums after ``n = start - 1`` and is carried on."""
    state = pool_state.experts
    for i in range(out.shape[0]):
        n = start + i
        if expert.code == EPSILON_GREEDY_FAMILY:
            eps = epsilon(expert.c, expert.alpha, m, n)
            sums[0], sums[1] = sharp_rate_step(sums[0], sums[1], m, n, eps, delta_prime)
            state[0].rate_sum = sums[1]
        out[i] = _rate(expert, pool_state, 0, n, delta_prime)


@njit
def _fill_epsilon(c, alpha, m, start, out):
    for i in range(out.shape[0]):
        out[i] = epsilon(c, alpha, m, start + i)


def _tabulate_epsilon(c, alpha, m, length):
    table = np.zeros(length)
    if length > 1:
        _fill_epsilon(c, alpha, m, 1, table[1:])
    return table


def _pool_tables(signatures: tuple, delta_prime: float, horizon: int, budget: int):
    """Rows of tabulated functions for distinct expert signatures and their continuation
    (mlcb.kernels.tables); ``(tables, tail, tails, rows)``."""
    rows = len(_wanted_rows(signatures))
    length = tables.table_length(horizon, rows, budget)
    # Cached by length: every horizon whose tables are cut at the budget shares them.
    shared, tails, index = _pool_tables_of_length(signatures, delta_prime, length)
    size = tables.tail_length(horizon, length, rows)
    if size == 0:
        return shared, tables.empty_tail(shared.shape[0]), tails, index
    tail, tails = _pool_tail(signatures, delta_prime, length, size)
    return shared, tail, tails, index


def _wanted_rows(signatures: tuple) -> list:
    wanted: list[tuple] = []
    for code, m, rate, c, alpha, coef, scale in signatures:
        if code == EPSILON_GREEDY_FAMILY:
            wanted.append(("epsilon", c, alpha, m))
        if not (rate == "authors" and code == UCB1_FAMILY):
            wanted.append(("rate", code, m, rate, c, alpha, coef, scale))
    return list(dict.fromkeys(wanted))


@functools.lru_cache(maxsize=32)
def _pool_tables_of_length(signatures: tuple, delta_prime: float, length: int):
    wanted = _wanted_rows(signatures)
    if length == 0 or not wanted:
        return tables.EMPTY, tables.frozen(np.zeros((0, 2))), {}
    out = np.zeros((len(wanted), length))
    tails = np.zeros((len(wanted), 2))
    for row, item in enumerate(wanted):
        if item[0] == "epsilon":
            out[row] = _tabulate_epsilon(item[1], item[2], item[3], length)
        else:
            record = _rate_record(item[1:], delta_prime)
            out[row], tails[row] = _tabulate_rate_and_tail(record, item[2], delta_prime, length)
    out.setflags(write=False)
    tails.setflags(write=False)
    return out, tails, {item: row for row, item in enumerate(wanted)}


@functools.lru_cache(maxsize=2)  # up to TAIL_BUDGET_BYTES each
def _pool_tail(signatures: tuple, delta_prime: float, length: int, size: int):
    """The continuation of :func:`_pool_tables_of_length`'s tables over ``size`` counts, and U#'s
    running sums after its last count."""
    shared, tails, _ = _pool_tables_of_length(signatures, delta_prime, length)
    wanted = _wanted_rows(signatures)
    sums = tails.copy()
    fills = []
    for row, item in enumerate(wanted):
        if item[0] == "epsilon":
            fills.append(functools.partial(_fill_epsilon, *item[1:]))
        else:
            m = item[2]
            # U#'s running sums carry on from the table's end to the continuation's.
            fills.append(
                functools.partial(
                    _fill_rate,
                    _rate_record(item[1:], delta_prime),
                    m,
                    delta_prime,
                    new_state((1, m), 1),
                    sums[row],
                )
            )
    tail = tables.encode(shared, lambda row, start, values: fills[row](start, values), size)
    sums.setflags(write=False)
    return tail, sums


def _rate_record(signature: tuple, delta_prime: float) -> Any:
    return np.array([_record(signature, delta_prime)], dtype=EXPERT_DTYPE)[0]


def _record(signature: tuple, delta_prime: float, rate_row: int = -1, epsilon_row: int = -1) -> tuple:
    """An :data:`EXPERT_DTYPE` record (key 0) for ``(code, m, rate, c, alpha, coef, scale)``."""
    code, m, rate, c, alpha, coef, scale = signature
    offset = _ucb1_offset(code, rate, c, m, delta_prime)
    return (code, m, _RATES.index(rate), c, alpha, coef, scale, offset, rate_row, epsilon_row, 0)


def _ucb1_offset(code: int, rate: str, c: float, m: int, delta_prime: float) -> float:
    """``(m - 1) + t0`` of the UCB1 theory rate (docs/rates.md §1b), 0 for other rates."""
    if code != UCB1_FAMILY or rate != "theory":
        return 0.0
    return (m - 1) + math.ceil((8.0 * m / delta_prime) ** (1.0 / (2.0 * c - 2.0)))


def _build_pool(context: BuildContext) -> tuple[BanditPoolParams, BanditPoolState]:
    """Kernel parameters and fresh state of a pool of bandit experts on one replication."""
    delta_prime = context.delta_prime
    described: dict = {}  # pools repeat the same specification objects: describe each once

    def signature(expert, m):
        key = (id(expert), m)
        if key not in described:
            described[key] = (
                expert.code,
                m,
                expert.rate,
                float(getattr(expert, "c", 0.0)),
                float(getattr(expert, "alpha", 0.5)),
                float(getattr(expert, "rate_coef", 0.0)),
                float(expert.rate_scale),
            )
        return described[key]

    signatures = [signature(e, int(m)) for e, m in zip(context.experts, context.env.n_arms)]
    distinct = list(dict.fromkeys(signatures))
    shared, tail, tails, rows = _pool_tables(
        tuple(distinct), delta_prime, context.horizon, tables.TABLE_BUDGET_BYTES
    )
    # One record per distinct signature, then one fancy-indexed copy: O(K) in NumPy, not Python.
    prototypes = np.array(
        [
            _record(
                sig,
                delta_prime,
                rows.get(("rate", *sig), -1),
                rows.get(("epsilon", sig[3], sig[4], sig[1]), -1),
            )
            for sig in distinct
        ],
        dtype=EXPERT_DTYPE,
    )
    index = {signature: i for i, signature in enumerate(distinct)}
    records = prototypes[[index[signature] for signature in signatures]]
    records["key"] = context.keys
    params = BanditPoolParams(
        experts=records,
        tables=shared,
        tail=tail,
        tails=tails,
        delta_prime=delta_prime,
        delta0=float(delta_prime / 2.0),
        smoothing=context.smoothing_code(BANDITS.smoothing),
    )
    return params, new_state(context.env_params.loss_means.shape, context.n_experts)
