"""The experts: self-learning online algorithms and their rate functions (SPEC sections 1, 5).

Each expert family is a frozen dataclass describing one expert (its hyper-parameters and rate
function); a *pool* is a list of them, one per expert, all of one kind matching the environment
(``"bandit"`` experts on :mod:`envs.bandit` environments, ``"glm"`` experts on the GLM stream).
``make(name, **params)`` builds a registered family; ``names()`` lists them.

Examples
--------
>>> import agents
>>> pool = [agents.make("epsilon-greedy")] * 5 + [agents.make("ucb1", c=2.0)] * 5
>>> len(pool)
10
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlcb.registry import Registry

registry = Registry("expert")
registry.register("ucb1", "agents.bandits:UCB1", summary="UCB1, radius sqrt(c ln j / N_a)")
registry.register(
    "epsilon-greedy",
    "agents.bandits:EpsilonGreedy",
    summary="decaying epsilon-greedy, eps_j = min(1, c (m ln j / j)^(1 - alpha))",
)
registry.register(
    "thompson", "agents.bandits:ThompsonSampling", summary="Bernoulli Thompson sampling (heuristic rate)"
)
registry.register(
    "clipped-thompson",
    "agents.bandits:ThompsonSampling",
    clipped=True,
    summary="Thompson sampling clipped into a UCB band (explicit rate)",
)
registry.register(
    "ogd",
    "agents.glm:OnlineGradientDescent",
    summary="projected online gradient descent on a GLM with a fixed link",
)


def make(name: str, **params: Any):
    """Build the expert family registered as ``name``."""
    return registry.make(name, **params)


def names() -> list[str]:
    """Registered expert family names."""
    return registry.names()


def build_pool(
    experts: list,
    env: Any,
    env_params: Any,
    delta: float,
    keys: np.ndarray,
    smoothing: str,
    horizon: int,
    seed: int = 0,
    replication: int = 0,
):
    """Kernel parameters and state of the pool ``experts`` on one replication of ``env``.

    Built-in families are dispatched on their kind. A family of one's own joins the compiled path
    by giving its class a ``build_pool`` classmethod with this function's signature (less
    ``experts``' class) that returns ``(params, state)`` NamedTuples whose ``train`` and ``deploy``
    are registered with :func:`mlcb.kernels.implements`.
    """
    custom = getattr(type(experts[0]), "build_pool", None)
    if custom is not None:
        if any(type(e) is not type(experts[0]) for e in experts):
            raise ValueError("experts: a pool with its own build_pool must hold experts of one class")
        return custom(experts, env, env_params, delta, keys, smoothing, horizon, seed, replication)
    kind = experts[0].kind
    if kind == "bandit":
        from agents.bandits import build_bandit_pool

        return build_bandit_pool(experts, env.n_arms, env_params, delta, keys, smoothing, horizon)
    if kind == "glm":
        from agents.glm import build_glm_pool

        return build_glm_pool(experts, env, env_params, delta, keys, smoothing, horizon, seed, replication)
    raise ValueError(f"experts: no compiled pool for experts of kind {kind!r}")


#: The smoothing wrappers each kind of pool implements (:mod:`mlcb.smoothing`).
SMOOTHING = {
    "bandit": ("counts", "average", "uniform", "last"),
    "glm": ("average", "uniform", "last"),
}


def check_smoothing(kind: str, name: str) -> None:
    """Raise a ``ValueError`` unless wrapper ``name`` is available for ``kind`` experts."""
    allowed = SMOOTHING.get(kind, ())
    if name not in allowed:
        raise ValueError(f"smoothing must be one of {allowed} for {kind} experts, got {name!r}")


def default_smoothing(kind: str) -> str:
    """The smoothing wrapper a pool of ``kind`` experts uses unless told otherwise."""
    return {"bandit": "counts", "glm": "average"}.get(kind, "uniform")
