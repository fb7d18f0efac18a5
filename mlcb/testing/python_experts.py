"""Conformance of Python experts (:class:`mlcb.contracts.PythonExpert`), driven directly.

:func:`_check_python_expert` plays deploy then learn on an environment's round data, as the engine
calls them, and checks what each returns (:func:`_parse`), that ``deploy`` leaves the learner as
it was (:func:`_snapshot`, :func:`_state_changes`, :func:`_check_deploy_leaves_learning`), that
``spawn`` gives fresh, seeded copies (:func:`_replay`), and the expert's rate
(:mod:`mlcb.testing.rates`).
"""

from __future__ import annotations

import copy
import io
import math
import pickle
import random
from typing import Any

import numpy as np

from mlcb.testing._common import (
    DELTA,
    _check_unit,
    _describe,
    _fail,
    _is_bool,
    _is_real,
    _raising,
    _same,
)
from mlcb.testing.environments import PROBE_HORIZON, _Stream
from mlcb.testing.rates import _check_rate_values, _counts


def _parse(who: str, out: Any, method: str, t: int, second: str) -> tuple[float, Any]:
    where = f"{method}(data) at round {t}"
    if type(out) is tuple:
        if len(out) != 2:
            _fail(
                who,
                f"{where} returned {_describe(out)}; it must return the loss (a float) or a pair "
                f"(loss, {second})",
            )
        loss, extra = out
    elif _is_real(out):
        loss, extra = out, None
    else:
        _fail(
            who,
            f"{where} returned {_describe(out)}; it must return the loss (a float) or a tuple "
            f"(loss, {second})",
        )
    return _check_unit(who, loss, where, "a loss"), extra


def _rng_free_pickle(obj: Any) -> bytes | None:
    """``obj`` pickled with its random generators left out (their draws are judged by behaviour),
    or ``None`` when it does not pickle."""

    class _Pickler(pickle.Pickler):
        def persistent_id(self, value):
            if isinstance(value, (np.random.Generator, np.random.RandomState, np.random.BitGenerator)):
                return "rng"
            if isinstance(value, random.Random):
                return "rng"
            return None

    buffer = io.BytesIO()
    try:
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    except Exception:  # noqa: BLE001 (anything unpicklable: no snapshot)
        return None
    return buffer.getvalue()


def _attributes(obj: Any) -> dict[str, Any] | None:
    """An object's attributes (``__dict__`` and ``__slots__``), or ``None`` when it has neither."""
    found: dict[str, Any] = {}
    has = False
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            has = True
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                found[name] = getattr(obj, name)
    if hasattr(obj, "__dict__"):
        has = True
        found.update(vars(obj))
    return found if has else None


_MISSING = object()


def _snapshot(learner: Any) -> tuple[bytes | None, dict | None]:
    """The learner pickled whole and attribute by attribute (random generators left out)."""
    attributes = _attributes(learner)
    if attributes is not None:
        attributes = {
            name: (None if value is None else _rng_free_pickle(value)) for name, value in attributes.items()
        }
    return _rng_free_pickle(learner), attributes


def _state_changes(before: tuple[bytes | None, dict | None], learner: Any) -> list[str] | None:
    """Attributes whose value changed since the snapshot ``before``, except lazily initialised
    ones (absent or ``None`` before); ``None`` when there is no way to tell."""
    pickled, attributes = before
    if attributes is None:
        if pickled is None:
            return None
        return [] if _rng_free_pickle(learner) == pickled else ["(its pickled state)"]
    after = _snapshot(learner)[1] or {}
    changed = []
    for name, old in attributes.items():
        if old is None:
            continue  # lazily initialised on first use
        new = after.get(name, _MISSING)
        if new is _MISSING or old != new:
            changed.append(name)
    return changed


