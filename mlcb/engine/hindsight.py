"""The best expert in hindsight: the regret reference of experts whose ``L_k*`` nobody states.

Regret is measured against ``L* = min_k L_k*``, each expert's least expected loss. A family that
knows its model class states ``L_k*``; a bandit environment knows it for each expert's arms. An
expert on a stream that fixes no decision sets -- a Python learner of one's own, a river model,
the online classifiers on a real data set -- has none that anyone can state: what can be known
instead is the best expert in hindsight on the run's own stream. Its family says which experts
those are (``in_hindsight(experts, env)``), and :func:`losses` trains a copy of each on every round
``0 .. T`` of the replication's stream (the very copy the run uses: the same random stream) and
returns its mean training loss over rounds ``1 .. T``; the engine takes the smallest as ``L*``.
At round ``T`` the regret is then the deployed losses' sum minus the best expert's losses' sum when
trained every round, on the same stream. Results say so (``metadata["settings"][label]
["reference"]``).

This module is the one place that pass is run, for every kind of expert: one compiled pass over
the experts of a compiled family (:func:`_reference_pass`, the family's own ``train`` kernel), one
Python pass over Python experts (each one's ``learn``). The pass depends on the stream, the expert
and the replication only -- not on the policy, the budget or the smoothing -- so a value is
computed once and reused by every setting that meets it: it is kept in memory for the process, by
the stream's identity, the horizon, the expert's identity (a digest of its description,
:mod:`mlcb.storage.identity`) and its random stream, and, when a run keeps parts, on disk beside
them (:class:`~mlcb.storage.replications.ReferenceStore`), so that the other settings of a run,
a comparison or a resumed run read it back instead of training every expert again.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from mlcb.contracts import BuildContext, build_env, family_of
from mlcb.engine import stopping
from mlcb.errors import EXPERT_FAULTS, ExpertError, ExpertLossError, class_name, raised
from mlcb.kernels import begin_round, train
from mlcb.kernels.jit import kernel
from mlcb.kernels.seeding import stream_keys
from mlcb.learners import check_distinct, seed_of, spawn
from mlcb.storage import identity
from mlcb.storage.replications import ReferenceStore
from mlcb.validation import shown

#: Values kept in memory: (stream, horizon, expert, expert's key, extras) -> mean loss.
_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 65_536
_LOCK = threading.Lock()  # replications build their references in parallel threads

#: How many training passes have run in this process, by kind (``"compiled"``, ``"python"``):
#: what a test counts to see that a reference is computed once.
PASSES = {"compiled": 0, "python": 0}


def clear() -> None:
    """Forget every value kept in memory (for timing a pass, or tests that count them)."""
    with _LOCK:
        _CACHE.clear()


def optimal_losses(
    problem: Any,
    env_params: Any,
    seed: int,
    replication: int,
    horizon: int,
    keys: np.ndarray,
    store: ReferenceStore | None = None,
) -> np.ndarray:
    """``L_k*`` of every expert of ``problem`` (a :class:`~mlcb.engine.problem.Problem`) on one
    replication, as the engines read it: what its family states (``optimal_losses``), and the best
    expert in hindsight (:func:`losses`) for the experts it says nobody can state it for."""
    experts = list(problem.experts)
    values = np.array(problem.family.optimal_losses(experts, problem.env, env_params), dtype=np.float64)
    todo = [k for k, flag in enumerate(in_hindsight(problem.family, experts, problem.env)) if flag]
    if todo:
        ids = problem.expert_ids
        values[todo] = losses(
            [experts[k] for k in todo],
            problem.env,
            seed,
            replication,
            horizon,
            np.asarray(keys)[todo],
            env_params=env_params,
            delta=problem.delta,
            smoothing=problem.smoothing,
            stream=problem.stream(seed),
            expert_ids=None if ids is None else [ids[k] for k in todo],
            store=store,
            pool_indices=todo,
        )
    return values


def in_hindsight(family: Any, experts: list, env: Any) -> list[bool]:
    """For each expert, whether its reference is the best expert in hindsight: what its family
    says (``in_hindsight(experts, env)``), else ``False`` (the family states ``L_k*``)."""
    said = getattr(family, "in_hindsight", None)
    flags = list(said(experts, env)) if callable(said) else [False] * len(experts)
    return [bool(flag) for flag in flags]


def stream_identity(env: Any, env_params: Any) -> str | None:
    """What identifies a replication's stream when nothing better is given: the environment's
    class and public attributes, and the contents of its replication's parameters (its random
    stream key included); ``None`` when some part cannot be described."""
    public = {k: v for k, v in getattr(env, "__dict__", {}).items() if not k.startswith("_")}
    described = [identity.describe(part) for part in (public, env_params)]
    if any(d.problems for d in described):
        return None
    return identity.digest([identity.label(env), *(d.value for d in described)])


def losses(
    experts: list,
    env: Any,
    seed: int,
    replication: int,
    horizon: int,
    keys: Any = None,
    *,
    env_params: Any = None,
    delta: float = 0.1,
    smoothing: str | None = None,
    stream: str | None = None,
    expert_ids: list[str | None] | None = None,
    store: ReferenceStore | None = None,
    pool_indices: list[int] | None = None,
) -> np.ndarray:
    """Each expert's mean training loss over rounds ``1 .. horizon`` when a copy of it is trained
    on every round ``0 .. horizon`` of replication ``replication`` of ``env`` seeded ``seed``.

    Parameters
    ----------
    experts : list
        Expert specifications of compiled families, Python experts, or both.
    env : Environment
        The environment; built here for the replication unless ``env_params`` is given.
    seed, replication, horizon : int
        The run's seed, the replication and the run's horizon ``T``.
    keys : ndarray, optional
        (K,) the experts' random stream keys in the run (default: those of the pool in this
        order, :func:`mlcb.kernels.seeding.stream_keys`): a Python expert's copy is spawned from
        its key, a compiled family's pool reads them.
    env_params : NamedTuple, optional
        The replication's parameters, when built already.
    delta, smoothing : optional
        What a compiled family's pool is built with (they change no training loss by the
        contract; they are part of a compiled value's identity all the same).
    stream, expert_ids : optional
        The identity of the stream (of this seed) and of each expert, when the caller knows them
        (the engine takes them from the setting's description); computed here otherwise. A value
        whose stream or expert cannot be identified is computed and not kept.
    store : ReferenceStore, optional
        Where the run keeps values on disk (:class:`mlcb.storage.replications.ReferenceStore`).
    pool_indices : list of int, optional
        Each expert's index in the run's pool, which a fault names (default: its position in
        ``experts``; the engine passes only the experts whose reference is this one).

    Examples
    --------
    >>> import envs
    >>> class Mean:  # predicts the running mean of y
    ...     def __init__(self): self.total, self.n = 0.0, 0
    ...     def learn(self, data):
    ...         loss = data.loss(self.total / max(self.n, 1))
    ...         self.total, self.n = self.total + data.y, self.n + 1
    ...         return loss
    ...     def deploy(self, data): return data.loss(self.total / max(self.n, 1))
    >>> values = losses([Mean()], envs.make("mlcb/GLM-v0"), seed=0, replication=0, horizon=100)
    >>> values.shape, bool(0.0 <= values[0] <= 1.0)
    ((1,), True)
    """
    experts = list(experts)
    n = len(experts)
    if keys is None:
        keys = stream_keys(seed, replication, n, getattr(env, "streams", None)).experts
    keys = np.asarray(keys, dtype=np.uint64)
    if env_params is None:
        env_params, _ = build_env(env, seed, replication, horizon)
    if stream is None:
        stream = stream_identity(env, env_params)
    if expert_ids is None:
        expert_ids = [_expert_id(expert) for expert in experts]
    family = family_of(experts)
    families, groups = getattr(family, "families", [family]), getattr(family, "groups", [list(range(n))])
    # Each value's name: the horizon, the expert and its random stream (and, for a compiled pool,
    # what it is built with); none where the stream or the expert cannot be identified.
    wanted: dict[int, str | None] = {}
    for member, group in zip(families, groups):
        extra = f"|{float(delta)!r}|{_smoothing(member, smoothing)}" if _compiled(member) else ""
        for k in group:
            known = stream is not None and expert_ids[k] is not None
            wanted[k] = f"{int(horizon)}|{expert_ids[k]}|{int(keys[k])}{extra}" if known else None
    place = f"{stream}-{int(replication)}"
    kept = store.read(place) if store is not None and stream is not None else {}
    out = np.full(n, math.nan)
    with _LOCK:
        for k, name in wanted.items():
            found = None if name is None else _CACHE.get((place, name), kept.get(name))
            if found is not None:
                out[k] = found
    todo = [k for k in range(n) if math.isnan(out[k])]
    for member, group in zip(families, groups):
        mine = [k for k in group if k in todo]
        if mine and _compiled(member):
            out[mine] = _compiled_pass(
                member, mine, experts, env, env_params, seed, replication, horizon, keys, delta,
                _smoothing(member, smoothing),
            )  # fmt: skip
        elif mine:
            named = list(range(n)) if pool_indices is None else [int(i) for i in pool_indices]
            out[mine] = _python_pass(mine, experts, env, seed, replication, horizon, keys, named)
    new = {name: float(out[k]) for k, name in wanted.items() if name is not None and name not in kept}
    with _LOCK:
        for name, value in new.items():
            _CACHE[(place, name)] = value
            _CACHE.move_to_end((place, name))
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    if new and store is not None:
        store.write(place, new)
    return out


def _compiled(family: Any) -> bool:
    return callable(getattr(family, "build_pool", None))


def _smoothing(family: Any, smoothing: str | None) -> str:
    """The wrapper a compiled family's pool is built with: the run's, where the family has it."""
    return str(smoothing) if smoothing in tuple(family.smoothing) else str(family.smoothing[0])


def _expert_id(expert: Any) -> str | None:
    """A digest of the expert's description, or ``None`` when it cannot be described (its
    references are then computed each time they are asked for)."""
    described = identity.describe(expert)
    return None if described.problems else identity.digest(described.value)


@kernel
def _reference_pass(env_params, env_state, pool_params, pool_state, horizon, totals):
    """Train every expert of a compiled pool on every round ``0 .. horizon``; ``totals[k]`` the
    sum of expert ``k``'s training losses over rounds ``1 .. horizon``."""
    for t in range(horizon + 1):
        begin_round(env_params, env_state, t)
        for k in range(totals.shape[0]):
            loss, _ = train(pool_params, pool_state, env_params, env_state, k, t)
            if t > 0:
                totals[k] += loss


