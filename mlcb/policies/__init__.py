"""Meta-policies: who trains and who is deployed each round.

Each policy is a frozen dataclass that validates its parameters in ``__post_init__`` and builds
the ``NamedTuple`` parameters and state of its compiled kernels (:mod:`mlcb.kernels`)::

    build(n_experts, budget, delta, horizon, optimal) -> (params, state)

once per replication (``optimal`` holds the experts' L_k*, for reference policies such as the
oracle; a real policy must not look at it). Optional class attributes: ``warm_start`` (default
True: train every expert once before round 1), ``selection_size(n_experts, budget)`` (the most
experts trained in a round, default the budget), ``has_certificate`` and ``certificate_valid``.
``make(name, **params)`` builds a registered policy; ``names()`` lists them.

A policy sees the experts in identity order: expert ``i`` of ``stats`` (and of ``optimal``) is
the one with the ``i``-th smallest stream identity (:func:`mlcb.engine.identity_order`; the pool
index for a default pool). Every "smaller index first" tie rule, round-robin cycle or initial
permutation below is therefore one by identity, and relabelling a pool together with its
identities permutes the results without changing them.
"""

from __future__ import annotations

from typing import Any

from mlcb.registry import Registry

registry = Registry("policy")
registry.register(
    "mlcb",
    "mlcb.policies.m_lcb:MLCB",
    summary="M-LCB: train the M smallest LCBs, deploy the smallest UCB among them",
)
registry.register(
    "mlcb-topm",
    "mlcb.policies.m_lcb:MLCB",
    top_m=True,
    summary="M-LCB's multiple-play variant: deploy all of S_t and pay their mean loss",
)

_BASELINES = [
    (
        "limited-advice",
        "limited_advice:LimitedAdvice",
        {},
        "Seldin et al. 2014: exponential weights on importance-weighted losses, M - 1 extra queries",
    ),
    (
        "smooth-corral",
        "corral:SmoothCORRAL",
        {},
        "Agarwal et al. 2017 + Pacchiano et al. 2020: log-barrier OMD master over smoothed experts, M = 1",
    ),
    (
        "dynamic-balancing",
        "balancing:DynamicBalancing",
        {},
        "Pacchiano et al. 2020 / Cutkosky et al. 2021: balance putative regret bounds, eliminate",
    ),
    (
        "d3rb",
        "balancing:DataDrivenBalancing",
        {"empirical": False},
        "Dann, Gentile, Pacchiano 2024: regret coefficients doubled on misspecification tests",
    ),
    (
        "ed2rb",
        "balancing:DataDrivenBalancing",
        {"empirical": True},
        "Dann, Gentile, Pacchiano 2024: empirically estimated regret coefficients",
    ),
    (
        "round-robin",
        "references:RoundRobin",
        {},
        "train M experts cyclically, deploy the best empirical mean",
    ),
    ("uniform", "references:Uniform", {}, "train a uniform random M-subset, deploy a uniform member"),
    ("greedy", "references:Greedy", {}, "train and deploy the M smallest empirical means, no bonus"),
    (
        "full-budget",
        "references:FullBudget",
        {},
        "train every expert every round (M = K), deploy the smallest UCB: the unlimited reference",
    ),
    ("oracle", "references:Oracle", {}, "always train and deploy the best expert k*: a lower reference"),
]

# What practitioners run over a pool of learners, one module per family of rules.
_PRACTITIONERS = [
    (
        "bandit-epsilon-greedy",
        "bandits_over_learners:BanditEpsilonGreedy",
        {},
        "river's bandit selection: epsilon-greedy",
    ),
    (
        "bandit-ucb1",
        "bandits_over_learners:BanditUCB1",
        {},
        "river's bandit selection: UCB1 on training losses",
    ),
    (
        "bandit-thompson",
        "bandits_over_learners:BanditThompson",
        {},
        "river's bandit selection: Gaussian Thompson sampling",
    ),
    (
        "successive-halving",
        "halving:SuccessiveHalving",
        {"variant": "once"},
        "Jamieson & Talwalkar 2016: halve the experts by rung loss within a training budget",
    ),
    (
        "hyperband",
        "halving:SuccessiveHalving",
        {"variant": "doubling"},
        "successive halving in doubling brackets (Li et al. 2018's infinite horizon): anytime",
    ),
    (
        "r-ed-ucb",
        "rising_ucb:RisingUCB",
        {},
        "Metelli et al. 2022: optimistic forecasts for rising (learning) arms",
    ),
    ("exp3p", "exp3p:EXP3P", {}, "Auer et al. 2002: EXP3.P over the experts, the adversarial reference"),
]
for _name, _entry, _defaults, _summary in _BASELINES + _PRACTITIONERS:
    registry.register(_name, f"mlcb.policies.{_entry}", summary=_summary, **_defaults)

#: The policies of the practitioners' comparison (``mlcb compare trap --set practitioners``).
PRACTITIONERS = tuple(name for name, *_ in _PRACTITIONERS)


def make(name: str, **params: Any):
    """Build the policy registered as ``name``."""
    return registry.make(name, **params)


def names() -> list[str]:
    """Registered policy names."""
    return registry.names()


def register(
    name: str, entry_point: str, summary: str = "", *, override: bool = False, **defaults: Any
) -> None:
    """Register a policy class under ``name`` (entry point ``"module:attr"``), made by
    ``make(name, **params)`` with ``defaults`` updated by ``params``.

    The same call as ``agents.register`` and ``envs.register``: a plugin module (``mlcb run ...
    --plugin MODULE``, or the ``mlcb.plugins`` entry-point group of an installed package) calls it
    when imported.
    A name that is taken is refused unless ``override=True`` (a one-line warning then says which
    registration holds it: :meth:`mlcb.registry.Registry.register`).
    """
    registry.register(name, entry_point, summary, override=override, **defaults)
