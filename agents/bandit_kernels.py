"""The compiled kernels of the bandit experts (:mod:`agents.bandits`): their records, the arm choice
of UCB1, decaying epsilon-greedy and Thompson sampling, training, deployment and the rates.

A pool's parameters carry the paths its kernels take as compile-time constants
(:class:`BanditPaths`: the algorithms present, the experts' common number of arms, the smoothing,
tables and their continuation), so that the round loop compiled for a pool holds only those.
The family, the specifications and the tables of functions of a count live in
:mod:`agents.bandits`, which builds the pool.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from envs.bandit import arm_loss
from mlcb.kernels import DEPLOY_SLOTS, implements, smoothing, tables
from mlcb.kernels.constants import Constants
from mlcb.kernels.jit import cold_kernel, kernel, nonnegative
from mlcb.kernels.random import GAMMA_SLOTS, beta, uniform

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


@dataclass(frozen=True)
class BanditPaths(Constants):
    """The paths a pool's kernels take, as compile-time constants (:mod:`mlcb.kernels.constants`):
    one round loop is compiled for each combination a run uses, without the others."""

    families: int  # bit 1 << code of every algorithm in the pool (UCB1_FAMILY, ...)
    arms: int  # every expert's number of arms when they share one up to MAX_CONSTANT_ARMS, else 0
    smoothing: int  # mlcb.kernels.smoothing code
    rows: bool  # every expert's functions of a count have rows in the tables (_train)
    tabulated: bool  # and the tables hold them up to count horizon + 1 (_train)


class BanditPoolParams(NamedTuple):
    experts: np.ndarray  # (K,) EXPERT_DTYPE
    tables: np.ndarray  # (R, L) float64 functions of a count (mlcb.kernels.tables), (0, 0) when none
    tail: tables.Tail  # the tables' compressed continuation, counts L .. L + N - 1 (N >= 0)
    tails: np.ndarray  # (R, 2) U#'s running sums after count L + N - 1 (rate rows of eps-greedy)
    delta_prime: float  # delta / (2K), the level at which M-LCB reads the rates
    delta0: float  # delta / (4K), internal level of clipped Thompson sampling
    paths: BanditPaths


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
def _plays(paths, expert, family):
    """Whether ``expert`` runs algorithm ``family``: a constant where the pool has no other
    algorithm, or none of this one (``paths.families``)."""
    if not (paths.families >> family) & 1:
        return False
    if paths.families == 1 << family:
        return True
    return expert.code == family


#: The most arms an expert may have for the pool's loops over arms to be compiled for their
#: number: loops of a few iterations whose length is known only at run time cost more in their
#: set-up than in their work (LLVM unrolls them, with a remainder loop to reach).
MAX_CONSTANT_ARMS = 8

#: Whether a pool's round loop is compiled for its own mix of algorithms and number of arms
#: (:class:`BanditPaths`): on the trap, 2 to 8 ns a round faster than one loop for every mix,
#: for 2 to 3 s of compilation the first time each mix is run on a machine. Code that runs many
#: small pools of different mixes, once each (random pools in a property test), may set it to
#: ``False`` for one loop that serves them all (for each smoothing and policy variant): the same
#: results, slower rounds.
SPECIALISED = True
#: Every algorithm's bit in :attr:`BanditPaths.families`.
ALL_FAMILIES = (
    (1 << UCB1_FAMILY)
    | (1 << EPSILON_GREEDY_FAMILY)
    | (1 << THOMPSON_FAMILY)
    | (1 << CLIPPED_THOMPSON_FAMILY)
)


@kernel
def _arms(paths, expert):
    """The expert's number of arms: a compile-time constant where the pool's experts share one."""
    return paths.arms if paths.arms > 0 else expert.n_arms


@kernel
def _holds(row, n, counts):
    """Whether row ``row`` (-1: none) holds count ``n`` among its first ``counts``: those of
    the tables, or of the tables and their continuation."""
    return row >= 0 and n < counts


@kernel
def _epsilon_of(tables_, tail, expert, progress, j):
    """Epsilon-greedy expert's exploration probability at its own round ``j``: tabulated, stored
    in the tables' continuation, or computed (``progress`` is its state record)."""
    row = expert.epsilon_row
    length = tables_.shape[1]
    if _holds(row, j, length):
        return tables_[nonnegative(row), j]
    if row >= 0:
        return _stored_epsilon(tail, length, expert, progress, j)
    return epsilon(expert.c, expert.alpha, expert.n_arms, j)


@kernel
def _stored_epsilon(tail, length, expert, progress, j):
    """:func:`_epsilon_of` past tables of ``length`` counts that hold the expert's row: from their
    continuation, or computed where it does not hold ``j``."""
    eps = tables.decode(tail, length, expert.epsilon_row, j, progress.cursors[1])
    if eps != eps:  # not stored: computed
        eps = epsilon(expert.c, expert.alpha, expert.n_arms, j)
    return eps


