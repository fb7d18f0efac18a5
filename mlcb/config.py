"""What a simulation is: a frozen, validated description, recorded with its results.

Every check happens here, in Python, before any work starts: a bad budget, confidence,
horizon, policy name or expert list is a ``ValueError`` naming the parameter and what is allowed.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlcb import validation
from mlcb.kernels.seeding import check_seed

#: The largest horizon ``T``: the engines count rounds, pulls and updates in int64 and feed
#: rounds to the counter-based random stream, all exact far beyond it, while one replication of
#: 10^10 rounds already takes about an hour (the trap, one core).
MAX_HORIZON = 10**10
#: The largest number of replications of one setting (each is a row of the saved results).
MAX_REPLICATIONS = 10**6
#: The largest number of points of the checkpoint grid (each is a row of every curve).
MAX_CHECKPOINTS = 10**5


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def _class_label(obj: Any) -> str:
    cls = type(obj)
    return f"{getattr(cls, '__module__', '?')}:{getattr(cls, '__qualname__', '?')}"


def _described(value: Any, depth: int = 0) -> Any:
    """``value`` if it is JSON; a dataclass, an object with ``get_params()`` or with public
    attributes as a dict of its class and (recursively) its parameters; anything else by its class
    name. Never a ``repr`` that holds a memory address: the description feeds the setting's key,
    which must be the same in every process."""
    if _jsonable(value):
        return value
    if isinstance(value, np.generic):
        return _described(value.item(), depth)
    if isinstance(value, np.ndarray):
        if value.size <= 64 and value.dtype.kind in "biuf":
            return value.tolist()
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()[:16]
        return {
            "class": "numpy:ndarray",
            "shape": list(value.shape),
            "dtype": str(value.dtype),
            "sha256": digest,
        }
    if isinstance(value, (list, tuple)) and depth < 4:
        return [_described(item, depth + 1) for item in value]
    if isinstance(value, dict) and depth < 4:
        return {str(key): _described(item, depth + 1) for key, item in value.items()}
    if depth < 4 and not isinstance(value, type):
        params = _parameters(value, depth + 1)
        if params is not None:
            return {"class": _class_label(value), **params}
    return _class_label(value)


def _parameters(obj: Any, depth: int) -> dict[str, Any] | None:
    """An object's parameters (dataclass fields, ``get_params()``, or public attributes), or
    ``None`` when it exposes none."""
    if dataclasses.is_dataclass(obj):
        items = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    elif callable(getattr(obj, "get_params", None)):
        items = dict(obj.get_params())
    elif isinstance(getattr(obj, "__dict__", None), dict):
        items = {k: v for k, v in vars(obj).items() if not k.startswith("_")}
    else:
        return None
    return {str(key): _described(value, depth) for key, value in items.items()}


def expert_to_dict(expert: Any) -> dict[str, Any]:
    """A JSON-ready description of an expert: its class (``"module:name"``, a label only: nothing
    reads it back) and its parameters. Never fails.

    A dataclass gives its fields; another object the result of its ``get_params()`` if it has one,
    else its public attributes; nested objects are described the same way, and anything else by
    its class name.

    Examples
    --------
    >>> class Model:
    ...     def __init__(self, lr):
    ...         self.lr = lr
    >>> class Wrapper:
    ...     def __init__(self, model):
    ...         self.model, self._cache = model, object()
    >>> expert_to_dict(Wrapper(Model(0.1)))["model"]["lr"]
    0.1
    """
    try:
        params = _parameters(expert, 1) or {}
    except Exception:  # a description must never stop a run
        params = {}
    params.pop("class", None)
    return {"class": _class_label(expert), **params}


@dataclass(frozen=True)
class SimulationConfig:
    """One simulation setting: an environment, a pool of experts, a policy and a budget.

    Parameters
    ----------
    env : str
        A registered environment id (``envs.names()``), e.g. ``"mlcb/Trap-v0"``.
    experts : tuple
        One expert per expert: specifications of one family (``agents.make(...)``), or Python
        experts (:class:`mlcb.contracts.PythonExpert`).
    policy : str
        A registered policy name (``mlcb.policies.names()``).
    budget : int
        ``M``, experts trained per round, ``1 <= M <= K``.
    horizon : int
        ``T``, rounds per replication, ``1 <= T <= 10**10`` (:data:`MAX_HORIZON`).
    replications : int
        Independent replications, ``1 <= R <= 10**6`` (:data:`MAX_REPLICATIONS`).
    seed : int
        The one seed of the simulation, ``>= 0``.
    delta : float
        Confidence ``delta`` in (0, 1) of M-LCB's bounds and of the experts' rate functions.
    smoothing : str or None
        Smoothing wrapper (:mod:`mlcb.kernels.smoothing`) among the family's; ``None`` takes its default.
    env_params, policy_params : dict
        Keyword arguments of the environment and the policy.
    checkpoints : int
        Points of the geometric checkpoint grid (the horizon is always one), ``1 <= C <= 10**5``
        (:data:`MAX_CHECKPOINTS`).
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
        import envs
        from mlcb import policies
        from mlcb.contracts import family_of

        for name in ("env_params", "policy_params"):
            if not isinstance(getattr(self, name), dict):
                raise ValueError(
                    f"{name} must be a dict (a TOML table) of keyword arguments, got {getattr(self, name)!r}"
                )
        if not isinstance(self.calibration, str):
            raise ValueError(f"calibration must be a string (a label), got {self.calibration!r}")
        envs.make(self.env, **self.env_params)  # unknown ids and bad parameters raise here
        if not self.experts:
            raise ValueError("experts must be a non-empty list of expert specifications")
        object.__setattr__(self, "experts", tuple(self.experts))
        family = family_of(list(self.experts))
        n_experts = len(self.experts)
        budget = validation.integer("budget", self.budget)
        if budget > n_experts:
            raise ValueError(f"budget must be an integer in [1, n_experts={n_experts}], got {self.budget!r}")
        object.__setattr__(self, "budget", budget)
        for name, maximum in (
            ("horizon", MAX_HORIZON),
            ("replications", MAX_REPLICATIONS),
            ("checkpoints", MAX_CHECKPOINTS),
        ):
            object.__setattr__(self, name, validation.integer(name, getattr(self, name), maximum=maximum))
        object.__setattr__(self, "seed", check_seed(self.seed))
        object.__setattr__(self, "delta", validation.open_unit("delta", self.delta))
        policies.make(self.policy, **self.policy_params)  # unknown names and bad parameters raise
        smoothing = self.smoothing or family.smoothing[0]
        object.__setattr__(self, "smoothing", smoothing)
        env = self.make_env()
        family.check(list(self.experts), env)
        allowed = tuple(family.smoothing)
        if smoothing not in allowed:
            raise ValueError(
                f"smoothing must be one of {allowed} for {family.name} experts, got {smoothing!r}"
            )

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
        """JSON-ready description (experts by class and parameters, :func:`expert_to_dict`): a
        record of the setting, not a way back to it (nothing in it is ever imported)."""
        data = {
            f.name: copy.deepcopy(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.name != "experts"
        }
        data["experts"] = [expert_to_dict(e) for e in self.experts]
        return data

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
