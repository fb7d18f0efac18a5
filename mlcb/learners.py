"""Python experts: any online learner written in Python, and pools that mix families.

A Python expert (:class:`mlcb.contracts.PythonExpert`) needs two methods::

    learn(data)  -> loss               # loss of the current decision on xi_t, then one step
    deploy(data) -> (loss, expected)   # the smoothed decision's loss (and expected loss)

and may add ``spawn(seed)`` (a fresh copy with its own random stream), ``rate`` (a callable
``rate(n, delta_prime)`` or a pair ``(beta, alpha)``), ``heuristic`` and ``optimal_loss(env,
env_params)``. ``data`` is what the environment's ``round_data`` gives (on the bandit
environments: the expert's arms, with ``n_arms``, ``loss(arm)`` and ``mean(arm)``; on the GLM
stream: ``x``, ``y`` and ``loss(prediction)``).

A pool of such experts belongs to the generic family :data:`LEARNERS` (this module: what a pool
of Python experts is, its rates and its regret reference); the Python engine drives it through
:class:`mlcb.engine.learners.LearnerPool`, one fresh copy of every expert per replication. A pool
that mixes families gets a :class:`MixedFamily`.

Examples
--------
>>> import mlcb
>>> class FirstArm:  # plays arm 0 forever
...     heuristic = True
...     def learn(self, data):
...         return data.loss(0)
...     def deploy(self, data):
...         return data.loss(0), data.mean(0)
>>> result = mlcb.simulate(env="mlcb/Trap-v0", experts=[FirstArm()] * 10, budget=2, horizon=200,
...                        replications=2, seed=0)
>>> result.metadata["settings"]["mlcb M=2"]["engine"]
'python'
"""

from __future__ import annotations

import copy
import math
import random
import re
import warnings
from typing import Any

import numpy as np

from mlcb.errors import EXPERT_FAULTS, ExpertError, class_name, first_line, raised
from mlcb.validation import InputError, shown

#: The default rate of a Python expert that declares none: ``(beta, alpha) = (1, 1/2)``.
DEFAULT_RATE = (1.0, 0.5)


def power_rate(n: Any, beta: float, alpha: float, delta_prime: float) -> np.ndarray:
    """``U(n, delta') = min(n, beta n^alpha sqrt(log(2 n^2 / delta')))`` at counts ``n >= 1``.

    The rate of a learner whose regret after ``n`` updates grows like ``n^alpha`` (up to a
    logarithmic confidence term); ``alpha = 1/2`` for online convex optimisation and UCB-type
    bandits, ``2/3`` for explore-then-commit or epsilon-greedy schedules.

    Examples
    --------
    >>> float(power_rate(100, 1.0, 0.5, 0.005).round(3))
    38.989
    """
    counts = np.maximum(np.asarray(n, dtype=np.float64), 1.0)
    value = beta * counts**alpha * np.sqrt(np.log(2.0 * counts * counts / delta_prime))
    return np.minimum(counts, value)


def _rate_spec(expert: Any, index: int) -> Any:
    """The expert's rate as a callable of ``(n, delta_prime)``, checked; a ``ValueError`` names
    the expert and what ``rate`` may be."""
    spec = getattr(expert, "rate", None)
    if spec is None:
        spec = DEFAULT_RATE
    if callable(spec):
        return spec
    try:
        beta, alpha = (float(v) for v in spec)
    except (TypeError, ValueError):
        beta = alpha = math.nan
    if not (beta > 0 and math.isfinite(beta) and 0 < alpha <= 1):
        raise InputError(
            f"experts[{index}]: rate of {class_name(expert)} must be a callable rate(n, delta_prime) or a "
            f"pair (beta, alpha) with beta > 0 and 0 < alpha <= 1, got {spec!r}"
        )
    return lambda n, delta_prime: power_rate(n, beta, alpha, delta_prime)


