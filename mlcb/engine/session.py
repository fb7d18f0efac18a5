"""One replication's round protocol, played one round at a time from Python: :class:`Session`.

The compiled loop (:mod:`mlcb.engine.compiled_loop`) and the Python loop
(:mod:`mlcb.engine.python_loop`) play every round of a replication themselves. Adapters that live
inside a loop of someone else's play the same protocol through a session: the Gymnasium
environment of :mod:`mlcb.selection_env` (an agent steps it) and the river estimators of
:mod:`mlcb.river` (river feeds them one sample at a time). A round of a session is:

1. :meth:`Session.select` -- the policy's training set and deployed expert (or
   :meth:`Session.choose`, an agent's decision);
2. :meth:`Session.deployed` -- the deployed expert's loss on the round's data;
3. :meth:`Session.trained` -- each expert of the training set, its training loss and its rate
   at its new count;
4. :meth:`Session.end` -- the round's accounting, by the engine's own kernels
   (``account_deployed``, ``account_trained``, ``account_end``) in the engine's order: a session
   fed the engine's decisions and losses records the engine's numbers bit for bit, and a loss
   that is not a number in ``[0, 1]`` raises :class:`~mlcb.errors.ExpertLossError` naming the
   expert and the round, as the engine does.

Before round 1 every expert is trained once (the warm start, :meth:`Session.warm_start`), or,
sample by sample, :meth:`Session.warm_sample` and :meth:`Session.end_warm` (a warm start of
several samples, as the river estimators run it).

Experts are named by their index in the pool throughout; the policy sees them in identity order
(:func:`mlcb.engine.identity_order`), as in the engine, so that its ties are broken by identity.

Statistics
----------
``"trained"`` (the engine's): an expert's mean loss is its mean training loss, its count its
updates. ``"pool"``: every expert is scored on every round's data before any learns it
(:meth:`Session.score`), and its mean loss is the mean of its latest scores -- over a window of
at most ``window`` rounds, of those only the ones scored when it had at least ``keep`` times the
updates it has now (its loss *as it is now*); its count stays its updates, and every expert's
statistics change every round, so the policy observes all of them at the end of each round.

What an adapter deploys by: :meth:`Session.best`, the expert with the smallest upper bound over
all experts (the policy's own ``upper_bounds``, else M-LCB's Hoeffding bound; with ``"pool"``
statistics the smallest mean loss).
"""

from __future__ import annotations

import math
from array import array
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from mlcb import kernels, validation
from mlcb.engine import compiled_loop
from mlcb.engine import replications as _replications
from mlcb.engine.lean_session import rate_table
from mlcb.engine.python_loop import _compiled, _pick
from mlcb.errors import ExpertError, ExpertLossError
from mlcb.kernels import dispatch, observe
from mlcb.kernels.seeding import stream_keys
from mlcb.kernels.stats import new_stats
from mlcb.policies.hoeffding import hoeffding_upper_bounds
from mlcb.validation import InputError

#: What a session's statistics are (module docstring).
STATISTICS = ("trained", "pool")


# --- the compiled halves of a round -------------------------------------------------------------
def _warm(policy_params, policy_state, stats, record, losses, rates):
    return compiled_loop.account_warm_start(policy_params, policy_state, stats, record, losses, rates)


def _finish(
    policy_params, policy_state, stats, accounting, record, t, n, chosen, deploy_losses, deploy_expected, io
):
    """The engine's end of round ``t``: ``io`` (2, W) holds the training losses and rates.
    Returns ``(error code, the round's deployed loss)``."""
    code, loss = compiled_loop.account_deployed(
        stats, accounting, record, t, n, chosen, deploy_losses, deploy_expected
    )
    if code != compiled_loop.OK:
        return code, loss
    for j in range(n):
        code = compiled_loop.account_trained(
            policy_params, policy_state, stats, accounting, record, t, j, io[0, j], io[1, j]
        )
        if code != compiled_loop.OK:
            return code, loss
    compiled_loop.account_end(policy_params, policy_state, stats, accounting, record, t, n, chosen, loss)
    return compiled_loop.OK, loss


