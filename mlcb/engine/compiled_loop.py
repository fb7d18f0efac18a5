"""The compiled round loop shared by every environment, expert pool and policy.

State is a structure of arrays; one call advances one replication. Shapes: ``K`` experts, ``M``
the budget, ``C`` checkpoints, ``T_trace`` rounds of per-round trace (0 unless asked for).

Experts are ordered by identity inside the loop. Expert ``i`` of the statistics and of the
policy is the pool's expert ``record.order[i]``, where ``order`` sorts the experts by their
identities (the stream identities that follow an expert through a relabelling; for a default pool
``order`` is ``0 .. K-1`` and nothing changes). Every tie a policy breaks by "smaller index" is
therefore broken by identity, and so is everything else a policy does by position (a round-robin
cycle, a permutation it shuffles): relabelling a pool together with its identities permutes the
results and changes nothing else. The pool and the environment are always called with the pool's
own index, and everything recorded (counts, traces, error reports) names the pool's index.

Per-expert quantities that the round loop hands from function to function live in NumPy record
arrays (one array per concern, named fields) rather than in one array per field: Numba passes
every array as 7 to 11 machine words and materialises a function's whole argument tuple on entry,
so a pool described by fifteen arrays cost more per call than the arithmetic it did.
"""

from __future__ import annotations

import hashlib
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from mlcb.kernels import begin_round, deploy, end_round, observe, select, train
from mlcb.kernels.constants import Constants
from mlcb.kernels.jit import JIT_DISABLED, KERNEL_OPTIONS, jit, kernel, nonnegative, uncached

#: Error codes written to ``Record.error[0]``.
OK, BAD_TRAINING_LOSS, BAD_DEPLOYED_LOSS, BAD_EXPECTED_LOSS, BAD_SELECTION = 0, 1, 2, 3, 4
#: What a :data:`BAD_SELECTION` is about (``Record.error[2]``): the count ``select`` returned, an
#: index it wrote into the training set, or the expert it deployed.
SELECTED_COUNT, SELECTED_INDEX, DEPLOYED_INDEX = 0, 1, 2


class Accounting(NamedTuple):
    """What regret is measured against in one replication (known to the simulator only)."""

    optimal: np.ndarray  # float64 (K,): L_k* in identity order
    best_loss: float  # L*
    best_expert: int  # k* in identity order (ties: the smaller identity)
    top_m_best: float  # best mean of M experts' L_k*
    budget: int  # M, for the certificate's 1/M
    policy_key: np.uint64
    deploy_key: np.uint64


@dataclass(frozen=True)
class LoopPaths(Constants):
    """The round loop's own paths, as compile-time constants (:mod:`mlcb.kernels.constants`)."""

    ordered: bool  # ``Record.order`` is not the identity (a relabelled pool)
    checked: bool  # the policy's selection is checked after every select (a policy of one's own)


class Record(NamedTuple):
    """Caller-owned outputs of one replication.

    ``checkpoints`` (C,) int64 rounds, increasing; per checkpoint: ``regret``, ``pseudo_regret``,
    ``top_m_regret``, ``certificate`` (C,) float64; ``trained``, ``deployed`` (C, K) int64.
    ``totals`` (5,) float64 running sums (realized, pseudo, Top-M, k* widths, all widths);
    ``cursor`` (1,) int64 next checkpoint; ``selected`` (M,) int64 and ``widths`` (M,) float64
    scratch for the policy's choice; ``deploy_losses``, ``deploy_expected`` (M,) float64 scratch
    for the deployed experts' outputs, ``warm_losses``, ``warm_rates`` (K,) for the warm start's
    training outputs.
    Trace, when ``trace_deployed`` has length ``T_trace > 0``: ``trace_selected`` (T_trace, M)
    (-1 padded), ``trace_deployed`` (T_trace,), ``trace_loss`` (T_trace,) deployed loss.
    ``order`` (K,) int64: the pool index of the ``i``-th expert in identity order (module doc),
    or empty when that is the index itself (a default pool: no indirection in the loop);
    ``trained``, ``deployed``, the traces and the error's expert name pool indices.
    ``exceeded`` (1,) int64: 1 once the pseudo-regret has exceeded the certificate Delta(t) in
    some round (checked every round). ``error`` (4,) float64: code, round, expert, offending value.
    ``paths``: whether ``order`` is the identity, as a constant.
    """

    checkpoints: np.ndarray
    regret: np.ndarray
    pseudo_regret: np.ndarray
    top_m_regret: np.ndarray
    certificate: np.ndarray
    trained: np.ndarray
    deployed: np.ndarray
    totals: np.ndarray
    cursor: np.ndarray
    selected: np.ndarray
    widths: np.ndarray
    deploy_losses: np.ndarray
    deploy_expected: np.ndarray
    warm_losses: np.ndarray
    warm_rates: np.ndarray
    trace_selected: np.ndarray
    trace_deployed: np.ndarray
    trace_loss: np.ndarray
    exceeded: np.ndarray
    error: np.ndarray
    order: np.ndarray
    paths: LoopPaths