def rate_values(expert: Any, n: Any, delta_prime: float, index: int = 0) -> np.ndarray:
    """``U(n, delta')`` of a Python expert at counts ``n`` (its declared rate, capped at ``n``).

    Examples
    --------
    >>> class Learner:
    ...     rate = (2.0, 0.5)
    >>> rate_values(Learner(), [1, 4], 0.01).tolist() == power_rate([1, 4], 2.0, 0.5, 0.01).tolist()
    True
    """
    counts = np.asarray(n, dtype=np.float64)
    rate = _rate_spec(expert, index)
    try:
        values = np.asarray(rate(counts, delta_prime), dtype=np.float64)
    except EXPERT_FAULTS as error:
        raise InputError(
            f"experts[{index}]: rate of {class_name(expert)} raised {type(error).__name__}: {error}; it is "
            "called as rate(n, delta_prime) with an array of counts n and must return their rates"
        ) from error
    if values.shape != counts.shape:
        raise InputError(
            f"experts[{index}]: rate of {class_name(expert)} returned shape {values.shape} for counts of "
            f"shape {counts.shape}; it must be vectorised over n"
        )
    bad = ~(np.isfinite(values) & (values >= 0))
    if bad.any():
        first = np.flatnonzero(bad.ravel())[0]
        raise InputError(
            f"experts[{index}]: rate of {class_name(expert)} must be a finite number >= 0 at every count, "
            f"got {float(values.ravel()[first])!r} at n = {int(counts.ravel()[first])}"
        )
    return np.minimum(counts, values)


def _states_own(expert: Any, env: Any) -> bool:
    """Whether ``expert`` states its ``L_k*`` on ``env``: it has ``optimal_loss`` and, where it
    says when (``states_optimal_loss(env)``: on some environments only), it does here."""
    if not callable(getattr(expert, "optimal_loss", None)):
        return False
    states = getattr(expert, "states_optimal_loss", None)
    return bool(states(env)) if callable(states) else True


def _own_optimal_loss(expert: Any, index: int, env: Any, env_params: Any) -> float:
    """``expert.optimal_loss(env, env_params)``, its ``L_k*``: a number in ``[0, 1]`` (the least
    expected loss of its model class), else an :class:`~mlcb.errors.ExpertError` naming the
    expert (a ``nan`` or a value outside ``[0, 1]`` would make every regret ``nan`` or wrong)."""
    try:
        value = expert.optimal_loss(env, env_params)
    except InputError:  # the expert's own check of the setting (a stream it cannot run): as it says
        raise
    except EXPERT_FAULTS as error:
        raise raised(error, "optimal_loss", index, class_name(expert), None, 0) from error
    number = _number_or_none(value)
    if number is None or not 0.0 <= number <= 1.0:
        raise ExpertError(
            f"optimal_loss(env, env_params) returned {shown(value)}; L_k*, the least expected loss of its "
            "model class, must be a number in [0, 1]",
            expert=index,
            expert_class=class_name(expert),
            replication=None,
            round_=0,
        )
    return number


def _environments_optimal_loss(env: Any, env_params: Any, k: int) -> float:
    """The environment's ``optimal_loss(env_params, k)``: a number in ``[0, 1]``, else an
    :class:`~mlcb.validation.InputError` naming the environment (``None`` was a bare ``TypeError``,
    ``nan`` made every regret ``nan``), as is an exception it raises (a traceback blamed on mlcb
    before); ``mlcb.testing.check_env`` checks the same."""
    try:
        value = env.optimal_loss(env_params, k)
    except (InputError, MemoryError):
        raise
    except EXPERT_FAULTS as error:
        raise InputError(
            f"environment {type(env).__name__}: optimal_loss(params, {k}) raised {first_line(error)}"
        ) from error
    number = _number_or_none(value)
    if number is None or not 0.0 <= number <= 1.0:
        raise InputError(
            f"environment {type(env).__name__}: optimal_loss(params, {k}) returned {shown(value)}; the least "
            "expected loss of an expert must be a number in [0, 1]"
        )
    return number


def _number_or_none(value: Any) -> float | None:
    """``float(value)`` for a number (a 0-d array too), ``None`` for anything else (a string, ``None``)."""
    if value is None or isinstance(value, (str, bytes, np.str_, np.bytes_)):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def seed_of(key: Any) -> int:
    """A learner's seed from its 64-bit stream key: 32 bits, what NumPy, river and scikit-learn
    all accept."""
    return int(key) & 0xFFFFFFFF


