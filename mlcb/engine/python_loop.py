"""The Python round loop: any :class:`~mlcb.contracts.BatchedPool`, every replication in lockstep.

The compiled engine (:mod:`mlcb.engine.compiled_loop`) needs every expert compiled. This loop serves any pool
that satisfies the batched interface: learners written in Python (:mod:`mlcb.learners`), a
compiled family driven from Python (:class:`CompiledPool`), a pool of torch networks that advances
every replication in one tensor operation. A block of replications advances together, round by
round:

1. one compiled call finishes round ``t - 1`` for every replication of the block (the regret
   accounting, the policy's statistics, ``observe`` and ``end_round``, the checkpoints) and starts
   round ``t`` (the environment's draw and the policy's ``select``): the same policy and
   environment kernels as the compiled engine;
2. the pool deploys the chosen experts of every replication (``BatchedPool.deploy``);
3. the pool trains the selected experts of every replication (``BatchedPool.train``).

A pool that offers ``play`` does 2 and 3 in one call (:class:`mlcb.engine.learners.LearnerPool`: one
pass over the replications instead of two).

Every number is computed in the same order as in the compiled engine, so for the same seed a
compiled family gives the same results bit for bit on either path (a test checks every built-in
family and policy). Replications are keyed by ``(seed, replication)`` as there: blocks, their
size and the order they run in change nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, cast

import numba
import numpy as np

from mlcb.contracts import BatchedPool, BuildContext, ExpertFamily
from mlcb.engine import compiled_loop, stopping
from mlcb.engine import replications as _replications
from mlcb.engine.batch import Batch
from mlcb.engine.learners import LearnerPool
from mlcb.engine.mixed import MixedPool
from mlcb.engine.problem import DEFAULT_BLOCK, Problem
from mlcb.errors import class_name
from mlcb.kernels import begin_round, deploy, dispatch, select, train
from mlcb.kernels.jit import JIT_DISABLED, JIT_OPTIONS, jit, uncached
from mlcb.learners import LearnerFamily, MixedFamily
from mlcb.storage.replications import ReferenceStore, Replication, load_parts
from mlcb.validation import InputTypeError


def _compiled(function: Callable) -> tuple[Callable, Callable]:
    """``function`` compiled twice: cached on disk, and uncached for user-defined argument types
    (whose classes a cache index must not pickle, see :func:`mlcb.engine.compiled_loop.round_loop_for`). With
    ``NUMBA_DISABLE_JIT=1`` both run it as Python (:func:`mlcb.kernels.jit.interpreted`)."""
    cached = jit(function, **JIT_OPTIONS)
    return cached, uncached(cached, **JIT_OPTIONS)


def _pick(pair: tuple[Callable, Callable], *samples: Any) -> Callable:
    return pair[0] if compiled_loop.own_types(*samples) else pair[1]


def _new_list(item):
    out = numba.typed.List()
    out.append(item)
    return out


def _append(out, item):
    out.append(item)


_NEW_LIST = _compiled(_new_list)
_APPEND = _compiled(_append)


def typed_list(items: list) -> Any:
    """A ``numba.typed.List`` of ``items`` (a plain list when Numba's JIT is disabled).

    Compiled code receives a typed list as one object, so a block's replications cost one
    argument per kind of state, not one per array. States travel paired with their parameters
    (``(params, state)`` tuples): a typed list cannot hold an empty ``NamedTuple`` (a policy
    without state) on its own.

    The list is made and filled by compiled functions of this module, cached on disk for the
    package's own types: Numba's own (``List().append`` from Python) are compiled again in every
    process for every type of item, about 2 s of a short run's 2.5 s of CPU on the Python engine
    with a warm cache.
    """
    if JIT_DISABLED:
        return list(items)
    if not items:
        return numba.typed.List()
    new, append = _pick(_NEW_LIST, items[0]), _pick(_APPEND, items[0])
    out = dispatch.call(new, items[0])
    for item in items[1:]:  # (the dispatcher typed each item again: 2 to 5 ms a replication)
        dispatch.call(append, out, item)
    return out


# --- the compiled halves of a round -----------------------------------------------------------
def _warm_begin(envs):
    for r in range(len(envs)):
        env = envs[r]
        begin_round(env[0], env[1], 0)


def _warm_finish(policies, stats, records, losses, rates):
    """Record the warm start (every expert trained once, in identity order); returns the first
    failing replication's position in the block, or -1."""
    for r in range(len(records)):
        policy = policies[r]
        code = compiled_loop.account_warm_start(
            policy[0], policy[1], stats[r], records[r], losses[r], rates[r]
        )
        if code != compiled_loop.OK:
            return r
    return -1


def _int_columns(width: int) -> tuple[slice, slice, int, int, int]:
    """Columns of the block's integer array (R, 2 W + 3): the training sets and the deployed
    experts (both -1 padded), then per replication the training set's size, the chosen expert
    (-1: all of the training set) and how many experts are deployed."""
    return slice(0, width), slice(width, 2 * width), 2 * width, 2 * width + 1, 2 * width + 2


def _advance(envs, policies, accountings, records, stats, ints, floats, t_finish, t_begin):
    """Finish round ``t_finish`` (skipped when 0) and begin round ``t_begin`` (skipped when 0)
    for every replication of the block; returns the first failing replication's position, or -1.

    Replication ``r``'s ``(env_params, env_state)`` is ``envs[r]``, its ``(policy_params,
    policy_state)`` ``policies[r]``, its accounting and record ``accountings[r]`` and
    ``records[r]``; ``ints`` holds the selections (:func:`_int_columns`), ``floats`` (4, R, W)
    the deployed losses, their expected losses, the training losses and the rates.
    """
    width = floats.shape[2]
    n_column = 2 * width
    for r in range(len(records)):
        env, policy, accounting, record = envs[r], policies[r], accountings[r], records[r]
        row = stats[r]
        if t_finish > 0:
            n = ints[r, n_column]
            chosen = ints[r, n_column + 1]
            code, loss = compiled_loop.account_deployed(
                row, accounting, record, t_finish, n, chosen, floats[0, r], floats[1, r]
            )
            if code != compiled_loop.OK:
                return r
            for j in range(n):
                code = compiled_loop.account_trained(
                    policy[0],
                    policy[1],
                    row,
                    accounting,
                    record,
                    t_finish,
                    j,
                    floats[2, r, j],
                    floats[3, r, j],
                )
                if code != compiled_loop.OK:
                    return r
            compiled_loop.account_end(
                policy[0], policy[1], row, accounting, record, t_finish, n, chosen, loss
            )
        if t_begin > 0:
            begin_round(env[0], env[1], t_begin)
            n, k = select(
                policy[0], policy[1], row, t_begin, accounting.policy_key, record.selected, record.widths
            )
            if compiled_loop.selection_fault(record, row.shape[0], t_begin, n, k) != compiled_loop.OK:
                return r
            # The pool is called with its own indices (record.order: see mlcb.engine.compiled_loop).
            order = record.order
            for j in range(width):
                ints[r, j] = compiled_loop.pool_index(order, record.selected[j]) if j < n else -1
                ints[r, width + j] = -1
            ints[r, n_column] = n
            ints[r, n_column + 1] = k
            if k >= 0:
                ints[r, width] = compiled_loop.pool_index(order, k)
                ints[r, n_column + 2] = 1
            else:
                for j in range(n):
                    ints[r, width + j] = compiled_loop.pool_index(order, record.selected[j])
                ints[r, n_column + 2] = n
    return -1


def _train_compiled(pools, envs, selected, counts, t, losses, rates):
    for r in range(len(pools)):
        pool = pools[r]
        env = envs[r]
        for j in range(counts[r]):
            losses[r, j], rates[r, j] = train(pool[0], pool[1], env[0], env[1], selected[r, j], t)


def _deploy_compiled(pools, envs, keys, selected, counts, t, losses, expected):
    for r in range(len(pools)):
        pool = pools[r]
        env = envs[r]
        for j in range(counts[r]):
            losses[r, j], expected[r, j] = deploy(
                pool[0], pool[1], env[0], env[1], selected[r, j], t, keys[r], j
            )


_WARM_BEGIN = _compiled(_warm_begin)
_WARM_FINISH = _compiled(_warm_finish)
_ADVANCE = _compiled(_advance)
_TRAIN = _compiled(_train_compiled)
_DEPLOY = _compiled(_deploy_compiled)


class CompiledPool:
    """A compiled family's pools, one per replication, driven by the Python engine.

    Train and deploy are one compiled call per round each, over the whole block: the price of
    generality is the Python loop around them, not the experts.
    """

    def __init__(
        self, family: ExpertFamily, experts: list, batch: Batch, delta: float, smoothing: str
    ) -> None:
        built = [
            cast(Any, family).build_pool(
                BuildContext(
                    tuple(experts),
                    batch.env,
                    batch.env_params[r],
                    delta,
                    batch.expert_keys[r],
                    smoothing,
                    batch.horizon,
                    batch.seed,
                    replication,
                ),
            )
            for r, replication in enumerate(batch.replications)
        ]
        self._classes = [class_name(e) for e in experts]
        self._pools = typed_list(built)
        self._envs = typed_list(list(zip(batch.env_params, batch.env_states)))
        self._keys = np.asarray(batch.deploy_keys, dtype=np.uint64)
        samples = (built[0][0], built[0][1], batch.env_params[0], batch.env_states[0])
        self._train = _pick(_TRAIN, *samples)
        self._deploy = _pick(_DEPLOY, *samples)

    def train(self, t, selected, counts, losses, rates) -> None:
        self._train(self._pools, self._envs, selected, counts, t, losses, rates)

    def deploy(self, t, selected, counts, losses, expected) -> None:
        self._deploy(
            self._pools,
            self._envs,
            self._keys,
            selected,
            counts,
            t,
            losses,
            expected,
        )

    def describe(self, r: int, k: int) -> str:
        return self._classes[k]


def build_pool(problem: Problem, batch: Batch, horizon: int) -> BatchedPool:
    """The :class:`~mlcb.contracts.BatchedPool` of ``problem``'s experts over ``batch``: a
    :class:`mlcb.engine.learners.LearnerPool` for Python experts, one sub-pool per family for a
    pool that mixes families (:class:`mlcb.engine.mixed.MixedPool`)."""
    family, experts = problem.family, list(problem.experts)
    if isinstance(family, MixedFamily):
        return MixedPool(
            family, experts, problem.env, batch, problem.delta, problem.smoothing, horizon, _pool_of
        )
    return _pool_of(family, experts, problem.env, batch, problem.delta, problem.smoothing, horizon)


def pool_over(
    problem: Problem, seed: int, horizon: int, replications: list[int], environments: list, keys: list
) -> tuple[Batch, BatchedPool]:
    """The :class:`Batch` of ``replications`` (their environments' ``(params, state)`` and their
    stream keys, :func:`mlcb.kernels.seeding.stream_keys`) and ``problem``'s pool over it
    (:func:`build_pool`)."""
    batch = Batch(
        env=problem.env,
        replications=list(replications),
        env_params=[params for params, _ in environments],
        env_states=[state for _, state in environments],
        expert_keys=[one.experts for one in keys],
        deploy_keys=np.array([one.deploy for one in keys], dtype=np.uint64),
        seed=seed,
        horizon=horizon,
    )
    return batch, build_pool(problem, batch, horizon)


def _pool_of(
    family: Any, experts: list, env: Any, batch: Batch, delta: float, smoothing: str, horizon: int
) -> Any:
    if isinstance(family, LearnerFamily):  # Python experts: one copy of each per replication
        return LearnerPool(experts, env, batch, delta)
    custom = getattr(family, "batched_pool", None)
    if custom is not None:
        return custom(experts, env, batch, delta, smoothing, horizon)
    if getattr(family, "build_pool", None) is None:
        raise InputTypeError(
            f"expert family {getattr(family, 'name', family)!r} has neither build_pool (a compiled pool) "
            "nor batched_pool (a Python one); see mlcb.contracts.ExpertFamily"
        )
    return CompiledPool(family, experts, batch, delta, smoothing)


def warm_start_pool(pool: BatchedPool, everyone: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The warm start's training: every expert of every replication trained once on round 0's
    data (after ``begin_round`` at 0), in the order of ``everyone`` (``(R, K)`` pool indices: the
    identity order). Returns the training losses and rates, ``(R, K)`` in that order, and each
    expert's updates (``pool.warm_updates(r, k)``: more than one for a Python expert that learnt
    several samples of ``xi_0``, :class:`mlcb.engine.learners.LearnerPool`; else 1). What the
    Python engine and the selection environment (:mod:`mlcb.selection_env`) both do."""
    n_reps, n_experts = everyone.shape
    losses, rates = np.zeros((n_reps, n_experts)), np.zeros((n_reps, n_experts))
    pool.train(0, everyone, np.full(n_reps, n_experts, dtype=np.int64), losses, rates)
    updates = np.ones((n_reps, n_experts), dtype=np.int64)
    counted = getattr(pool, "warm_updates", None)
    if counted is not None:
        for r in range(n_reps):
            for j in range(n_experts):
                updates[r, j] = int(counted(r, int(everyone[r, j])))
    return losses, rates, updates


def _count_warm_updates(stats: np.ndarray, losses: np.ndarray, updates: np.ndarray) -> np.ndarray:
    """Where an expert made ``c > 1`` updates in the warm start (:func:`warm_start_pool`), count
    them: its statistics start at ``c`` updates with ``c`` times its mean warm-start loss, which
    the warm start's accounting then completes (it adds the one update and the loss). Returns
    each replication's updates beyond one per expert."""
    extra = np.zeros(updates.shape[0], dtype=np.int64)
    for r in range(updates.shape[0]):
        for j in range(updates.shape[1]):
            c = int(updates[r, j])
            if c > 1:
                stats["n"][r, j] += c - 1
                stats["loss_sum"][r, j] += (c - 1) * float(losses[r, j])
                extra[r] += c - 1
    return extra


#: Rounds between two reports of a block's progress (``on_rounds``).
REPORT_EVERY = 256


def _run_block(
    problem: Problem,
    seed: int,
    block: list[int],
    horizon: int,
    checkpoints: np.ndarray,
    trace_rounds: int,
    references: ReferenceStore | None = None,
    on_rounds: Callable[[int, int], None] | None = None,
    stop: threading.Event | None = None,
) -> list[Replication]:
    built = [
        _replications.build_common(problem, seed, r, horizon, checkpoints, trace_rounds, references)
        for r in block
    ]
    environments = [(b.env_params, b.env_state) for b in built]
    batch, pool = pool_over(problem, seed, horizon, block, environments, [b.keys for b in built])
    n_reps, n_experts = len(block), len(problem.experts)
    width = built[0].record.selected.shape[0]
    envs = list(zip(batch.env_params, batch.env_states))
    policies = [(b.policy_params, b.policy_state) for b in built]
    stats = np.stack([b.stats for b in built])
    samples = (batch.env_params[0], batch.env_states[0], built[0].policy_params, built[0].policy_state)
    advance = _pick(_ADVANCE, *samples)

    def fail(position: int) -> None:
        _replications.raise_for_error(
            built[position].record,
            block[position],
            lambda k: pool.describe(position, k),
            problem.config.policy,
        )

    # One typed list per kind of state, not one of (env, policy, accounting, record) tuples: each
    # item type compiles Numba's list code once (cached), and a list of tuples has a type of its
    # own for every environment, policy and record together; these lists' types are shared
    # across them (the accountings' by every run).
    env_list = typed_list(envs)
    records = typed_list([b.record for b in built])
    if getattr(problem.policy, "warm_start", True):
        _pick(_WARM_BEGIN, *samples[:2])(env_list)
        everyone = np.stack([_replications.full_order(b.record, n_experts) for b in built])  # identity order
        losses, rates, updates = warm_start_pool(pool, everyone)
        extra = _count_warm_updates(stats, losses, updates)
        grow = getattr(problem.policy, "grow", None)
        if grow is not None and extra.any():  # a policy that records every update needs room
            policies = [(p, grow(p, s, int(e)) if e else s) for (p, s), e in zip(policies, extra)]
        policy_list = typed_list(policies)
        failed = _pick(_WARM_FINISH, *samples[2:])(policy_list, stats, records, losses, rates)
        if failed >= 0:
            fail(failed)
    else:
        policy_list = typed_list(policies)
    accountings = typed_list([b.accounting for b in built])
    ints = np.full((n_reps, 2 * width + 3), -1, dtype=np.int64)
    floats = np.zeros((4, n_reps, width))
    selected, deployed, n_selected, _, n_deployed = (ints[:, c] for c in _int_columns(width))
    deploy_losses, deploy_expected, train_losses, train_rates = floats
    play = getattr(pool, "play", None)
    for t in range(1, horizon + 2):
        failed = advance(
            env_list, policy_list, accountings, records, stats, ints, floats, t - 1, t if t <= horizon else 0
        )
        if failed >= 0:
            fail(failed)
        if t > horizon:
            break
        if t % stopping.EVERY == 0:
            stopping.check(stop)
        if on_rounds is not None and (t % REPORT_EVERY == 0 or t == horizon):
            for r in block:
                on_rounds(r, REPORT_EVERY if t % REPORT_EVERY == 0 else t % REPORT_EVERY)
        if play is not None:
            play(
                t,
                deployed,
                n_deployed,
                deploy_losses,
                deploy_expected,
                selected,
                n_selected,
                train_losses,
                train_rates,
            )
        else:
            pool.deploy(t, deployed, n_deployed, deploy_losses, deploy_expected)
            pool.train(t, selected, n_selected, train_losses, train_rates)

    collect = _replications.collect_replication
    return [collect(b.record, b.accounting, block[position]) for position, b in enumerate(built)]


def run_replications(
    problem: Problem,
    seed: int,
    replications: Iterable[int],
    horizon: int,
    checkpoints: np.ndarray,
    parts: Path | None = None,
    trace_rounds: int = 0,
    on_done: Callable[[Replication], None] | None = None,
    block: int | None = None,
    on_rounds: Callable[[int, int], None] | None = None,
) -> list[Replication]:
    """Run ``replications`` on the Python engine, ``block`` (default :data:`DEFAULT_BLOCK`) at a
    time; returns them sorted. ``on_done`` is told each replication finished or loaded,
    ``on_rounds(replication, rounds)`` the rounds played, every :data:`REPORT_EVERY` rounds.

    With ``parts``, replications already saved there are loaded instead of run, and every block is
    saved as soon as it finishes: an interruption or a failing expert loses at most the block in
    flight, and a re-run resumes (the best-in-hindsight references are kept beside the parts).
    In a thread that runs under :func:`mlcb.engine.stopping.stop_when`, the event set stops the
    block in flight within :data:`mlcb.engine.stopping.EVERY` rounds
    (:class:`~mlcb.engine.stopping.Stopped`).
    """
    stop = stopping.current()
    wanted = list(replications)
    references = ReferenceStore(parts.parent) if parts is not None else None
    trace = min(trace_rounds, horizon)
    done = load_parts(wanted, parts, on_done, len(checkpoints), len(problem.experts), trace)
    todo = [r for r in wanted if r not in done]
    size = max(1, int(DEFAULT_BLOCK if block is None else block))
    for start in range(0, len(todo), size):
        stopping.check(stop)
        for result in _run_block(
            problem,
            seed,
            todo[start : start + size],
            horizon,
            checkpoints,
            trace_rounds,
            references,
            on_rounds,
            stop,
        ):
            _replications.finish(result, done, parts, on_done)
    return [done[r] for r in wanted]
