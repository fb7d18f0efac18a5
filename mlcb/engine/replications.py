"""The engine's Python side: build one replication's arrays, run the compiled loop, collect.

Replications run in a thread pool over the ``nogil`` kernels of :mod:`mlcb.engine.compiled_loop`; each one's
randomness is keyed by ``(seed, replication)`` only, so results do not depend on the number of
threads or on the order in which replications finish. With a ``parts`` directory every finished
replication is written to disk at once (:mod:`mlcb.storage.replications`) and skipped by a later
run: an interrupted run loses at most the replications in flight.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from mlcb.contracts import BuildContext, Policy
from mlcb.engine import compiled_loop
from mlcb.engine.problem import Problem
from mlcb.errors import ExpertLossError, class_name
from mlcb.kernels.seeding import StreamKeys, stream_keys
from mlcb.storage.replications import Replication, load_parts, part_path
from mlcb.validation import InputError


def checkpoint_grid(horizon: int, points: int = 100) -> np.ndarray:
    """Rounds at which the recorder keeps a snapshot: geometric from 1 to ``horizon``, plus it.

    Examples
    --------
    >>> checkpoint_grid(1000, 5).tolist()
    [1, 6, 32, 178, 1000]
    """
    if horizon < 1 or points < 1:
        raise InputError(f"horizon and points must be >= 1, got {horizon!r} and {points!r}")
    grid = np.unique(np.round(np.geomspace(1, horizon, points)).astype(np.int64))
    return np.union1d(grid, [horizon]).astype(np.int64)


def top_m_best(optimal: np.ndarray, budget: int) -> float:
    """Best mean of ``budget`` experts' optimal losses: the Top-M regret's comparator."""
    return float(np.sort(optimal)[:budget].mean())


def selection_size(policy: Policy, n_experts: int, budget: int) -> int:
    """The most experts ``policy`` trains in a round: its ``selection_size`` or the budget."""
    size = getattr(policy, "selection_size", None)
    return int(size(n_experts, budget)) if size is not None else int(budget)


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
) -> Built:
    """Environment, stream keys, policy, statistics, accounting and record of one replication:
    everything both engines need besides the pool."""
    n_experts, budget = len(problem.experts), problem.budget
    identities = getattr(problem.env, "streams", None)
    keys = stream_keys(seed, replication, n_experts, identities)
    order = identity_order(n_experts, identities)
    env_params, env_state = problem.env.build(seed, replication)
    run_losses = getattr(problem.family, "run_optimal_losses", None)  # e.g. a hindsight reference
    if run_losses is not None:
        pool_optimal = np.asarray(
            run_losses(
                list(problem.experts), problem.env, env_params, seed, replication, horizon, keys.experts
            ),
            dtype=float,
        )
    else:
        pool_optimal = np.asarray(
            problem.family.optimal_losses(list(problem.experts), problem.env, env_params), dtype=float
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
    record = new_record(checkpoints, n_experts, width, min(trace_rounds, horizon), order)
    stats = compiled_loop.new_stats(n_experts)
    return Built(env_params, env_state, keys, policy_params, policy_state, stats, accounting, record)


def new_record(
    checkpoints: np.ndarray, n_experts: int, width: int, trace_rounds: int, order: np.ndarray
) -> compiled_loop.Record:
    """A zeroed :class:`~mlcb.engine.compiled_loop.Record` of one replication: ``checkpoints``
    (C,), ``n_experts`` K, ``width`` the most experts trained in a round, ``trace_rounds`` rounds
    of trace, ``order`` the pool index of each expert in identity order (:func:`identity_order`;
    stored empty when it is ``0 .. K-1``)."""
    c = len(checkpoints)
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
        order=order if np.any(order != np.arange(n_experts)) else np.zeros(0, dtype=np.int64),
    )


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

    def warm_start(self, kernel: Callable) -> int:
        """Call ``kernel`` (:func:`mlcb.engine.compiled_loop.warm_start` or its uncached twin)."""
        return kernel(
            self.env_params,
            self.env_state,
            self.pool_params,
            self.pool_state,
            self.policy_params,
            self.policy_state,
            self.stats,
            self.record,
        )

    def run_rounds(self, kernel: Callable, t_first: int, t_last: int) -> int:
        """Call ``kernel`` (:func:`mlcb.engine.compiled_loop.run_rounds` or its uncached twin) for
        rounds ``t_first .. t_last``."""
        return kernel(*self, t_first, t_last)

    def kernels(self) -> tuple[Callable, Callable]:
        """``(warm_start, run_rounds)`` for these argument types
        (:func:`mlcb.engine.compiled_loop.kernels_for`)."""
        return compiled_loop.kernels_for(
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
) -> CompiledReplication:
    """All kernel arguments of one replication, by name, ready for the compiled round loop."""
    built = build_common(problem, seed, replication, horizon, checkpoints, trace_rounds)
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
    pool_params, pool_state = problem.family.build_pool(context)
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
    record: compiled_loop.Record, replication: int | None = None, describe: Callable[[int], str] | None = None
) -> None:
    """Turn the kernel's error slot into an :class:`ExpertLossError` naming the expert (index and,
    with ``describe(k)``, class), the replication and the round."""
    code = int(record.error[0])
    if code == compiled_loop.OK:
        return
    expert = int(record.error[2])
    raise ExpertLossError(
        _FAULTS[code],
        int(record.error[1]),
        expert,
        float(record.error[3]),
        describe(expert) if describe else "?",
        replication,
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


def run_replication(
    problem: Problem,
    seed: int,
    replication: int,
    horizon: int,
    checkpoints: np.ndarray,
    trace_rounds: int = 0,
) -> Replication:
    """Simulate one replication from the warm start to ``horizon`` on the compiled engine."""
    arguments = build_replication(problem, seed, replication, horizon, checkpoints, trace_rounds)
    record = arguments.record
    warm_start, run_rounds = arguments.kernels()

    def describe(k: int) -> str:
        return class_name(problem.experts[k])

    if getattr(problem.policy, "warm_start", True):
        arguments.warm_start(warm_start)
        raise_for_error(record, replication, describe)
    arguments.run_rounds(run_rounds, 1, horizon)
    raise_for_error(record, replication, describe)
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
) -> list[Replication]:
    """Run ``replications`` in parallel threads; returns them sorted by index.

    With ``parts``, replications already saved there are loaded instead of run and every new one
    is saved as soon as it finishes. On ``KeyboardInterrupt`` the replications in flight finish
    (they cannot be stopped inside compiled code), are saved, and the interrupt propagates.
    """
    wanted = list(replications)
    trace = min(trace_rounds, horizon)
    done = load_parts(wanted, parts, on_done, len(checkpoints), len(problem.experts), trace)
    todo = [r for r in wanted if r not in done]
    if todo:
        # Compile (or load from the cache) once, in this thread, with a one-round run of the same
        # types, so that the workers start together instead of waiting on each other's compile.
        run_replication(problem, seed, todo[0], 1, checkpoints[:1], min(trace_rounds, 1))
        if len(todo) > 1 and horizon >= LONG_HORIZON:
            # Likewise the tables of functions of a count and their continuation (mlcb.kernels.tables),
            # shared by every replication and seconds long to build at such horizons: built once
            # here, not by every worker at the same time.
            build_replication(problem, seed, todo[0], horizon, checkpoints[-1:])
    workers = max(1, min(threads or os.cpu_count() or 1, len(todo) or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [
            pool.submit(run_replication, problem, seed, r, horizon, checkpoints, trace_rounds) for r in todo
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
