"""A setting built, once: :func:`build` makes the environment, the policy and the pool's family of a
:class:`~mlcb.config.SimulationConfig` and runs every check that needs them; the engines, the
round sessions and the collector take the :class:`Problem` it returns. :func:`choose_engine` says
which round loop can run it.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlcb.config import SimulationConfig
from mlcb.contracts import Environment, ExpertFamily, Policy, family_of
from mlcb.engine import sizes
from mlcb.storage import identity
from mlcb.validation import InputError, InputTypeError

#: The round loops: ``"auto"`` takes the compiled one whenever it can run the problem.
ENGINES = ("auto", "compiled", "python")
#: Replications the Python engine advances together by default, in one pool
#: (:mod:`mlcb.engine.python_loop`): enough to amortise one compiled call per round, few enough
#: that a failure loses little and progress is reported often. The memory check of a family that
#: counts its own parameters counts them for this many replications.
DEFAULT_BLOCK = 16


@dataclass(frozen=True, eq=False)
class Problem:
    """One setting, built: its description and the objects the engines run.

    Attributes
    ----------
    config : SimulationConfig
        The description it was built from (every number of the setting lives there once:
        ``horizon``, ``budget``, ``seed``, ...; the properties below read it).
    env : Environment
        The environment (``build``, ``optimal_loss``, ``round_data``).
    policy : Policy
        The meta-policy (``build`` and its compiled kernels).
    family : ExpertFamily
        The pool's family (:func:`mlcb.contracts.family_of`).

    Examples
    --------
    >>> from mlcb import presets
    >>> problem = build(presets.get("trap").config(2, horizon=500, replications=2))
    >>> problem.label, problem.n_experts, int(problem.checkpoints[-1]), problem.compiled
    ('mlcb M=2', 10, 500, True)
    """

    config: SimulationConfig
    env: Environment
    policy: Policy
    family: ExpertFamily

    @property
    def experts(self) -> tuple[Any, ...]:
        """The pool: expert specifications of one compiled family, or Python experts."""
        return self.config.experts

    @property
    def n_experts(self) -> int:
        """``K``, the size of the pool."""
        return len(self.config.experts)

    @property
    def budget(self) -> int:
        """``M``, the most experts trained per round."""
        return self.config.budget

    @property
    def delta(self) -> float:
        """The confidence ``delta`` of the rates and bounds."""
        return self.config.delta

    @property
    def smoothing(self) -> str:
        """The deployment wrapper's name (the family's default when the description named none)."""
        return str(self.config.smoothing)

    @property
    def horizon(self) -> int:
        """``T``, the rounds of a replication."""
        return self.config.horizon

    @property
    def seed(self) -> int:
        """The setting's seed."""
        return self.config.seed

    @property
    def label(self) -> str:
        """The setting's name in results (:attr:`mlcb.config.SimulationConfig.label`)."""
        return str(self.config.label)

    @functools.cached_property
    def checkpoints(self) -> np.ndarray:
        """The rounds at which a replication is recorded (:meth:`mlcb.config.SimulationConfig.grid`)."""
        return self.config.grid()

    @property
    def compiled(self) -> bool:
        """Whether the expert family has a compiled pool (then the compiled engine can run it)."""
        return callable(getattr(self.family, "build_pool", None))

    def estimate(self, threads: int | None = None) -> sizes.Estimate:
        """What the setting will take besides its rounds (:func:`mlcb.engine.sizes.estimate`):
        memory, and the time of the work that grows with the pool."""
        return sizes.estimate(self, threads)

    def stream(self, seed: int) -> str | None:
        """What identifies the stream of the runs of seed ``seed`` (a digest of mlcb's version, the
        environment and its parameters, and the seed), or ``None`` when the description of the
        setting is incomplete: what keys the best-in-hindsight references of the setting's
        replications (:mod:`mlcb.engine.hindsight`), shared with every setting on that stream."""
        value, problems = self._described
        if problems:
            return None
        return identity.digest({**{k: value[k] for k in ("mlcb", "env", "env_params")}, "seed": int(seed)})

    @functools.cached_property
    def expert_ids(self) -> list[str] | None:
        """Each expert's identity (a digest of its description), or ``None`` when the description
        of the setting is incomplete."""
        value, problems = self._described
        if problems:
            return None
        return [name for name, count in value["experts"] for _ in range(count)]

    @property
    def _described(self) -> tuple[dict, list[str]]:
        described = self.config.identity()
        return described.value, described.problems


