"""The engine's Python side: build one replication's arrays, run the compiled loop, collect.

Replications run in a thread pool over the ``nogil`` kernels of :mod:`mlcb.engine.compiled_loop`; each one's
randomness is keyed by ``(seed, replication)`` only, so results do not depend on the number of
threads or on the order in which replications finish. With a ``parts`` directory every finished
replication is written to disk at once (:mod:`mlcb.storage.replications`) and skipped by a later
run: an interrupted run loses at most the replications in flight.
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

import numpy as np

from mlcb.contracts import BuildContext, build_env, selection_size
from mlcb.engine import compiled_loop, hindsight, stopping
from mlcb.engine.problem import Problem
from mlcb.errors import ExpertLossError, PolicyError, class_name
from mlcb.kernels import dispatch
from mlcb.kernels.seeding import StreamKeys, stream_keys
from mlcb.kernels.stats import new_stats
from mlcb.storage.replications import ReferenceStore, Replication, load_parts, part_path
from mlcb.validation import InputError


def top_m_best(optimal: np.ndarray, budget: int) -> float:
    """Best mean of ``budget`` experts' optimal losses: the Top-M regret's comparator."""
    return float(np.sort(optimal)[:budget].mean())


@dataclass
class Built:
    """One replication's engine state apart from the expert pool (see :func:`build_common`)."""

    env_params: Any
    env_state: Any
    keys: StreamKeys
    policy_params: Any
    policy_state: Any
    stats: np.ndarray
    accounting: compiled_loop.Accounting
    record: compiled_loop.Record


def identity_order(n_experts: int, identities: Any = None) -> np.ndarray:
    """Pool indices sorted by the experts' identities (``0 .. K-1`` without identities).

    Policies see the experts in this order, so that every tie they break by position goes to
    the smaller identity and relabelling a pool with its identities only permutes the results.

    Examples
    --------
    >>> identity_order(3, [7, 2, 5]).tolist()
    [1, 2, 0]
    """
    if identities is None:
        return np.arange(n_experts, dtype=np.int64)
    values = np.asarray(identities)
    if values.shape != (n_experts,) or len(np.unique(values)) != n_experts:
        raise InputError(f"identities must be {n_experts} distinct integers, got {identities!r}")
    return np.argsort(values, kind="stable").astype(np.int64)


def full_order(record: compiled_loop.Record, n_experts: int) -> np.ndarray:
    """``record.order`` as a (K,) array (an empty one stands for ``0 .. K-1``)."""
    return record.order if record.order.size else np.arange(n_experts, dtype=np.int64)


def build_common(
    problem: Problem,
    seed: int,
    replication: int,
    horizon: int,
    checkpoints: np.ndarray,
    trace_rounds: int = 0,
    references: ReferenceStore | None = None,
    hindsight_pass: bool = True,
) -> Built:
    """Environment, stream keys, policy, statistics, accounting and record of one replication:
    everything both engines need besides the pool. The environment is built for ``horizon``
    rounds; ``references`` keeps the best-in-hindsight references on disk
    (:mod:`mlcb.engine.hindsight`). Without ``hindsight_pass`` (a run whose numbers nobody reads:
    the compile of the round loop) no expert is trained for a reference: those of the experts in
    hindsight are what their family states."""
    n_experts, budget = len(problem.experts), problem.budget
    identities = getattr(problem.env, "streams", None)
    keys = stream_keys(seed, replication, n_experts, identities)
    order = identity_order(n_experts, identities)
    env_params, env_state = build_env(problem.env, seed, replication, horizon)
    if hindsight_pass:
        pool_optimal = hindsight.optimal_losses(
            problem, env_params, seed, replication, horizon, keys.experts, references
        )
    else:
        pool_optimal = np.asarray(
            problem.family.optimal_losses(list(problem.experts), problem.env, env_params), dtype=np.float64
        )
    # The policy and the accounting see the experts in identity order (mlcb.engine.compiled_loop).
    optimal = pool_optimal[order]
    best_expert = int(np.argmin(optimal))
    policy_params, policy_state = problem.policy.build(n_experts, budget, problem.delta, horizon, optimal)
    width = selection_size(problem.policy, n_experts, budget)
    accounting = compiled_loop.Accounting(
        optimal,
        float(optimal[best_expert]),
        best_expert,
        top_m_best(optimal, budget),
        budget,
        keys.policy,
        keys.deploy,
    )
    record = new_record(
        checkpoints, n_experts, width, min(trace_rounds, horizon), order, checks_selection(problem.policy)
    )
    stats = new_stats(n_experts)
    return Built(env_params, env_state, keys, policy_params, policy_state, stats, accounting, record)