@kernel
def _current_arm(paths, expert, arms, k, j, key, counter, slot, delta0, eps):
    """Arm played by expert ``k`` at its own round ``j``; randomness at ``(counter, slot..)``;
    ``eps`` is an epsilon-greedy expert's exploration probability (:func:`_epsilon_of`).

    Returns ``(arm, eps, greedy)``: for epsilon-greedy the exploration probability and the
    exploit arm (its decision is ``(1 - eps) [greedy] + eps / m``); otherwise ``eps = -1``.
    """
    m = _arms(paths, expert)
    if _plays(paths, expert, EPSILON_GREEDY_FAMILY):
        greedy = _greedy_arm(arms, k, m)
        arm = greedy
        if uniform(key, counter, slot) < eps:
            arm = nonnegative(min(int(uniform(key, counter, slot + 1) * m), m - 1))
        return arm, eps, greedy
    thompson = (paths.families >> THOMPSON_FAMILY) & 1 or (paths.families >> CLIPPED_THOMPSON_FAMILY) & 1
    arm = 0
    if _plays(paths, expert, UCB1_FAMILY):
        arm = _ucb1_arm(expert.c, arms, k, m, j)
    elif thompson:
        clipped = _plays(paths, expert, CLIPPED_THOMPSON_FAMILY)
        arm = _thompson_arm(arms, k, m, key, counter, slot, clipped, delta0)
    return arm, -1.0, arm


# --- kernels ---------------------------------------------------------------------------------
@kernel
def _choose(params, state, expert, k, j, schedule):
    """Expert ``k``'s arm at its own round ``j``, ``schedule`` its exploration probability when it
    is epsilon-greedy, with the decisions' running sums: returns ``(arm, eps)``
    (:func:`_current_arm`)."""
    paths = params.paths
    arm, eps, greedy = _current_arm(
        paths, expert, state.arms, k, j, expert.key, j, 0, params.delta0, schedule
    )
    # The decisions' running sums serve the deployments that draw from them alone.
    if paths.smoothing == smoothing.AVERAGE or paths.smoothing == smoothing.UNIFORM:
        if _plays(paths, expert, EPSILON_GREEDY_FAMILY):  # (eps >= 0)
            m = _arms(paths, expert)
            for a in range(m):
                state.arms[k, a].weight += eps / m
            state.arms[k, greedy].weight += 1.0 - eps
        else:
            state.arms[k, arm].weight += 1.0
    return arm, eps


@kernel
def _play(state, env_params, k, t, j, arm):
    """Expert ``k`` plays ``arm`` at round ``t``, its own round ``j``: returns the loss."""
    loss = arm_loss(env_params, t, k, arm)
    played = state.arms[k, arm]
    played.pulls += 1
    played.losses += loss
    state.experts[k].steps = j
    return loss


@kernel
def _train_any(params, state, env_params, env_state, k, t):
    """:func:`_train` at any count: its functions of the count read from the tables, from their
    continuation, or computed."""
    paths = params.paths
    expert = params.experts[k]
    progress = state.experts[k]
    j = nonnegative(progress.steps) + 1
    row = expert.rate_row
    # Counts below `stored` are read: from the tables, then from their continuation.
    length = params.tables.shape[1]
    stored = length + params.tail.codes.shape[1]
    tabulated = _holds(row, j, length)
    continued = not tabulated and _holds(row, j, stored)
    schedule = -1.0
    greedy_expert = _plays(paths, expert, EPSILON_GREEDY_FAMILY)
    if greedy_expert:
        schedule = _epsilon_of(params.tables, params.tail, expert, progress, j)
    arm, eps = _choose(params, state, expert, k, j, schedule)
    # (U#'s step before the loss is drawn, as it always was: with it after the draw, the round
    # loop of runs past their tables ran 3 % slower on the trap at T = 10^7, M = 2.)
    if greedy_expert and not (tabulated or continued) and expert.rate_kind == THEORY_RATE:
        if row >= 0 and j == stored:
            # The first count past what is stored: the running sums it stopped at.
            progress.epsilon_sum = params.tails[row, 0]
            progress.rate_sum = params.tails[row, 1]
        _sharp_rate_step_in_place(progress, _arms(paths, expert), j, eps, params.delta_prime)
    loss = _play(state, env_params, k, t, j, arm)
    if tabulated:
        return loss, params.tables[nonnegative(row), j]
    if continued:
        # Every count is read once, in order: each in the cursor's block or the next.
        return loss, tables.decode(params.tail, length, row, j, progress.cursors[0])
    return loss, _rate(expert, state, k, j, params.delta_prime)


#: :func:`_train_any` out of line, for a pool whose experts all have their rows (``paths.rows``)
#: at a count past what is stored: past the tables where they hold every count of the horizon
#: (``paths.tabulated``: a session driven beyond the horizon it was built for), else past their
#: continuation.
_train_past_horizon = cold_kernel(_train_any.py_func)


