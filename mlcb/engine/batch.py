"""A block of replications as the Python engine and its pools read it: :class:`Batch`.

The Python round loop (:mod:`mlcb.engine.python_loop`) builds one per block of replications and
hands it to the pool of each family (:class:`mlcb.engine.learners.LearnerPool`,
:class:`mlcb.engine.mixed.MixedPool`, a compiled family's pool, a family's own ``batched_pool``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlcb.contracts import Environment


@dataclass
class Batch:
    """The built state of a block of replications, as the Python engine and its pools read it.

    Lists are indexed by the position ``r`` of a replication in the block; ``replications[r]``
    is its index in the simulation (what messages and results name).

    Attributes
    ----------
    env : object
        The environment (:class:`mlcb.contracts.Environment`).
    replications : list of int
    env_params, env_states : list
        Each replication's environment ``NamedTuple``\\ s; compiled code updates ``env_states``
        in place when a round begins, so ``env.round_data(env_params[r], env_states[r], t, k)``
        reads round ``t``'s draw.
    expert_keys : list of ndarray
        Each replication's (K,) uint64 expert stream keys (derived from the experts'
        identities): the seeds of the experts' own randomness.
    deploy_keys : ndarray
        (R,) uint64 stream keys of the deployments' randomness (smoothing draws).
    seed, horizon : int
    indices : list of int, optional
        Each expert's index in the whole pool, where the pool is one family's share of a pool
        that mixes families (:class:`mlcb.engine.mixed.MixedPool`); ``None``: ``0 .. K-1``. A
        pool names its experts by these in errors, and asks the environment's round data for
        them by these (``round_data(params, state, t, indices[k])``).
    """

    env: Environment
    replications: list
    env_params: list
    env_states: list
    expert_keys: list
    deploy_keys: np.ndarray
    seed: int
    horizon: int
    indices: list | None = None

    def __len__(self) -> int:
        return len(self.replications)