def new_record(
    checkpoints: np.ndarray,
    n_experts: int,
    width: int,
    trace_rounds: int,
    order: np.ndarray,
    checked: bool = True,
) -> compiled_loop.Record:
    """A zeroed :class:`~mlcb.engine.compiled_loop.Record` of one replication: ``checkpoints``
    (C,), ``n_experts`` K, ``width`` the most experts trained in a round, ``trace_rounds`` rounds
    of trace, ``order`` the pool index of each expert in identity order (:func:`identity_order`;
    stored empty when it is ``0 .. K-1``), ``checked`` whether the round loop checks the policy's
    every selection (:func:`checks_selection`)."""
    c = len(checkpoints)
    ordered = bool(np.any(order != np.arange(n_experts)))
    return compiled_loop.Record(
        checkpoints=np.asarray(checkpoints, dtype=np.int64),
        regret=np.zeros(c),
        pseudo_regret=np.zeros(c),
        top_m_regret=np.zeros(c),
        certificate=np.zeros(c),
        trained=np.zeros((c, n_experts), dtype=np.int64),
        deployed=np.zeros((c, n_experts), dtype=np.int64),
        totals=np.zeros(5),
        cursor=np.zeros(1, dtype=np.int64),
        selected=np.zeros(width, dtype=np.int64),
        widths=np.zeros(width),
        deploy_losses=np.zeros(width),
        deploy_expected=np.zeros(width),
        warm_losses=np.zeros(n_experts),
        warm_rates=np.zeros(n_experts),
        trace_selected=np.full((trace_rounds, width), -1, dtype=np.int64),
        trace_deployed=np.full(trace_rounds, -1, dtype=np.int64),
        trace_loss=np.zeros(trace_rounds),
        exceeded=np.zeros(1, dtype=np.int64),
        error=np.zeros(4),
        order=order if ordered else np.zeros(0, dtype=np.int64),
        paths=compiled_loop.LoopPaths(ordered=ordered, checked=bool(checked)),
    )


def checks_selection(policy: Any) -> bool:
    """Whether the compiled round loop checks every selection of ``policy``
    (:func:`~mlcb.engine.compiled_loop.selection_fault`): for a policy of one's own, not for the
    policies mlcb ships (:mod:`mlcb.policies`), whose selections its tests check, since the check
    is a sixth of a round's instructions on the trap."""
    return not type(policy).__module__.startswith("mlcb.policies")


class CompiledReplication(NamedTuple):
    """Every argument of the compiled round loop for one replication, by name (in the order of
    :func:`mlcb.engine.compiled_loop.run_rounds`'s parameters)."""

    env_params: Any
    env_state: Any
    pool_params: Any
    pool_state: Any
    policy_params: Any
    policy_state: Any
    stats: np.ndarray
    accounting: compiled_loop.Accounting
    record: compiled_loop.Record

    def run_rounds(self, kernel: Callable, t_first: int, t_last: int) -> int:
        """Call ``kernel`` (:func:`mlcb.engine.compiled_loop.run_rounds`, or a twin of it:
        :meth:`round_loop`) for rounds ``t_first .. t_last``; round 0 is the warm start. Called
        through :func:`mlcb.kernels.dispatch.call`: the types of these arguments are read once a
        process, not on every call."""
        return dispatch.call(kernel, *self, t_first, t_last)

    def round_loop(self) -> Callable:
        """The round loop for these argument types
        (:func:`mlcb.engine.compiled_loop.round_loop_for`)."""
        return compiled_loop.round_loop_for(
            self.env_params,
            self.env_state,
            self.pool_params,
            self.pool_state,
            self.policy_params,
            self.policy_state,
        )


def build_replication(
    problem: Problem,
    seed: int,
    replication: int,
    horizon: int,
    checkpoints: np.ndarray,
    trace_rounds: int = 0,
    references: ReferenceStore | None = None,
    hindsight_pass: bool = True,
) -> CompiledReplication:
    """All kernel arguments of one replication, by name, ready for the compiled round loop."""
    built = build_common(
        problem, seed, replication, horizon, checkpoints, trace_rounds, references, hindsight_pass
    )
    context = BuildContext(
        problem.experts,
        problem.env,
        built.env_params,
        problem.delta,
        built.keys.experts,
        problem.smoothing,
        horizon,
        seed,
        replication,
    )
    pool_params, pool_state = cast(Any, problem.family).build_pool(context)  # a compiled family
    return CompiledReplication(
        env_params=built.env_params,
        env_state=built.env_state,
        pool_params=pool_params,
        pool_state=pool_state,
        policy_params=built.policy_params,
        policy_state=built.policy_state,
        stats=built.stats,
        accounting=built.accounting,
        record=built.record,
    )


