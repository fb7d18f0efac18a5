"""The contracts between the parts of a simulation, written down as code.

Four kinds of object meet in a simulation; each is a :class:`typing.Protocol` below whose
docstring is its whole contract. Nothing else is required of them: no base class, no ``kind``
string, no registration beyond what a protocol names.

:class:`Environment`
    where ``xi_t`` comes from (``envs/``).
:class:`ExpertFamily`
    everything about one family of experts: its pool, its rate function, whether that rate is
    valid on the environment being run, its smoothing wrappers (``agents/``). An expert
    *specification* (one expert's hyper-parameters) names its family in the class attribute
    ``family``; a pool is a list of specifications of one family.
:class:`PythonExpert`
    any online learner written in Python (a class of one's own, a river or scikit-learn model
    behind an adapter). Such experts need no family: :func:`family_of` gives them the generic
    one of :mod:`mlcb.learners`.
:class:`Policy`
    the meta-policy: who trains and who is deployed (``mlcb/policies``).

The engine (:mod:`mlcb.engine`) runs on two paths behind one :func:`mlcb.simulate`: the compiled
round loop when the family has a compiled pool (``build_pool``), and the Python round loop
(:mod:`mlcb.engine.python_loop`) for any :class:`BatchedPool`, with every replication in lockstep.
The compiled kernels' own contract (``train``, ``deploy``, ``select``, ...) is in
:mod:`mlcb.kernels`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from mlcb.validation import InputError, InputTypeError


@runtime_checkable
class Environment(Protocol):
    """A stream ``xi_1, xi_2, ...`` drawn i.i.d., as the engine reads it (a ``gymnasium.Env``).

    ``build(seed, replication, horizon) -> (params, state)``
        One replication's kernel parameters and state, two ``NamedTuple``\\ s of arrays and
        scalars, for a run of ``horizon`` rounds (the setting's one horizon, given to the
        environment here: a stream that depends on it, such as a data set read once, reads it;
        most ignore it). They depend on ``(seed, replication, horizon)`` only (common random
        numbers: every policy and every pool of a comparison faces the same ``xi_t``). A
        ``begin_round`` kernel registered for the ``params`` type (:func:`mlcb.kernels.implements`)
        draws ``xi_t`` into ``state``; left unregistered, the environment draws lazily.
    ``check_horizon(horizon)`` (optional)
        Raise an :class:`~mlcb.validation.InputError` unless the stream can give a run of
        ``horizon`` rounds (a data set read once has as many as its rows); called once, before any
        work.
    ``n_experts``
        The number of experts the environment fixes (bandit environments, where each expert
        owns its own arms), or ``None`` when any number of experts can face the stream.
    ``optimal_loss(params, expert) -> float``
        The least expected loss a decision available to expert ``expert`` can have on this
        replication, where the environment fixes the decision sets (bandit environments: the
        best arm of that expert); elsewhere the Bayes loss of the stream, a lower bound of
        every expert's ``L_k*``. Families with their own model class compute ``L_k*`` in
        :meth:`ExpertFamily.optimal_losses` instead.
    ``round_data(params, state, t, expert) -> object``
        ``xi_t`` as a Python expert sees it when expert ``expert`` is trained or deployed at
        round ``t`` (after ``begin_round``); documented by each environment. An environment
        whose round data is one object for every expert of a round may say so with the class
        attribute ``round_data_shared = True``: the Python engine then asks for it once per
        replication and round, not once per expert call.
    ``round_data_block(params, states, t) -> list`` (optional, with ``round_data_shared``)
        The shared round data of a block of replications at round ``t``: a list, one object per
        ``(params[r], states[r])``, each what ``round_data`` gives. The Python engine then makes
        one call per round for the whole block.
    ``reference`` (optional)
        A class attribute, a phrase naming what regret is measured against when it is not the
        experts' ``L_k*`` as usual (``mlcb/RealData-v0``: the best pool member trained on every
        round); results record it and figures print it. An expert family's own ``reference``
        takes precedence.

    Environments never import experts: everything an expert family needs from an environment is
    a public method of the environment.
    """

    n_experts: int | None

    def build(self, seed: int, replication: int, horizon: int) -> tuple[Any, Any]: ...

    def optimal_loss(self, params: Any, expert: int) -> float: ...

    def round_data(self, params: Any, state: Any, t: int, expert: int) -> Any: ...


def build_env(env: Environment, seed: int, replication: int, horizon: int) -> tuple[Any, Any]:
    """``env.build(seed, replication, horizon)``, held to the contract: a pair ``(params,
    state)``. An environment of one's own that fails there (raises, or calls ``sys.exit()``), or
    returns something else, is an :class:`~mlcb.validation.InputError` of one line naming the
    environment and the call, before any expert is asked anything (its own ``AttributeError`` or
    ``TypeError`` a round later, or a traceback blamed on mlcb, said nothing of where the fault
    was). An ``InputError`` it raises, a lack of memory and a fault of the machine (a full disk)
    pass as they are; an interruption stays an interruption."""
    from mlcb.errors import EXPERT_FAULTS, first_line, os_fault
    from mlcb.validation import shown

    call = (
        f"environment {type(env).__name__}: build(seed={seed}, replication={replication}, horizon={horizon})"
    )
    try:
        built = env.build(seed, replication, horizon)
    except (InputError, MemoryError):
        raise
    except EXPERT_FAULTS as error:
        if os_fault(error) is not None:
            raise
        raise InputError(f"{call} raised {first_line(error)}") from error
    if not isinstance(built, (tuple, list)) or len(built) != 2:
        got = (
            f"a {type(built).__name__} of {len(built)}"
            if isinstance(built, (tuple, list))
            else f"{type(built).__name__} {shown(built)}"
        )
        raise InputError(f"{call} must return a pair (params, state), got {got}")
    return built[0], built[1]


@runtime_checkable
class ExpertFamily(Protocol):
    """One family of experts: how a pool of its specifications is built, rated and judged.

    ``name``
        A short name for messages and results (``"bandit"``, ``"glm"``, ...).
    ``smoothing``
        The smoothing wrappers the family implements (:mod:`mlcb.kernels.smoothing`), the default first.
    ``check(experts, env)``
        Raise a ``ValueError`` naming the problem unless ``experts`` (specifications of this
        family) can run on ``env``; called once, before any work.
    ``optimal_losses(experts, env, env_params) -> ndarray (K,)``
        ``L_k*`` of every expert on one replication (what regret is measured against).
    ``rates(experts, env, n, delta_prime) -> ndarray (K, len(n))`` or ``None``
        ``U_k(n, delta')`` of every expert at update counts ``n``, exactly as the pool reports
        them to the policy: non-negative, non-decreasing in ``n`` and at most ``n``. ``None``
        when some rate depends on more than the count.
    ``heuristic(experts, env) -> list[bool]``
        For each expert, whether its rate is *not* a valid high-probability bound on this very
        environment (then M-LCB's certificate is marked not valid). Decided on ``env``, the
        environment being run, never on a default one.
    ``build_pool(context)``
        Optional: the compiled pool of one replication, ``(params, state)`` ``NamedTuple``\\ s
        whose ``train`` and ``deploy`` kernels are registered (:mod:`mlcb.kernels`), from a
        :class:`BuildContext` (the experts, the environment and its replication, ``delta``, the
        experts' random stream keys, the smoothing wrapper, the horizon).
        :class:`agents.family.CompiledFamily` is a base class that
        gives ``check``, ``optimal_losses``, ``rates`` and ``heuristic`` from the
        specifications, so that a family writes only ``build_pool`` and its kernels.
    ``batched_pool(experts, env, batch, delta, smoothing, horizon)``
        Optional: a :class:`BatchedPool` over every replication of ``batch``
        (:class:`mlcb.engine.batch.Batch`). A family with ``build_pool`` gets one for free
        (:class:`mlcb.engine.python_loop.CompiledPool`).
    ``in_hindsight(experts, env) -> list[bool]``
        Optional: for each expert, whether nobody can state its ``L_k*`` on ``env`` (a model on a
        stream that fixes no decision sets), so that regret is measured against the best expert
        in hindsight on the run's stream instead; the engine computes it for those
        (:mod:`mlcb.engine.hindsight`) and ``optimal_losses`` gives the others.
    ``reference``
        Optional: a phrase naming what regret is measured against when it is not the experts'
        ``L_k*``, or a method ``reference(experts, env)`` giving it (``None``: the ``L_k*``).
    """

    name: str
    smoothing: tuple[str, ...]

    def check(self, experts: list, env: Any) -> None: ...

    def optimal_losses(self, experts: list, env: Any, env_params: Any) -> np.ndarray: ...

    def rates(self, experts: list, env: Any, n: np.ndarray, delta_prime: float) -> np.ndarray | None: ...

    def heuristic(self, experts: list, env: Any) -> list[bool]: ...


@dataclass(frozen=True, eq=False)
class BuildContext:
    """Everything a compiled family's ``build_pool(context)`` receives for one replication.

    Attributes
    ----------
    experts : tuple
        The pool: ``K`` specifications of the family, in pool order.
    env : Environment
        The environment being run.
    env_params : NamedTuple
        Its replication, from ``env.build(seed, replication, horizon)``.
    delta : float
        M-LCB's confidence; the experts' rates are read at ``delta' = delta / (2K)``
        (:attr:`delta_prime`).
    keys : ndarray
        (K,) uint64 random stream keys of the experts, derived from the seed, the replication
        and each expert's identity (:mod:`mlcb.kernels.seeding`): the first argument of every draw in
        ``train`` (:mod:`mlcb.kernels.random`).
    smoothing : str
        The smoothing wrapper's name, one of the family's ``smoothing``
        (:meth:`smoothing_code` turns it into the integer the kernels compare).
    horizon : int
        Rounds of the run (to size tables and histories).
    seed, replication : int
        The simulation's seed and the replication's index (for state drawn at random, e.g. a
        shared starting point).

    ``build_pool`` is called once per replication and replications run in parallel threads:
    it returns fresh arrays every time, never arrays shared between calls.

    Examples
    --------
    >>> import envs
    >>> from agents.bandits import UCB1
    >>> env = envs.make("mlcb/Trap-v0", n_experts=3)
    >>> env_params, _ = env.build(0, 0, 100)
    >>> keys = np.arange(3, dtype=np.uint64)
    >>> context = BuildContext((UCB1(),) * 3, env, env_params, 0.1, keys, "counts", 100)
    >>> context.n_experts, round(context.delta_prime, 4), context.smoothing_code(("counts", "last"))
    (3, 0.0167, 0)
    >>> context.column("c"), context.zeros(2, dtype=np.int64).shape
    (array([2., 2., 2.]), (3, 2))
    """

    experts: tuple
    env: Any
    env_params: Any
    delta: float
    keys: np.ndarray
    smoothing: str
    horizon: int
    seed: int = 0
    replication: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "experts", tuple(self.experts))
        keys = np.asarray(self.keys, dtype=np.uint64)
        if keys.shape != (len(self.experts),):
            raise InputError(
                f"keys must be one uint64 key per expert, shape ({len(self.experts)},), got {keys.shape}"
            )
        object.__setattr__(self, "keys", keys)

    @property
    def n_experts(self) -> int:
        """``K``, the size of the pool."""
        return len(self.experts)

    @property
    def delta_prime(self) -> float:
        """``delta' = delta / (2K)``, the level at which M-LCB reads the experts' rates."""
        return float(self.delta / (2.0 * self.n_experts))

    def smoothing_code(self, allowed: tuple[str, ...]) -> int:
        """The :mod:`mlcb.kernels.smoothing` code of :attr:`smoothing`; a ``ValueError`` naming ``allowed``
        (the family's wrappers) when it is not one of them."""
        from mlcb.kernels.smoothing import code

        return code(self.smoothing, allowed)

    def column(self, attribute: str, dtype: Any = np.float64) -> np.ndarray:
        """A fresh (K,) array of every specification's ``attribute`` (a kernel parameter)."""
        return np.array([getattr(expert, attribute) for expert in self.experts], dtype=dtype)

    def zeros(self, *shape: int, dtype: Any = np.float64) -> np.ndarray:
        """A fresh array of zeros of shape ``(K, *shape)`` (per-expert state)."""
        return np.zeros((self.n_experts, *shape), dtype=dtype)


@runtime_checkable
class PythonExpert(Protocol):
    """An online learner written in Python, in river's spirit (``learn_one`` / ``predict_one``).

    ``learn(data) -> loss`` or ``(loss, rate)``
        Suffer the loss, in ``[0, 1]``, of the *current* decision on ``data`` (the round's
        ``xi_t``, :meth:`Environment.round_data`), then make one learning step. Return that
        loss (a number); a learner whose rate depends on its history may instead return the
        ``tuple`` ``(loss, rate)`` with its rate ``U(n, delta')`` at its new update count ``n``.
    ``deploy(data) -> loss`` or ``(loss, expected_loss)``
        The loss on ``data`` of the *smoothed* decision (what the expert would deploy:
        its iterate average, a uniformly drawn past iterate, ...). It must not learn, and any
        randomness it needs must not come from the stream ``learn`` draws from (else training
        would depend on how often the policy deploys the expert, and common random numbers
        across policies would break). With the expected loss ``L(u)`` of that decision, as the
        ``tuple`` ``(loss, expected_loss)``, the pseudo-regret and the certificate are recorded;
        without it they are ``nan``.
    ``spawn(seed) -> PythonExpert`` (optional)
        A fresh, untrained copy with its own random stream seeded by ``seed``. The engine calls
        it once per replication with a seed derived from ``(seed, replication, expert
        identity)``, so results depend neither on threads nor on the pool's order, and every
        policy meets the same learners (common random numbers). Without it the engine takes a
        ``copy.deepcopy`` of the expert (right for deterministic learners).
    ``rate`` (optional)
        Its rate function ``U(n, delta')``, non-negative and non-decreasing in ``n`` (the engine
        caps it at ``n``): a callable ``rate(n, delta_prime)`` vectorised over an array of
        counts ``n``, or a pair ``(beta, alpha)`` with ``beta > 0`` and ``0 < alpha <= 1`` for
        ``U = min(n, beta n^alpha sqrt(log(2 n^2 / delta')))``. Default ``(1.0, 0.5)``.
    ``heuristic`` (optional)
        ``False`` only when ``rate`` is a valid high-probability bound for this learner on the
        stream it faces; default ``True`` (the certificate is then marked not valid).
    ``warm_updates`` (optional)
        Read once, after ``learn`` at round 0 (the warm start): how many updates that call made,
        for round data that carries several samples (``mlcb/RealData-v0`` with ``warm_start >
        1``); the loss it returned is then their mean, and the engine counts that many updates
        of that mean loss. Default 1.
    ``optimal_loss(env, env_params) -> float`` (optional)
        ``L_k*``, the least expected loss of the learner's model class on the replication
        (with ``states_optimal_loss(env) -> bool``, optional: whether it has one on ``env``).
        Default: on an environment that fixes each expert's decision sets (``n_experts`` set),
        :meth:`Environment.optimal_loss`; elsewhere the best expert in hindsight, each expert's
        mean loss when trained on every round of the run's stream (:mod:`mlcb.engine.hindsight`),
        and results say so.
    """

    def learn(self, data: Any) -> Any: ...

    def deploy(self, data: Any) -> Any: ...


@runtime_checkable
class BatchedPool(Protocol):
    """Every replication's experts of one pool, advanced together by the Python engine.

    Arrays have a leading replication axis ``R``; ``selected`` holds expert indices, padded
    with ``-1`` past ``counts[r]`` entries.

    ``train(t, selected, counts, losses, rates)``
        Train, in order, experts ``selected[r, :counts[r]]`` of every replication ``r`` on
        ``xi_t``; write each one's training loss into ``losses`` and its rate
        ``U_k(n_k, delta')`` at its new count into ``rates`` (both ``(R, width)`` float64).
    ``deploy(t, selected, counts, losses, expected)``
        Deploy, in order, experts ``selected[r, :counts[r]]``: the loss on ``xi_t`` of each one's
        smoothed decision and its expected loss (``nan`` when unknown). Deploying changes no
        expert's learning state.
    ``describe(r, k) -> str``
        The class (and anything useful) of expert ``k`` of replication ``r``, for messages.
    ``play(t, deployed, n_deployed, deploy_losses, deploy_expected, selected, n_selected,
    train_losses, train_rates)`` (optional)
        ``deploy`` and then ``train`` in one call: the engine calls it each round in their place
        when the pool has it. The results must be those of the two calls.

    A failure inside an expert is raised as :class:`mlcb.errors.ExpertError` naming the expert,
    the replication and the round (:meth:`mlcb.errors.ExpertError.at`).
    """

    def train(
        self, t: int, selected: np.ndarray, counts: np.ndarray, losses: np.ndarray, rates: np.ndarray
    ) -> None: ...

    def deploy(
        self, t: int, selected: np.ndarray, counts: np.ndarray, losses: np.ndarray, expected: np.ndarray
    ) -> None: ...

    def describe(self, r: int, k: int) -> str: ...


@runtime_checkable
class Policy(Protocol):
    """A meta-policy: a frozen dataclass that validates its parameters in ``__post_init__``.

    A simulation names its policy, so a policy of one's own is registered first
    (``mlcb.policies.register(name, "module:Class")``). Each round its ``select`` kernel writes the
    training set and returns the deployed expert, which may lie outside the training set (a
    reference policy may deploy the best empirical mean of all experts), or ``-1`` to deploy
    every expert of the training set and pay their mean loss.

    ``build(n_experts, budget, delta, horizon, optimal) -> (params, state)``
        ``NamedTuple``\\ s of one replication for the compiled ``select`` (and optional
        ``observe``, ``end_round``) kernels of :mod:`mlcb.kernels`. ``optimal`` holds the
        experts' ``L_k*`` for reference policies (the oracle); a real policy never reads it.
    ``warm_start`` (default ``True``)
        Train every expert once before round 1.
    ``selection_size(n_experts, budget)`` (default: the budget)
        The most experts trained in one round.
    ``has_certificate``, ``certificate_valid`` (default ``False``)
        Whether the policy reports confidence widths ``UCB - LCB`` (the certificate), and
        whether its pseudo-regret is then bounded by it with probability ``1 - delta``.

    Who checks what. The policy checks its own parameters in ``__post_init__`` (so
    ``mlcb.policies.make`` refuses a bad one before any work). The budget rule ``1 <= M <= K`` is
    checked by :func:`mlcb.validation.budget`, the one check and wording of it: every caller that
    takes a budget from a user calls it before ``build`` (:class:`mlcb.config.SimulationConfig`,
    the river selectors, :func:`mlcb.testing.check_policy`), so a policy's ``build`` may assume
    ``1 <= budget <= n_experts``; the built-in policies call it again first thing in ``build``, so
    that a direct call refuses a bad budget alike. ``delta`` in (0, 1) and ``horizon >= 1`` are the
    setting's (checked by :class:`~mlcb.config.SimulationConfig`).
    """

    def build(
        self, n_experts: int, budget: int, delta: float, horizon: int, optimal: np.ndarray
    ) -> tuple[Any, Any]: ...


def selection_size(policy: Policy, n_experts: int, budget: int) -> int:
    """The most experts ``policy`` trains in a round: its ``selection_size(n_experts, budget)``,
    or the budget."""
    size = getattr(policy, "selection_size", None)
    return int(size(n_experts, budget)) if size is not None else int(budget)


#: The attribute of an expert specification's class that names its family.
FAMILY_ATTRIBUTE = "family"


#: The adapter that puts a model of another library in a pool, by the library's top module.
_ADAPTERS = {"river": "RiverExpert", "sklearn": "SklearnExpert"}


def family_of(experts: list) -> Any:
    """The :class:`ExpertFamily` of a pool: the ``family`` its specifications name, or the generic
    family of Python experts (:data:`mlcb.learners.LEARNERS`) for learners without one; a
    pool that mixes families (a compiled family's specifications beside Python experts, say) gets
    a :class:`mlcb.learners.MixedFamily`, which the Python engine runs.

    A ``ValueError`` names the object that is neither a specification nor a Python expert.

    Examples
    --------
    >>> import agents
    >>> family_of([agents.make("ucb1"), agents.make("thompson")]).name
    'bandit'
    """
    if not experts:
        raise InputError("experts must be a non-empty list of expert specifications or learners")
    from mlcb.learners import LEARNERS, MixedFamily

    families = []
    for k, expert in enumerate(experts):
        if isinstance(expert, type):
            name = expert.__name__
            raise InputTypeError(f"experts[{k}]: {name} is a class; give an instance ({name}(...))")
        family = getattr(type(expert), FAMILY_ATTRIBUTE, None)
        if family is None:
            if not (callable(getattr(expert, "learn", None)) and callable(getattr(expert, "deploy", None))):
                hint = ""
                library = type(expert).__module__.partition(".")[0]
                if isinstance(expert, str):
                    hint = f" (a family's name? agents.make({expert!r}) builds one)"
                elif library in _ADAPTERS:
                    hint = f" (a {library} model: wrap it, mlcb.river.experts.{_ADAPTERS[library]}(model))"
                raise InputError(
                    f"experts[{k}]: {type(expert).__name__} is neither an expert specification (its class "
                    "names an ExpertFamily in 'family') nor a Python expert (methods learn(data) and "
                    f"deploy(data)); see mlcb.contracts{hint}"
                )
            family = LEARNERS
        families.append(family)
    distinct = list(dict.fromkeys(families))
    if len(distinct) > 1:  # a mixed pool: one sub-pool per family, on the Python engine
        return MixedFamily(
            distinct, [[k for k, f in enumerate(families) if f is family] for family in distinct]
        )
    return distinct[0]