@kernel
def pool_index(order, i):
    """The pool's index of expert ``i`` in identity order (``Record.order``; empty: ``i``)."""
    i = nonnegative(i)
    return i if order.shape[0] == 0 else nonnegative(order[i])


@kernel
def record_index(record, i):
    """:func:`pool_index` of ``record.order``, where whether it is the identity is a constant."""
    if record.paths.ordered:
        return nonnegative(record.order[nonnegative(i)])
    return nonnegative(i)


@kernel
def _fail(record, code, t, k, value):
    record.error[0] = code
    record.error[1] = t
    record.error[2] = pool_index(record.order, k)
    record.error[3] = value
    return code


@kernel
def selection_fault(record, n_experts, t, n_selected, chosen):
    """Whether a policy's ``select`` gave what the engine can index with: ``0 <= n_selected <=``
    the width of ``record.selected``, indices in ``[0, n_experts)``, a deployed expert in ``[-1,
    n_experts)``; :data:`BAD_SELECTION` in the error slot (what was wrong and its value), else
    :data:`OK`. A policy that broke this made the engine read and write outside its arrays (a
    crash, or numbers read from elsewhere); :func:`mlcb.testing.check_policy` checks more."""
    if n_selected < 0 or n_selected > record.selected.shape[0]:
        return _selection_failed(record, t, SELECTED_COUNT, n_selected)
    for j in range(n_selected):
        if record.selected[j] < 0 or record.selected[j] >= n_experts:
            return _selection_failed(record, t, SELECTED_INDEX, record.selected[j])
    if chosen < -1 or chosen >= n_experts:
        return _selection_failed(record, t, DEPLOYED_INDEX, chosen)
    return OK


@kernel
def _selection_failed(record, t, what, value):
    record.error[0] = BAD_SELECTION
    record.error[1] = t
    record.error[2] = what
    record.error[3] = value
    return BAD_SELECTION


#: The kernels' options without a cache on disk (the accounting kernels, and the uncached twins
#: of the round loop below).
_UNCACHED = {key: value for key, value in KERNEL_OPTIONS.items() if key != "cache"}
#: The accounting kernels are inlined into each caller (both engines' loops) and have no cache
#: of their own: a cached function's index would pickle a user's policy types (see below).
#: ``inlined`` ones by Numba (``inline="always"``): their bodies are typed again in each caller,
#: which costs least where a function has one caller, the compiled round loop's cores.
inlined = jit(inline="always", **_UNCACHED)
#: ``linked`` ones, the entry points of the Python engine and the sessions (``account_*``), are
#: compiled once per signature in a process and inlined by LLVM (``forceinline``, the same bits)
#: into each of their several callers, which reuse them: the Python engine's half of a round for
#: a new policy compiles in about 2.6 s instead of 3.2 to 3.7 (docs/benchmarks.md). The compiled
#: round loop's cores stay ``inlined``: compiled apart, they made the first run of the trap about
#: a second slower to compile.
linked = jit(**_UNCACHED)