def _finish_pool(
    policy_params, policy_state, stats, accounting, record, t, n, chosen, deploy_losses, deploy_expected, io
):
    """The end of round ``t`` with ``"pool"`` statistics: the trained experts count one more
    update (their widths go to the certificate, as in ``account_trained``), then every expert's
    statistics become ``io[1, k]`` (its mean loss, at its new count) and ``io[2, k]`` (its rate),
    and the policy observes it with its score ``io[0, k]``."""
    code, loss = compiled_loop.account_deployed(
        stats, accounting, record, t, n, chosen, deploy_losses, deploy_expected
    )
    if code != compiled_loop.OK:
        return code, loss
    for j in range(n):
        compiled_loop.account_width(accounting, record, j)
        stats[record.selected[j]].n += 1
    for k in range(stats.shape[0]):
        expert = stats[k]
        expert.loss_sum = expert.n * io[1, k]
        expert.rate = io[2, k]
        observe(policy_params, policy_state, stats, k, io[0, k], t)
    compiled_loop.account_end(policy_params, policy_state, stats, accounting, record, t, n, chosen, loss)
    return compiled_loop.OK, loss


_WARM = _compiled(_warm)
_FINISH = _compiled(_finish)
_FINISH_POOL = _compiled(_finish_pool)


# --- a policy for agents ------------------------------------------------------------------------
class AgentParams(NamedTuple):
    """The parameters of :data:`AGENT`: decisions come from outside (a Gymnasium agent)."""

    n_experts: int


class AgentState(NamedTuple):
    """The (empty) state of :data:`AGENT`."""

    unused: int


class _Agent:
    """The policy of a session whose decisions come from outside: it registers no kernel (its
    ``observe`` and ``end_round`` compile to nothing), so :meth:`Session.select` cannot be used."""

    warm_start = True
    name = "agent"

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[AgentParams, AgentState]:
        return AgentParams(int(n_experts)), AgentState(0)


#: The policy of a session driven by an agent (:meth:`Session.choose`).
AGENT = _Agent()


# --- rates and windows --------------------------------------------------------------------------
class _RateTable:
    """``U(n)`` of one expert at ``n = 0, 1, ...``, extended by doubling
    (:func:`mlcb.engine.lean_session.rate_table`)."""

    def __init__(self, rate: Callable[[np.ndarray], np.ndarray], name: str) -> None:
        self.rate, self.name = rate, name
        self.values = array("d")

    def __call__(self, n: int) -> float:
        if n >= len(self.values):
            self.values = rate_table(self.rate, n, self.name)
        return self.values[n]


class _Window:
    """An expert's latest scores, each with its count of updates when scored (``"pool"``)."""

    __slots__ = ("scores", "total")

    def __init__(self, size: int) -> None:
        self.scores: deque[tuple[float, int]] = deque(maxlen=size)
        self.total = 0.0

    def push(self, loss: float, count: int) -> None:
        if len(self.scores) == self.scores.maxlen:
            self.total -= self.scores[0][0]
        self.scores.append((loss, count))
        self.total += loss

    def mean(self, count: int, keep: float) -> float:
        """The mean over the window after dropping the scores made with fewer than ``keep *
        count`` updates (the latest one is always kept). Counts only grow and the window is in
        scoring order, so the dropped scores are its oldest."""
        scores = self.scores
        while len(scores) > 1 and scores[0][1] < keep * count:
            self.total -= scores.popleft()[0]
        if not scores:
            return math.nan
        # The running total drifts by rounding as scores leave it: a window of zeros after
        # (0.1, 0.7, 0.3) sums to -5.6e-17. Scores lie in [0, 1], and so does their mean.
        return min(1.0, max(0.0, self.total / len(scores)))


