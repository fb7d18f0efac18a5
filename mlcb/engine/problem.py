"""The engine's view of one setting: its built environment, experts, policy and family.

A :class:`Problem` is what every engine function takes; :func:`choose_engine` says which round
loop can run it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mlcb.contracts import Environment, ExpertFamily, Policy, family_of
from mlcb.validation import InputError

if TYPE_CHECKING:  # the experiment layer: only its type is named here
    from mlcb.config import SimulationConfig

#: The round loops: ``"auto"`` takes the compiled one whenever it can run the problem.
ENGINES = ("auto", "compiled", "python")


@dataclass(frozen=True)
class Problem:
    """The built objects of one setting, as the engines read them.

    Attributes
    ----------
    env : Environment
        The environment (``build``, ``optimal_loss``, ``round_data``).
    experts : tuple
        The pool: expert specifications of one compiled family, or Python experts.
    policy : Policy
        The meta-policy (``build`` and its compiled kernels).
    budget : int
        ``M``, the most experts trained per round.
    delta : float
        The confidence ``delta`` of the rates and bounds.
    smoothing : str
        The deployment wrapper's name.
    family : ExpertFamily
        The pool's family (:func:`mlcb.contracts.family_of`).
    """

    env: Environment
    experts: tuple[Any, ...]
    policy: Policy
    budget: int
    delta: float
    smoothing: str
    family: ExpertFamily

    @classmethod
    def from_config(cls, config: SimulationConfig) -> Problem:
        """Build the environment, policy and family of ``config``."""
        return cls(
            config.make_env(),
            tuple(config.experts),
            config.make_policy(),
            int(config.budget),
            float(config.delta),
            str(config.smoothing),  # set to the family's default when the config was made
            family_of(list(config.experts)),
        )

    @property
    def n_experts(self) -> int:
        """``K``, the size of the pool."""
        return len(self.experts)

    @property
    def compiled(self) -> bool:
        """Whether the expert family has a compiled pool (then the compiled engine can run it)."""
        return callable(getattr(self.family, "build_pool", None))


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