@inlined
def account_warm_start(policy_params, policy_state, stats, record, losses, rates):
    """Record the warm start: expert ``k`` (every one, in index order) trained once with training
    loss ``losses[k]`` and rate ``rates[k]``; returns an error code."""
    for k in range(stats.shape[0]):
        loss = losses[k]
        if not (loss >= 0.0 and loss <= 1.0):
            return _fail(record, BAD_TRAINING_LOSS, 0, k, loss)
        expert = stats[k]
        expert.n += 1
        expert.loss_sum += loss
        expert.rate = rates[k]
        observe(policy_params, policy_state, stats, k, loss, 0)
    return OK


@inlined
def _warm_start(env_params, env_state, pool_params, pool_state, policy_params, policy_state, stats, record):
    """Train every expert once on ``xi_0`` so that ``n_k >= 1`` (M-LCB's warm start); returns an
    error code."""
    begin_round(env_params, env_state, 0)
    losses, rates = record.warm_losses, record.warm_rates
    for k in range(stats.shape[0]):
        losses[k], rates[k] = train(
            pool_params, pool_state, env_params, env_state, pool_index(record.order, k), 0
        )
    return account_warm_start(policy_params, policy_state, stats, record, losses, rates)


# The accounting of a round, shared by both engines: the compiled round loop below keeps the running
# totals (realized, pseudo, Top-M regret, k* widths, all widths) and the next checkpoint in local
# variables from round to round and calls the cores (`_deployed`, `_trained`, `_ended`,
# `_checkpoints`); the Python engine and the sessions call the `account_*` wrappers, which keep
# them in `Record.totals` and `Record.cursor` between calls. Both do the same arithmetic in the same
# order, so both give the same bits.
@inlined
def read_totals(record):
    """``Record.totals`` as a tuple (realized, pseudo, Top-M, k* widths, all widths)."""
    totals = record.totals
    return totals[0], totals[1], totals[2], totals[3], totals[4]


@inlined
def write_totals(record, totals):
    """Store the tuple ``totals`` (:func:`read_totals`) in ``Record.totals``."""
    record.totals[0], record.totals[1], record.totals[2], record.totals[3], record.totals[4] = totals


@inlined
def _deployed_one(stats, accounting, record, totals, t, chosen, loss, expected):
    """:func:`account_deployed` of one deployed expert, ``chosen``, whose loss and expected loss
    are ``loss`` and ``expected``, on the tuple ``totals``: returns ``(code, loss, totals)``. (Passed
    as values, not through ``Record.deploy_losses``: a round trip through memory on the round's
    critical path cost more than the rest of the accounting.)"""
    realized, pseudo, top_m, best_widths, all_widths = totals
    if not (loss >= 0.0 and loss <= 1.0):
        return _fail(record, BAD_DEPLOYED_LOSS, t, chosen, loss), loss, totals
    if expected < 0.0 or expected > 1.0:
        return _fail(record, BAD_EXPECTED_LOSS, t, chosen, expected), loss, totals
    stats[chosen].deployed += 1
    realized += loss - accounting.best_loss
    pseudo += expected - accounting.best_loss
    return OK, loss, (realized, pseudo, top_m, best_widths, all_widths)


@inlined
def _deployed_all(stats, accounting, record, totals, t, n_selected, deploy_losses, deploy_expected):
    """:func:`account_deployed` of every expert of ``record.selected[:n_selected]`` (Top-M), their
    losses and expected losses in ``deploy_losses`` and ``deploy_expected``, on the tuple
    ``totals``: returns ``(code, the mean loss, totals)``."""
    realized, pseudo, top_m, best_widths, all_widths = totals
    loss = 0.0
    expected = 0.0
    for j in range(n_selected):
        k = nonnegative(record.selected[j])
        one = deploy_losses[j]
        one_expected = deploy_expected[j]
        if not (one >= 0.0 and one <= 1.0):
            return _fail(record, BAD_DEPLOYED_LOSS, t, k, one), one, totals
        if one_expected < 0.0 or one_expected > 1.0:
            return _fail(record, BAD_EXPECTED_LOSS, t, k, one_expected), one, totals
        loss += one
        expected += one_expected
        stats[k].deployed += 1
    loss /= n_selected
    expected /= n_selected
    realized += loss - accounting.best_loss
    pseudo += expected - accounting.best_loss
    return OK, loss, (realized, pseudo, top_m, best_widths, all_widths)


