"""Seeds and stream keys: one seed per simulation, independent streams per replication.

Replication ``r`` of a simulation with seed ``s`` owns ``SeedSequence(s, spawn_key=(r,))``, the
``r``-th child that ``SeedSequence(s).spawn`` would give. Its state yields the 64-bit keys of the
counter-based streams of :mod:`mlcb.kernels.random`; a grandchild seeds a NumPy generator for the random
*instance* (arm order of the trap, the GLM's target vector). Nothing depends on how many
replications run, in which order, or on how many threads: replication 7 of seed 0 is the same
whether 10 or 1,000 replications are run.

Keys depend on ``(seed, replication)`` only, never on the policy or the budget: every policy of a
comparison faces the same instance and the same ``xi_t`` sequence (common random numbers).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mlcb.kernels.jit import njit
from mlcb.kernels.random import GOLDEN_1, mix
from mlcb.validation import InputError, whole_number

_INSTANCE = 1


class StreamKeys(NamedTuple):
    """Keys of one replication's streams (uint64 scalars and, for experts, one key per expert)."""

    env: np.uint64
    experts: np.ndarray
    policy: np.uint64
    deploy: np.uint64


def check_seed(seed: object) -> int:
    """Return ``seed`` as an int, or raise a ``ValueError`` naming the allowed values."""
    number = whole_number(seed)
    if number is None or number < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")
    return number


def reset_request(seed: int | None, options: dict | None) -> tuple[int, int, int]:
    """The ``(seed, replication, horizon)`` that a Gymnasium ``reset(seed=..., options=...)``
    asks for: the arguments of the environment's ``build``.

    ``seed`` ``None`` is seed 0; ``options["replication"]`` (default 0) selects the replication,
    so that an environment stepped by hand replays the engine's replication of that index;
    ``options["horizon"]`` (default 1) the rounds of the run it stands for, read only by
    environments whose stream depends on it (the warm start's rows of a data set read once).
    """
    options = options or {}
    return (
        check_seed(0 if seed is None else seed),
        int(options.get("replication", 0)),
        int(options.get("horizon", 1)),
    )


def stream_keys(seed: int, replication: int, n_experts: int, identities=None) -> StreamKeys:
    """Stream keys of replication ``replication``.

    Expert ``k``'s key derives from ``identities[k]`` (default ``k``): an expert keeps its
    random stream when the pool is reordered together with its identities.
    """
    state = np.random.SeedSequence(seed, spawn_key=(replication,)).generate_state(4, np.uint64)
    ids = np.arange(n_experts) if identities is None else np.asarray(identities)
    return StreamKeys(state[0], _expert_keys(state[1], ids.astype(np.int64)), state[2], state[3])


@njit
def _expert_keys(base, identities):
    keys = np.empty(identities.shape[0], dtype=np.uint64)
    for k in range(identities.shape[0]):
        keys[k] = mix(base + np.uint64(identities[k] + 1) * GOLDEN_1)
    return keys


def instance_key(seed: int, replication: int) -> np.uint64:
    """A counter-based stream key for replication ``replication``'s random instance (compiled
    instance draws, e.g. each expert's arm order at counters (expert identity, slot))."""
    sequence = np.random.SeedSequence(seed, spawn_key=(replication, _INSTANCE))
    return sequence.generate_state(1, np.uint64)[0]


def instance_rng(seed: int, replication: int, *part: int) -> np.random.Generator:
    """NumPy generator for replication ``replication``'s random problem instance.

    ``part`` (integers) names a sub-part with a stream of its own, e.g. one expert's arms.
    """
    sequence = np.random.SeedSequence(seed, spawn_key=(replication, _INSTANCE, *part))
    return np.random.Generator(np.random.PCG64(sequence))
