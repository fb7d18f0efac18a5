"""What a simulation is: :class:`SimulationConfig`, a frozen description of one setting, recorded
with its results.

A description is cheap: making one checks its own fields (their types and ranges: the budget
against the pool's size, the confidence, the horizon, the smoothing wrapper among the experts'
family's) and builds nothing. :func:`mlcb.engine.problem.build` builds the setting once -- its
environment, policy and pool -- and runs every check that needs them (names and parameters of
the environment and the policy, whether the experts can face the environment, the memory it will
take), all before any work; the engines run what it built. A setting file in TOML describes
settings too (:mod:`mlcb.config.toml`).

Every check raises an :class:`~mlcb.validation.InputError` (a ``ValueError``) naming the
parameter and what is allowed.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mlcb import validation
from mlcb.kernels.seeding import check_seed
from mlcb.storage import identity
from mlcb.storage.identity import Described
from mlcb.storage.result_files import LARGEST_WHOLE
from mlcb.validation import InputError, InputTypeError

#: The largest horizon ``T``: the engines count rounds, pulls and updates in int64 and feed
#: rounds to the counter-based random stream, all exact far beyond it, while one replication of
#: 10^10 rounds already takes about an hour (the trap, one core).
MAX_HORIZON = 10**10
#: The largest number of replications of one setting (each is a row of the saved results).
MAX_REPLICATIONS = 10**6
#: The largest number of points of the checkpoint grid (each is a row of every curve).
MAX_CHECKPOINTS = 10**5


def checkpoint_grid(horizon: int, points: int = 100) -> np.ndarray:
    """Rounds at which the recorder keeps a snapshot: geometric from 1 to ``horizon``, plus it.

    Examples
    --------
    >>> checkpoint_grid(1000, 5).tolist()
    [1, 6, 32, 178, 1000]
    """
    if horizon < 1 or points < 1:
        raise InputError(f"horizon and points must be >= 1, got {horizon!r} and {points!r}")
    grid = np.unique(np.round(np.geomspace(1, horizon, points)).astype(np.int64))
    return np.union1d(grid, [horizon]).astype(np.int64)


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


def _own_items(obj: Any) -> dict[Any, Any] | None:
    """An object's own parameters, undescribed (dataclass fields, ``get_params()``, or public
    attributes), or ``None`` when it exposes none."""
    if dataclasses.is_dataclass(obj):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if callable(getattr(obj, "get_params", None)):
        return dict(obj.get_params())
    if isinstance(getattr(obj, "__dict__", None), dict):
        return {k: v for k, v in vars(obj).items() if not k.startswith("_")}
    return None


def _parameters(obj: Any, depth: int) -> dict[str, Any] | None:
    """An object's parameters (:func:`_own_items`), described, or ``None`` when it exposes none."""
    items = _own_items(obj)
    if items is None:
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


