"""The selection loop both river estimators share: validation, the pool's canonical order, the
policy's statistics and the defaults (:mod:`mlcb.river` describes them)."""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np
from river import base

from mlcb import kernels
from mlcb.engine import compiled_loop
from mlcb.engine.replications import selection_size
from mlcb.errors import PolicyStateFull
from mlcb.kernels.seeding import check_seed, stream_keys
from mlcb.learners import power_rate

#: The probability below which the scaled log-loss is 1: ``loss = min(1, -ln p / -ln floor)``.
LOG_LOSS_FLOOR = 0.01
_CLASSIFIER_LOSSES = ("zero-one", "log")


def canonical_order(models: list) -> list[int]:
    """The positions of ``models`` sorted by their canonical key (``repr``, then class path).

    Two models with the same key have the same class and parameters: interchangeable, so the
    order among them (kept as given) changes nothing for deterministic models.

    Examples
    --------
    >>> from river import linear_model, optim
    >>> canonical_order([linear_model.LinearRegression(optimizer=optim.SGD(lr))
    ...                  for lr in (0.1, 0.01)])
    [1, 0]
    """
    keys = [(repr(m), f"{type(m).__module__}.{type(m).__qualname__}") for m in models]
    return sorted(range(len(models)), key=keys.__getitem__)


def _check_common(
    models: Any,
    budget: Any,
    policy: Any,
    policy_params: Any,
    delta: Any,
    rate: Any,
    horizon: Any,
    seed: Any,
    warm_start: Any,
) -> list[tuple[float, float]]:
    """Validate the parameters shared by both estimators; returns each model's ``(beta, alpha)``,
    in the order given."""
    from mlcb import policies

    n = len(models)
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or not 1 <= budget <= n:
        raise ValueError(
            f"budget must be an integer with 1 <= budget <= {n} (the number of models), got {budget!r}"
        )
    if not isinstance(policy, str) or policy not in policies.names():
        raise ValueError(f"policy must be one of {', '.join(policies.names())}, got {policy!r}")
    if policy_params is not None and not isinstance(policy_params, dict):
        raise ValueError(f"policy_params must be None or a dict, got {policy_params!r}")
    if not (isinstance(delta, (int, float)) and not isinstance(delta, bool) and 0 < delta < 1):
        raise ValueError(f"delta must be a number with 0 < delta < 1, got {delta!r}")
    pair = _rate_pair(rate)
    rates: list[tuple[float, float] | None]
    if pair is not None:
        rates = [pair] * n
    else:
        try:
            rates = [_rate_pair(r) for r in rate] if not isinstance(rate, str) else []
        except TypeError:
            rates = []
        if len(rates) != n or None in rates:
            raise ValueError(
                "rate must be a pair (beta, alpha) with beta > 0 and 0 < alpha <= 1, or a list of "
                f"{n} such pairs (one per model, in the order given), got {rate!r}"
            )
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
    if isinstance(warm_start, bool) or not isinstance(warm_start, (int, np.integer)) or warm_start < 1:
        raise ValueError(f"warm_start must be an integer >= 1, got {warm_start!r}")
    check_seed(seed)
    return [pair for pair in rates if pair is not None]  # all of them (checked above)


def _rate_pair(rate: Any) -> tuple[float, float] | None:
    """``(beta, alpha)`` as floats when ``rate`` is a valid pair, else ``None``."""
    try:
        beta, alpha = (float(v) for v in rate)
    except (TypeError, ValueError):
        return None
    return (beta, alpha) if beta > 0 and math.isfinite(beta) and 0 < alpha <= 1 else None


def nonparametric(model: Any) -> bool:
    """Whether ``model`` (or the last step of a pipeline) is a nonparametric river model: one of
    river's ``neighbors``, ``tree`` or ``forest`` modules, which grow with the data.

    >>> from river import linear_model, neighbors, preprocessing
    >>> nonparametric(preprocessing.StandardScaler() | neighbors.KNNClassifier())
    True
    >>> nonparametric(linear_model.LogisticRegression())
    False
    """
    while hasattr(model, "steps"):
        model = list(model.steps.values())[-1]
    return type(model).__module__.startswith(("river.neighbors.", "river.tree.", "river.forest."))


