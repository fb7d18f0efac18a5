"""M-LCB as a river model selector: :class:`BudgetedClassifier` and :class:`BudgetedRegressor`.

river's own selectors (``model_selection.BanditClassifier``, ``SuccessiveHalvingClassifier``)
train the models a bandit picks on each sample and predict with the best so far. The two
estimators here do the same with a budget that is a cap: after a warm start (every model learns
the first ``warm_start`` samples, 20 by default) the chosen policy of :mod:`mlcb.policies` (M-LCB
by default) selects at most ``budget`` models on each sample; those, and only those, learn from
it, and ``predict_one`` answers with the deployed model. With ``budget`` equal to the number of
models every model learns every sample.

Losses are in ``[0, 1]`` and score a model's prediction on a sample *before* it learns it
(progressive validation): 0-1 loss (or log-loss, clipped and scaled) for classification, clipped
scaled squared error for regression. What the policy is told, ``statistics``:

``"pool"`` (M-LCB's default)
    Every model, trained or not, is scored on every sample: ``K`` predictions per sample, while
    the budget caps the updates (``learn_one`` calls), not the predictions. A model's mean loss
    is its mean over the last ``window`` samples (200 by default) that were scored when it had at
    least half the updates it has now, an estimate of its loss *as it is now* (the losses of a
    model that has since learnt much more, such as its first samples of the warm start, are
    dropped); its count ``n`` stays its number of updates. M-LCB's lower bound then reads ``mean -
    U(n) / n``: if a model's loss only falls as it learns and its regret after ``n`` updates is
    at most ``U(n)``, then ``n (loss now - L*) <= U(n)``, so the bound is below the loss ``L*``
    it would reach. The model that predicts (``deploy="best"``) is the one with the smallest
    such mean: every model is scored on the same samples. This departs from the
    paper's M-LCB, whose statistics are each model's own training losses; it is the default
    because it measured better (docs/river.md). Only M-LCB (``"mlcb"``, ``"mlcb-topm"``), whose
    bounds depend on each model's statistics alone, reads it.
``"trained"`` (the paper's; the default of every other policy)
    The policy sees, for each model it trained, the loss on that sample; a model's mean loss is
    its mean over the samples it learnt.

A model's rate is ``beta n^alpha sqrt(log(2 n^2 / delta'))`` with ``rate = (beta, alpha)``, a
heuristic (no guarantee holds for an arbitrary river model). By default, with ``"pool"``
statistics, :data:`POOL_RATE`, ``(0.1, 1/2)``, for a parametric model (a model's loss after ``n``
updates is then taken to be at most ``0.1 sqrt(log(2 n^2 / delta') / n)`` above its limit, about
0.04 at ``n = 100``) and :data:`NONPARAMETRIC_POOL_RATE`, ``(0.3, 3/4)``, for a
:func:`nonparametric` one (k-NN, trees, forests: models that grow with the data learn more
slowly, from a poor start, so their regret grows faster than ``sqrt(n)`` and they stay worth
training longer); with
``"trained"`` statistics :data:`RATE`, ``(1/sqrt 2, 1/2)``, for every model. ``rate`` may also
give each model its own pair. The defaults and the warm start of 20 were chosen on shuffles other
than the benchmark's (docs/river.md). At the end of the warm start the policy observes each
model once, with a count of ``warm_start`` and its mean loss (over the warm start, or with
``"pool"`` statistics over its window, which then holds the losses of the warm start's second
half): its bounds are those of that many updates.

The pool's order does not matter: the models are ranked once by a canonical key (their ``repr``,
which lists their class and parameters) and the policy sees them in that order, so its ties are
broken by the key, never by a position in the list. Every random draw of a policy comes from a
counter-based stream seeded by ``seed``.

river is an optional dependency: importing this module without it raises one ``ImportError``
saying what to install.

Examples
--------
>>> from river import datasets, evaluate, linear_model, metrics, optim, preprocessing, tree
>>> from mlcb.river import BudgetedClassifier
>>> models = [
...     preprocessing.StandardScaler() | linear_model.LogisticRegression(optimizer=optim.SGD(lr))
...     for lr in (0.005, 0.05, 0.5)
... ] + [tree.HoeffdingTreeClassifier()]
>>> model = BudgetedClassifier(models, budget=1)
>>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
Accuracy: 87.91%
>>> model.n_updates  # the warm start's 4 x 20, then one per sample
1310
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

try:
    from river import base
    from river.model_selection.base import ModelSelector
except ImportError:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError("mlcb.river needs river: pip install 'mlcb[river]'") from None

from mlcb import kernels
from mlcb.engine import compiled_loop
from mlcb.engine.replications import selection_size
from mlcb.errors import PolicyStateFull
from mlcb.learners import power_rate
from mlcb.seeding import check_seed, stream_keys

__all__ = ["BudgetedClassifier", "BudgetedRegressor", "canonical_order", "nonparametric", "LOG_LOSS_FLOOR"]

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
    return rates


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
        self._windows = [deque(maxlen=int(window)) for _ in range(n)]
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


class BudgetedClassifier(_Budgeted, ModelSelector, base.Classifier):
    """Train at most ``budget`` models per sample, chosen by an mlcb policy; predict with the
    deployed one.

    Parameters
    ----------
    models
        At least two river classifiers.
    budget
        ``M``, the most models that learn from one sample (``1 <= budget <= len(models)``).
    policy
        A registered policy (:func:`mlcb.policies.names`); ``"mlcb"`` by default.
    policy_params
        The policy's parameters (e.g. ``{"bonus_scale": 0.5}``).
    loss
        ``"zero-one"`` (default): 1 when the model's prediction is wrong. ``"log"``: the log-loss of
        the probability the model gives the true label, scaled so that a probability of
        :data:`LOG_LOSS_FLOOR` or less costs 1: ``min(1, ln p / ln 0.01)``.
    statistics
        What the policy is told (the module's docstring). ``"pool"``: every model is scored on
        every sample (``K`` predictions per sample; the budget caps updates, not predictions) and
        a model's mean loss is its mean over the last ``window`` samples scored when it had at
        least half its current updates, its count its number of updates; only M-LCB reads it
        (and then scans every bound on every sample: its ``selection`` is ``"scan"``).
        ``"trained"``: the paper's, a model's mean loss over the samples it learnt. ``None``
        (default): ``"pool"`` for M-LCB (``"mlcb"``, ``"mlcb-topm"``), ``"trained"`` for every
        other policy.
    window
        With ``"pool"`` statistics, over how many of the most recent samples a model's mean loss
        is taken at most (an integer >= 1, default :data:`WINDOW`, 200); of those, only the ones
        scored when the model had at least half its current updates count.
    delta
        The policy's confidence level, ``0 < delta < 1``.
    rate
        ``(beta, alpha)``: each model's heuristic rate ``beta n^alpha sqrt(log(2 n^2 / delta'))``,
        or a list of such pairs, one per model in the order given. ``None`` (default): with
        ``"pool"`` statistics :data:`POOL_RATE`, ``(0.1, 1/2)``, for each model and
        :data:`NONPARAMETRIC_POOL_RATE`, ``(0.3, 3/4)``, for each :func:`nonparametric` one;
        with ``"trained"`` ones :data:`RATE`, ``(1/sqrt 2, 1/2)``, for every model.
    warm_start
        How many samples every model learns before the policy selects (an integer >= 1, default
        :data:`WARM_START`, 20); meanwhile the selector predicts with the model of smallest loss so
        far. The policy then observes each model once, with its mean loss (``"pool"``: over its
        window, the warm start's second half) and a count of ``warm_start``. (Policies that
        declare no warm start select from the first sample.)
    deploy
        Which model predicts. ``"best"`` (default): the model with the smallest upper bound over
        *all* models, ties in canonical order, whichever the policy trains now: with ``"pool"``
        statistics the smallest mean loss over its window (every model is scored on the same
        samples); with ``"trained"`` ones the smallest ``mean loss + sqrt(2 log(4 K n^2 / delta)
        / n)`` (M-LCB's upper bound, times its ``bonus_scale``), the model whose loss is
        certified smallest. ``"policy"``: the policy's own deployed model (M-LCB: the smallest
        upper bound among the models it trains on the sample, so at ``budget=1`` the model being
        trained). The policy's statistics are the same either way; with ``budget`` equal to the
        number of models both rules agree.
    horizon
        Passed to horizon-dependent policies (and sizes M-LCB's look-up table); nothing stops
        after it.
    seed
        Seed of the policy's random draws (policies that draw).

    Examples
    --------
    >>> from river import datasets, linear_model, naive_bayes, optim, preprocessing
    >>> from mlcb.river import BudgetedClassifier
    >>> model = BudgetedClassifier(
    ...     [preprocessing.StandardScaler() | linear_model.LogisticRegression(optimizer=optim.SGD(0.1)),
    ...      naive_bayes.GaussianNB()],
    ...     budget=1,
    ... )
    >>> for x, y in datasets.Phishing().take(200):
    ...     _ = model.predict_one(x)
    ...     model.learn_one(x, y)
    >>> model.trained_counts  # both learn the first 20; then the logistic regression takes most updates
    [195, 25]
    """

    def __init__(
        self,
        models: list,
        budget: int = 1,
        policy: str = "mlcb",
        policy_params: dict | None = None,
        loss: str = "zero-one",
        statistics: str | None = None,
        window: int = WINDOW,
        delta: float = 0.1,
        rate: tuple | None = None,
        warm_start: int = WARM_START,
        deploy: str = "best",
        horizon: int = 100_000,
        seed: int = 0,
    ) -> None:
        if loss not in _CLASSIFIER_LOSSES:
            raise ValueError(f"loss must be one of {_CLASSIFIER_LOSSES}, got {loss!r}")
        self.loss = loss
        self._log_scale = -math.log(LOG_LOSS_FLOOR)
        self._init(models, base.Classifier, {k: v for k, v in locals().items() if k in _SHARED})

    @property
    def _multiclass(self) -> bool:
        return all(model._multiclass for model in self.models)

    def _loss(self, model: Any, x: dict, y: Any) -> float:
        if self.loss == "zero-one":
            return 0.0 if model.predict_one(x) == y else 1.0
        p = model.predict_proba_one(x).get(y, 0.0)
        return 1.0 if p <= LOG_LOSS_FLOOR else min(1.0, -math.log(p) / self._log_scale)

    def predict_proba_one(self, x: dict) -> dict:
        proba = self.best_model.predict_proba_one(x)
        if self._multiclass:
            return proba
        # A binary selector answers for both labels, whatever labels its deployed model has seen.
        if True in proba or False in proba:
            p = float(proba.get(True, 1.0 - float(proba.get(False, 0.0))))
        else:
            p = 0.5
        return {False: 1.0 - p, True: p}

    def predict_one(self, x: dict, **kwargs: Any) -> Any:
        return self.best_model.predict_one(x, **kwargs)

    @classmethod
    def _unit_test_params(cls):
        from river import linear_model, naive_bayes, optim, preprocessing, tree

        yield {
            "models": [
                preprocessing.StandardScaler() | linear_model.LogisticRegression(optimizer=optim.SGD(lr))
                for lr in (0.01, 0.1)
            ]
            + [naive_bayes.GaussianNB()],
            "budget": 1,
        }
        yield {
            "models": [tree.HoeffdingTreeClassifier(), naive_bayes.GaussianNB()],
            "budget": 2,
        }


class BudgetedRegressor(_Budgeted, ModelSelector, base.Regressor):
    """Train at most ``budget`` regressors per sample, chosen by an mlcb policy; predict with the
    deployed one.

    The loss of a prediction ``y_hat`` is ``min(1, ((y - y_hat) / scale)^2)``. With ``scale=None``
    (default) ``scale`` is the range ``max y - min y`` of the targets seen before the sample
    (a loss of 1 while that range is 0 and the prediction is off); pass the target's range when
    it is known.

    Parameters are those of :class:`BudgetedClassifier`, with ``scale`` in place of ``loss``.

    Examples
    --------
    >>> from river import datasets, linear_model, optim, preprocessing
    >>> from mlcb.river import BudgetedRegressor
    >>> model = BudgetedRegressor(
    ...     [preprocessing.StandardScaler() | linear_model.LinearRegression(optimizer=optim.SGD(lr))
    ...      for lr in (0.001, 0.01, 0.1)],
    ...     budget=2,
    ... )
    >>> for x, y in datasets.TrumpApproval().take(300):
    ...     _ = model.predict_one(x)
    ...     model.learn_one(x, y)
    >>> model.n_updates  # 3 x 20 in the warm start, then 2 per sample
    620
    """

    def __init__(
        self,
        models: list,
        budget: int = 1,
        policy: str = "mlcb",
        policy_params: dict | None = None,
        scale: float | None = None,
        statistics: str | None = None,
        window: int = WINDOW,
        delta: float = 0.1,
        rate: tuple | None = None,
        warm_start: int = WARM_START,
        deploy: str = "best",
        horizon: int = 100_000,
        seed: int = 0,
    ) -> None:
        if scale is not None and not (
            isinstance(scale, (int, float))
            and not isinstance(scale, bool)
            and math.isfinite(scale)
            and scale > 0
        ):
            raise ValueError(f"scale must be None or a finite number > 0, got {scale!r}")
        self.scale = scale
        self._low = math.inf
        self._high = -math.inf
        self._init(models, base.Regressor, {k: v for k, v in locals().items() if k in _SHARED})

    def _after(self, y: Any) -> None:
        y = float(y)
        self._low = min(self._low, y)
        self._high = max(self._high, y)

    def _loss(self, model: Any, x: dict, y: Any) -> float:
        prediction = model.predict_one(x)
        residual = float(y) - (0.0 if prediction is None else float(prediction))
        scale = self.scale if self.scale is not None else self._high - self._low
        if not scale > 0:
            return 0.0 if residual == 0 else 1.0
        value = (residual / scale) ** 2
        return min(1.0, value) if value == value else 1.0

    def predict_one(self, x: dict) -> Any:
        return self.best_model.predict_one(x)

    @classmethod
    def _unit_test_params(cls):
        from river import linear_model, optim, preprocessing

        yield {
            "models": [
                preprocessing.StandardScaler() | linear_model.LinearRegression(optimizer=optim.SGD(lr))
                for lr in (0.001, 0.01, 0.1)
            ],
            "budget": 1,
        }


# --- the comparison with river's own selectors ------------------------------------------------
#: The selectors :func:`compare` runs, in the order of its table.
SELECTORS = ("mlcb", "epsilon-greedy", "ucb", "successive-halving", "train-everything")


def selector(name: str, models: list, budget: int = 1, horizon: int = 2_000, seed: int = 0) -> Any:
    """A fresh selector over clones of ``models``, as :func:`compare` runs it.

    ``"mlcb"``
        :class:`BudgetedClassifier` with ``budget`` and its defaults (``"pool"`` statistics).
    ``"epsilon-greedy"``, ``"ucb"``
        river's ``BanditClassifier`` with the policy of river's own documentation example:
        ``EpsilonGreedy(epsilon=0.1, decay=0.001, burn_in=20, seed=seed)``, and
        ``UCB(delta=1, burn_in=20, seed=seed)``; accuracy as the reward.
    ``"successive-halving"``
        river's ``SuccessiveHalvingClassifier`` with ``budget = horizon`` model updates for its
        halving rounds and ``eta = 2`` (after them its best model keeps learning every sample).
    ``"train-everything"``
        :class:`BudgetedClassifier` with ``budget = len(models)`` and ``"trained"`` statistics:
        every model learns every sample and the one with the smallest upper bound (with equal
        counts: the smallest mean loss since the first sample, the best so far) predicts.
    """
    from river import bandit, metrics, model_selection

    fresh = [m.clone() for m in models]
    if name == "mlcb":
        return BudgetedClassifier(fresh, budget=budget, seed=seed)
    if name == "epsilon-greedy":
        policy = bandit.EpsilonGreedy(epsilon=0.1, decay=0.001, burn_in=20, seed=seed)
        return model_selection.BanditClassifier(fresh, metric=metrics.Accuracy(), policy=policy)
    if name == "ucb":
        policy = bandit.UCB(delta=1.0, burn_in=20, seed=seed)
        return model_selection.BanditClassifier(fresh, metric=metrics.Accuracy(), policy=policy)
    if name == "successive-halving":
        return model_selection.SuccessiveHalvingClassifier(
            fresh, metric=metrics.Accuracy(), budget=horizon, eta=2
        )
    if name == "train-everything":
        return BudgetedClassifier(fresh, budget=len(fresh), statistics="trained", seed=seed)
    raise ValueError(f"selector must be one of {SELECTORS}, got {name!r}")


def _count_updates(model: Any) -> list[int]:
    """Make every pool member of ``model`` count its ``learn_one`` calls into the returned cell."""
    counter = [0]
    for member in model.models:
        learn = member.learn_one

        def counted(x: dict, y: Any, _learn: Any = learn, **kwargs: Any) -> None:
            counter[0] += 1
            _learn(x, y, **kwargs)

        member.learn_one = counted
    return counter


def compare(
    dataset: str = "phishing",
    horizon: int = 2_000,
    shuffles: int = 10,
    budgets: tuple = (1, 2, 3),
    selectors: tuple = SELECTORS,
    models: list | None = None,
    seed: int = 0,
) -> Any:
    """Progressive-validation accuracy and model updates of every selector on a real-data stream.

    Shuffle ``r`` is replication ``r`` of the environment ``mlcb/RealData-v0`` with ``seed``
    (:meth:`envs.real_data.RealDataEnv.stream`): ``horizon`` rows drawn with replacement, the same
    rows for every selector. Each selector predicts every row before learning it (river's
    ``evaluate.progressive_val_score``); ``updates`` counts the ``learn_one`` calls of its pool
    members. ``models`` defaults to :func:`agents.river_experts.river_pool`; ``budgets`` are
    M-LCB's.

    Returns a pandas ``DataFrame`` with one row per (selector, shuffle): ``dataset``,
    ``selector`` (``"mlcb M=1"``, ...), ``shuffle``, ``accuracy``, ``updates``,
    ``updates_per_sample``, ``seconds``.
    """
    import time

    import pandas as pd
    from river import evaluate, metrics

    from envs.real_data import RealDataEnv

    if models is None:
        from agents.river_experts import river_pool

        models = river_pool()
    unknown = [s for s in selectors if s not in SELECTORS]
    if unknown:
        raise ValueError(f"selectors must be among {SELECTORS}, got {unknown}")
    if isinstance(shuffles, bool) or not isinstance(shuffles, int) or shuffles < 1:
        raise ValueError(f"shuffles must be an integer >= 1, got {shuffles!r}")
    env = RealDataEnv(dataset, horizon=horizon)
    rows = []
    for r in range(shuffles):
        stream = list(env.stream(seed, r, horizon))
        for name in selectors:
            for budget in budgets if name == "mlcb" else (None,):
                model = selector(name, models, budget or 1, horizon, seed=r)
                counter = _count_updates(model)
                started = time.perf_counter()
                metric = evaluate.progressive_val_score(stream, model, metrics.Accuracy())
                seconds = time.perf_counter() - started
                label = f"mlcb M={budget}" if name == "mlcb" else name
                rows.append(
                    {
                        "dataset": dataset,
                        "selector": label,
                        "shuffle": r,
                        "accuracy": float(metric.get()),
                        "updates": counter[0],
                        "updates_per_sample": counter[0] / horizon,
                        "seconds": seconds,
                    }
                )
    return pd.DataFrame(rows)