_FAULTS = {
    compiled_loop.BAD_TRAINING_LOSS: "training loss",
    compiled_loop.BAD_DEPLOYED_LOSS: "deployed loss",
    compiled_loop.BAD_EXPECTED_LOSS: "expected loss of the deployed decision",
}


def raise_for_error(
    record: compiled_loop.Record,
    replication: int | None = None,
    describe: Callable[[int], str] | None = None,
    policy: str = "",
) -> None:
    """Turn the kernel's error slot into an :class:`ExpertLossError` naming the expert (index and,
    with ``describe(k)``, class), the replication and the round; or, for a selection that the
    engine cannot index with (:func:`~mlcb.engine.compiled_loop.selection_fault`), a
    :class:`~mlcb.errors.PolicyError` naming the policy ``policy``."""
    code = int(record.error[0])
    if code == compiled_loop.OK:
        return
    if code == compiled_loop.BAD_SELECTION:
        raise _selection_error(record, replication, policy)
    expert = int(record.error[2])
    raise ExpertLossError(
        _FAULTS[code],
        int(record.error[1]),
        expert,
        float(record.error[3]),
        describe(expert) if describe else "?",
        replication,
    )


def _selection_error(record: compiled_loop.Record, replication: int | None, policy: str) -> PolicyError:
    """The :class:`~mlcb.errors.PolicyError` of a selection the engine cannot index with."""
    t, what, value = int(record.error[1]), int(record.error[2]), int(record.error[3])
    n_experts, width = record.warm_losses.shape[0], record.selected.shape[0]
    if what == compiled_loop.SELECTED_COUNT:
        problem = f"returned n_selected = {value}, outside [0, {width}] (selection_size = {width})"
    elif what == compiled_loop.SELECTED_INDEX:
        problem = f"put expert {value} in the training set, not an index in [0, {n_experts})"
    else:
        problem = f"deployed {value}; deploy an expert index in [0, {n_experts}) or -1 (Top-M)"
    where = f"round {t}" if replication is None else f"replication {replication}, round {t}"
    return PolicyError(
        f"policy {policy or '?'} ({where}): select {problem}; mlcb.testing.check_policy checks a policy "
        "against its contract"
    )


def collect_replication(
    record: compiled_loop.Record, accounting: compiled_loop.Accounting, replication: int
) -> Replication:
    """The recorded arrays of a finished replication."""
    order = full_order(record, len(accounting.optimal))
    optimal = np.empty_like(accounting.optimal)
    optimal[order] = accounting.optimal  # back to the pool's order
    return Replication(
        index=replication,
        regret=record.regret,
        pseudo_regret=record.pseudo_regret,
        top_m_regret=record.top_m_regret,
        certificate=record.certificate,
        trained=record.trained,
        deployed=record.deployed,
        optimal=optimal,
        best_expert=int(order[accounting.best_expert]),
        best_loss=accounting.best_loss,
        trace_selected=record.trace_selected,
        trace_deployed=record.trace_deployed,
        trace_loss=record.trace_loss,
        exceeded=bool(record.exceeded[0]),
    )


#: Rounds of the first slice when a replication reports its progress; each next slice doubles
#: until one takes :data:`SLICE_SECONDS` (the call into compiled code costs microseconds).
FIRST_SLICE = 1 << 12
SLICE_SECONDS = 0.25


def play_rounds(
    arguments: CompiledReplication,
    kernel: Callable,
    horizon: int,
    report: Callable[[int], None] | None = None,
    warm_start: bool = False,
    stop: threading.Event | None = None,
) -> None:
    """Rounds ``1 .. horizon`` of ``arguments`` by ``kernel``, after the warm start when
    ``warm_start`` (round 0, in the first call): in one call, or, with ``report`` or ``stop``, in
    consecutive slices, ``report(rounds)`` after each, :class:`~mlcb.engine.stopping.Stopped`
    raised between two once ``stop`` is set. The round loop keeps its whole state in the arrays it
    is given, so the slices play the same rounds as one call, bit for bit; a slice that stops at an
    expert's fault ends the play (its error is in the record)."""
    first = 0 if warm_start else 1
    if report is None and stop is None:
        arguments.run_rounds(kernel, first, horizon)
        return
    size = FIRST_SLICE
    while first <= horizon:
        stopping.check(stop)
        last = min(horizon, first + size - 1)
        began = time.perf_counter()
        code = arguments.run_rounds(kernel, first, last)
        if report is not None:
            report(last - max(first, 1) + 1)
        if code != compiled_loop.OK:
            return
        if time.perf_counter() - began < SLICE_SECONDS / 2:
            size *= 2
        first = last + 1