@implements("train", BanditPoolParams)
@kernel
def _train(params, state, env_params, env_state, k, t):
    paths = params.paths
    if not paths.rows:
        return _train_any(params, state, env_params, env_state, k, t)
    # Every function of the count has its row: each is one read within the tables (and, where
    # they hold every count of the horizon, the round loop carries no other path, which cost more
    # than the reads themselves: a quarter of a trained expert's instructions on the trap).
    expert = params.experts[k]
    j = nonnegative(state.experts[k].steps) + 1
    if j >= params.tables.shape[1]:
        if paths.tabulated:
            return _train_past_horizon(params, state, env_params, env_state, k, t)
        return _train_continued(params, state, env_params, env_state, k, t, j)
    schedule = -1.0
    if _plays(paths, expert, EPSILON_GREEDY_FAMILY):
        schedule = params.tables[nonnegative(expert.epsilon_row), j]
    arm, _ = _choose(params, state, expert, k, j, schedule)
    return _play(state, env_params, k, t, j, arm), params.tables[nonnegative(expert.rate_row), j]


@kernel
def _train_continued(params, state, env_params, env_state, k, t, j):
    """:func:`_train` past the tables (``j`` their length or more) of a pool whose experts all
    have their rows: from the tables' continuation, each read a load within a block of its
    reader's window; past the continuation, :func:`_train_any` out of line."""
    expert = params.experts[k]
    progress = state.experts[k]
    length = params.tables.shape[1]
    if j >= length + params.tail.codes.shape[1]:
        return _train_past_horizon(params, state, env_params, env_state, k, t)
    schedule = -1.0
    if _plays(params.paths, expert, EPSILON_GREEDY_FAMILY):
        schedule = _stored_epsilon(params.tail, length, expert, progress, j)
    arm, _ = _choose(params, state, expert, k, j, schedule)
    loss = _play(state, env_params, k, t, j, arm)
    # Every count is read once, in order: each in the cursor's block or the next.
    return loss, tables.decode(params.tail, length, expert.rate_row, j, progress.cursors[0])


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
    # (The first arm apart, as in the sums below: LLVM leaves a loop of a few steps as a loop.)
    first = float(arms[k, 0].pulls) if by_pulls else arms[k, 0].weight
    total = 0.0 + first
    weighted = 0.0 + first * means[k, 0]
    for a in range(1, m):
        w = float(arms[k, a].pulls) if by_pulls else arms[k, a].weight
        total += w
        weighted += w * means[k, a]
    target = u * total
    cumulative = 0.0 + first
    if target < cumulative:
        return 0, weighted / total
    for a in range(1, m):
        a = nonnegative(a)
        cumulative += float(arms[k, a].pulls) if by_pulls else arms[k, a].weight
        if target < cumulative:
            return a, weighted / total
    return m - 1, weighted / total


@kernel
def _deploy_current(params, state, env_params, k, t, key, base):
    """Deploy expert ``k``'s current decision at round ``t`` (randomness from ``key`` at slots
    from ``base``): ``(loss, expected loss)``."""
    expert = params.experts[k]
    m = _arms(params.paths, expert)
    means = env_params.loss_means
    j = nonnegative(state.experts[k].steps) + 1
    schedule = -1.0
    greedy_expert = _plays(params.paths, expert, EPSILON_GREEDY_FAMILY)
    if greedy_expert:
        schedule = _epsilon_of(params.tables, params.tail, expert, state.experts[k], j)
    arm, eps, greedy = _current_arm(
        params.paths, expert, state.arms, k, j, key, t, base, params.delta0, schedule
    )
    if not greedy_expert:  # (eps < 0)
        return arm_loss(env_params, t, k, arm), means[k, arm]
    expected = (1.0 - eps) * means[k, greedy]
    for a in range(m):
        expected += eps / m * means[k, a]
    return arm_loss(env_params, t, k, arm), expected


#: :func:`_deploy_current` out of line, for the experts deployed before their first training.
_deploy_untrained = cold_kernel(_deploy_current.py_func)


@implements("deploy", BanditPoolParams)
@kernel
def _deploy(params, state, env_params, env_state, k, t, key, slot):
    expert = params.experts[k]
    m = _arms(params.paths, expert)
    means = env_params.loss_means
    base = slot * DEPLOY_SLOTS
    wrapper = params.paths.smoothing
    if wrapper == smoothing.LAST:
        return _deploy_current(params, state, env_params, k, t, key, base)
    # An expert never trained yet has no past iterate: its current decision is deployed (rare: a
    # call, so that the arm choice is not compiled a second time into every round loop).
    if state.experts[k].steps == 0:
        return _deploy_untrained(params, state, env_params, k, t, key, base)
    arm, expected = _mixture(state.arms, means, k, m, uniform(key, t, base), wrapper == smoothing.COUNTS)
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