#: The default number of samples on which every model learns before the policy selects.
WARM_START = 20
#: What the policy's statistics are: ``"pool"``, every model scored on every sample (M-LCB's
#: default), or ``"trained"``, each model scored on the samples it learns (the paper's M-LCB).
STATISTICS = ("pool", "trained")
#: The policies that read ``"pool"`` statistics: their bounds depend on each model's statistics only.
POOL_POLICIES = ("mlcb", "mlcb-topm")
#: The default number of most recent samples over which ``"pool"`` statistics average.
WINDOW = 200
#: The default heuristic rate ``(beta, alpha)`` of every model with ``"trained"`` statistics
#: (and the presets' rate, whose simulator runs trained statistics).
RATE = (1 / math.sqrt(2), 0.5)
#: The default heuristic rate with ``"pool"`` statistics (see the module's docstring).
POOL_RATE = (0.1, 0.5)
#: The default heuristic rate of a :func:`nonparametric` model with ``"pool"`` statistics: a
#: slower learner from a poorer start, whose regret grows like ``n^(3/4)``.
NONPARAMETRIC_POOL_RATE = (0.3, 0.75)
#: Which model predicts: ``"best"``, the smallest upper bound over all models, or ``"policy"``,
#: the policy's own deployed model (M-LCB: the smallest upper bound among those it trains).
DEPLOY_RULES = ("best", "policy")
#: The constructor parameters both estimators share.
_SHARED = (
    "budget",
    "policy",
    "policy_params",
    "statistics",
    "window",
    "delta",
    "rate",
    "warm_start",
    "deploy",
    "horizon",
    "seed",
)