def _compiled_pass(
    family: Any,
    indices: list[int],
    experts: list,
    env: Any,
    env_params: Any,
    seed: int,
    replication: int,
    horizon: int,
    keys: np.ndarray,
    delta: float,
    smoothing: str,
) -> np.ndarray:
    """The references of ``experts[indices]`` (one compiled family), in one compiled pass."""
    members = tuple(experts[k] for k in indices)
    context = BuildContext(
        members, env, env_params, delta, keys[indices], smoothing, horizon, seed, replication
    )
    pool_params, pool_state = family.build_pool(context)
    _, env_state = build_env(env, seed, replication, horizon)  # a fresh state: the run's own is untouched
    totals = np.zeros(len(members))
    _reference_pass(env_params, env_state, pool_params, pool_state, int(horizon), totals)
    with _LOCK:
        PASSES["compiled"] += 1
    return totals / max(int(horizon), 1)


def _training_loss(out: Any, index: int, expert: Any, replication: int, t: int) -> float:
    """The loss in what ``learn`` returned in the reference pass (a loss, or a pair ``(loss,
    rate)``), held to the run's own rule: a number (a 0-d array too) in ``[0, 1]``; else the
    fault the run would report, naming the expert (index ``index`` of the pool)."""
    loss = out[0] if isinstance(out, tuple) and len(out) == 2 else out  # a NamedTuple too
    number = None
    refused = (str, bytes, np.str_, np.bytes_, tuple, list)
    if not (loss is None or isinstance(loss, refused)):
        if not isinstance(loss, np.ndarray) or (loss.ndim == 0 and loss.dtype.kind in "biuf"):
            try:
                number = float(loss)
            except (TypeError, ValueError):
                number = None
    if number is None:
        raise ExpertError(
            f"learn (regret reference) must return a loss (a number in [0, 1]) or a pair (loss, rate), "
            f"got {shown(out)}",
            expert=index,
            expert_class=class_name(expert),
            replication=replication,
            round_=t,
        )
    if not 0.0 <= number <= 1.0:
        what = "training loss (regret reference)"
        raise ExpertLossError(what, t, index, number, class_name(expert), replication)
    return number


