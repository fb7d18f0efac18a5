"""Where ``xi_t`` comes from: Gymnasium environments registered under ``mlcb/``.

Each environment knows its optimal loss ``L*``, every expert's ``L_k*`` and the expected loss of a
decision, and builds the arrays the compiled engine reads for one replication.

>>> import gymnasium as gym, envs
>>> env = gym.make("mlcb/Trap-v0").unwrapped
>>> env.n_experts
10
"""

from __future__ import annotations

import gymnasium as gym

from envs.bandit import BanditExpertsEnv, TrapEnv, trap_reward_means
from mlcb.registry import Registry, build, check_parameters

__all__ = ["BanditExpertsEnv", "TrapEnv", "make", "names", "register", "registry", "trap_reward_means"]

registry = Registry("environment")


def register(name: str, entry_point: str, summary: str = "", *, override: bool = False, **defaults) -> None:
    """Register an environment class under the id ``name`` (entry point ``"module:attr"``), made by
    ``make(name, **params)`` with ``defaults`` updated by ``params``.

    The same call as ``agents.register`` and ``mlcb.policies.register``: a plugin module
    (``mlcb run ... --plugin MODULE``, or the ``mlcb.plugins`` entry-point group of an installed
    package) calls it when imported. The id is also registered with Gymnasium, so that
    ``gymnasium.make(name)`` builds the same environment; use a namespaced, versioned id such as
    ``"mine/Stream-v0"``.
    A name that is taken is refused unless ``override=True`` (a one-line warning then says which
    registration holds it: :meth:`mlcb.registry.Registry.register`).
    """
    registry.register(name, entry_point, summary, override=override, **defaults)
    if name in gym.registry:
        del gym.registry[name]
    gym.register(id=name, entry_point=entry_point, kwargs=dict(defaults), disable_env_checker=False)


register(
    "mlcb/Trap-v0", "envs.bandit:TrapEnv", summary="the paper's bandit trap: K experts over Bernoulli arms"
)
register(
    "mlcb/BanditExperts-v0",
    "envs.bandit:BanditExpertsEnv",
    summary="K bandit experts over Bernoulli arms of given reward means",
)
register(
    "mlcb/GLM-v0", "envs.glm:GLMEnv", summary="the paper's GLM stream: x on a sphere, y from a target link"
)
register(
    "mlcb/RealData-v0",
    "envs.real_data:RealDataEnv",
    summary="rows of a labelled table (bundled, or one's own DataFrame, arrays or CSV), drawn with "
    "replacement or read once",
)
register(
    "mlcb/ConvexBandit-v0",
    "envs.convex:ConvexBanditEnv",
    summary="stochastic convex losses on a ball, seen one point at a time (bandit convex optimisation)",
)
register(
    "mlcb/LowerBound-v0",
    "envs.lower_bound:LowerBoundEnv",
    summary="the lower bound's hard instances: a null game and K perturbed two-armed games",
)
register(
    "mlcb/Clustered-v0",
    "envs.clustered:ClusteredEnv",
    summary="a clustered regression or classification stream, for mixture-of-experts pools",
)


def make(name: str, **params):
    """The environment registered as ``name``, built through Gymnasium (``gymnasium.make``) and
    unwrapped; an ``InputError`` (a ``ValueError``) listing the registered ids if there is none,
    or carrying the message of a parameter the environment refuses."""
    check_parameters(registry.entry(name).load(), params)
    return build(lambda **given: gym.make(name, **given).unwrapped, params)


def names() -> list[str]:
    """Registered environment ids (the streams a simulation draws from), sorted."""
    return registry.names()