@linked
def account_deployed(stats, accounting, record, t, n_selected, chosen, deploy_losses, deploy_expected):
    """Round ``t``'s deployment: check the deployed losses, count the deployments, add to the
    realized and pseudo-regret totals. Returns ``(error code, the round's deployed loss)``.

    ``chosen`` is the deployed expert, or -1 for all of ``record.selected[:n_selected]``;
    ``deploy_losses[j]`` and ``deploy_expected[j]`` are the ``j``-th deployed expert's loss and
    expected loss (``nan`` expected: unknown, the pseudo-regret becomes ``nan``).
    """
    totals = read_totals(record)
    if chosen >= 0:
        code, loss, totals = _deployed_one(
            stats, accounting, record, totals, t, chosen, deploy_losses[0], deploy_expected[0]
        )
    else:
        code, loss, totals = _deployed_all(
            stats, accounting, record, totals, t, n_selected, deploy_losses, deploy_expected
        )
    write_totals(record, totals)
    return code, loss


@inlined
def _trained(policy_params, policy_state, stats, accounting, record, totals, t, j, k, loss, rate):
    """:func:`account_trained` on the tuple ``totals``, ``k`` the expert ``record.selected[j]``:
    returns ``(code, totals)``."""
    totals = _widened(accounting, record, totals, j, k)
    if not (loss >= 0.0 and loss <= 1.0):
        return _fail(record, BAD_TRAINING_LOSS, t, k, loss), totals
    expert = stats[k]
    expert.n += 1
    expert.loss_sum += loss
    expert.rate = rate
    observe(policy_params, policy_state, stats, k, loss, t)
    return OK, totals


@inlined
def _widened(accounting, record, totals, j, k):
    """The certificate's share of the ``j``-th expert of the training set, ``k``, on the tuple
    ``totals``: its width ``UCB - LCB`` joins the sum of every trained expert's widths and, when
    it is ``k*``, the sum of ``k*``'s. Returns the new totals."""
    realized, pseudo, top_m, best_widths, all_widths = totals
    width = record.widths[j]
    all_widths += width
    if k == accounting.best_expert:
        best_widths += width
    return realized, pseudo, top_m, best_widths, all_widths


@linked
def account_width(accounting, record, j):
    """:func:`_widened` on ``Record.totals``: the certificate's share of the ``j``-th expert of
    the training set (one the caller does not train through :func:`account_trained`)."""
    write_totals(record, _widened(accounting, record, read_totals(record), j, record.selected[j]))


@linked
def account_trained(policy_params, policy_state, stats, accounting, record, t, j, loss, rate):
    """The ``j``-th expert of the training set trained in round ``t`` with ``loss`` and new rate
    ``rate``: check the loss, add its width to the certificate, update its statistics and tell
    the policy (``observe``). Returns an error code."""
    k = nonnegative(record.selected[j])
    code, totals = _trained(
        policy_params, policy_state, stats, accounting, record, read_totals(record), t, j, k, loss, rate
    )
    write_totals(record, totals)
    return code


@inlined
def _top_m(accounting, record, n_selected):
    """The sum of ``L_k*`` over the training set ``record.selected[:n_selected]``, in its order."""
    top_m = 0.0
    for j in range(n_selected):
        top_m += accounting.optimal[nonnegative(record.selected[j])]
    return top_m


@inlined
def _ended(
    policy_params, policy_state, stats, accounting, record, totals, t, n_selected, chosen, loss, top_m
):
    """The end of round ``t`` but its checkpoints (:func:`account_end`) on the tuple ``totals``,
    ``top_m`` the training set's :func:`_top_m`: returns the new totals."""
    realized, pseudo, top_m_regret, best_widths, all_widths = totals
    selected = record.selected
    if n_selected > 0:  # (a Gymnasium agent may train nobody in a round)
        top_m_regret += top_m / n_selected - accounting.top_m_best
    # The certificate is checked every round, not only at checkpoints: pseudo-regret > Delta(t)
    # iff (pseudo-regret - k* widths) M > all widths (M > 0; False whenever a width is nan).
    if (pseudo - best_widths) * accounting.budget > all_widths:
        record.exceeded[0] = 1
    end_round(policy_params, policy_state, stats, selected, n_selected, chosen, loss, t)

    if t <= record.trace_deployed.shape[0]:  # (a run that traces no round: 0)
        row = nonnegative(t - 1)  # (t >= 1)
        for j in range(selected.shape[0]):
            record.trace_selected[row, j] = record_index(record, selected[j]) if j < n_selected else -1
        record.trace_deployed[row] = record_index(record, chosen) if chosen >= 0 else -1
        record.trace_loss[row] = loss
    return realized, pseudo, top_m_regret, best_widths, all_widths