def run_replication(
    problem: Problem,
    seed: int,
    replication: int,
    horizon: int,
    checkpoints: np.ndarray,
    trace_rounds: int = 0,
    references: ReferenceStore | None = None,
    hindsight_pass: bool = True,
    on_rounds: Callable[[int, int], None] | None = None,
    stop: threading.Event | None = None,
) -> Replication:
    """Simulate one replication from the warm start to ``horizon`` on the compiled engine;
    ``on_rounds(replication, rounds)``, when given, is told the rounds played as they are, and
    the rounds stop once ``stop`` is set (:func:`play_rounds`)."""
    stopping.check(stop)
    arguments = build_replication(
        problem, seed, replication, horizon, checkpoints, trace_rounds, references, hindsight_pass
    )
    record = arguments.record
    run_rounds = arguments.round_loop()
    report = None if on_rounds is None else functools.partial(on_rounds, replication)
    # The warm start is the round loop's round 0: one compiled kernel per setting, not two.
    play_rounds(arguments, run_rounds, horizon, report, getattr(problem.policy, "warm_start", True), stop)
    raise_for_error(record, replication, lambda k: class_name(problem.experts[k]), problem.config.policy)
    return collect_replication(record, arguments.accounting, replication)


#: From this horizon on, :func:`run_replications` builds the shared tables before its workers start.
LONG_HORIZON = 1_000_000


def run_replications(
    problem: Problem,
    seed: int,
    replications: Iterable[int],
    horizon: int,
    checkpoints: np.ndarray,
    threads: int | None = None,
    parts: Path | None = None,
    trace_rounds: int = 0,
    on_done: Callable[[Replication], None] | None = None,
    on_rounds: Callable[[int, int], None] | None = None,
) -> list[Replication]:
    """Run ``replications`` in parallel threads; returns them sorted by index. ``on_done`` is told
    each replication finished or loaded, ``on_rounds(replication, rounds)`` the rounds played as
    they are (from the workers' threads).

    With ``parts``, replications already saved there are loaded instead of run and every new one
    is saved as soon as it finishes (and the best-in-hindsight references beside the settings'
    parts, :class:`~mlcb.storage.replications.ReferenceStore`). On ``KeyboardInterrupt`` the
    replications in flight finish (they cannot be stopped inside compiled code), are saved, and
    the interrupt propagates. In a thread that runs under :func:`mlcb.engine.stopping.stop_when`,
    the event set stops the replications in flight between two slices of their rounds and the
    others before they start; the finished ones are saved, and
    :class:`~mlcb.engine.stopping.Stopped` propagates.
    """
    stop = stopping.current()
    stopping.check(stop)
    wanted = list(replications)
    references = ReferenceStore(parts.parent) if parts is not None else None
    trace = min(trace_rounds, horizon)
    done = load_parts(wanted, parts, on_done, len(checkpoints), len(problem.experts), trace)
    todo = [r for r in wanted if r not in done]
    if todo:
        # Compile (or load from the cache) once, in this thread, with a one-round run of the same
        # types, so that the workers start together instead of waiting on each other's compile.
        run_replication(
            problem, seed, todo[0], 1, checkpoints[:1], min(trace_rounds, 1), hindsight_pass=False
        )
        if len(todo) > 1 and horizon >= LONG_HORIZON:
            # Likewise the tables of functions of a count and their continuation (mlcb.kernels.tables),
            # shared by every replication and seconds long to build at such horizons: built once
            # here, not by every worker at the same time.
            build_replication(problem, seed, todo[0], horizon, checkpoints[-1:], references=references)
    workers = max(1, min(threads or os.cpu_count() or 1, len(todo) or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [
            pool.submit(
                run_replication,
                problem,
                seed,
                r,
                horizon,
                checkpoints,
                trace_rounds,
                references,
                True,
                on_rounds,
                stop,
            )
            for r in todo
        ]
        try:
            for future in concurrent.futures.as_completed(futures):
                finish(future.result(), done, parts, on_done)
        except BaseException:
            for future in futures:
                future.cancel()
            for future in futures:
                if not future.cancelled() and future.exception() is None:
                    finish(future.result(), done, parts, None)
            raise
    return [done[r] for r in wanted]


def finish(result: Replication, done: dict, parts: Path | None, on_done) -> None:
    """Keep a finished replication: in ``done``, on disk in ``parts``, and tell ``on_done``."""
    if result.index in done:
        return
    done[result.index] = result
    if parts is not None:
        result.save(part_path(parts, result.index))
    if on_done:
        on_done(result)