def _outputs_equal(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    return all(
        _same(x, y) if not isinstance(x, tuple) else (len(x) == len(y) and all(map(_same, x, y)))
        for x, y in zip(a, b)
    )


def _number(value: Any) -> Any:
    """``value`` as a float where the engine reads it as a number (Python's and NumPy's numbers, a
    0-d numeric array); anything else as it is, for :func:`_parse` to judge."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        return float(value)
    return float(value) if _is_real(value) else value


def _call(who: str, learner: Any, method: str, data: Any, t: int) -> Any:
    """``learner.method(data)`` at round ``t``; what it raises becomes a :class:`ConformanceError`
    naming the method and the round."""
    with _raising(f"{who}: {method}(data) at round {t} fails"):
        out = getattr(learner, method)(data)
    if type(out) is tuple:
        return tuple(_number(v) for v in out)
    return _number(out)


def _replay(who: str, learner: Any, env: Any, seed: int, rounds: int) -> list:
    """Outputs of deploy then learn, round after round, as the engine calls them."""
    stream = _Stream(who, env, seed)
    outputs = []
    for t in range(rounds):
        data = stream.next()
        outputs.append(_call(who, learner, "deploy", data, t))
        outputs.append(_call(who, learner, "learn", data, t))
    return outputs


def _check_python_expert(who, expert, env, seed, rounds, n_experts) -> None:
    delta_prime = DELTA / (2.0 * n_experts)
    heuristic = getattr(expert, "heuristic", True)
    if not _is_bool(heuristic):
        _fail(who, f"heuristic is {_describe(heuristic)}; it must be a bool (True unless its rate is valid)")

    # rate
    rate = getattr(expert, "rate", None)
    if rate is None:
        rate = (1.0, 0.5)
    n = _counts()
    if callable(rate):
        with _raising(
            f"{who}.rate(n, delta_prime) fails on an array of counts", "rate functions are vectorised over n"
        ):
            values = rate(n, delta_prime)
        _check_rate_values(who, values, n, not heuristic, "rate(n, delta')")
    elif isinstance(rate, (tuple, list)) and len(rate) == 2 and all(map(_is_real, rate)):
        beta, alpha = map(float, rate)
        if not (math.isfinite(beta) and beta > 0 and 0 < alpha <= 1):
            _fail(who, f"rate is {rate!r}; a pair (beta, alpha) needs beta > 0 and 0 < alpha <= 1")
        values = np.minimum(n, beta * n**alpha * np.sqrt(np.log(2.0 * n * n / delta_prime)))
        _check_rate_values(who, values, n, not heuristic, f"rate {rate!r}")
    else:
        _fail(
            who,
            f"rate is {_describe(rate)}; it must be a callable rate(n, delta_prime) or a pair (beta, alpha)",
        )

    # spawn
    spawn = getattr(expert, "spawn", None)
    if spawn is not None and not callable(spawn):
        _fail(who, f"spawn is {_describe(spawn)}; it must be a method spawn(seed) or absent")

    def fresh(s: int) -> Any:
        if spawn is None:
            with _raising(
                f"{who}: has no spawn(seed), and copy.deepcopy, which the engine uses to make each "
                "replication's copy, fails",
                "define spawn(seed) to return a fresh copy",
            ):
                return copy.deepcopy(expert)
        before = _rng_free_pickle(expert)
        with _raising(f"{who}: spawn({s}) fails"):
            child = expert.spawn(s)
        if child is expert:
            _fail(who, f"spawn({s}) returned the expert itself; return a fresh, untrained copy")
        if not (callable(getattr(child, "learn", None)) and callable(getattr(child, "deploy", None))):
            _fail(who, f"spawn({s}) returned {_describe(child)}, not a learner with learn and deploy")
        if before is not None and _rng_free_pickle(expert) != before:
            _fail(who, f"spawn({s}) changed the expert it was called on; spawn must only make a copy")
        return child

    # every replication's copy holds its own state (before the other checks, whose messages would
    # blame deploy for what is state shared between copies)
    _check_copies_are_independent(who, fresh, env, seed, rounds)

    # learn and deploy, round after round, with every check
    learner = fresh(seed)
    stream = _Stream(who, env, seed)
    reference = []
    for t in range(rounds):
        data = stream.next()
        before = _snapshot(learner)
        try:
            twin = copy.deepcopy(learner) if t in (1, rounds // 2) else None
        except Exception:  # noqa: BLE001 (a learner that cannot be copied: judged by its snapshot)
            twin = None
        out = _call(who, learner, "deploy", data, t)
        _, expected = _parse(who, out, "deploy", t, "expected_loss")
        if expected is not None:
            _check_unit(who, expected, f"deploy(data) at round {t}", "an expected loss", allow_nan=True)
        changed = _state_changes(before, learner)
        if changed:
            _fail(
                who,
                f"deploy(data) at round {t} changed the learner's state (attributes "
                f"{', '.join(map(repr, changed))}); deploy must not learn: compute the smoothed "
                "decision's loss without updating the learner",
            )
        reference.append(out)
        if twin is not None:
            try:
                after = copy.deepcopy(learner)
            except Exception:  # noqa: BLE001 (no longer copyable after deploy: judged by its snapshot)
                after = None
            if after is not None:
                _check_deploy_leaves_learning(who, twin, after, env, seed, t)
        learned = _call(who, learner, "learn", data, t)
        _, rate_now = _parse(who, learned, "learn", t, "rate")
        if rate_now is not None:
            if not (_is_real(rate_now) and math.isfinite(rate_now) and rate_now >= 0):
                _fail(
                    who,
                    f"learn(data) at round {t} returned the rate {_describe(rate_now)}; a rate U(n, delta') "
                    "is a finite number >= 0",
                )
            if not heuristic and rate_now > t + 1:
                _fail(
                    who,
                    f"learn(data) at round {t} returned the rate {rate_now!r} > n = {t + 1} while declared "
                    "valid (heuristic False); cap it with min(n, ...)",
                )
        reference.append(learned)

    # deterministic for a seed, and a fresh copy from a trained one
    if spawn is not None:
        again = _replay(who, fresh(seed), env, seed, rounds)
        if not _outputs_equal(reference, again):
            _fail(
                who,
                f"spawn({seed}) is not deterministic: two copies spawned with the same seed give different "
                "losses on the same data; seed every random stream of the copy from the seed",
            )
        trained = fresh(seed)
        _replay(who, trained, env, seed, rounds)
        with _raising(f"{who}: spawn({seed}) of a trained copy fails"):
            child = trained.spawn(seed)
        if not _outputs_equal(reference, _replay(who, child, env, seed, rounds)):
            _fail(
                who,
                f"spawn({seed}) of a trained learner does not give a fresh, untrained copy (its losses "
                f"differ from spawn({seed}) of an untrained one); build the copy from the hyper-parameters "
                "only",
            )

    # optimal_loss (optional)
    optimal = getattr(expert, "optimal_loss", None)
    if callable(optimal):
        params, _ = env.build(seed, 0, PROBE_HORIZON)
        with _raising(f"{who}: optimal_loss(env, env_params) fails"):
            value = optimal(env, params)
        _check_unit(who, _number(value), "optimal_loss(env, env_params)", "an optimal loss")


def _check_copies_are_independent(who: str, fresh: Any, env: Any, seed: int, rounds: int) -> None:
    """Two fresh copies played in lockstep on the same rounds (deploy then learn, one copy after
    the other, as the engine plays the copies of several replications) must each return what one
    copy played alone returns: the engine runs replications side by side, so copies that share
    state (a class attribute, a list that ``spawn`` hands on, a global random generator) would
    make every replication's numbers depend on the others'."""
    alone = _replay(who, fresh(seed), env, seed, rounds)
    first, second = fresh(seed), fresh(seed)
    stream = _Stream(who, env, seed)
    played: tuple[list, list] = ([], [])
    for t in range(rounds):
        data = stream.next()
        for learner, outputs in zip((first, second), played):
            outputs.append(_call(who, learner, "deploy", data, t))
            outputs.append(_call(who, learner, "learn", data, t))
    for outputs in played:
        if not _outputs_equal(alone, outputs):
            spawned = callable(getattr(first, "spawn", None))
            made = f"spawn({seed})" if spawned else "copy.deepcopy"
            either = f"spawn({seed}) is not deterministic, or " if spawned else ""
            _fail(
                who,
                f"two copies made by {made}, played side by side on the same rounds, return other losses "
                f"than one copy played alone: {either}the copies share state (a class attribute, a list or "
                "array handed to every copy, a global random generator); give every copy its own state, "
                "seeded from spawn(seed)",
            )


def _check_deploy_leaves_learning(who, before, after, env, seed, t, horizon=10) -> None:
    """Copies of the learner taken before and after ``deploy`` at round ``t`` must learn alike on
    the rounds ``t, t + 1, ...`` (a deploy that draws from the stream ``learn`` uses fails)."""
    streams = [_Stream(who, env, seed), _Stream(who, env, seed)]
    for stream in streams:
        for _ in range(t):
            stream.next()
    for step in range(horizon):
        one = _call(who, before, "learn", streams[0].next(), t + step)
        two = _call(who, after, "learn", streams[1].next(), t + step)
        if not _outputs_equal([one], [two]) or (
            step == horizon - 1 and _rng_free_pickle(before) != _rng_free_pickle(after)
        ):
            _fail(
                who,
                f"deploy(data) at round {t} changed what learn does next (round {t + step}: learn returned "
                f"{two!r} after deploy, {one!r} without); deploy must not learn, nor draw from the "
                "random stream learn uses (give deploy a generator of its own)",
            )