@inlined
def _checkpoints(stats, accounting, record, totals, t, cursor):
    """Record the checkpoints at round ``t`` from position ``cursor`` of ``Record.checkpoints``;
    returns the position of the next one."""
    realized, pseudo, top_m_regret, best_widths, all_widths = totals
    while cursor < record.checkpoints.shape[0] and record.checkpoints[cursor] == t:
        record.regret[cursor] = realized
        record.pseudo_regret[cursor] = pseudo
        record.top_m_regret[cursor] = top_m_regret
        record.certificate[cursor] = best_widths + all_widths / accounting.budget
        for k in range(stats.shape[0]):
            record.trained[cursor, record_index(record, k)] = stats[k].n
            record.deployed[cursor, record_index(record, k)] = stats[k].deployed
        cursor = nonnegative(cursor + 1)
    return cursor


@linked
def account_end(policy_params, policy_state, stats, accounting, record, t, n_selected, chosen, loss):
    """The end of round ``t``: the Top-M regret, the policy's ``end_round``, the trace and the
    checkpoints."""
    totals = _ended(
        policy_params,
        policy_state,
        stats,
        accounting,
        record,
        read_totals(record),
        t,
        n_selected,
        chosen,
        loss,
        _top_m(accounting, record, n_selected),
    )
    write_totals(record, totals)
    record.cursor[0] = _checkpoints(stats, accounting, record, totals, t, nonnegative(record.cursor[0]))


@inlined
def _next_checkpoint(record, cursor):
    """The round of the checkpoint at position ``cursor``, or -1 past the last."""
    return record.checkpoints[cursor] if cursor < record.checkpoints.shape[0] else -1


@kernel
def run_rounds(
    env_params,
    env_state,
    pool_params,
    pool_state,
    policy_params,
    policy_state,
    stats,
    accounting,
    record,
    t_first,
    t_last,
):
    """Play rounds ``t_first .. t_last`` (inclusive); returns an error code (0 when fine). Round 0
    is the warm start (every expert trained once on ``xi_0``): ``t_first = 0`` plays it, then
    rounds ``1 .. t_last``.

    The accounting is shared with the Python engine, which calls the same kernels in the same
    order (``account_deployed``, ``account_trained``, ``account_end``), so that both compute the
    same numbers; here the running totals and the next checkpoint stay in local variables from
    round to round, and are stored in the record when the call returns.
    """
    if t_first == 0:
        code = _warm_start(
            env_params, env_state, pool_params, pool_state, policy_params, policy_state, stats, record
        )
        if code != OK:
            return code
    selected = record.selected
    deploy_losses = record.deploy_losses
    deploy_expected = record.deploy_expected
    totals = read_totals(record)
    cursor = nonnegative(record.cursor[0])
    next_checkpoint = _next_checkpoint(record, cursor)
    code = OK
    for t in range(max(t_first, 1), t_last + 1):
        begin_round(env_params, env_state, t)
        n_selected, chosen = select(
            policy_params, policy_state, stats, t, accounting.policy_key, selected, record.widths
        )
        # A policy of one's own is held to indices the loop can use; mlcb's own policies, whose
        # selections the test suite checks, are not: the check costs 55 to 85 instructions a round.
        if record.paths.checked:
            code = selection_fault(record, stats.shape[0], t, n_selected, chosen)
            if code != OK:
                break
        # Deploy before training: the smoothed decision uses the history strictly before t.
        if chosen >= 0:
            k = record_index(record, chosen)
            one, expected = deploy(
                pool_params, pool_state, env_params, env_state, k, t, accounting.deploy_key, 0
            )
            code, loss, totals = _deployed_one(stats, accounting, record, totals, t, chosen, one, expected)
        else:
            for j in range(n_selected):
                deploy_losses[j], deploy_expected[j] = deploy(
                    pool_params,
                    pool_state,
                    env_params,
                    env_state,
                    record_index(record, selected[j]),
                    t,
                    accounting.deploy_key,
                    j,
                )
            code, loss, totals = _deployed_all(
                stats, accounting, record, totals, t, n_selected, deploy_losses, deploy_expected
            )
        if code != OK:
            break
        top_m = 0.0  # (the training set's _top_m, summed in the same order)
        for j in range(n_selected):
            i = nonnegative(selected[j])
            top_m += accounting.optimal[i]
            one, rate = train(pool_params, pool_state, env_params, env_state, record_index(record, i), t)
            code, totals = _trained(
                policy_params, policy_state, stats, accounting, record, totals, t, j, i, one, rate
            )
            if code != OK:
                break
        if code != OK:
            break
        totals = _ended(
            policy_params, policy_state, stats, accounting, record, totals, t, n_selected, chosen, loss, top_m
        )
        if t == next_checkpoint:
            cursor = _checkpoints(stats, accounting, record, totals, t, cursor)
            next_checkpoint = _next_checkpoint(record, cursor)
    write_totals(record, totals)
    record.cursor[0] = cursor
    return code