def _round_data(
    env: Any,
    params: Any,
    state: Any,
    t: int,
    k: int,
    who: int,
    experts: list,
    named: list[int],
    replication: int,
) -> Any:
    """The environment's round data asked for expert ``k``; what it raises is the environment's
    fault, located by the expert ``experts[who]`` (pool index ``named[who]``) it was asked for,
    the replication and the round."""
    try:
        return env.round_data(params, state, t, k)
    except EXPERT_FAULTS as error:
        where = "the environment's round_data (for learn, regret reference)"
        raise raised(error, where, named[who], class_name(experts[who]), replication, t) from error


def _python_pass(
    indices: list[int],
    experts: list,
    env: Any,
    seed: int,
    replication: int,
    horizon: int,
    keys: np.ndarray,
    named: list[int],
) -> np.ndarray:
    """The references of the Python experts ``experts[indices]``: a fresh copy of each (spawned
    from its key, as the run's own) trained on every round ``0 .. horizon``; a fault names
    ``experts[k]`` as expert ``named[k]`` of the pool."""
    copies = {k: spawn(experts[k], seed_of(keys[k]), named[k], replication) for k in indices}
    classes = [class_name(experts[k]) for k in indices]
    check_distinct([list(copies.values())], classes, [replication], [named[k] for k in indices])
    totals = dict.fromkeys(copies, 0.0)
    params, state = build_env(env, seed, replication, horizon)
    shared = bool(getattr(env, "round_data_shared", False))  # one object per round for every expert
    for t in range(int(horizon) + 1):
        if t % stopping.EVERY == 0:
            stopping.check()
        begin_round(params, state, t)
        first = indices[0]
        # Asked for each expert by its index in the pool, as the run asks (LearnerPool).
        data = (
            _round_data(env, params, state, t, named[first], first, experts, named, replication)
            if shared
            else None
        )
        for k, learner in copies.items():
            item = (
                data
                if shared
                else _round_data(env, params, state, t, named[k], k, experts, named, replication)
            )
            try:
                out = learner.learn(item)
            except ExpertError:
                raise
            except EXPERT_FAULTS as error:
                raise raised(
                    error, "learn (regret reference)", named[k], class_name(experts[k]), replication, t
                ) from error
            loss = _training_loss(out, named[k], experts[k], replication, t)
            if t > 0:
                totals[k] += loss
    with _LOCK:
        PASSES["python"] += 1
    return np.array([totals[k] / max(int(horizon), 1) for k in indices])