def spawn(expert: Any, seed: int, index: int = 0, replication: int | None = None) -> Any:
    """A fresh copy of ``expert`` (``experts[index]``) for replication ``replication``:
    ``expert.spawn(seed)`` or a deep copy. What goes wrong is an :class:`~mlcb.errors.ExpertError`
    naming the expert (at round 0, before its first update): ``spawn`` raised, or returned
    something without ``learn`` and ``deploy``; or the expert has no ``spawn`` and cannot be deep
    copied (it holds a lock, a file, a connection), when the message says to define ``spawn``."""
    make = getattr(expert, "spawn", None)
    try:
        copied = make(seed) if callable(make) else copy.deepcopy(expert)
    except EXPERT_FAULTS as error:
        if callable(make):
            raise raised(error, "spawn", index, class_name(expert), replication, 0) from error
        raise ExpertError(
            f"it has no spawn(seed), and copy.deepcopy, which makes each replication's copy, raised "
            f"{type(error).__name__}: {error}; define spawn(seed) to return a fresh copy",
            expert=index,
            expert_class=class_name(expert),
            replication=replication,
            round_=0,
        ) from error
    if not (callable(getattr(copied, "learn", None)) and callable(getattr(copied, "deploy", None))):
        raise ExpertError(
            f"spawn(seed) returned {shown(copied)}, not a learner with learn(data) and deploy(data)",
            expert=index,
            expert_class=class_name(expert),
            replication=replication,
            round_=0,
        )
    if copied is expert:
        raise ExpertError(
            "spawn(seed) returned the expert itself, not a fresh copy: every replication, and the pass "
            "that computes the best expert in hindsight, would train that one object, and results would "
            "depend on what ran before; return a new learner (type(self)(..., seed=seed))",
            expert=index,
            expert_class=class_name(expert),
            replication=replication,
            round_=0,
        )
    return copied


def check_distinct(
    copies: list[list], classes: list[str], replications: list[int | None], indices: list[int] | None = None
) -> None:
    """An :class:`~mlcb.errors.ExpertError` where two of ``copies`` are one object: ``copies[r][j]``
    is replication ``replications[r]``'s copy (made by :func:`spawn`) of the expert of class
    ``classes[j]`` and pool index ``indices[j]`` (default ``j``). A ``spawn`` that hands out a
    learner it keeps (a cached instance) would have every holder train that one object."""
    held: dict[int, tuple[int, int]] = {}
    named = list(range(len(classes))) if indices is None else list(indices)
    for r, row in enumerate(copies):
        for j, copied in enumerate(row):
            first = held.setdefault(id(copied), (r, j))
            if first != (r, j):
                other = f"expert {named[first[1]]}"
                if replications[first[0]] is not None and first[0] != r:
                    other += f" of replication {replications[first[0]]}"
                raise ExpertError(
                    f"spawn(seed) returned the object it had returned for {other}; each call must return "
                    "a fresh copy, or both would train that one object",
                    expert=named[j],
                    expert_class=classes[j],
                    replication=replications[r],
                    round_=0,
                )


_GENERATORS = (np.random.Generator, np.random.RandomState, random.Random)


def _warn_if_shared_randomness(expert: Any, index: int) -> None:
    """Warn when a learner holds a random generator but has no ``spawn``: its deep copies would
    draw the same numbers in every replication."""
    if callable(getattr(expert, "spawn", None)):
        return
    held = [name for name, value in getattr(expert, "__dict__", {}).items() if isinstance(value, _GENERATORS)]
    if held:
        warnings.warn(
            f"experts[{index}]: {class_name(expert)} holds a random generator ({', '.join(held)}) but has "
            "no spawn(seed): every replication would get a copy drawing the same numbers; define "
            "spawn(seed) to seed a fresh copy",
            stacklevel=4,
        )