# Numba's cache keeps every signature of a function in one index file, and pickles the argument
# types into it: a signature built from a user's own NamedTuple classes (a pool defined in a
# script or a test) would make that index unreadable wherever the user's module cannot be
# imported, for every signature. Such signatures therefore use this uncached twin.
run_rounds_uncached = uncached(run_rounds, **_UNCACHED)
_PACKAGES = ("mlcb", "envs", "agents")


def own_types(*arguments) -> bool:
    """Whether every argument's type comes from this package, looking inside plain tuples (then
    kernels taking them may be cached on disk)."""
    return all(
        own_types(*argument)
        if type(argument) is tuple
        else type(argument).__module__.partition(".")[0] in _PACKAGES
        for argument in arguments
    )


#: The cached round loop of each combination of argument classes met so far in this process
#: (made under the lock: replications running in threads ask for them at once).
_CACHED: dict[tuple[type, ...], Callable] = {}
_CACHED_LOCK = threading.Lock()


def _cached_twin(dispatcher, tag: str):
    """A copy of the compiled ``dispatcher``'s function named ``NAME_TAG``, a :func:`kernel` like
    it, cached in index and data files of its own."""
    function = dispatcher.py_func
    code, defaults, closure = function.__code__, function.__defaults__, function.__closure__
    twin = types.FunctionType(code, function.__globals__, function.__name__, defaults, closure)
    twin.__qualname__ = f"{function.__qualname__}_{tag}"
    twin.__doc__ = function.__doc__
    return kernel(twin)


def round_loop_for(*arguments) -> Callable:
    """:func:`run_rounds` for arguments of these classes.

    When every argument type comes from this package: a cached kernel of its own for this
    combination of classes (environment, pool and policy). Numba's cache keeps every signature of
    a function in one index, and reading the index imports the module of every class it names: with
    one loop for all, a tiny run on the trap imported every environment, family and policy of the
    package that had ever been run on the machine (0.1 s). Each combination's loop is compiled once,
    as before, only now into a file of its own. Arguments of a user's own classes get the uncached
    twin (above)."""
    if JIT_DISABLED:
        return run_rounds
    if not own_types(*arguments):
        return run_rounds_uncached
    classes = tuple(type(argument) for argument in arguments)
    with _CACHED_LOCK:
        if classes not in _CACHED:
            names = ",".join(f"{c.__module__}.{c.__qualname__}" for c in classes)
            tag = hashlib.sha256(names.encode()).hexdigest()[:12]
            _CACHED[classes] = _cached_twin(run_rounds, tag)
        return _CACHED[classes]
