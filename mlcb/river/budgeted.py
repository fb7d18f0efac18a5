"""The selection loop both river estimators share: validation, the pool's canonical order, the
policy's statistics and the defaults (:mod:`mlcb.river` describes them)."""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np
from river import base

from mlcb import validation
from mlcb.engine.lean_session import LeanSession
from mlcb.engine.session import Session
from mlcb.kernels.seeding import check_seed
from mlcb.learners import power_rate
from mlcb.registry import make_named
from mlcb.river.curves import CURVE_Z, LearningCurves
from mlcb.river.experts import check_features, check_target, non_numbers, what_is
from mlcb.validation import InputError, InputTypeError

_CLASSIFIER_LOSSES = ("zero-one", "log")
_REGRESSOR_LOSSES = ("absolute", "robust")


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


def _is_a(model: Any, kind: Any) -> bool:
    """``isinstance(model, kind)``, ``False`` for an empty pipeline (river's check asks a pipeline
    for its last step, and an empty one raised an ``IndexError``)."""
    try:
        return isinstance(model, kind)
    except IndexError:
        return False


def _stateful_parts(model: Any) -> dict[int, tuple[Any, str]]:
    """The river objects that ``model`` updates in place as it learns and that keep state, by
    ``id``, with the path that reaches each from the model (``.steps['StandardScaler']``,
    ``.optimizer``): the model itself, the steps of its pipelines and transformer unions, followed
    down, and the optimiser of each of those.

    An object keeps state when it holds attributes beyond its parameters (a scaler's running
    means, an optimiser's step count and moments), unless it is a transformer that keeps river's
    default ``learn_one``, which learns nothing (a feature hasher, a selection of features).
    Parameters that a model only copies (the classifier of a one-vs-rest wrapper, the search
    engine of a k-NN, the model of a bagging ensemble: river clones them) are not followed:
    sharing them is harmless."""
    from river import optim

    found: dict[int, tuple[Any, str]] = {}
    stack: list[tuple[Any, str]] = [(model, "")]
    while stack:
        obj, path = stack.pop()
        if id(obj) in found or not isinstance(obj, base.Base) or isinstance(obj, type):
            continue
        held = getattr(obj, "__dict__", {})
        try:
            names = set(inspect.signature(type(obj).__init__).parameters) - {"self"}
        except (TypeError, ValueError):  # no signature to read: its state cannot be told apart
            names = set(held)
        # river's stateless transformers keep its default learn_one, which does nothing (a
        # feature hasher's derived _seed is no state); every other object with attributes
        # beyond its parameters keeps state.
        kind = type(obj)  # (isinstance would ask a pipeline for its last step, which may be none)
        stateless = issubclass(kind, base.Transformer) and kind.learn_one is base.Transformer.learn_one
        if not stateless and set(held) - names:
            found[id(obj)] = (obj, path)
        for name in ("steps", "transformers"):  # a pipeline's steps, a union's transformers
            parts = held.get(name)
            if isinstance(parts, dict):
                stack.extend((part, f"{path}.{name}[{key!r}]") for key, part in parts.items())
        stack.extend(
            (value, f"{path}.{name}")
            for name, value in held.items()
            if name in names and isinstance(value, optim.base.Optimizer)
        )
    return found


