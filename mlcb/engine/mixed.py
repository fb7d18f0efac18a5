"""The Python engine's pool of a pool that mixes families: :class:`MixedPool`.

A pool such as ``[agents.make("ogd", link="logcosh"), MyRidge()]`` names two families; its
family is a :class:`mlcb.learners.MixedFamily`, and the Python engine runs it with one sub-pool
per family (a compiled family's pool driven from Python, the pool of Python experts, a family's
own batched pool), each expert still addressed by its index in the whole pool.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from mlcb.engine.batch import Batch
from mlcb.learners import MixedFamily


class MixedPool:
    """The batched pool of a :class:`MixedFamily`: one sub-pool per family, each called with the
    members it holds (:class:`mlcb.contracts.BatchedPool`). ``build(family, members, env, batch,
    delta, smoothing, horizon)`` makes one family's pool (the Python engine's, which
    :func:`mlcb.engine.python_loop.build_pool` hands over)."""

    def __init__(
        self,
        family: MixedFamily,
        experts: list,
        env: Any,
        batch: Batch,
        delta: float,
        smoothing: str,
        horizon: int,
        build: Any,
    ) -> None:
        n = len(experts)
        self._where = [(0, 0)] * n  # pool index -> (sub-pool, its index there)
        self._pools = []
        for g, (sub_family, group) in enumerate(zip(family.families, family.groups)):
            for j, k in enumerate(group):
                self._where[k] = (g, j)
            members = [experts[k] for k in group]
            sub_batch = dataclasses.replace(
                batch,
                expert_keys=[np.asarray(keys)[group] for keys in batch.expert_keys],
                indices=list(group),
            )
            # A sub-pool reads its members' rates at delta / (2 * its size): scaled so that this
            # is the whole pool's delta' = delta / 2K.
            sub_delta = delta * len(group) / n
            own = smoothing if smoothing in tuple(sub_family.smoothing) else sub_family.smoothing[0]
            self._pools.append(build(sub_family, members, env, sub_batch, sub_delta, own, horizon))
        self._scratch: dict[tuple, tuple] = {}

    def _arrays(
        self, g: int, shape: tuple
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Sub-pool ``g``'s arrays for a call of ``shape`` (R, W), made once and reused: the
        selection, its counts, the two outputs and where each entry came from."""
        key = (g, shape)
        if key not in self._scratch:
            self._scratch[key] = (
                np.full(shape, -1, dtype=np.int64),
                np.zeros(shape[0], dtype=np.int64),
                np.zeros(shape),
                np.zeros(shape),
                np.zeros(shape, dtype=np.int64),
            )
        return self._scratch[key]

    def _call(self, method: str, t: int, selected: np.ndarray, counts: np.ndarray, first, second) -> None:
        rows = selected.tolist()
        totals = counts.tolist()
        for g, pool in enumerate(self._pools):
            chosen, n, out_a, out_b, origin = self._arrays(g, selected.shape)
            chosen.fill(-1)
            n.fill(0)
            for r, (row, count) in enumerate(zip(rows, totals)):
                for j in range(count):
                    group, local = self._where[row[j]]
                    if group == g:
                        chosen[r, n[r]] = local
                        origin[r, n[r]] = j
                        n[r] += 1
            if not n.any():
                continue
            getattr(pool, method)(t, chosen, n, out_a, out_b)
            for r, count in enumerate(n.tolist()):
                for i in range(count):
                    j = origin[r, i]
                    first[r, j] = out_a[r, i]
                    second[r, j] = out_b[r, i]

    def train(
        self, t: int, selected: np.ndarray, counts: np.ndarray, losses: np.ndarray, rates: np.ndarray
    ) -> None:
        self._call("train", t, selected, counts, losses, rates)

    def deploy(
        self, t: int, selected: np.ndarray, counts: np.ndarray, losses: np.ndarray, expected: np.ndarray
    ) -> None:
        self._call("deploy", t, selected, counts, losses, expected)

    def describe(self, r: int, k: int) -> str:
        g, j = self._where[k]
        return str(self._pools[g].describe(r, j))

    def warm_updates(self, r: int, k: int) -> int:
        """How many updates expert ``k`` made in the warm start (its sub-pool's word; 1 without)."""
        g, j = self._where[k]
        updates = getattr(self._pools[g], "warm_updates", None)
        return int(updates(r, j)) if updates is not None else 1