def _files_by_content(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with every value that names an existing file (a data set given by its path)
    replaced by the path and a digest of the file's bytes: the same path holding other data is
    another setting."""
    out: dict[str, Any] = {}
    for name, value in params.items():
        path = Path(value) if isinstance(value, (str, os.PathLike)) else None
        if path is not None and path.is_file():
            out[name] = {"file": str(value), "sha256": identity.file_digest(path)}
        else:
            out[name] = value
    return out


def _pool(experts: Any) -> tuple:
    """``experts`` as a tuple: a list, tuple, array or other sequence of experts. One expert, a
    string or a mapping in its place is an :class:`~mlcb.validation.InputError` saying what a pool
    is (a list, ``[agents.make("ucb1")] * 10``); so is an empty one."""
    from collections.abc import Iterable, Mapping

    from mlcb.contracts import FAMILY_ATTRIBUTE

    one = getattr(type(experts), FAMILY_ATTRIBUTE, None) is not None or (
        callable(getattr(experts, "learn", None)) and callable(getattr(experts, "deploy", None))
    )
    if one or isinstance(experts, (str, bytes, Mapping)) or not isinstance(experts, Iterable):
        what = f"one expert ({type(experts).__name__})" if one else f"{type(experts).__name__} "
        what += "" if one else validation.shown(experts)
        raise InputError(
            f"experts must be a non-empty list of expert specifications, got {what}; a pool is a "
            "list: [agents.make('ucb1')] * 10, or experts of one's own"
        )
    pool = tuple(experts)
    if not pool:
        raise InputError("experts must be a non-empty list of expert specifications")
    return pool


@dataclass(frozen=True)
class SimulationConfig:
    """One simulation setting: an environment, a pool of experts, a policy and a budget.

    A description: making one checks its fields and builds nothing
    (:func:`mlcb.engine.problem.build` builds it, once, before it runs).

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
        ``T``, rounds per replication, ``1 <= T <= 10**10`` (:data:`MAX_HORIZON`). The one horizon
        of the setting: the environment is built for it (a real-data stream's regret reference
        is taken over these rounds).
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
    label : str, optional
        The setting's name in results, figures, reports and comparisons (1 to
        :data:`~mlcb.validation.MAX_LABEL` printable characters); default ``"{policy} M={budget}"``,
        which follows the policy and the budget of a copy (:meth:`replace`) where a given label
        stays. Two settings of one result need distinct labels: name two pools at the same
        budget (``label="my ridge pool"``) to put them side by side. The label names the
        setting; it does not change its numbers (it is not part of :meth:`key`).

    Examples
    --------
    >>> import agents
    >>> config = SimulationConfig(experts=[agents.make("ucb1")] * 3, budget=2, label="three UCB1")
    >>> config.label, config.smoothing
    ('three UCB1', 'counts')
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
    label: str | None = None

    def __post_init__(self) -> None:
        from mlcb.contracts import family_of

        for name in ("env", "policy"):
            if not isinstance(getattr(self, name), str):
                raise InputTypeError(
                    f"{name} must be a registered name (a string), got {getattr(self, name)!r}"
                )
        for name in ("env_params", "policy_params"):
            if not isinstance(getattr(self, name), dict):
                raise InputError(
                    f"{name} must be a dict (a TOML table) of keyword arguments, got {getattr(self, name)!r}"
                )
        if not isinstance(self.calibration, str):
            raise InputError(f"calibration must be a string (a label), got {self.calibration!r}")
        validation.label("calibration", self.calibration)  # shown and saved as a label is
        object.__setattr__(self, "experts", _pool(self.experts))
        for name, maximum in (
            ("horizon", MAX_HORIZON),
            ("replications", MAX_REPLICATIONS),
            ("checkpoints", MAX_CHECKPOINTS),
        ):
            object.__setattr__(self, name, validation.integer(name, getattr(self, name), maximum=maximum))
        family = family_of(list(self.experts))  # experts that are neither specifications nor learners
        object.__setattr__(self, "budget", validation.budget(self.budget, len(self.experts)))
        object.__setattr__(self, "seed", check_seed(self.seed))
        object.__setattr__(self, "delta", validation.open_unit("delta", self.delta))
        _check_delta_prime(self.delta, len(self.experts))
        smoothing = family.smoothing[0] if self.smoothing is None else self.smoothing  # ("": refused)
        allowed = tuple(family.smoothing)
        if smoothing not in allowed:
            raise InputError(
                f"smoothing must be one of {allowed} for {family.name} experts, got {smoothing!r}"
            )
        object.__setattr__(self, "smoothing", smoothing)
        _check_whole_numbers(self)
        if self.label is None or isinstance(self.label, _DefaultLabel):  # (again, for a copy)
            object.__setattr__(self, "label", _DefaultLabel(f"{self.policy} M={self.budget}"))
        else:
            object.__setattr__(self, "label", validation.label("label", self.label))

    @property
    def n_experts(self) -> int:
        return len(self.experts)

    def grid(self) -> np.ndarray:
        """The rounds at which a replication is recorded: :func:`checkpoint_grid` of the horizon
        with :attr:`checkpoints` points (the horizon always one of them)."""
        return checkpoint_grid(self.horizon, self.checkpoints)

    def replace(self, **changes: Any) -> SimulationConfig:
        """A copy with some fields changed (checked again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description (experts by class and parameters, :func:`expert_to_dict`): a
        record of the setting, not a way back to it (nothing in it is ever imported)."""
        data = {
            f.name: copy.deepcopy(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.name != "experts"
        }
        data["label"] = str(self.label)
        data["experts"] = [expert_to_dict(e) for e in self.experts]
        return data

    def identity(self) -> Described:
        """Everything that decides the numbers of one replication, as plain JSON
        (:mod:`mlcb.storage.identity`): mlcb's version, the environment and the policy by name
        and by the object registered under it (module, qualified name, and a digest of its code
        when it is one's own), their parameters, every field but ``replications`` and ``label``,
        and each expert in full (its ``get_params()``, else every attribute, private ones
        included); with where the description is incomplete (:meth:`check_resumable`).
        Computed once per description."""
        return self._identity

    @functools.cached_property
    def _identity(self) -> Described:
        import envs
        from mlcb import policies
        from mlcb._version import __version__

        problems: list[str] = []

        def named(registry: Any, name: str) -> dict[str, Any]:
            target = registry.entry(name).load()
            return {"name": name, "object": identity.label(target), **identity.origin(target)}

        def full(value: Any, where: str) -> Any:
            described = identity.describe(value, where)
            problems.extend(described.problems)
            return described.value

        runs: list[list] = []
        memo: dict[int, str] = {}
        for k, expert in enumerate(self.experts):
            if id(expert) not in memo:
                where = f"experts[{k}] ({type(expert).__qualname__})"
                memo[id(expert)] = identity.digest(full(expert, where))
            if runs and runs[-1][0] == memo[id(expert)]:
                runs[-1][1] += 1
            else:
                runs.append([memo[id(expert)], 1])
        value = {
            "mlcb": __version__,
            "env": named(envs.registry, self.env),
            "env_params": full(_files_by_content(self.env_params), "env_params"),
            "policy": named(policies.registry, self.policy),
            "policy_params": full(self.policy_params, "policy_params"),
            "experts": runs,
            **{
                f.name: getattr(self, f.name)
                for f in dataclasses.fields(self)
                if f.name
                not in ("env", "env_params", "policy", "policy_params", "experts", "replications", "label")
            },
        }
        return Described(value, problems)

    def key(self) -> str:
        """A digest of everything that decides the results of one replication
        (:meth:`identity`): the name of the folder of the setting's parts, and what tells two
        saved settings apart."""
        return identity.digest(self.identity().value)[:16]

    def check_resumable(self) -> None:
        """An :class:`~mlcb.validation.InputError` when the setting's identity cannot be
        established (an expert holds an object that cannot be described), so that a run which
        keeps parts would risk reusing another setting's; the line says how to give it."""
        problems = self.identity().problems
        if problems:
            raise validation.InputError(
                f"{self.label}: cannot resume from saved parts: {problems[0]}, so this setting cannot be "
                "told from another; give the expert's class a get_params() method that returns what decides "
                "its numbers as plain values (numbers, strings, lists, dicts, arrays), or run without parts"
            )


def _beyond_64_bits(value: Any, where: str, depth: int = 0) -> tuple[str, int] | None:
    """The first whole number in ``value`` (plain data: dicts, lists, tuples) beyond
    :data:`LARGEST_WHOLE` in size, with where it is; ``None`` when there is none."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (where, value) if abs(value) > LARGEST_WHOLE else None
    if depth > 8:
        return None
    items: Any = ()
    if isinstance(value, dict):
        items = ((f"{where}.{key}", item) for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{where}[{index}]", item) for index, item in enumerate(value))
    for place, item in items:
        found = _beyond_64_bits(item, place, depth + 1)
        if found is not None:
            return found
    return None


def _own_values(expert: Any) -> Any:
    """An expert's parameters as its saved description holds them (:func:`expert_to_dict`),
    without describing nested objects (:func:`_own_items`; ``{}`` where reading them fails, as
    the description never fails)."""
    try:
        return _own_items(expert) or {}
    except Exception:
        return {}


def _check_whole_numbers(config: SimulationConfig) -> None:
    """An :class:`~mlcb.validation.InputError` naming a whole number of the setting (its seed, a
    parameter of its environment, its policy or an expert) beyond 64 bits: the run went through,
    and its saved result could not be read back (TOML and Python both hold such numbers)."""
    seen: set[int] = set()
    places: list[tuple[str, Any]] = [
        ("seed", config.seed),
        ("env_params", config.env_params),
        ("policy_params", config.policy_params),
    ]
    for index, expert in enumerate(config.experts):
        if id(expert) not in seen:  # a pool repeats a few experts
            seen.add(id(expert))
            places.append((f"experts[{index}]", _own_values(expert)))
    for where, value in places:
        check_within_64_bits(where, value)


def check_within_64_bits(name: str, value: Any) -> None:
    """An :class:`~mlcb.validation.InputError` naming the first whole number in ``value`` (plain
    data) beyond 64 bits, which no saved result holds (``name``, or its place inside ``value``:
    ``policy_params.bonus_scale``)."""
    found = _beyond_64_bits(value, name)
    if found is not None:
        raise InputError(
            f"{found[0]} must be a whole number within 64 bits (at most 2**63 - 1 = "
            f"{LARGEST_WHOLE:_}: a saved result holds no larger one), got {found[1]}"
        )


def _check_delta_prime(delta: float, n_experts: int) -> None:
    """An :class:`~mlcb.validation.InputError` when ``delta' = delta / (2K)``, the level at which
    the experts' rates are read, is no normal float64: a ``delta`` of ``5e-324`` made it 0, and a
    rate divided by it stopped the run with a ``ZeroDivisionError``. A tiny ``delta'`` that is
    normal is taken (the rates may then be infinite, which the certificate reports)."""
    if delta / (2.0 * n_experts) < sys.float_info.min:
        lowest = 2.0 * n_experts * sys.float_info.min
        raise InputError(
            f"delta must be a number in (0, 1) whose delta / 2K is a normal float64 (the experts' rates "
            f"are read there): at least {lowest:.3g} for K = {n_experts:,} experts, got {delta!r}"
        )


class _DefaultLabel(str):
    """A label :class:`SimulationConfig` made itself (``"{policy} M={budget}"``): a copy of the
    setting makes it again for its own policy and budget."""

    __slots__ = ()


def check_field_names(fields: dict[str, Any], caller: str, own: str = "") -> None:
    """An :class:`~mlcb.validation.InputTypeError` naming every key of ``fields`` that is not a
    :class:`SimulationConfig` field, with the ones ``caller`` takes (``own`` lists its own
    parameters before the fields): :func:`mlcb.registry.check_parameters` on the setting."""
    from mlcb.registry import check_parameters

    check_parameters(SimulationConfig, fields, caller, f"it takes {own}the fields of SimulationConfig: ")


def _fields_named(init: Any) -> Any:
    """``init`` (the dataclass's ``__init__``), refusing a keyword that is no field in one line that
    lists the fields (:func:`mlcb.registry.check_parameters`; Python's own error names the keyword
    alone)."""

    names = frozenset(f.name for f in dataclasses.fields(SimulationConfig))

    @functools.wraps(init)
    def checked(self: SimulationConfig, *args: Any, **fields: Any) -> None:
        if not names.issuperset(fields):  # (the names alone: a config is built at every replace)
            from mlcb.registry import check_parameters

            check_parameters(SimulationConfig, fields, "SimulationConfig", "its fields: ")
        init(self, *args, **fields)

    return checked


SimulationConfig.__init__ = _fields_named(SimulationConfig.__init__)  # type: ignore[method-assign]
