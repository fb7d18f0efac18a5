"""Meta-policies: who trains and who is deployed each round.

Each policy is a frozen dataclass that validates its parameters and builds the ``NamedTuple``
parameters and state of its compiled kernels (:mod:`mlcb.kernels`). ``make(name, **params)``
builds a registered policy; ``names()`` lists them.
"""

from __future__ import annotations

from typing import Any

from mlcb.registry import Registry

registry = Registry("policy")
registry.register(
    "mlcb",
    "mlcb.policies.mlcb:MLCB",
    summary="M-LCB: train the M smallest LCBs, deploy the smallest UCB among them",
)
registry.register(
    "mlcb-topm",
    "mlcb.policies.mlcb:MLCB",
    top_m=True,
    summary="M-LCB's multiple-play variant: deploy all of S_t and pay their mean loss",
)


def make(name: str, **params: Any):
    """Build the policy registered as ``name``."""
    return registry.make(name, **params)


def names() -> list[str]:
    """Registered policy names."""
    return registry.names()


def register(name: str, entry_point: str, summary: str = "", **defaults: Any) -> None:
    """Register a policy class under ``name`` (entry point ``"module:attr"``)."""
    registry.register(name, entry_point, summary, **defaults)
