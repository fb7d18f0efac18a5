"""The experts: self-learning online algorithms and their rate functions (docs/theory.md §1, §5).

Each expert is a frozen dataclass, a *specification* (its hyper-parameters and its rate function
``rate_function``); a *pool* is a list of them, one per expert, all of one family, and the family
(:class:`mlcb.contracts.ExpertFamily`, named by the specification's class in ``family``) owns
everything else: which environments the pool runs on, its compiled pool, and the rates and
whether they are heuristic on the environment being run (:data:`agents.bandits.BANDITS` on
:mod:`envs.bandit` environments, with :mod:`agents.klucb`, :mod:`agents.robust_ucb` and
:mod:`agents.hedge`; :data:`agents.glm.GLMS` on the GLM stream; :data:`agents.bco.BCO_FAMILY` on
the convex stream; :mod:`agents.moe`'s torch networks on the clustered stream). :mod:`agents.family`
holds the base classes that give a family all but what is its own; :mod:`agents.rates` the rates'
formulas.
``make(name, **params)`` builds a registered expert; ``names()`` lists them.

Examples
--------
>>> import agents
>>> pool = [agents.make("epsilon-greedy")] * 5 + [agents.make("ucb1", c=2.0)] * 5
>>> len(pool)
10
"""

from __future__ import annotations

from typing import Any

from mlcb.registry import Registry

registry = Registry("expert")
#: The environments the bandit families run on (a test holds every declaration to what the
#: families' ``check`` accepts).
BANDIT_ENVIRONMENTS = ("mlcb/Trap-v0", "mlcb/BanditExperts-v0", "mlcb/LowerBound-v0")
registry.register(
    "ucb1",
    "agents.bandits:UCB1",
    summary="UCB1, radius sqrt(c ln j / N_a)",
    environments=BANDIT_ENVIRONMENTS,
)
registry.register(
    "epsilon-greedy",
    "agents.bandits:EpsilonGreedy",
    summary="decaying epsilon-greedy, eps_j = min(1, c (m ln j / j)^(1 - alpha))",
    environments=BANDIT_ENVIRONMENTS,
)
registry.register(
    "thompson",
    "agents.bandits:ThompsonSampling",
    summary="Bernoulli Thompson sampling (heuristic rate)",
    environments=BANDIT_ENVIRONMENTS,
)
registry.register(
    "clipped-thompson",
    "agents.bandits:ThompsonSampling",
    clipped=True,
    summary="Thompson sampling clipped into a UCB band (explicit rate)",
    environments=BANDIT_ENVIRONMENTS,
)
registry.register(
    "ogd",
    "agents.glm:OnlineGradientDescent",
    summary="projected online gradient descent on a GLM with a fixed link",
    environments=("mlcb/GLM-v0",),
)
registry.register(
    "kl-ucb",
    "agents.klucb:KLUCB",
    summary="KL-UCB over Bernoulli arms (Garivier and Cappe 2011; heuristic rate)",
    environments=BANDIT_ENVIRONMENTS,
)
registry.register(
    "robust-ucb",
    "agents.robust_ucb:RobustUCB",
    summary="UCB on truncated means for heavy tails (Bubeck et al. 2013), alpha = 1/(1+eps)",
    environments=BANDIT_ENVIRONMENTS,
)
registry.register(
    "hedge",
    "agents.hedge:Hedge",
    summary="Hedge over the expert's arms as fixed predictors, full information, alpha = 1/2",
    environments=BANDIT_ENVIRONMENTS,
)
registry.register(
    "softmax",
    "agents.classifiers:OnlineSoftmax",
    summary="online softmax regression (OGD), real data",
    environments=("mlcb/RealData-v0",),
)
registry.register(
    "perceptron",
    "agents.classifiers:OnlinePerceptron",
    summary="multiclass perceptron, real data",
    environments=("mlcb/RealData-v0",),
)
registry.register(
    "bco",
    "agents.bco:BCO",
    summary="bandit gradient descent (Flaxman et al. 2005) on a convex stream, Lipschitz case, alpha = 3/4",
    environments=("mlcb/ConvexBandit-v0",),
)
registry.register(
    "bco-bounded",
    "agents.bco:BCO",
    case="bounded",
    summary="bandit gradient descent (Flaxman et al. 2005), bounded convex losses, alpha = 5/6",
    environments=("mlcb/ConvexBandit-v0",),
)
registry.register(
    "moe",
    "agents.moe:MoEExpert",
    summary="a mixture-of-experts network of torch, trained online on the clustered stream (needs torch)",
    environments=("mlcb/Clustered-v0",),
)


def register(
    name: str,
    entry_point: str,
    summary: str = "",
    *,
    override: bool = False,
    environments: tuple[str, ...] = (),
    **defaults: Any,
) -> None:
    """Register an expert specification class under ``name`` (entry point ``"module:attr"``),
    made by ``make(name, **params)`` with ``defaults`` updated by ``params``; ``environments``
    names the registered environments a pool of it runs on (``mlcb list`` shows them).

    The same call as ``mlcb.policies.register`` and ``envs.register``: a plugin module (``mlcb run
    ... --plugin MODULE``, or the ``mlcb.plugins`` entry-point group of an installed package) calls
    it when imported.
    A name that is taken is refused unless ``override=True`` (a one-line warning then says which
    registration holds it: :meth:`mlcb.registry.Registry.register`).
    """
    registry.register(name, entry_point, summary, override=override, environments=environments, **defaults)


def make(name: str, **params: Any):
    """Build the expert family registered as ``name``."""
    return registry.make(name, **params)


def names() -> list[str]:
    """Registered expert family names."""
    return registry.names()
