"""What a simulation is: a frozen, validated description that can be saved and rebuilt.

Every check happens here, in Python, before any work starts (STYLE 7): a bad budget, confidence,
horizon, policy name or expert list is a ``ValueError`` naming the parameter and what is allowed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
from dataclasses import dataclass, field
from typing import Any

from mlcb import checks
from mlcb.seeding import check_seed


def expert_to_dict(expert: Any) -> dict[str, Any]:
    """A JSON-ready description of an expert specification (its class and fields)."""
    cls = type(expert)
    return {"class": f"{cls.__module__}:{cls.__qualname__}", **dataclasses.asdict(expert)}


def expert_from_dict(data: dict[str, Any]) -> Any:
    """Rebuild an expert specification written by :func:`expert_to_dict`."""
    data = dict(data)
    module_name, _, name = data.pop("class").partition(":")
    return getattr(importlib.import_module(module_name), name)(**data)


@dataclass(frozen=True)
class SimulationConfig:
    """One simulation setting: an environment, a pool of experts, a policy and a budget.

    Parameters
    ----------
    env : str
        A registered environment id (``envs.names()``), e.g. ``"mlcb/Trap-v0"``.
    experts : tuple
        One expert specification per expert (``agents.make(...)``), all of one kind.
    policy : str
        A registered policy name (``mlcb.policies.names()``).
    budget : int
        ``M``, experts trained per round, ``1 <= M <= K``.
    horizon : int
        ``T``, rounds per replication, ``>= 1``.
    replications : int
        Independent replications, ``>= 1``.
    seed : int
        The one seed of the simulation, ``>= 0``.
    delta : float
        Confidence ``delta`` in (0, 1) of M-LCB's bounds and of the experts' rate functions.
    smoothing : str or None
        Smoothing wrapper (:mod:`mlcb.smoothing`); ``None`` takes the pool's default.
    env_params, policy_params : dict
        Keyword arguments of the environment and the policy.
    checkpoints : int
        Points of the geometric checkpoint grid (the horizon is always one).
    calibration : str
        A label recorded with the results (``"theory"``, ``"practical"``, ``"authors"``, ...).
    """

    env: str = "mlcb/Trap-v0"
    experts: tuple = ()
    policy: str = "mlcb"
    budget: int = 1
    horizon: int = 10_000
    replications: int = 10
    seed: int = 0
    delta: float = 0.1
    smoothing: str | None = None
    env_params: dict = field(default_factory=dict)
    policy_params: dict = field(default_factory=dict)
    checkpoints: int = 100
    calibration: str = "custom"

    def __post_init__(self) -> None:
        import agents
        import envs
        from mlcb import policies

        envs.make(self.env, **self.env_params)  # unknown ids and bad parameters raise here
        if not self.experts:
            raise ValueError("experts must be a non-empty list of expert specifications")
        object.__setattr__(self, "experts", tuple(self.experts))
        kinds = {getattr(e, "kind", None) for e in self.experts}
        if len(kinds) != 1 or None in kinds:
            raise ValueError(
                f"experts must all be of one kind (bandit or glm), got kinds {sorted(map(str, kinds))}"
            )
        n_experts = len(self.experts)
        budget = checks.integer("budget", self.budget)
        if budget > n_experts:
            raise ValueError(f"budget must be an integer in [1, n_experts={n_experts}], got {self.budget!r}")
        object.__setattr__(self, "budget", budget)
        object.__setattr__(self, "horizon", checks.integer("horizon", self.horizon))
        object.__setattr__(self, "replications", checks.integer("replications", self.replications))
        object.__setattr__(self, "checkpoints", checks.integer("checkpoints", self.checkpoints))
        object.__setattr__(self, "seed", check_seed(self.seed))
        object.__setattr__(self, "delta", checks.open_unit("delta", self.delta))
        policies.make(self.policy, **self.policy_params)  # unknown names and bad parameters raise
        kind = kinds.pop()
        smoothing = self.smoothing or agents.default_smoothing(kind)
        object.__setattr__(self, "smoothing", smoothing)
        env = self.make_env()
        env.check_experts(self.experts)
        agents.check_smoothing(kind, smoothing)

    @property
    def n_experts(self) -> int:
        return len(self.experts)

    def make_env(self):
        """The (unwrapped) environment object."""
        import envs

        return envs.make(self.env, **self.env_params)

    def make_policy(self):
        """The policy object."""
        from mlcb import policies

        return policies.make(self.policy, **self.policy_params)

    def replace(self, **changes: Any) -> SimulationConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description (experts by class and fields)."""
        data = dataclasses.asdict(self)
        data["experts"] = [expert_to_dict(e) for e in self.experts]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SimulationConfig:
        data = dict(data)
        data["experts"] = tuple(expert_from_dict(e) for e in data["experts"])
        return cls(**data)

    def key(self) -> str:
        """A digest of everything that determines the results of one replication."""
        data = self.to_dict()
        data.pop("replications")
        text = json.dumps(data, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def label(self) -> str:
        """A short human name of the setting, e.g. ``"mlcb M=2"``."""
        return f"{self.policy} M={self.budget}"