# --- the session ----------------------------------------------------------------------------------
class Session:
    """One replication of the round protocol, played round by round (module docstring).

    Build one with :meth:`for_problem` (a simulation's setting: its environment's regret reference,
    its pool's identities) or :meth:`standalone` (a pool outside any simulation: regret is then
    measured against 0, so ``regret`` is the summed deployed loss).

    Examples
    --------
    >>> import numpy as np
    >>> from mlcb import policies
    >>> session = Session.standalone(
    ...     policies.make("mlcb"), 3, budget=1, delta=0.1, horizon=10, rates=[np.sqrt] * 3
    ... )
    >>> session.warm_start([0.5, 0.2, 0.9])
    >>> train, deployed = session.select(1)
    >>> train, deployed
    ([1], 1)
    >>> session.deployed(0.0)
    >>> session.trained(1, 0.0)
    >>> session.end()
    0.0
    >>> session.counts.tolist(), session.mean_losses.round(2).tolist()
    ([1, 2, 1], [0.5, 0.1, 0.9])
    """

    def __init__(
        self,
        policy: Any,
        built: _replications.Built,
        *,
        budget: int,
        delta: float,
        horizon: int,
        rates: Sequence[Callable[[np.ndarray], np.ndarray]] | None = None,
        statistics: str = "trained",
        window: int = 200,
        keep: float = 0.5,
        names: Sequence[str] | None = None,
        replication: int | None = None,
    ) -> None:
        if statistics not in STATISTICS:
            raise InputError(f"statistics must be one of {STATISTICS}, got {statistics!r}")
        n_experts = int(built.stats.shape[0])
        budget = validation.budget(budget, n_experts)
        delta = validation.open_unit("delta", delta)
        horizon = validation.integer("horizon", horizon)
        window = validation.integer("window", window)
        if not (validation.is_real(keep) and 0.0 <= keep <= 1.0):
            raise InputError(f"keep must be a number in [0, 1], got {keep!r}")
        if rates is not None:
            if isinstance(rates, (str, bytes)) or not isinstance(rates, Sequence) or len(rates) != n_experts:
                raise InputError(
                    f"rates must be a list of one rate function per expert ({n_experts}), got {rates!r}"
                )
            for k, rate in enumerate(rates):
                if not callable(rate):
                    raise InputError(f"rates[{k}] must be a function of the counts n, got {rate!r}")
        if names is not None and (isinstance(names, (str, bytes)) or len(names) != n_experts):
            raise InputError(f"names must be a list of one name per expert ({n_experts}), got {names!r}")
        self.policy = policy
        self._built = built
        self.params, self.state = built.policy_params, built.policy_state
        self.stats, self.accounting, self.record = built.stats, built.accounting, built.record
        n = self.n_experts = int(self.stats.shape[0])
        self.budget, self.delta, self.horizon = int(budget), float(delta), int(horizon)
        self.statistics, self.keep = statistics, float(keep)
        self.replication = replication
        self._problem: Any = None  # the problem and seed of a session built for_problem (its pool)
        self._seed = 0
        self._names = list(names) if names is not None else [f"expert {k}" for k in range(n)]
        order = _replications.full_order(self.record, n)
        self._order = order.tolist()  # position -> pool index
        self._position = [0] * n  # pool index -> position
        for i, k in enumerate(self._order):
            self._position[k] = i
        self._tables = (
            [_RateTable(rate, f"rates[{k}]") for k, rate in enumerate(rates)] if rates is not None else None
        )
        self._windows = [_Window(int(window)) for _ in range(n)] if statistics == "pool" else None
        width = self.record.selected.shape[0]
        self._io = np.zeros((3, max(width, n)))
        samples = (self.params, self.state)
        self._warm_kernel = _pick(_WARM, *samples)
        self._finish = _pick(_FINISH_POOL if statistics == "pool" else _FINISH, *samples)
        self._grow = getattr(policy, "grow", None)
        self._room = self.horizon  # rounds the policy's state was built (or grown) for
        self.t = 0  # the last round begun (0: the warm start)
        self._n_selected = 0
        self._open = False  # a round begun (select or choose) and not yet ended
        self._chosen = -1  # the deployed position, -1: the whole training set
        self._deployed_set = False
        self._trained = [False] * width
        self._warm_seen = 0
        self._warm_sums = np.zeros(n)
        self._warm_done = False
        self._scored = False
        self._means = np.full(n, math.nan)  # "pool": each expert's window mean (pool order)

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def for_problem(
        cls, problem: Any, replication: int, *, seed: int | None = None, policy: Any = None
    ) -> Session:
        """The session of replication ``replication`` of a built setting ``problem``
        (:class:`mlcb.engine.problem.Problem`: its horizon, and its seed unless ``seed`` is given);
        ``policy`` replaces the problem's (:data:`AGENT` for decisions from outside). Its
        :attr:`environment` holds the environment's parameters and state."""
        seed = problem.seed if seed is None else seed
        horizon = problem.horizon
        built = _replications.build_common(problem, seed, replication, horizon, np.zeros(0, dtype=np.int64))
        if policy is not None:
            n = len(problem.experts)
            built.policy_params, built.policy_state = policy.build(
                n, problem.budget, problem.delta, horizon, built.accounting.optimal
            )
        session = cls(
            policy if policy is not None else problem.policy,
            built,
            budget=problem.budget,
            delta=problem.delta,
            horizon=horizon,
            replication=replication,
        )
        session._problem, session._seed = problem, seed
        return session

    def pool(self) -> Any:
        """The pool of a session built :meth:`for_problem`: its experts for this replication (a
        :class:`~mlcb.contracts.BatchedPool` over a batch of one, as the Python engine builds
        it), named in the session's errors; the caller drives it (``train`` and ``deploy`` with
        replication index 0)."""
        from mlcb.engine import python_loop

        problem = self._problem
        if problem is None:
            raise RuntimeError("pool: only a session built for a problem (Session.for_problem) has one")
        _, pool = python_loop.pool_over(
            problem,
            int(self._seed),
            problem.horizon,
            [int(self.replication or 0)],
            [self.environment],
            [self.stream_keys],
        )
        self.name_experts([pool.describe(0, k) for k in range(self.n_experts)])
        return pool

    @classmethod
    def standalone(
        cls,
        policy: Any,
        n_experts: int,
        *,
        budget: int,
        delta: float,
        horizon: int,
        seed: int = 0,
        identities: Sequence[int] | None = None,
        rates: Sequence[Callable[[np.ndarray], np.ndarray]] | None = None,
        statistics: str = "trained",
        window: int = 200,
        keep: float = 0.5,
        names: Sequence[str] | None = None,
    ) -> Session:
        """A session of ``n_experts`` experts outside any simulation: no environment, regret
        against 0. ``identities`` order the experts for the policy (ties go to the smaller);
        ``rates[k](n)`` is expert ``k``'s rate ``U_k(n, delta / 2K)`` at counts ``n``, which
        :meth:`trained` reads when it is given no rate (and ``"pool"`` statistics always).

        Every argument is checked as a setting's are (``1 <= budget <= n_experts``, ``delta`` in
        (0, 1), ``horizon >= 1``, one rate per expert), an :class:`~mlcb.validation.InputError`
        naming the one at fault."""
        n_experts = validation.integer("n_experts", n_experts)
        budget = validation.budget(budget, n_experts)
        delta = validation.open_unit("delta", delta)
        horizon = validation.integer("horizon", horizon)
        keys = stream_keys(int(seed), 0, n_experts)
        order = _replications.identity_order(n_experts, identities)
        optimal = np.zeros(n_experts)
        params, state = policy.build(n_experts, budget, delta, horizon, optimal)
        width = _replications.selection_size(policy, n_experts, budget)
        accounting = compiled_loop.Accounting(optimal, 0.0, 0, 0.0, int(budget), keys.policy, keys.deploy)
        record = _replications.new_record(
            np.zeros(0, dtype=np.int64), n_experts, width, 0, order, _replications.checks_selection(policy)
        )
        built = _replications.Built(None, None, keys, params, state, new_stats(n_experts), accounting, record)
        return cls(
            policy,
            built,
            budget=budget,
            delta=delta,
            horizon=horizon,
            rates=rates,
            statistics=statistics,
            window=window,
            keep=keep,
            names=names,
        )

    @property
    def environment(self) -> tuple[Any, Any]:
        """``(env_params, env_state)`` of a session built :meth:`for_problem`."""
        return self._built.env_params, self._built.env_state

    @property
    def identity_order(self) -> list[int]:
        """The pool indices in the order the policy sees them (:func:`mlcb.engine.identity_order`)."""
        return list(self._order)

    @property
    def best_expert(self) -> int:
        """``k*``, the expert of smallest ``L_k*`` (a pool index; known to the simulator only)."""
        return self._order[int(self.accounting.best_expert)]

    @property
    def optimal_loss(self) -> float:
        """``L*``, what regret is measured against in each round."""
        return float(self.accounting.best_loss)

    def name_experts(self, names: Sequence[str]) -> None:
        """How errors name each expert (pool order): its class, say."""
        if len(names) != self.n_experts:
            raise InputError(f"one name per expert ({self.n_experts}), got {len(names)}")
        self._names = [str(name) for name in names]

    @property
    def stream_keys(self) -> Any:
        """The replication's random stream keys (:func:`mlcb.kernels.seeding.stream_keys`)."""
        return self._built.keys

    # --- errors -------------------------------------------------------------------------------
    def _raise(self) -> None:
        _replications.raise_for_error(self.record, self.replication, self._names.__getitem__)

    def _bad(self, what: str, k: int, value: Any) -> ExpertLossError:
        return ExpertLossError(what, self.t, k, value, self._names[k], self.replication)

    def _rate(self, k: int, n: int) -> float:
        if self._tables is None:
            raise InputError(f"{self._names[k]}: no rate given and this session has no rate functions")
        return self._check_rate(self._tables[k](n), k)

    def _check_rate(self, value: Any, k: int) -> float:
        """``value`` as a rate: a finite number >= 0, else an :class:`~mlcb.errors.ExpertError`
        naming the expert and the round."""
        if not isinstance(value, bool | str | bytes) and value is not None:
            try:
                rate = float(value)
            except (TypeError, ValueError):
                rate = math.nan
            if math.isfinite(rate) and rate >= 0.0:
                return rate
        raise ExpertError(
            f"rate is {value!r}; rates must be finite numbers >= 0",
            expert=k,
            expert_class=self._names[k],
            replication=self.replication,
            round_=self.t,
        )

    # --- the warm start -----------------------------------------------------------------------
    def warm_start(
        self,
        losses: Sequence[float],
        rates: Sequence[float] | None = None,
        updates: Sequence[int] | None = None,
    ) -> None:
        """Every expert trained before round 1: expert ``k`` (pool index) with training loss
        ``losses[k]`` and rate ``rates[k]`` (default: its rate function's at its new count). With
        ``updates[k] = c > 1`` its statistics count ``c`` updates of that (mean) loss, as the
        Python engine does for a learner that made several in the warm start."""
        if self._warm_done:
            raise RuntimeError("the warm start was already recorded")
        n = self.n_experts
        for name, values in (("losses", losses), ("rates", rates), ("updates", updates)):
            if values is not None and (
                isinstance(values, (str, bytes)) or np.ndim(values) != 1 or len(values) != n
            ):
                raise InputError(f"warm_start: {name} must hold one value per expert ({n}), got {values!r}")
        if updates is not None:
            updates = [validation.integer(f"updates[{k}]", c) for k, c in enumerate(updates)]
        counts = [1] * n if updates is None else list(updates)
        order, stats = self._order, self.stats
        loss_row = np.array([float(losses[k]) for k in order])
        extra = 0
        for i, k in enumerate(order):
            c = counts[k]
            if c > 1:
                stats["n"][i] += c - 1
                stats["loss_sum"][i] += (c - 1) * loss_row[i]
                extra += c - 1
        rate_row = np.array(
            [self._check_rate(rates[k], k) if rates is not None else self._rate(k, counts[k]) for k in order]
        )
        if extra and self._grow is not None:  # a policy that records every update needs room
            self.state = self._grow(self.params, self.state, extra)
        code = self._warm_kernel(self.params, self.state, stats, self.record, loss_row, rate_row)
        if code != compiled_loop.OK:
            self._raise()
        self._warm_done = True

    def skip_warm_start(self) -> None:
        """Start at round 1 without a warm start (every expert with no update yet)."""
        if self._warm_seen:
            raise RuntimeError("skip_warm_start: a warm start of several samples is under way")
        self._warm_done = True

    def warm_sample(self, losses: Sequence[float]) -> None:
        """One sample of a warm start of several: every expert scored ``losses[k]`` on it and
        then learnt it (``"pool"`` statistics push the scores into the windows)."""
        self._check_scores(losses)
        count = self._warm_seen
        for k, loss in enumerate(losses):
            self._warm_sums[k] += loss
            if self._windows is not None:
                self._windows[k].push(float(loss), count)
        self._warm_seen += 1

    def end_warm(self) -> None:
        """End a warm start of several samples: each expert counts their number of updates, with
        its mean loss over them (``"pool"``: over its window)."""
        c = self._warm_seen
        if c < 1:
            raise RuntimeError("end_warm: no warm-start sample was recorded")
        if self._windows is not None:
            means = [w.mean(c, self.keep) for w in self._windows]
            self._means[:] = means
        else:
            means = (self._warm_sums / c).tolist()
        self.warm_start(means, updates=[c] * self.n_experts)

    # --- a round ------------------------------------------------------------------------------
    def _begin(self, t: int) -> None:
        if not self._warm_done and getattr(self.policy, "warm_start", True):
            raise RuntimeError("record the warm start before round 1")
        if t != self.t + 1:
            raise RuntimeError(f"round {t} after round {self.t}: rounds are played in order")
        if t > self._room and self._grow is not None:  # past the horizon: room for as many again
            self.state = self._grow(self.params, self.state, self._room * self.budget)
            self._room *= 2
        self.t = t
        self._open = True
        self._deployed_set = False
        self._scored = False
        self._trained = [False] * self.record.selected.shape[0]

    def select(self, t: int) -> tuple[list[int], int]:
        """Begin round ``t`` with the policy's choice: its training set (pool indices, in the
        order it trains them) and its deployed expert (``-1``: the whole training set)."""
        self._begin(t)
        n, chosen = kernels.select(
            self.params,
            self.state,
            self.stats,
            t,
            self.accounting.policy_key,
            self.record.selected,
            self.record.widths,
        )
        self._n_selected, self._chosen = int(n), int(chosen)
        return self.training_set, (self._order[self._chosen] if self._chosen >= 0 else -1)

    def choose(self, t: int, train: Sequence[int], deployed: int) -> None:
        """Begin round ``t`` with an agent's choice: ``train`` (distinct pool indices, trained in
        that order) and ``deployed`` (a pool index). Their widths are ``nan``: no certificate."""
        train, deployed = validation.decision(train, deployed, self.n_experts, self.record.selected.shape[0])
        self._begin(t)
        n = len(train)
        for j, k in enumerate(train):
            self.record.selected[j] = self._position[k]
        self.record.widths[:] = math.nan
        self._n_selected, self._chosen = n, self._position[deployed]

    @property
    def training_set(self) -> list[int]:
        """This round's training set (pool indices, in training order)."""
        return [self._order[int(i)] for i in self.record.selected[: self._n_selected]]

    def _in_round(self, what: str) -> None:
        if not self._open:
            raise RuntimeError(
                f"{what}: no round is under way; begin one with select(t) or choose(t, train, deployed)"
            )

    def deployed(self, loss: float | Sequence[float], expected: float | Sequence[float] = math.nan) -> None:
        """The deployed expert's loss (and expected loss; ``nan``: unknown) on this round's data;
        when the policy deploys its whole training set, one of each per member, in order."""
        self._in_round("deployed")
        many = self._chosen < 0
        if many and (np.isscalar(loss) or not isinstance(loss, Sequence | np.ndarray)):
            raise InputError(
                f"deployed: the whole training set {self.training_set} is deployed; give one loss per "
                f"member, got {loss!r}"
            )
        losses = list(loss) if many else [loss]  # type: ignore[arg-type]
        if many and len(losses) != self._n_selected:
            raise InputError(
                f"deployed: one loss per member of the training set {self.training_set}, got {len(losses)}"
            )
        values = list(expected) if many and not np.isscalar(expected) else [expected] * len(losses)  # type: ignore[arg-type]
        for j, (a, b) in enumerate(zip(losses, values)):
            self.record.deploy_losses[j] = _number(a, self, "deployed loss", self._deployed_index(j))
            self.record.deploy_expected[j] = _number(b, self, "expected loss", self._deployed_index(j))
        self._deployed_set = True

    def _deployed_index(self, j: int) -> int:
        position = self._chosen if self._chosen >= 0 else int(self.record.selected[j])
        return self._order[position]

    def score(self, losses: Sequence[float]) -> None:
        """``"pool"`` statistics: every expert's loss (pool index order) on this round's data,
        scored before any expert learns it."""
        if self._windows is None:
            raise RuntimeError("score: only sessions with 'pool' statistics score every expert")
        self._in_round("score")
        self._check_scores(losses)
        stats_n = self.stats["n"]
        io = self._io
        for k, loss in enumerate(losses):
            i = self._position[k]
            io[0, i] = loss
            self._windows[k].push(float(loss), int(stats_n[i]))
        self._scored = True

    def _check_scores(self, losses: Sequence[float]) -> None:
        if len(losses) != self.n_experts:
            raise InputError(f"one loss per expert ({self.n_experts}), got {len(losses)}")
        for k, loss in enumerate(losses):
            number = isinstance(loss, float | int | np.floating | np.integer) and not isinstance(loss, bool)
            if not (number and 0.0 <= loss <= 1.0):
                raise self._bad("loss", k, loss)

    def trained(self, k: int, loss: float | None = None, rate: float | None = None) -> None:
        """Expert ``k`` (a pool index of the training set) trained on this round's data with
        training ``loss`` and new ``rate`` (default: its rate function's at its new count). With
        ``"pool"`` statistics the loss is its score (:meth:`score`) and may be left out."""
        self._in_round("trained")
        position = self._position[validation.index("expert", k, self.n_experts)]
        members = self.record.selected[: self._n_selected].tolist()
        if position not in members:
            raise InputError(f"expert {k} is not in this round's training set {self.training_set}")
        j = members.index(position)
        self._trained[j] = True
        if self._windows is None:
            if loss is None:
                raise InputError(f"trained: the training loss of expert {k} is needed")
            n = int(self.stats["n"][position]) + 1
            self._io[0, j] = _number(loss, self, "training loss", k)
            self._io[1, j] = self._check_rate(rate, k) if rate is not None else self._rate(k, n)

    def end(self) -> float:
        """The round's accounting (module docstring); returns its deployed loss."""
        self._in_round("end")
        if not self._deployed_set:
            raise RuntimeError(f"round {self.t}: no deployed loss was recorded")
        missing = [self.training_set[j] for j in range(self._n_selected) if not self._trained[j]]
        if missing:
            raise RuntimeError(f"round {self.t}: experts {missing} of the training set were not trained")
        io = self._io
        if self._windows is not None:
            if not self._scored:
                raise RuntimeError(f"round {self.t}: 'pool' statistics need every expert's score")
            counts = self.stats["n"].copy()
            counts[self.record.selected[: self._n_selected]] += 1
            for i, k in enumerate(self._order):
                io[1, i] = self._means[k] = self._windows[k].mean(int(counts[i]), self.keep)
                io[2, i] = self._rate(k, int(counts[i]))
        code, loss = dispatch.call(
            self._finish,
            self.params,
            self.state,
            self.stats,
            self.accounting,
            self.record,
            self.t,
            self._n_selected,
            self._chosen,
            self.record.deploy_losses,
            self.record.deploy_expected,
            io,
        )
        if code != compiled_loop.OK:
            self._raise()
        self._deployed_set = False
        self._open = False
        return float(loss)

    # --- what adapters read -------------------------------------------------------------------
    def _by_pool(self, row: np.ndarray) -> np.ndarray:
        out = np.empty_like(row)
        out[self._order] = row
        return out

    @property
    def counts(self) -> np.ndarray:
        """Each expert's updates (pool order; during a warm start of several samples, the samples
        learnt so far)."""
        if not self._warm_done and self._warm_seen:
            return np.full(self.n_experts, self._warm_seen, dtype=np.int64)
        return self._by_pool(self.stats["n"].copy())

    @property
    def mean_losses(self) -> np.ndarray:
        """Each expert's mean loss as the policy sees it (pool order; ``nan`` before any):
        during a warm start of several samples, its mean over them."""
        if not self._warm_done and self._warm_seen:
            return self._warm_sums / self._warm_seen
        n = self.stats["n"].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(n > 0, self.stats["loss_sum"] / n, math.nan)
        return self._by_pool(means)

    @property
    def rates(self) -> np.ndarray:
        """Each expert's rate after its last update (pool order)."""
        return self._by_pool(self.stats["rate"].copy())

    @property
    def regret(self) -> float:
        """The summed deployed loss minus ``L*`` per round (``L* = 0`` :meth:`standalone`)."""
        return float(self.record.totals[0])

    @property
    def pseudo_regret(self) -> float:
        """The summed expected deployed loss minus ``L*`` per round (``nan`` if one is unknown)."""
        return float(self.record.totals[1])

    def upper_bounds(self) -> np.ndarray:
        """Each expert's upper confidence bound on its loss (pool order): the policy's own
        (``upper_bounds(params, state, stats)``), else M-LCB's Hoeffding bound ``L_k +
        sqrt(2 log(4 K n^2 / delta) / n)`` (:func:`mlcb.policies.hoeffding.hoeffding_upper_bounds`);
        with ``"pool"`` statistics the mean losses (every expert scored on the same data: the
        means compare as they are); ``inf`` for an expert without statistics yet."""
        if self._windows is not None:
            if not self._warm_done:
                row = np.array([w.mean(self._warm_seen, self.keep) for w in self._windows])
                return np.where(np.isnan(row), np.inf, row)
            return np.where(np.isnan(self._means), np.inf, self._means)
        if not self._warm_done:
            return np.where(self._warm_seen > 0, self._warm_sums, np.inf)
        own = getattr(self.policy, "upper_bounds", None)
        bounds = own(self.params, self.state, self.stats) if own is not None else None
        if bounds is None:
            bounds = hoeffding_upper_bounds(self.stats, self.delta)
        return self._by_pool(np.asarray(bounds, dtype=np.float64))

    def checked(self) -> np.ndarray:
        """Whether each expert's predictions have been checked (pool order): its statistics hold
        a loss scored after it learnt at least once (with ``"pool"`` statistics its latest score
        was made with at least one update; else it has at least two updates, the second scored
        after the first). Before that, its loss is that of an untrained model, which says
        nothing of what it predicts now."""
        if self._windows is not None:
            return np.array([bool(w.scores) and w.scores[-1][1] >= 1 for w in self._windows])
        return self.counts >= 2

    def best(self) -> int | None:
        """The checked expert (:meth:`checked`) with the smallest upper bound
        (:meth:`upper_bounds`; ties: the smaller identity), or ``None`` while there is none: no
        model whose predictions nothing has checked is deployed."""
        upper, checked = self.upper_bounds(), self.checked()
        best = None
        for k in self._order:  # identity order: ties go to the smaller identity
            if checked[k] and upper[k] < math.inf and (best is None or upper[k] < upper[best]):
                best = k
        return best


def _number(value: Any, session: Session, what: str, k: int) -> float:
    """``value`` as a float, or an :class:`ExpertLossError` naming the expert and the round."""
    if isinstance(value, bool | str | bytes) or value is None:
        raise session._bad(what, k, value)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise session._bad(what, k, value) from None


__all__ = ["AGENT", "STATISTICS", "AgentParams", "AgentState", "Session"]
