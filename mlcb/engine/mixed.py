"""Pools that mix families: a compiled family's specifications beside Python experts, say.

``[agents.make("ogd", link="logcosh"), MyRidge()]`` names two families: the GLM family of the
first and the generic family of Python experts (:mod:`mlcb.engine.learners`) of the second.
:func:`mlcb.contracts.family_of` gives such a pool a :class:`MixedFamily`, and the Python engine
(:mod:`mlcb.engine.python_loop`) runs it: one sub-pool per family (a compiled family's pool driven
from Python, :class:`~mlcb.engine.python_loop.CompiledPool`, a :class:`~mlcb.engine.learners.LearnerPool`,
a family's own batched pool), each expert still addressed by its index in the whole pool.

One loss for the whole pool. Every expert of a mixed pool faces the same stream, and its loss
must be the environment's own (``data.loss(prediction)`` of the round data: the compiled
families' kernels use it, and so do the river and scikit-learn adapters of :mod:`mlcb.river.experts`
by default), else the policy would compare different losses. So the environment must not fix the
experts' decision sets: a bandit environment (``n_experts`` set: each expert owns its arms,
addressed by its index) cannot hold a mixed pool, and says so.

Each member's rate is read at the pool's ``delta' = delta / 2K`` (``K`` the whole pool), as
in a pool of one family; its reference (``L_k*``) is its family's (the hindsight one for Python
experts on a stream that states none, :mod:`mlcb.engine.hindsight`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


class MixedFamily:
    """The family of a pool whose experts name several families (:class:`mlcb.contracts.ExpertFamily`).

    Parameters
    ----------
    families : list
        The distinct families, in the order their first member appears.
    groups : list of list of int
        For each family, the pool indices of its members, increasing.

    Examples
    --------
    >>> import agents
    >>> from mlcb.contracts import family_of
    >>> class Mean:  # predicts the running mean of y
    ...     def __init__(self): self.total, self.n = 0.0, 0
    ...     def learn(self, data):
    ...         loss = data.loss(self.total / max(self.n, 1))
    ...         self.total, self.n = self.total + data.y, self.n + 1
    ...         return loss
    ...     def deploy(self, data): return data.loss(self.total / max(self.n, 1))
    >>> family = family_of([agents.make("ogd", link="logcosh"), Mean(), agents.make("ogd", link="linear")])
    >>> family.name, family.groups
    ('mixed (glm + python)', [[0, 2], [1]])
    """

    def __init__(self, families: list, groups: list[list[int]]) -> None:
        self.families = list(families)
        self.groups = [list(group) for group in groups]
        names = [str(getattr(f, "name", type(f).__name__)) for f in self.families]
        self.name = f"mixed ({' + '.join(names)})"
        own = [tuple(f.smoothing) for f in self.families if tuple(f.smoothing) != ("learner",)]
        if own:
            self.smoothing = tuple(s for s in own[0] if all(s in other for other in own[1:]))
        else:
            self.smoothing = ("learner",)
        if not self.smoothing:
            raise ValueError(
                f"experts: the families {', '.join(names)} share no smoothing wrapper, so one pool "
                "cannot hold them"
            )

    def _split(self, experts: list) -> list[list]:
        return [[experts[i] for i in group] for group in self.groups]

    def _scatter(self, parts: list, length: int, dtype: Any = np.float64) -> np.ndarray:
        out = np.empty(length, dtype=dtype)
        for group, values in zip(self.groups, parts):
            out[group] = values
        return out

    def check(self, experts: list, env: Any) -> None:
        fixed = getattr(env, "n_experts", None)
        if fixed is not None:
            raise ValueError(
                f"experts: a pool that mixes families ({self.name}) needs an environment whose experts "
                f"all face one stream; {type(env).__name__} gives each of its {fixed} experts decision "
                "sets of its own (use a pool of one family there)"
            )
        for family, members in zip(self.families, self._split(experts)):
            family.check(members, env)

    def optimal_losses(self, experts: list, env: Any, env_params: Any) -> np.ndarray:
        parts = [
            np.asarray(f.optimal_losses(m, env, env_params), dtype=np.float64)
            for f, m in zip(self.families, self._split(experts))
        ]
        return self._scatter(parts, len(experts))

    def run_optimal_losses(
        self, experts: list, env: Any, env_params: Any, seed: int, replication: int, horizon: int, keys: Any
    ) -> np.ndarray:
        """Each member's reference on one replication: its family's ``run_optimal_losses`` (the
        hindsight reference of Python experts) where it has one, else its ``optimal_losses``."""
        keys = np.asarray(keys)
        parts = []
        for family, group, members in zip(self.families, self.groups, self._split(experts)):
            run = getattr(family, "run_optimal_losses", None)
            if run is not None:
                values = run(members, env, env_params, seed, replication, horizon, keys[group])
            else:
                values = family.optimal_losses(members, env, env_params)
            parts.append(np.asarray(values, dtype=np.float64))
        return self._scatter(parts, len(experts))

    def rates(self, experts: list, env: Any, n: np.ndarray, delta_prime: float) -> np.ndarray | None:
        parts = []
        for family, members in zip(self.families, self._split(experts)):
            values = family.rates(members, env, n, delta_prime)
            if values is None:
                return None
            parts.append(np.asarray(values, dtype=np.float64))
        out = np.empty((len(experts), np.asarray(n).shape[-1]))
        for group, values in zip(self.groups, parts):
            out[group] = values
        return out

    def heuristic(self, experts: list, env: Any) -> list[bool]:
        parts = [list(f.heuristic(m, env)) for f, m in zip(self.families, self._split(experts))]
        return [bool(v) for v in self._scatter(parts, len(experts), dtype=bool)]

    def reference(self, experts: list, env: Any) -> str | None:
        """What regret is measured against, where it is not the experts' ``L_k*`` alone: each
        family's statement, named by family."""
        said = []
        for family, members in zip(self.families, self._split(experts)):
            own = getattr(family, "reference", None)
            own = own(members, env) if callable(own) else own
            if isinstance(own, str):
                said.append(f"{getattr(family, 'name', type(family).__name__)} experts: {own}")
        if not said:
            return None
        return "; ".join(said) + "; every other expert: its L_k*"


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
        batch: Any,
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
                batch, expert_keys=[np.asarray(keys)[group] for keys in batch.expert_keys]
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
