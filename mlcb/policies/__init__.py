"""Meta-policies: who trains and who is deployed each round.

Each policy is a frozen dataclass that validates its parameters in ``__post_init__`` and builds
the ``NamedTuple`` parameters and state of its compiled kernels (:mod:`mlcb.kernels`)::

    build(n_experts, budget, delta, horizon, optimal) -> (params, state)

once per replication (``optimal`` holds the experts' L_k*, for reference policies such as the
oracle; a real policy must not look at it). Optional class attributes: ``warm_start`` (default
True: train every expert once before round 1), ``selection_size(n_experts, budget)`` (the most
experts trained in a round, default the budget), ``has_certificate`` and ``certificate_valid``.
``make(name, **params)`` builds a registered policy; ``names()`` lists them.
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
