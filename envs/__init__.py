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

__all__ = ["BanditExpertsEnv", "TrapEnv", "trap_reward_means", "make"]

_ENVIRONMENTS = {
    "mlcb/Trap-v0": "envs.bandit:TrapEnv",
    "mlcb/BanditExperts-v0": "envs.bandit:BanditExpertsEnv",
    "mlcb/GLM-v0": "envs.glm:GLMEnv",
    "mlcb/RealData-v0": "envs.real_data:RealDataEnv",
    "mlcb/Clustered-v0": "envs.clustered:ClusteredEnv",
    "mlcb/ConvexBandit-v0": "envs.convex:ConvexBanditEnv",
}
for _name, _entry_point in _ENVIRONMENTS.items():
    if _name not in gym.registry:
        gym.register(id=_name, entry_point=_entry_point, disable_env_checker=False)


#: Ids under ``mlcb/`` that are not streams ``xi_t``: the selection problem itself
#: (``mlcb/selection_env.py``), which an agent plays and a simulation cannot draw from.
NOT_STREAMS = frozenset({"mlcb/BudgetedSelection-v0"})


def make(name: str, **params):
    """The unwrapped environment registered as ``name`` (a ``ValueError`` if unknown)."""
    if name not in names():
        raise ValueError(f"unknown environment {name!r}; registered: {', '.join(names())}")
    return gym.make(name, **params).unwrapped


def names() -> list[str]:
    """Registered environment ids (the streams a simulation draws from)."""
    return sorted(k for k in gym.registry if k.startswith("mlcb/") and k not in NOT_STREAMS)
