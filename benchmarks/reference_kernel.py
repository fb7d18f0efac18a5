"""A single-purpose Numba kernel of M-LCB on the trap: the yardstick of ``bench_reference.py``.

Written for one instance and nothing else: the ``trap`` preset's theory calibration (K = 10
two-armed Bernoulli experts, decaying epsilon-greedy 0-4 and UCB1 5-9, theory rates), M-LCB's
theory bounds (``bonus_scale`` 1), deployment by play counts, any budget M. It computes what the
engine computes for that setting, from the same random stream, and returns the same realized
regret, pseudo-regret and counts at every checkpoint (``tests/test_bench_reference.py`` holds them
equal), but it is a direct kernel, as fast as it could be made:

* every function of a count is read from a full-length float64 table (the Hoeffding width, the
  epsilon schedule, both theory rates, and UCB1's ``c ln j``), built before the timed region by
  the package's own fill functions (tabulating is set-up; at T = 10^8 the tables take 4 GB);
* the bounds depend on ``n_k`` alone, so only the trained experts' bounds are updated;
* the experts are kept sorted by ``(LCB, index)`` in a 10-slot array: ``S_t`` is its first M
  entries and the M trained experts are moved back to their places by insertion;
* the random draws are the package's counter-based hash, inlined, with the round's environment
  hash ``mix(key + t G1)`` computed once per round and shared by every arm draw of the round;
* the per-arm decision weights (needed by the other smoothings only) are not kept, nor the
  certificate, the Top-M regret or the traces, which this setting's outputs do not include;
* compiled without Numba's reference counting: it allocates nothing, and no inlined call
  increments and decrements the counts of the arrays it passes.

Only the instance (the replication's shuffled arm means), the stream keys and the tables come
from the package, through :func:`prepare`; the round loop is :func:`run_kernel`.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import NamedTuple

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents import bandits  # noqa: E402
from mlcb.kernels.seeding import stream_keys  # noqa: E402
from mlcb.policies import hoeffding  # noqa: E402

K = 10
ARMS = 2
N_GREEDY = 5  # experts 0-4 are epsilon-greedy, 5-9 UCB1
UCB_C = 2.0

_G1 = np.uint64(0x9E3779B97F4A7C15)
_G2 = np.uint64(0xD1B54A32D192ED03)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S11, _S27, _S30, _S31 = np.uint64(11), np.uint64(27), np.uint64(30), np.uint64(31)
_UNIT = 1.0 / 9007199254740992.0

#: Without Numba's reference counting (NRT): with it, every inlined call that passes arrays
#: increments and decrements each array's count, atomically, and that cost more than the rest of
#: a training. The kernel therefore allocates nothing; :func:`run` hands it its state arrays.
_OPTIONS = {"nogil": True, "error_model": "numpy", "cache": True, "boundscheck": False, "_nrt": False}


@numba.njit(inline="always", **_OPTIONS)
def _mix(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@numba.njit(inline="always", **_OPTIONS)
def _unit(bits):
    return np.float64(bits >> _S11) * _UNIT


@numba.njit(inline="always", **_OPTIONS)
def _train(k, j, t, env_inner, means, expert_keys, pulls, arm_loss, eps_table, eps_rate, ucb_rate, ucb_width):
    """Expert ``k`` (``k & 15`` below: K = 10, so that indices need no wrap-around) trains at
    its own round ``j`` and round ``t``; returns ``(loss, rate)``."""
    p0 = pulls[k, 0]
    p1 = pulls[k, 1]
    if p0 == 0:
        arm = 0
    elif p1 == 0:
        arm = 1
    elif k < N_GREEDY:
        arm = 1 if arm_loss[k, 1] / p1 < arm_loss[k, 0] / p0 else 0
    else:
        width = ucb_width[j]
        index0 = arm_loss[k, 0] / p0 - np.sqrt(width / p0)
        index1 = arm_loss[k, 1] / p1 - np.sqrt(width / p1)
        arm = 1 if index1 < index0 else 0
    if k < N_GREEDY:
        inner = _mix(expert_keys[k] + np.uint64(j) * _G1)
        if _unit(_mix(inner)) < eps_table[j]:
            arm = min(np.int64(_unit(_mix(inner + _G2)) * ARMS), ARMS - 1)
        rate = eps_rate[j]
    else:
        rate = ucb_rate[j]
    draw = _unit(_mix(env_inner + np.uint64(k * ARMS + arm) * _G2))
    loss = 1.0 if draw < means[k, arm] else 0.0
    pulls[k, arm] = pulls[k, arm] + 1
    arm_loss[k, arm] += loss
    return loss, rate


@numba.njit(**_OPTIONS)
def run_kernel(
    horizon,
    budget,
    means,
    env_key,
    expert_keys,
    deploy_key,
    h_table,
    eps_table,
    eps_rate,
    ucb_rate,
    ucb_width,
    best_loss,
    checkpoints,
    regret,
    pseudo_regret,
    trained,
    deployed,
    pulls,
    arm_loss,
    n,
    loss_sum,
    lcb,
    ucb,
    deploys,
    order,
):
    """Rounds 0 (warm start) to ``horizon``; fills the checkpoint rows of the four outputs.

    The state arrays come zeroed from the caller (``order``: ``0 .. K-1``, the experts sorted by
    ``(lcb, index)``, S_t its first M entries): ``pulls``, ``arm_loss`` (K, 2), ``n``,
    ``loss_sum``, ``lcb``, ``ucb``, ``deploys`` (K,)."""
    # Round 0, the warm start: every expert trains once.
    env_inner = _mix(env_key)
    for k in range(K):
        loss, rate = _train(
            k, 1, 0, env_inner, means, expert_keys, pulls, arm_loss, eps_table, eps_rate, ucb_rate, ucb_width
        )
        n[k] = 1
        loss_sum[k] = loss
        lcb[k] = loss - rate
        ucb[k] = loss + h_table[1]
    for i in range(1, K):  # insertion sort
        k = order[i] & 15
        s = i
        while s > 0 and (
            lcb[order[s - 1] & 15] > lcb[k] or (lcb[order[s - 1] & 15] == lcb[k] and order[s - 1] > k)
        ):
            order[s] = order[s - 1]
            s -= 1
        order[s] = k
    realized = 0.0
    pseudo = 0.0
    cursor = 0
    while cursor < checkpoints.shape[0] and checkpoints[cursor] == 0:
        cursor += 1
    next_checkpoint = checkpoints[cursor] if cursor < checkpoints.shape[0] else -1
    for t in range(1, horizon + 1):
        env_inner = _mix(env_key + np.uint64(t) * _G1)
        # i_t: the smallest UCB among S_t (ties: the lower index).
        chosen = order[0] & 15
        best = ucb[chosen]
        for s in range(1, budget):
            k = order[s] & 15
            if ucb[k] < best or (ucb[k] == best and k < chosen):
                chosen = k
                best = ucb[k]
        # Deploy by play counts, before training.
        p0 = pulls[chosen, 0]
        p1 = pulls[chosen, 1]
        total = np.float64(p0) + np.float64(p1)
        weighted = p0 * means[chosen, 0] + p1 * means[chosen, 1]
        u = _unit(_mix(_mix(deploy_key + np.uint64(t) * _G1)))
        arm = 0 if u * total < p0 else 1
        draw = _unit(_mix(env_inner + np.uint64(chosen * ARMS + arm) * _G2))
        loss = 1.0 if draw < means[chosen, arm] else 0.0
        realized += loss - best_loss
        pseudo += weighted / total - best_loss
        deploys[chosen] += 1
        for s in range(budget):
            k = order[s] & 15
            j = n[k] + 1
            loss, rate = _train(
                k,
                j,
                t,
                env_inner,
                means,
                expert_keys,
                pulls,
                arm_loss,
                eps_table,
                eps_rate,
                ucb_rate,
                ucb_width,
            )
            n[k] = j
            loss_sum[k] += loss
            mean = loss_sum[k] / j
            lcb[k] = mean - rate / j
            ucb[k] = mean + h_table[j]
        # S_t held slots 0 .. M-1 and the rest is sorted: insert each trained expert into the
        # sorted part behind it, the last slot first. No move when the order stays.
        for i in range(budget - 1, -1, -1):
            k = order[i] & 15
            s = i
            while s < K - 1 and (
                lcb[order[s + 1] & 15] < lcb[k] or (lcb[order[s + 1] & 15] == lcb[k] and order[s + 1] < k)
            ):
                order[s] = order[s + 1]
                s += 1
            order[s] = k
        if t == next_checkpoint:
            while cursor < checkpoints.shape[0] and checkpoints[cursor] == t:
                regret[cursor] = realized
                pseudo_regret[cursor] = pseudo
                for k in range(K):
                    trained[cursor, k] = n[k]
                    deployed[cursor, k] = deploys[k]
                cursor += 1
            next_checkpoint = checkpoints[cursor] if cursor < checkpoints.shape[0] else -1


# --- set-up: the instance, the keys and the tables (outside any timed region) -------------------
class Instance(NamedTuple):
    """One replication's inputs of :func:`run_kernel` besides the tables."""

    means: np.ndarray  # (K, 2) the arms' loss means, shuffled as the engine's environment does
    env_key: np.uint64
    expert_keys: np.ndarray  # (K,) uint64
    deploy_key: np.uint64
    best_loss: float