class _Budgeted:
    """The selection loop both estimators share (mixed into a river ``ModelSelector``)."""

    # Set by _init (the shared parameters), by river's Ensemble (models) and by the estimator.
    models: list
    budget: int
    policy: str
    policy_params: dict | None
    statistics: str | None
    window: int
    delta: float
    rate: Any
    warm_start: int
    deploy: str
    horizon: int
    seed: int
    _loss: Any

    def _init(self, models: list, kind: Any, shared: dict) -> None:
        """Store the pool and the parameters both estimators share (:data:`_SHARED`, which river
        reads back as the constructor's arguments), check that every model is a ``kind``, and
        build the policy."""
        base.Ensemble.__init__(self, models)
        noun = "classifier" if kind is base.Classifier else "regressor"
        for k, model in enumerate(self.models):
            if not isinstance(model, kind):
                raise ValueError(f"models[{k}]: {type(model).__name__} is not a river {noun}")
        for name in _SHARED:
            setattr(self, name, shared[name])
        self._setup()

    def _setup(self) -> None:
        from mlcb import policies

        n = len(self.models)
        statistics = self.statistics
        if statistics is None:
            statistics = "pool" if self.policy in POOL_POLICIES else "trained"
        if statistics not in STATISTICS:
            raise ValueError(f"statistics must be None or one of {STATISTICS}, got {self.statistics!r}")
        if statistics == "pool" and self.policy not in POOL_POLICIES:
            raise ValueError(
                f"statistics='pool' needs an M-LCB policy ({', '.join(POOL_POLICIES)}), got "
                f"{self.policy!r}; pass statistics='trained'"
            )
        window = self.window
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
            raise ValueError(f"window must be an integer >= 1, got {window!r}")
        self._pool = statistics == "pool"
        rate = self.rate
        if rate is None and self._pool:
            rate = [NONPARAMETRIC_POOL_RATE if nonparametric(m) else POOL_RATE for m in self.models]
        elif rate is None:
            rate = RATE
        rates = _check_common(
            self.models,
            self.budget,
            self.policy,
            self.policy_params,
            self.delta,
            rate,
            self.horizon,
            self.seed,
            self.warm_start,
        )
        if self.deploy not in DEPLOY_RULES:
            raise ValueError(f"deploy must be one of {DEPLOY_RULES}, got {self.deploy!r}")
        scale = (
            (self.policy_params or {}).get("bonus_scale", 1.0)
            if self.policy in ("mlcb", "mlcb-topm")
            else 1.0
        )
        self._upper_scale = float(scale)
        params = dict(self.policy_params or {})
        if self._pool:
            # Every model's bounds change on every sample: M-LCB scans them all, no heap.
            params["selection"] = "scan"
        self._policy = policies.make(self.policy, **params)
        self._order = canonical_order(self.models)
        self._rates = [rates[i] for i in self._order]  # (beta, alpha) by canonical position
        self._params, self._state = self._policy.build(
            n, int(self.budget), float(self.delta), int(self.horizon), np.zeros(n)
        )
        width = selection_size(self._policy, n, int(self.budget))
        self._stats = compiled_loop.new_stats(n)
        self._selected = np.zeros(width, dtype=np.int64)
        self._widths = np.zeros(width)
        self._key = stream_keys(int(self.seed), 0, n).policy
        self._delta_prime = float(self.delta) / (2.0 * n)
        self._t = 0  # the round whose training is pending (0: the warm start)
        self._n_selected = 0
        self._deployed = 0  # a canonical position: the model that predicts
        self._chosen = 0  # the policy's own deployed model (what its end of round is told)
        self._upper = [math.inf] * n  # each model's upper confidence bound (deploy="best")
        self._warm_seen = 0  # samples of the warm start learnt so far
        self._warm_sums = [0.0] * n  # each model's summed loss over them
        # "pool": the last losses, each with the model's count of updates when it was scored
        self._windows: list[deque] = [deque(maxlen=int(window)) for _ in range(n)]
        self._window_sums = [0.0] * n
        self._warm = bool(getattr(self._policy, "warm_start", True))
        if not self._warm:
            self._begin(1)

    # --- the policy's round ---------------------------------------------------------------------
    def _begin(self, t: int) -> None:
        self._t = t
        n, k = kernels.select(
            self._params, self._state, self._stats, t, self._key, self._selected, self._widths
        )
        self._n_selected = int(n)
        # A policy that deploys its whole training set (k = -1) answers with its first member.
        self._chosen = int(k) if k >= 0 else int(self._selected[0])
        self._deployed = self._chosen
        if self.deploy == "best":
            upper = self._upper
            best = min(range(len(upper)), key=upper.__getitem__)  # ties: canonical order
            if upper[best] < math.inf:
                self._deployed = best

    def _update_upper(self, position: int) -> None:
        """Model ``position``'s upper bound: its mean loss plus M-LCB's width
        ``sqrt(2 log(4 K n^2 / delta) / n)`` (times the policy's ``bonus_scale``, if any); with
        ``"pool"`` statistics its mean loss over its window (samples every model was scored on)."""
        if self._pool:  # the smallest recent mean is the smallest bound
            self._upper[position] = self._window_mean(position)
            return
        expert = self._stats[position]
        n = float(expert["n"])
        k = len(self.models)
        width = math.sqrt(2.0 * math.log(4.0 * k * n * n / float(self.delta)) / n)
        self._upper[position] = float(expert["loss_sum"]) / n + self._upper_scale * width

    def _rate(self, position: int, n: Any) -> float:
        """Model ``position``'s rate ``U(n)`` (its own ``(beta, alpha)``)."""
        beta, alpha = self._rates[position]
        return float(power_rate(n, beta, alpha, self._delta_prime))

    def _model(self, position: int) -> Any:
        return self.models[self._order[position]]

    def _observe(self, position: int, loss: float, t: int) -> None:
        """The policy's ``observe``; a policy whose memory grows with its updates and is full (a
        stream past ``horizon``) is given room (its ``grow``) and asked again. The room, at least
        the updates so far, is more than one observation can need (it records at most the
        model's count)."""
        try:
            kernels.observe(self._params, self._state, self._stats, position, loss, t)
        except PolicyStateFull:
            grow = getattr(self._policy, "grow", None)
            if grow is None:
                raise
            room = max(1_000, int(self._stats["n"].sum()))
            self._state = grow(self._params, self._state, room)
            kernels.observe(self._params, self._state, self._stats, position, loss, t)

    def _record(self, position: int, loss: float, t: int) -> None:
        expert = self._stats[position]
        expert["n"] += 1
        expert["loss_sum"] += loss
        expert["rate"] = self._rate(position, expert["n"])
        self._observe(position, loss, t)
        self._update_upper(position)

    def _record_pool(self, position: int, loss: float, t: int) -> None:
        """``"pool"`` statistics: model ``position`` keeps its count of updates ``n``, and its mean
        loss becomes its mean over its window (:meth:`_window_mean`)."""
        expert = self._stats[position]
        n = int(expert["n"])
        expert["loss_sum"] = n * self._window_mean(position)
        expert["rate"] = self._rate(position, n)
        self._observe(position, loss, t)
        self._update_upper(position)

    def _learn_warm(self, x: dict, y: Any) -> None:
        """One sample of the warm start: every model is scored and learns; after the last one the
        policy observes each model once, with its mean loss over the warm start and a count of
        ``warm_start`` (so M-LCB's widths are those of ``warm_start`` updates)."""
        sums = self._warm_sums
        losses = self._score_pool(x, y) if self._pool else None
        for position in range(len(self.models)):
            model = self._model(position)
            sums[position] += losses[position] if losses is not None else self._loss(model, x, y)
            model.learn_one(x, y)
        self._warm_seen += 1
        # Until the policy selects, predict with the best model so far (ties: canonical order).
        means = self._window_sums if self._pool else sums
        self._deployed = min(range(len(means)), key=means.__getitem__)
        if self._warm_seen < int(self.warm_start):
            return
        count = int(self.warm_start)
        for position, total in enumerate(sums):
            expert = self._stats[position]
            expert["n"] = count
            expert["loss_sum"] = count * self._window_mean(position) if self._pool else total
            expert["rate"] = self._rate(position, count)
            self._observe(position, total / count, 0)
            self._update_upper(position)
        self._begin(1)

    def _score_pool(self, x: dict, y: Any) -> list[float]:
        """``"pool"`` statistics: every model's loss on the sample before any learns it, pushed
        into its window."""
        losses = []
        for position in range(len(self.models)):
            loss = self._loss(self._model(position), x, y)
            window = self._windows[position]
            if len(window) == window.maxlen:
                self._window_sums[position] -= window[0][0]
            window.append((loss, self._count(position)))
            self._window_sums[position] += loss
            losses.append(loss)
        return losses

    def _count(self, position: int) -> int:
        """Model ``position``'s updates so far (during the warm start: the samples learnt)."""
        return self._warm_seen if self._t == 0 else int(self._stats[position]["n"])

    def _window_mean(self, position: int) -> float:
        """``"pool"`` statistics: model ``position``'s mean loss over its window, after dropping
        the losses scored when it had fewer than half its updates now (the most recent loss is
        always kept). Counts only grow and the window is in scoring order, so the dropped
        losses are its oldest."""
        window = self._windows[position]
        count = self._count(position)
        while len(window) > 1 and 2 * window[0][1] < count:
            self._window_sums[position] -= window.popleft()[0]
        return self._window_sums[position] / len(window)

    def learn_one(self, x: dict, y: Any) -> None:
        self._before(y)
        t = self._t
        if t == 0:
            self._learn_warm(x, y)
            self._after(y)
            return
        positions = self._selected[: self._n_selected].tolist()
        deployed = self._chosen  # the policy's end of round hears of its own choice
        deployed_loss: float | None
        if self._pool:
            losses = self._score_pool(x, y)
            deployed_loss = losses[deployed]
            for position in positions:
                self._model(position).learn_one(x, y)
                self._stats[position]["n"] += 1
            for position in range(len(self.models)):  # every window moved: every bound changes
                self._record_pool(position, losses[position], t)
        else:
            deployed_loss = None if deployed in positions else self._loss(self._model(deployed), x, y)
            for position in positions:
                model = self._model(position)
                loss = self._loss(model, x, y)
                if position == deployed:
                    deployed_loss = loss
                model.learn_one(x, y)
                self._record(position, loss, t)
        kernels.end_round(
            self._params,
            self._state,
            self._stats,
            self._selected,
            self._n_selected,
            deployed,
            deployed_loss,
            t,
        )
        self._after(y)
        self._begin(t + 1)

    def _before(self, y: Any) -> None:
        """Hook run before a sample is learnt (the regressor's target range)."""

    def _after(self, y: Any) -> None:
        """Hook run after a sample is learnt."""

    # --- what users read ------------------------------------------------------------------------
    @property
    def best_model(self) -> Any:
        """The model that predicts now (see ``deploy``); during the warm start the model with the
        smallest loss so far (before any sample: the canonically first one)."""
        return self._model(self._deployed)

    def _counts_and_sums(self) -> list[tuple[int, float]]:
        """``(updates, summed loss)`` of each model, in canonical order (the warm start included
        while it runs)."""
        if self._t == 0 and self._warm:
            return [(self._warm_seen, total) for total in self._warm_sums]
        return [(int(e["n"]), float(e["loss_sum"])) for e in self._stats]

    @property
    def n_updates(self) -> int:
        """Model updates (``learn_one`` calls on pool members) so far."""
        return sum(n for n, _ in self._counts_and_sums())

    @property
    def trained_counts(self) -> list[int]:
        """How many samples each model (in the order given) has learnt."""
        counts = [0] * len(self.models)
        for (n, _), index in zip(self._counts_and_sums(), self._order):
            counts[index] = n
        return counts

    @property
    def mean_losses(self) -> list[float]:
        """Each model's mean loss as the policy sees it (``nan`` before it learns), in the order
        given: with ``"trained"`` statistics its mean over the samples it learnt; with ``"pool"``
        ones, after the warm start, its mean over its window (the last ``window`` samples, of
        those the ones scored when it had at least half its current updates)."""
        out = [math.nan] * len(self.models)
        for (n, total), index in zip(self._counts_and_sums(), self._order):
            if n:
                out[index] = total / n
        return out