def _check_unshared(models: list) -> None:
    """An :class:`InputError` when two models of the pool hold the same stateful part (one
    scaler in two pipelines, one optimiser in two linear models): it would learn from every
    sample once for each model that holds it, and every selector's scores would be wrong."""
    owner: dict[int, tuple[int, str]] = {}
    for k, model in enumerate(models):
        for key, (part, path) in _stateful_parts(model).items():
            if key in owner and owner[key][0] != k:
                j, first = owner[key]
                raise InputError(
                    f"models[{j}]{first} and models[{k}]{path} are the same {type(part).__name__} "
                    "object, which two models of the pool would both update on every sample: give each "
                    "model its own (build it anew, or model.clone())"
                )
            owner.setdefault(key, (k, path))


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
    in the order given (none for :data:`CURVE`)."""
    from mlcb import policies

    n = len(models)
    validation.budget(budget, n)
    if not isinstance(policy, str) or policy not in policies.names():
        raise InputError(f"policy must be one of {', '.join(policies.names())}, got {policy!r}")
    if policy_params is not None and not isinstance(policy_params, dict):
        raise InputError(f"policy_params must be None or a dict, got {policy_params!r}")
    if not (validation.is_real(delta) and 0 < delta < 1):
        raise InputError(f"delta must be a number with 0 < delta < 1, got {delta!r}")
    rates: list[tuple[float, float] | None]
    if isinstance(rate, str) and rate == CURVE:
        rates = []
    elif (pair := _rate_pair(rate)) is not None:
        rates = [pair] * n
    else:
        try:
            rates = [_rate_pair(r) for r in rate] if not isinstance(rate, str) else []
        except TypeError:
            rates = []
        if len(rates) != n or None in rates:
            raise InputError(
                f"rate must be {CURVE!r}, a pair (beta, alpha) with beta > 0 and 0 < alpha <= 1, or a "
                f"list of {n} such pairs (one per model, in the order given), got {rate!r}"
            )
    horizon = validation.integer("horizon", horizon)
    # The rule of every whole-number parameter (budget, window, horizon): 20.0 is 20.
    whole = None if warm_start is None else validation.whole_number(warm_start)
    if warm_start is not None and (whole is None or whole < 1):
        raise InputError(f"warm_start must be None or an integer >= 1, got {warm_start!r}")
    check_seed(seed)
    return [pair for pair in rates if pair is not None]  # all of them (checked above); [] for CURVE


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


#: The most samples of the default warm start's first part per unit of budget (every model
#: learns them before the policy selects).
WARM_START = 20
#: The default warm start's extra updates per unit of budget, its first part: at most this many
#: beyond ``M`` per sample, so that at ``M = 1`` a stream of 2,000 samples costs at most 1.05
#: updates per sample.
WARM_UPDATES = 100
#: The extra updates that each unit of budget beyond the first adds to the default warm start: the
#: spare slots of ``M >= 2`` spend them early, while every model learns the same samples, as
#: successive halving spends its first rung (docs/river.md, "Why the extra slot goes where it goes").
WARM_EXTRA = 700
#: The same for every regressor: a third, as its rate and burn-in are (its loss sets models about
#: three times closer apart).
REGRESSION_WARM_EXTRA = 230


def default_warm_start(n_models: int, budget: int = 1, extra: int = WARM_EXTRA) -> int:
    """The samples of the default warm start for ``n_models`` models and a budget of ``budget``.

    Two parts, each priced in the updates it adds (the warm start trains ``K - M`` models more
    than the budget does): as many samples as ``budget`` times :data:`WARM_UPDATES` extra
    updates allow, between 1 and ``M`` times :data:`WARM_START` (``floor(100 M / (K - M))``:
    14 for 8 models at ``M = 1``, the whole warm start there); then, for each unit of budget
    beyond the first, as many as ``extra`` extra updates allow (``floor(700 (M - 1) / (K -
    M))`` with :data:`WARM_EXTRA`; a regressor's is :data:`REGRESSION_WARM_EXTRA`, 230). At
    ``M = 2`` the second slot's updates are worth most early, while every model learns the same
    samples and the ones that learn late are seen learning; spread over the stream, they went to
    near-copies of the leader, and M-LCB fell behind successive halving given as many updates,
    which spends its own early (docs/river.md measures both).

    >>> [default_warm_start(k) for k in (2, 4, 8, 16, 200)]
    [20, 20, 14, 6, 1]
    >>> [default_warm_start(8, m) for m in (1, 2, 3, 4, 8)]
    [14, 149, 340, 605, 160]
    >>> default_warm_start(8, 2, REGRESSION_WARM_EXTRA)
    71
    """
    spare = n_models - budget
    cap = WARM_START * budget
    if spare < 1:
        return cap
    first = max(1, min(cap, WARM_UPDATES * budget // spare))
    return first + int(extra) * (budget - 1) // spare


#: What the policy's statistics are, from the losses of the models it trains (``"trained"``, the
#: paper's M-LCB: each model's mean over every sample it learnt; ``"recent"``, M-LCB's default:
#: its mean over its latest ones), or ``"pool"``: every model scored on every sample.
STATISTICS = ("trained", "recent", "pool")
#: M-LCB's default statistics.
DEFAULT_STATISTICS = "recent"
#: The rules' names: ``"default"``, M-LCB's rule with the defaults for models that learn late
#: (``"recent"`` statistics, a burn-in in every rate, a warm start that grows with the budget);
#: ``"plain"``, the paper's rule as it stands (``"trained"`` statistics, :data:`RATE`, no
#: burn-in, the warm start of ``budget=1``).
RULES = ("default", "plain")
#: The default constant term of every classifier's rate (``burn_in``): about 30 samples of a
#: model that learns late predicting little better than chance.
BURN_IN = 14.0
#: The same for every regressor: its loss sets models about three times closer apart, as
#: :data:`REGRESSION_MLCB_RATE`'s ``beta`` has it.
REGRESSION_BURN_IN = 5.0
#: The M-LCB policies: the only ones that read ``"recent"`` and ``"pool"`` statistics (their bounds
#: depend on each model's statistics only).
POOL_POLICIES = ("mlcb", "mlcb-topm")
#: The default number of latest scores over which ``"recent"`` and ``"pool"`` statistics average.
WINDOW = 200
#: The heuristic rate ``(beta, alpha)`` of every model under the plain rule and of every policy but
#: M-LCB (and the presets' rate, whose simulator runs trained statistics).
RATE = (1 / math.sqrt(2), 0.5)
#: ``rate=CURVE``: the bounds measured from the pool's learning curves (:mod:`mlcb.river.curves`),
#: with ``"pool"`` statistics; an option, not the default (docs/river.md measures both).
CURVE = "curve"
#: The default heuristic rate of every classifier with ``"pool"`` statistics (see the module's
#: docstring): the same for every kind of model.
POOL_RATE = (0.3, 0.75)
#: The same for every regressor: its loss sets models about three times closer apart than the 0-1
#: loss does, so its optimism is three times smaller.
REGRESSION_POOL_RATE = (0.1, 0.75)
#: M-LCB's default rate of every classifier (the default rule, ``"recent"`` or ``"trained"``
#: statistics): ``alpha = 1/2``, the rate of a no-regret online learner, beside :data:`BURN_IN`.
MLCB_RATE = (0.3, 0.5)
#: The same for every regressor (its loss sets models about three times closer apart).
REGRESSION_MLCB_RATE = (0.1, 0.5)
#: Which model predicts: ``"best"``, the smallest upper bound over all models, or ``"policy"``,
#: the policy's own deployed model (M-LCB: the smallest upper bound among those it trains).
DEPLOY_RULES = ("best", "policy")
#: The constructor parameters both estimators share.
_SHARED = (
    "budget",
    "rule",
    "policy",
    "policy_params",
    "statistics",
    "window",
    "delta",
    "rate",
    "burn_in",
    "warm_start",
    "deploy",
    "horizon",
    "seed",
)


class _Budgeted:
    """The selection loop both estimators share (mixed into a river ``ModelSelector``): a thin
    adapter over a round session of the engine (:class:`mlcb.engine.lean_session.LeanSession` for
    M-LCB on the trained models' losses, :class:`mlcb.engine.session.Session` otherwise), which
    holds every count, loss and bound; the adapter scores the models and makes them learn."""

    # Set by _init (the shared parameters), by river's Ensemble (models) and by the estimator.
    models: list
    budget: int
    rule: str
    policy: str
    policy_params: dict | None
    statistics: str | None
    window: int
    delta: float
    rate: Any
    burn_in: float | None
    warm_start: int | None
    deploy: str
    horizon: int
    seed: int
    _loss: Any

    def _init(self, models: list, kind: Any, shared: dict) -> None:
        """Store the pool and the parameters both estimators share (:data:`_SHARED`, which river
        reads back as the constructor's arguments), check that every model is a ``kind``, and
        build the policy."""
        noun = "classifier" if kind is base.Classifier else "regressor"
        if isinstance(models, (str, bytes, dict)) or not hasattr(models, "__iter__"):
            raise InputTypeError(f"models must be a list of river {noun}s, got {type(models).__name__}")
        models = list(models)
        if len(models) < 2:
            raise InputError(f"models must hold at least 2 river {noun}s to select from, got {len(models)}")
        base.Ensemble.__init__(self, models)
        first: dict[int, int] = {}
        for k, model in enumerate(self.models):
            if not _is_a(model, kind):
                raise InputError(f"models[{k}]: {what_is(model)} is not a river {noun}")
            if id(model) in first:
                raise InputError(
                    f"models[{first[id(model)]}] and models[{k}] are the same {type(model).__name__} "
                    "object, which would learn twice from each sample: give each position its own "
                    "model (model.clone())"
                )
            first[id(model)] = k
        _check_unshared(self.models)
        for name in _SHARED:
            setattr(self, name, shared[name])
        self._setup()

    def _setup(self) -> None:
        from mlcb import policies

        n = len(self.models)
        if self.rule not in RULES:
            raise InputError(f"rule must be one of {RULES}, got {self.rule!r}")
        mlcb_policy = self.policy in POOL_POLICIES
        # M-LCB's rule with the defaults for models that learn late, or the plain one (the
        # paper's statistics, no burn-in, the warm start of one unit of budget).
        late = mlcb_policy and self.rule == "default"
        statistics = self.statistics
        if statistics is None:
            statistics = DEFAULT_STATISTICS if late else "trained"
        # "pool" statistics keep their own defaults (the former ones): no burn-in, the warm start
        # of one unit of budget.
        late = late and statistics != "pool"
        if statistics not in STATISTICS:
            raise InputError(f"statistics must be None or one of {STATISTICS}, got {self.statistics!r}")
        if statistics in ("pool", "recent") and not mlcb_policy:
            raise InputError(
                f"statistics={statistics!r} needs an M-LCB policy ({', '.join(POOL_POLICIES)}), got "
                f"{self.policy!r}; pass statistics='trained'"
            )
        window = validation.integer("window", self.window)
        regression = isinstance(self, base.Regressor)
        if self.burn_in is not None:
            burn_in = self.burn_in
        else:
            burn_in = (REGRESSION_BURN_IN if regression else BURN_IN) if late else 0.0
        if (
            isinstance(burn_in, bool)
            or not isinstance(burn_in, (int, float, np.integer, np.floating))
            or not (0 <= burn_in < math.inf)
        ):
            raise InputError(f"burn_in must be None or a finite number >= 0, got {self.burn_in!r}")
        self._pool = statistics == "pool"
        rate = self.rate
        if rate is None:
            if self._pool:
                rate = REGRESSION_POOL_RATE if regression else POOL_RATE
            elif late:
                rate = REGRESSION_MLCB_RATE if regression else MLCB_RATE
            else:
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
        measured = isinstance(rate, str) and rate == CURVE
        if measured and not self._pool:
            raise InputError(f"rate={CURVE!r} reads the pool's learning curves: it needs statistics='pool'")
        if self.deploy not in DEPLOY_RULES:
            raise InputError(f"deploy must be one of {DEPLOY_RULES}, got {self.deploy!r}")
        params = dict(self.policy_params or {})
        if self._pool:
            # Every model's bounds change on every sample: M-LCB scans them all, no heap.
            params["selection"] = "scan"
        self._policy = make_named("policy_params", params, policies, self.policy)
        # (beta, alpha) of each model, in the order given, or CURVE: measured on every sample
        self._rates = CURVE if measured else rates
        self._curves = LearningCurves(n, int(window)) if measured else None
        # The policy sees the models in canonical order: model i's identity is its rank there.
        identities = [0] * n
        for rank, index in enumerate(canonical_order(self.models)):
            identities[index] = rank
        self._identities = identities
        delta_prime = float(self.delta) / (2.0 * n)
        if measured:  # the session's rate functions are not read: the bounds are the adapter's
            rates = [(1.0, 1.0)] * n
        functions = [_Power(beta, alpha, delta_prime, float(burn_in)) for beta, alpha in rates]
        names = [type(m).__name__ for m in self.models]
        # M-LCB with its theory bounds on the trained models' losses: the lean session, a few
        # microseconds a round; every other rule: the engine's round session.
        self._lean = mlcb_policy and not self._pool and getattr(self._policy, "bounds", "") == "theory"
        if statistics == "recent" and not self._lean:
            raise InputError(
                "statistics='recent' needs M-LCB's theory bounds (policy_params bounds='theory')"
            )
        self._session: Any
        if self._lean:
            self._session = LeanSession(
                n,
                budget=int(self.budget),
                delta=float(self.delta),
                rates=functions,
                identities=identities,
                bonus_scale=float(self._policy.bonus_scale),
                top_m=bool(self._policy.top_m),
                statistics=statistics,
                window=int(window),
                names=names,
            )
        else:
            self._session = Session.standalone(
                self._policy,
                n,
                budget=int(self.budget),
                delta=float(self.delta),
                horizon=int(self.horizon),
                seed=int(self.seed),
                identities=identities,
                rates=functions,
                statistics=statistics,
                window=int(window),
                names=names,
            )
        self._t = 0  # the round whose training is pending (0: the warm start)
        self._train: list[int] = []  # this round's training set (indices in the order given)
        self._chosen = -1  # the policy's own deployed model (-1: its whole training set)
        self._deployed: int | None = None  # the model that predicts
        self._said: tuple | None = None  # (model, x, kind, prediction): the deployed model's last answer
        extra = REGRESSION_WARM_EXTRA if regression else WARM_EXTRA
        warm = default_warm_start(n, int(self.budget) if late else 1, extra)
        self._warm_samples = warm if self.warm_start is None else int(self.warm_start)
        if not getattr(self._policy, "warm_start", True):
            self._session.skip_warm_start()
            self._begin(1)

    def clone(self, new_params: dict | None = None, include_attributes: bool = False) -> Any:
        """A fresh selector with the same parameters, over fresh clones of the models: nothing
        learnt, as river's ``clone`` promises. (river's own would deep-copy the ``models``
        parameter, so a clone of a selector that has learnt would start its warm start with
        models that had learnt already.) ``include_attributes=True`` copies everything, the
        models as they are and the selector's state with them."""
        params = dict(new_params or {})
        if "models" not in params and not include_attributes:
            params["models"] = [model.clone() for model in self.models]
        return super().clone(params, include_attributes)  # type: ignore[misc]

    # --- the policy's round ---------------------------------------------------------------------
    def _begin(self, t: int) -> None:
        self._t = t
        if self._curves is None:
            self._train, self._chosen = self._session.select(t)
        else:  # M-LCB's rule on the bounds the learning curves give: the M smallest are trained
            z = CURVE_Z * float(getattr(self._policy, "bonus_scale", 1.0))
            order = self._curves.priorities(self._session.best(), self._warm_samples, z)
            ranked = sorted(range(len(order)), key=lambda k: (order[k], self._identities[k]))
            self._train = ranked[: int(self.budget)]
            self._chosen = self._train[0]
            self._session.choose(t, self._train, self._chosen)
        # Only a model whose predictions were checked predicts: "best" is the checked model of
        # smallest upper bound; "policy" the policy's own, once checked.
        if self.deploy == "policy":
            chosen = self._chosen if self._chosen >= 0 else self._train[0]
            if self._session.checked()[chosen]:
                self._deployed = chosen
                return
        self._deployed = self._session.best()

    def _guarded(self, k: int, call: Any, x: dict) -> Any:
        """``call()`` on model ``k``; where the model fails on a ``None`` or a string feature
        (one that needs numbers), a ``ValueError`` naming those features and the model; any other
        error of the model is raised as it is, with a note naming the model."""
        try:
            return call()
        except Exception as error:
            odd = non_numbers(x) if isinstance(error, (TypeError, ValueError)) else None
            if not odd:
                name = type(self.models[k]).__name__
                error.add_note(f"raised by models[{k}] ({name}) of {type(self).__name__}")
                raise
            raise InputError(
                f"{type(self).__name__}: models[{k}] ({type(self.models[k]).__name__}) needs numbers, "
                f"and features {', '.join(odd)} are not ({type(error).__name__}: {error})"
            ) from error

    def _scores(self, x: dict, y: Any, which: Any) -> dict[int, float]:
        """The losses of models ``which`` on ``(x, y)``, every one scored before any learns. The
        deployed model's answer to ``predict_one(x)`` (or ``predict_proba_one``, as the loss
        needs) is reused when it was given for this very ``x`` since the last sample was learnt."""
        said = self._said
        out = {}
        for k in which:
            if said is not None and said[0] == k and said[1] is x:
                answer = self._answer(said[2], said[3])
                if answer is not None:
                    out[k] = self._guarded(k, lambda m=self.models[k], a=answer: self._loss(m, x, y, a), x)
                    continue
            out[k] = self._guarded(k, lambda m=self.models[k]: self._loss(m, x, y), x)
        return out

    def _answer(self, kind: str, prediction: Any) -> Any:
        """A remembered prediction of kind ``kind`` in the form :meth:`_loss` reads, or ``None``
        when the loss needs the other kind (a label where the loss reads probabilities)."""
        return (prediction,) if kind == "label" else None

    def _remember(self, kind: str, x: dict, prediction: Any) -> Any:
        """Keep the deployed model's answer to ``x`` for its loss when it learns ``x``."""
        self._said = (self._deployed, x, kind, prediction)
        return prediction

    def _learn(self, k: int, x: dict, y: Any) -> None:
        self._guarded(k, lambda: self.models[k].learn_one(x, y), x)

    def _check_sample(self, x: Any, y: Any = None, target: bool = False) -> None:
        """Refuse, by name, a sample that would poison the selector: features that are not a dict
        or whose numbers are NaN or infinite, a target that is ``None``, NaN or infinite (a
        regressor's: anything but a finite number). The estimators call it and add the sample's
        number to the message (the classifier checks its labels itself, against those seen).
        Features are checked on every call, the object ``learn_one`` gets included (it may have
        changed since ``predict_one``)."""
        check_features(x, type(self).__name__)
        if target:
            check_target(y, isinstance(self, base.Regressor), type(self).__name__)

    def learn_one(self, x: dict, y: Any) -> None:
        self._check_sample(x, y, target=True)
        self._before(y)
        self._note(y)
        session = self._session
        everyone = range(len(self.models))
        curves = self._curves
        if self._t == 0:  # the warm start: every model is scored and learns
            losses = self._scores(x, y, everyone)
            if curves is not None:
                curves.score([losses[k] for k in everyone])
            for k in everyone:
                self._learn(k, x, y)
                if curves is not None:
                    curves.learnt(k)
            self._said = None
            session.warm_sample([losses[k] for k in everyone])
            # Until the policy selects, predict with the best model so far (ties: canonical order).
            self._deployed = session.best()
            if session.counts[0] >= self._warm_samples:
                session.end_warm()
                self._begin(1)
            self._after(y)
            return
        chosen = self._chosen
        deployed = self._train if chosen < 0 else [chosen]  # what the policy deploys and pays
        if self._pool:  # every model predicts
            losses = self._scores(x, y, everyone)
            session.score([losses[k] for k in everyone])
            if curves is not None:
                curves.score([losses[k] for k in everyone])
            for k in self._train:
                self._learn(k, x, y)
                session.trained(k)
                if curves is not None:
                    curves.learnt(k)
        else:  # only the models that learn (and the policy's deployed one, if it does not) predict
            losses = self._scores(x, y, dict.fromkeys([*deployed, *self._train]))
            for k in self._train:
                self._learn(k, x, y)
                session.trained(k, losses[k])
        self._said = None
        session.deployed([losses[k] for k in deployed] if chosen < 0 else losses[chosen])
        session.end()
        self._after(y)
        self._begin(self._t + 1)

    def _before(self, y: Any) -> None:
        """Hook run before a sample is scored and learnt (the regressor's scale)."""

    def _note(self, y: Any) -> None:
        """Hook: remember a target for the prediction made while no model is checked."""

    def _after(self, y: Any) -> None:
        """Hook run after a sample is learnt."""

    # --- what users read ------------------------------------------------------------------------
    @property
    def best_model(self) -> Any:
        """The model that predicts now (see ``deploy``), or ``None`` while no model's predictions
        have been checked (scored after it learnt: before the second sample, and while every model
        is unchecked); the selector then predicts from the targets seen (the most frequent label,
        the mean target)."""
        return None if self._deployed is None else self.models[self._deployed]

    @property
    def n_updates(self) -> int:
        """Model updates (``learn_one`` calls on pool members) so far."""
        return int(self._session.counts.sum())

    @property
    def trained_counts(self) -> list[int]:
        """How many samples each model (in the order given) has learnt."""
        return [int(n) for n in self._session.counts]

    @property
    def mean_losses(self) -> list[float]:
        """Each model's mean loss as the policy sees it (``nan`` before it learns), in the order
        given: with ``"trained"`` statistics its mean over the samples it learnt; with ``"pool"``
        ones, after the warm start, its mean over its window (the last ``window`` samples, of
        those the ones scored when it had at least half its current updates)."""
        return [float(v) for v in self._session.mean_losses]


class _Power:
    """The rate ``U(n) = min(n, burn_in + beta n^alpha sqrt(log(2 n^2 / delta')))`` as a function of
    ``n`` (a class, not a closure: estimators are pickled)."""

    def __init__(self, beta: float, alpha: float, delta_prime: float, burn_in: float = 0.0) -> None:
        self.beta, self.alpha, self.delta_prime, self.burn_in = beta, alpha, delta_prime, burn_in

    def __call__(self, n: Any) -> np.ndarray:
        if not self.burn_in:
            return power_rate(n, self.beta, self.alpha, self.delta_prime)
        counts = np.maximum(np.asarray(n, dtype=np.float64), 1.0)
        return np.minimum(counts, self.burn_in + power_rate(n, self.beta, self.alpha, self.delta_prime))