class Tables(NamedTuple):
    """Every function of a count the kernel reads, at counts 0 .. horizon + 1 (entry 0 unused)."""

    hoeffding: np.ndarray
    epsilon: np.ndarray
    epsilon_rate: np.ndarray
    ucb_rate: np.ndarray
    ucb_width: np.ndarray


def instance(seed: int, replication: int) -> Instance:
    """Replication ``replication`` of the trap with seed ``seed``, as the engine builds it."""
    import envs

    env = envs.make("mlcb/Trap-v0", n_experts=K, n_arms=ARMS)
    params, _ = env.build(seed, replication, 100)
    keys = stream_keys(seed, replication, K)
    means = np.ascontiguousarray(params.loss_means)
    return Instance(
        means, np.uint64(params.key), keys.experts.copy(), np.uint64(keys.deploy), float(means.min())
    )


@numba.njit(**_OPTIONS)
def _fill_width(c, out):
    for j in range(1, out.shape[0]):
        out[j] = c * np.log(j)


@functools.lru_cache(maxsize=1)
def tables(horizon: int, delta: float) -> Tables:
    """Full-length float64 tables for a run of ``horizon`` rounds, by the package's own scalar code
    (8 bytes per count and table: 4 GB at T = 10^8)."""
    length = horizon + 2
    delta_prime = delta / (2 * K)
    greedy = bandits.EpsilonGreedy()
    ucb1 = bandits.UCB1(c=UCB_C)
    hoeffding_table = np.zeros(length)
    hoeffding._fill(K, delta, 1, hoeffding_table[1:])
    epsilon = np.zeros(length)
    bandits._fill_epsilon(greedy.c, greedy.alpha, ARMS, 1, epsilon[1:])

    def rate(expert, alpha):
        signature = (expert.code, ARMS, expert.rate, expert.c, alpha, expert.rate_coef, expert.rate_scale)
        return bandits._tabulate_rate(bandits._rate_record(signature, delta_prime), ARMS, delta_prime, length)

    width = np.zeros(length)
    _fill_width(UCB_C, width)
    return Tables(hoeffding_table, epsilon, rate(greedy, greedy.alpha), rate(ucb1, 0.5), width)


def run(seed: int, replication: int, horizon: int, budget: int, checkpoints: np.ndarray, delta: float = 0.1):
    """``(regret, pseudo_regret, trained, deployed)`` at ``checkpoints`` of one replication."""
    inst = instance(seed, replication)
    table = tables(horizon, delta)
    c = len(checkpoints)
    regret, pseudo = np.zeros(c), np.zeros(c)
    trained, deployed = np.zeros((c, K), dtype=np.int64), np.zeros((c, K), dtype=np.int64)
    run_kernel(
        horizon,
        budget,
        inst.means,
        inst.env_key,
        inst.expert_keys,
        inst.deploy_key,
        *table,
        inst.best_loss,
        np.asarray(checkpoints, dtype=np.int64),
        regret,
        pseudo,
        trained,
        deployed,
        np.zeros((K, ARMS), dtype=np.int64),
        np.zeros((K, ARMS)),
        np.zeros(K, dtype=np.int64),
        np.zeros(K),
        np.zeros(K),
        np.zeros(K),
        np.zeros(K, dtype=np.int64),
        np.arange(K, dtype=np.int64),
    )
    return regret, pseudo, trained, deployed