def build(config: SimulationConfig) -> Problem:
    """The :class:`Problem` of ``config``: its environment, policy and family, built once, with
    every check that needs them, all before any work.

    In order: the memory of the recorded frames and of the environment's arrays (estimated from
    their sizes before anything is allocated), the environment's id and parameters, whether it can
    run the setting's horizon (``check_horizon``, where the environment has one), the policy's
    name and parameters, the memory of the environment built and of the pool's parameters
    (``held_bytes``, where the family counts them: for each of the replications the Python engine
    runs at once, in one pool), whether the experts can face the environment
    (``family.check``), and the memory of the replications in flight beside the frames
    (:meth:`Problem.estimate`: the pool's and the policy's arrays measured on a few experts and
    extrapolated to the pool). Each failure is an :class:`~mlcb.validation.InputError` naming
    what is at fault.

    Raises
    ------
    mlcb.validation.InputError
        Naming the parameter at fault and what is allowed.
    """
    import envs
    from mlcb import policies
    from mlcb.registry import make_named

    if not isinstance(config, SimulationConfig):
        raise InputTypeError(f"config must be a SimulationConfig, got {type(config).__name__}")
    label = str(config.label)
    sizes.check_size(label, sizes.frame_bytes(config), sizes.rows_text(config))
    sizes.check_environment_size(config.env, config.env_params)
    try:
        env = make_named("env_params", config.env_params, envs, config.env)  # unknown ids, bad parameters
    except InputTypeError as error:
        if "horizon" in config.env_params and "'horizon'" in str(error):
            raise InputTypeError(
                f"{error} (the horizon is the setting's own: horizon=... in Python, a TOML file's "
                "horizon, --horizon on the command line; the environment gets it from there)"
            ) from None
        raise
    check_horizon = getattr(env, "check_horizon", None)
    if callable(check_horizon):
        check_horizon(config.horizon)
    policy = make_named("policy_params", config.policy_params, policies, config.policy)
    experts = list(config.experts)
    family = family_of(experts)
    env_bytes = sizes.held_bytes(env)
    if env_bytes:
        in_flight = min(config.replications, os.cpu_count() or 1)
        sizes.check_size(
            label,
            sizes.frame_bytes(config) + env_bytes * (1 + 2 * in_flight),
            f"the environment's arrays take {sizes._bytes(env_bytes)}, and each of the {in_flight} "
            "replications run at once keeps the pool's state beside them",
        )
    family.check(experts, env)
    held = getattr(family, "held_bytes", None)  # a family that counts its own parameters
    if callable(held):
        needed, why = held(experts, env)  # for one replication; a block of them share one pool
        together = min(config.replications, DEFAULT_BLOCK)
        if together > 1 and needed:
            why = f"{why}; {together} replications run at once, in one pool"
        sizes.check_size("experts", needed * together, why)
    problem = Problem(config, env, policy, family)
    if problem.n_experts >= sizes.PROBE_FROM:  # a pool whose arrays may outgrow the frames
        size = problem.estimate()
        sizes.check_size(label, size.bytes, size.text)
    return problem


def choose_engine(problem: Problem, name: str) -> str:
    """``"compiled"`` or ``"python"``: the engine ``name`` (``"auto"``: compiled whenever every
    part is compiled), or a ``ValueError`` when the compiled engine cannot run the problem."""
    if name not in ENGINES:
        raise InputError(f"engine must be one of {ENGINES}, got {name!r}")
    if name == "auto":
        return "compiled" if problem.compiled else "python"
    if name == "compiled" and not problem.compiled:
        raise InputError(
            f"engine='compiled' needs experts of a compiled family; the "
            f"{getattr(problem.family, 'name', problem.family)!r} family runs on engine='python' (or 'auto')"
        )
    return name
