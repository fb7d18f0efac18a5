"""The regret reference of a pool of one's own: the best expert in hindsight on the run's stream.

Regret is measured against ``L* = min_k L_k*``, each expert's least expected loss. A compiled
family knows ``L_k*`` of its model class; a bandit environment knows it for each expert's arms
(``env.optimal_loss(params, k)``). A Python expert of one's own on a stream that fixes no decision
sets (``mlcb/GLM-v0``, ``mlcb/RealData-v0``, ``mlcb/Clustered-v0``...) has none: the environment's
``optimal_loss(params, k)`` is there the optimum of some other model class (of link ``k`` on the
GLM stream), meaningless for the pool. What can be known instead is the best expert in hindsight
on the run's own stream: :func:`hindsight_losses` trains a copy of each expert on every round
``0 .. T`` of the replication's stream (the very copy the run uses: same seed) and returns its
mean loss over rounds ``1 .. T``, and ``L*`` is the smallest. At round ``T`` the regret is then
the deployed losses' sum minus the best expert's losses' sum when trained every round, on the
same stream; results say so (``metadata["settings"][label]["reference"]``, the ``reference``
column of :meth:`mlcb.Result.summary`). An expert that knows better gives its own
``optimal_loss(env, env_params)``.

The references of a replication are cached (by the environment's parameters, the seed, the
replication, the horizon and the expert), so the settings of one comparison compute each once.
"""

from __future__ import annotations

import copy
import hashlib
from collections import OrderedDict
from typing import Any

import numpy as np

from mlcb.errors import ExpertError, class_name, raised
from mlcb.kernels import begin_round

#: How results name the hindsight reference.
HINDSIGHT = "the best expert in hindsight (each expert trained on every round of the run's stream)"

#: Cached references: key -> (the expert, its mean loss); the expert is kept so its id stays its own.
_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 4096


def _digest(env: Any, env_params: Any) -> str:
    """What identifies a replication's stream besides the seed: the environment's class and the
    contents of its parameters."""
    digest = hashlib.sha256(f"{type(env).__module__}.{type(env).__qualname__}".encode())
    fields = env_params if isinstance(env_params, tuple) else (env_params,)
    for value in fields:
        if isinstance(value, np.ndarray):
            digest.update(str((value.dtype, value.shape)).encode())
            digest.update(np.ascontiguousarray(value).tobytes())
        else:
            digest.update(repr(value).encode())
    return digest.hexdigest()


def _spawn(expert: Any, seed: int) -> Any:
    """A fresh copy of ``expert``, as the Python engine makes one: ``spawn(seed)`` or a deep copy."""
    make = getattr(expert, "spawn", None)
    return make(seed) if callable(make) else copy.deepcopy(expert)


def hindsight_losses(
    experts: list, env: Any, seed: int, replication: int, horizon: int, seeds: list[int]
) -> np.ndarray:
    """Each expert's mean ``learn`` loss over rounds ``1 .. horizon`` when a fresh copy of it
    (``spawn(seeds[k])``, the run's own copy) is trained on every round ``0 .. horizon`` of
    replication ``replication`` of ``env`` seeded ``seed``.

    Examples
    --------
    >>> import envs
    >>> class Mean:  # predicts the running mean of y
    ...     def __init__(self): self.total, self.n = 0.0, 0
    ...     def learn(self, data):
    ...         loss = data.loss(self.total / max(self.n, 1))
    ...         self.total, self.n = self.total + data.y, self.n + 1
    ...         return loss
    ...     def deploy(self, data): return data.loss(self.total / max(self.n, 1))
    >>> env = envs.make("mlcb/GLM-v0")
    >>> losses = hindsight_losses([Mean()], env, seed=0, replication=0, horizon=100, seeds=[1])
    >>> losses.shape, bool(0.0 <= losses[0] <= 1.0)
    ((1,), True)
    """
    params, _ = env.build(seed, replication)
    stream = _digest(env, params)
    out = np.empty(len(experts))
    todo = []
    for k, expert in enumerate(experts):
        key = (stream, int(seed), int(replication), int(horizon), id(expert), int(seeds[k]))
        if key in _CACHE:
            _CACHE.move_to_end(key)
            out[k] = _CACHE[key][1]
        else:
            todo.append((k, key))
    if not todo:
        return out
    copies = {k: _spawn(experts[k], int(seeds[k])) for k, _ in todo}
    totals = dict.fromkeys(copies, 0.0)
    params, state = env.build(seed, replication)
    for t in range(int(horizon) + 1):
        begin_round(params, state, t)
        for k, learner in copies.items():
            try:
                out_t = learner.learn(env.round_data(params, state, t, k))
            except ExpertError:
                raise
            except Exception as error:
                raise raised(
                    error, "learn (regret reference)", k, class_name(experts[k]), replication, t
                ) from error
            loss = out_t[0] if isinstance(out_t, tuple) else out_t
            if t > 0:
                totals[k] += float(loss)
    for k, key in todo:
        out[k] = totals[k] / max(int(horizon), 1)
        _CACHE[key] = (experts[k], out[k])
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return out
