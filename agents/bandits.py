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
the algorithm inside the kernels (:mod:`agents.bandit_kernels`, whose names this module re-exports).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from agents import bandit_kernels, rates
from agents.bandit_kernels import (  # noqa: F401  (re-exported: the family's kernels, as before)
    _RATES,
    ALL_FAMILIES,
    ARM_DTYPE,
    CLIPPED_THOMPSON_FAMILY,
    EPSILON_GREEDY_FAMILY,
    EXPERT_DTYPE,
    MAX_CONSTANT_ARMS,
    THOMPSON_FAMILY,
    UCB1_FAMILY,
    BanditPaths,
    BanditPoolParams,
    BanditPoolState,
    _rate,
    _ucb1_arm,
    deploy_arm,
    deploy_by_counts,
    epsilon,
    new_state,
    sharp_rate_step,
    ucb_delta_value,
)
from agents.family import BanditEnvironmentFamily
from mlcb import validation
from mlcb.contracts import BuildContext
from mlcb.kernels import tables
from mlcb.kernels.jit import njit
from mlcb.validation import InputError


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
        if not (validation.is_real(self.alpha) and 0 < self.alpha < 1):
            raise InputError(f"alpha must be a number in (0, 1), got {self.alpha!r}")
        self._check_rate()

    @property
    def rate_exponent(self) -> float:
        """The exponent of the rate's growth in ``n`` (what the theory figures read): ``alpha`` for
        the authors' rate ``n^alpha (m log n)^(1 - alpha)``; for the valid rate ``U#``,
        ``max(alpha, 1 - alpha/2)``, since below ``alpha = 2/3`` its exploitation term, of order
        ``n^(1 - alpha/2)``, outgrows the exploration's ``n^alpha``."""
        alpha = float(self.alpha)
        return alpha if self.rate == "authors" or alpha >= 2.0 / 3.0 else 1.0 - alpha / 2.0

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
    """``(m - 1) + t0`` of the UCB1 theory rate (docs/rates.md §1b), 0 for other rates; ``inf``
    where ``t0`` is beyond the largest float (``c`` near 1), and the rate is then ``n``, as
    :func:`agents.rates.ucb1_rate` gives it."""
    if code != UCB1_FAMILY or rate != "theory":
        return 0.0
    try:
        t0 = (8.0 * m / delta_prime) ** (1.0 / (2.0 * c - 2.0))
    except OverflowError:
        return math.inf
    return (m - 1) + math.ceil(t0) if math.isfinite(t0) else math.inf


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
    arms = {sig[1] for sig in distinct}
    specialised = bandit_kernels.SPECIALISED  # (read when the pool is built: a test may change it)
    # Whether every expert's functions of a count have rows (in tables of any length, none
    # included): the authors' UCB1 rate depends on more than the count.
    rows_exist = specialised and all(("rate", *sig) in _wanted_rows((sig,)) for sig in distinct)
    paths = BanditPaths(
        families=sum(1 << code for code in {sig[0] for sig in distinct}) if specialised else ALL_FAMILIES,
        arms=arms.pop() if specialised and len(arms) == 1 and next(iter(arms)) <= MAX_CONSTANT_ARMS else 0,
        smoothing=context.smoothing_code(BANDITS.smoothing),
        rows=rows_exist,
        # Every count of the horizon (at most horizon + 1 trainings) read from the tables.
        tabulated=rows_exist and shared.shape[1] >= context.horizon + 2,
    )
    params = BanditPoolParams(
        experts=records,
        tables=shared,
        tail=tail,
        tails=tails,
        delta_prime=delta_prime,
        delta0=float(delta_prime / 2.0),
        paths=paths,
    )
    return params, new_state(context.env_params.loss_means.shape, context.n_experts)