class LearnerFamily:
    """The generic family of Python experts (:class:`mlcb.contracts.ExpertFamily`).

    Its smoothing is the learner's own ``deploy`` (``"learner"``). ``L_k*`` is the learner's
    ``optimal_loss(env, env_params)`` where it has one; else, on an environment that fixes each
    expert's decision sets (``n_experts`` set: the bandit environments), the environment's
    ``optimal_loss(env_params, k)``; else the best expert in hindsight on the run's stream (each
    expert's mean loss when trained on every round, :mod:`mlcb.engine.hindsight`), and results
    say so (:meth:`reference`). Rates are the declared ones (:func:`rate_values`); an expert is
    heuristic unless it says ``heuristic = False``.
    """

    name = "python"
    smoothing = ("learner",)

    def check(self, experts: list, env: Any) -> None:
        expected = getattr(env, "n_experts", None)
        if expected is not None and len(experts) != expected:
            raise InputError(f"experts: this environment has {expected} experts, got {len(experts)}")
        if not callable(getattr(env, "round_data", None)):
            raise InputError(
                f"experts: Python experts need the environment to provide round_data(params, state, t, "
                f"expert); {type(env).__name__} does not"
            )
        warned: set[int] = set()
        for k, expert in enumerate(experts):
            if id(expert) not in warned:
                warned.add(id(expert))
                _warn_if_shared_randomness(expert, k)
            rate_values(expert, np.array([1.0, 2.0]), 0.01, k)  # refuses a rate < 0 or not finite
            heuristic = getattr(expert, "heuristic", True)
            if not isinstance(heuristic, (bool, np.bool_)):
                raise InputError(
                    f"experts[{k}]: heuristic of {class_name(expert)} must be True or False, "
                    f"got {heuristic!r}"
                )

    def optimal_losses(self, experts: list, env: Any, env_params: Any) -> np.ndarray:
        """Each learner's ``optimal_loss(env, env_params)``, else the environment's
        ``optimal_loss(env_params, k)`` (what can be told without running the stream; the engine
        replaces those :meth:`in_hindsight` by the best expert in hindsight)."""
        values = []
        for k, expert in enumerate(experts):
            if _states_own(expert, env):
                values.append(_own_optimal_loss(expert, k, env, env_params))
            else:
                values.append(_environments_optimal_loss(env, env_params, k))
        return np.array(values)

    @staticmethod
    def in_hindsight(experts: list, env: Any) -> list[bool]:
        """For each expert, whether its reference is the best expert in hindsight
        (:mod:`mlcb.engine.hindsight`): it states no ``optimal_loss`` of its own and the
        environment fixes no decision sets."""
        fixed = getattr(env, "n_experts", None) is not None
        return [not fixed and not _states_own(expert, env) for expert in experts]

    def reference(self, experts: list, env: Any) -> str | None:
        """What regret is measured against: :data:`HINDSIGHT` when some
        expert's reference is the hindsight one, else ``None`` (the ``L_k*``)."""
        flags = self.in_hindsight(experts, env)
        if not any(flags):
            return None
        return HINDSIGHT if all(flags) else f"{HINDSIGHT} for the experts that state no optimal_loss"

    def rates(self, experts: list, env: Any, n: np.ndarray, delta_prime: float) -> np.ndarray:
        return np.stack([rate_values(expert, n, delta_prime, k) for k, expert in enumerate(experts)])

    def heuristic(self, experts: list, env: Any) -> list[bool]:
        return [bool(getattr(expert, "heuristic", True)) for expert in experts]


#: The family of every Python expert that names no family of its own.
LEARNERS = LearnerFamily()


# --- the regret reference of a pool of one's own ------------------------------------------------
#: How results name the best-in-hindsight reference (:mod:`mlcb.engine.hindsight` computes it).
HINDSIGHT = "the best expert in hindsight (each expert trained on every round of the run's stream)"


# --- pools that mix families -------------------------------------------------------------------
class MixedFamily:
    """The family of a pool whose experts name several families (:class:`mlcb.contracts.ExpertFamily`).

    Parameters
    ----------
    families : list
        The distinct families, in the order their first member appears.
    groups : list of list of int
        For each family, the pool indices of its members, increasing.

    Examples
    --------
    >>> import agents
    >>> from mlcb.contracts import family_of
    >>> class Mean:  # predicts the running mean of y
    ...     def __init__(self): self.total, self.n = 0.0, 0
    ...     def learn(self, data):
    ...         loss = data.loss(self.total / max(self.n, 1))
    ...         self.total, self.n = self.total + data.y, self.n + 1
    ...         return loss
    ...     def deploy(self, data): return data.loss(self.total / max(self.n, 1))
    >>> family = family_of([agents.make("ogd", link="logcosh"), Mean(), agents.make("ogd", link="affine")])
    >>> family.name, family.groups
    ('mixed (glm + python)', [[0, 2], [1]])
    """

    def __init__(self, families: list, groups: list[list[int]]) -> None:
        self.families = list(families)
        self.groups = [list(group) for group in groups]
        names = [str(getattr(f, "name", type(f).__name__)) for f in self.families]
        self.name = f"mixed ({' + '.join(names)})"
        own = [tuple(f.smoothing) for f in self.families if tuple(f.smoothing) != ("learner",)]
        if own:
            self.smoothing = tuple(s for s in own[0] if all(s in other for other in own[1:]))
        else:
            self.smoothing = ("learner",)
        if not self.smoothing:
            raise InputError(
                f"experts: the families {', '.join(names)} share no smoothing wrapper, so one pool "
                "cannot hold them"
            )

    def _split(self, experts: list) -> list[list]:
        return [[experts[i] for i in group] for group in self.groups]

    def _scatter(self, parts: list, length: int, dtype: Any = np.float64) -> np.ndarray:
        out = np.empty(length, dtype=dtype)
        for group, values in zip(self.groups, parts):
            out[group] = values
        return out

    def check(self, experts: list, env: Any) -> None:
        fixed = getattr(env, "n_experts", None)
        if fixed is not None:
            raise InputError(
                f"experts: a pool that mixes families ({self.name}) needs an environment whose experts "
                f"all face one stream; {type(env).__name__} gives each of its {fixed} experts decision "
                "sets of its own (use a pool of one family there)"
            )
        for family, group, members in zip(self.families, self.groups, self._split(experts)):
            try:
                family.check(members, env)
            except InputError as error:  # "experts[i]" of the family's members: the pool's index
                local = re.match(r"experts\[(\d+)\]", str(error))
                if local is None or int(local[1]) >= len(group):
                    raise
                message = f"experts[{group[int(local[1])]}]{str(error)[local.end() :]}"
                raise type(error)(message) from error

    def held_bytes(self, experts: list, env: Any) -> tuple[int, str]:
        """The bytes its families count for their own members (``held_bytes``), and what they are."""
        total, parts = 0, list[str]()
        for family, members in zip(self.families, self._split(experts)):
            held = getattr(family, "held_bytes", None)
            if callable(held):
                needed, why = held(members, env)
                total += int(needed)
                parts += [why] if why else []
        return total, "; ".join(parts)

    def optimal_losses(self, experts: list, env: Any, env_params: Any) -> np.ndarray:
        parts = [
            np.asarray(f.optimal_losses(m, env, env_params), dtype=np.float64)
            for f, m in zip(self.families, self._split(experts))
        ]
        return self._scatter(parts, len(experts))

    def in_hindsight(self, experts: list, env: Any) -> list[bool]:
        """For each member, whether its family measures it against the best expert in hindsight
        (``in_hindsight``, :mod:`mlcb.engine.hindsight`)."""
        parts = []
        for family, members in zip(self.families, self._split(experts)):
            said = getattr(family, "in_hindsight", None)
            parts.append(list(said(members, env)) if callable(said) else [False] * len(members))
        return [bool(v) for v in self._scatter(parts, len(experts), dtype=bool)]

    def rates(self, experts: list, env: Any, n: np.ndarray, delta_prime: float) -> np.ndarray | None:
        parts = []
        for family, members in zip(self.families, self._split(experts)):
            values = family.rates(members, env, n, delta_prime)
            if values is None:
                return None
            parts.append(np.asarray(values, dtype=np.float64))
        out = np.empty((len(experts), np.asarray(n).shape[-1]))
        for group, values in zip(self.groups, parts):
            out[group] = values
        return out

    def heuristic(self, experts: list, env: Any) -> list[bool]:
        parts = [list(f.heuristic(m, env)) for f, m in zip(self.families, self._split(experts))]
        return [bool(v) for v in self._scatter(parts, len(experts), dtype=bool)]

    def reference(self, experts: list, env: Any) -> str | None:
        """What regret is measured against, where it is not the experts' ``L_k*`` alone: each
        family's statement, named by family."""
        said = []
        for family, members in zip(self.families, self._split(experts)):
            own = getattr(family, "reference", None)
            own = own(members, env) if callable(own) else own
            if isinstance(own, str):
                said.append(f"{getattr(family, 'name', type(family).__name__)} experts: {own}")
        if not said:
            return None
        return "; ".join(said) + "; every other expert: its L_k*"
