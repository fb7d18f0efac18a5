"""What a simulation is: a frozen, validated description, recorded with its results; and the
TOML setting file that describes one (:func:`load_toml`).

Every check happens here, in Python, before any work starts: a bad budget, confidence,
horizon, policy name or expert list is an :class:`~mlcb.validation.InputError` (a ``ValueError``)
naming the parameter and what is allowed.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from mlcb import validation
from mlcb.kernels.seeding import check_seed
from mlcb.storage import identity
from mlcb.validation import InputError

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
        from mlcb.registry import make_named

        for name in ("env_params", "policy_params"):
            if not isinstance(getattr(self, name), dict):
                raise InputError(
                    f"{name} must be a dict (a TOML table) of keyword arguments, got {getattr(self, name)!r}"
                )
        if not isinstance(self.calibration, str):
            raise InputError(f"calibration must be a string (a label), got {self.calibration!r}")
        if not self.experts:
            raise InputError("experts must be a non-empty list of expert specifications")
        object.__setattr__(self, "experts", tuple(self.experts))
        for name, maximum in (
            ("horizon", MAX_HORIZON),
            ("replications", MAX_REPLICATIONS),
            ("checkpoints", MAX_CHECKPOINTS),
        ):
            object.__setattr__(self, name, validation.integer(name, getattr(self, name), maximum=maximum))
        # the size before any allocation (the budget not yet checked: the label as given)
        check_size(f"{self.policy} M={self.budget}", self.frame_bytes(), self._rows_text())
        check_environment_size(self.env, self.env_params)
        env = make_named("env_params", self.env_params, envs, self.env)  # unknown ids, bad parameters
        family = family_of(list(self.experts))
        n_experts = len(self.experts)
        object.__setattr__(self, "budget", validation.budget(self.budget, n_experts))
        object.__setattr__(self, "seed", check_seed(self.seed))
        object.__setattr__(self, "delta", validation.open_unit("delta", self.delta))
        make_named("policy_params", self.policy_params, policies, self.policy)  # the same
        smoothing = self.smoothing or family.smoothing[0]
        object.__setattr__(self, "smoothing", smoothing)
        env_bytes = held_bytes(env)
        if env_bytes:
            in_flight = min(self.replications, os.cpu_count() or 1)
            check_size(
                self.label,
                self.frame_bytes() + env_bytes * (1 + 2 * in_flight),
                f"the environment's arrays take {_bytes(env_bytes)}, and each of the {in_flight} "
                "replications run at once keeps the pool's state beside them",
            )
        family.check(list(self.experts), env)
        held = getattr(family, "held_bytes", None)  # a family that counts its own parameters
        if callable(held):
            needed, why = held(list(self.experts), env)
            check_size("experts", needed, why)
        allowed = tuple(family.smoothing)
        if smoothing not in allowed:
            raise InputError(
                f"smoothing must be one of {allowed} for {family.name} experts, got {smoothing!r}"
            )

    @property
    def n_experts(self) -> int:
        return len(self.experts)

    def points(self) -> int:
        """``C``, the points of the checkpoint grid (the horizon always one of them)."""
        from mlcb.engine.replications import checkpoint_grid

        return len(checkpoint_grid(self.horizon, self.checkpoints))

    def frame_bytes(self) -> int:
        """About how much memory the setting's recorded replications and their frames take at
        once when collected (:data:`ROW_BYTES` a row of each frame)."""
        runs, points, k = self.replications, self.points(), len(self.experts)
        per_run = points * (k * ROW_BYTES["experts"] + ROW_BYTES["curves"]) + ROW_BYTES["replications"]
        return runs * per_run

    def _rows_text(self) -> str:
        runs, points, k = self.replications, self.points(), len(self.experts)
        return (
            f"{runs:,} replications x {points:,} checkpoints x {k:,} experts = {runs * points * k:,} rows of "
            "the experts frame"
        )

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

    def identity(self) -> identity.Described:
        """Everything that decides the numbers of one replication, as plain JSON
        (:mod:`mlcb.storage.identity`): mlcb's version, the environment and the policy by name
        and by the object registered under it (module, qualified name, and a digest of its code
        when it is one's own), their parameters, every field but ``replications``, and each
        expert in full (its ``get_params()``, else every attribute, private ones included); with
        where the description is incomplete (:meth:`check_resumable`)."""
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
                if f.name not in ("env", "env_params", "policy", "policy_params", "experts", "replications")
            },
        }
        return identity.Described(value, problems)

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

    @property
    def label(self) -> str:
        """A short human name of the setting, e.g. ``"mlcb M=2"``."""
        return f"{self.policy} M={self.budget}"


# --- size before work ---------------------------------------------------------------------------
#: About how many bytes a row of each frame takes in memory while a result is collected: the
#: frame's columns (the setting's four, then its own) and the recorded arrays it comes from.
ROW_BYTES = {"experts": 88, "curves": 112, "replications": 96}


def check_field_names(fields: dict[str, Any], caller: str, own: str = "") -> None:
    """An :class:`~mlcb.validation.InputTypeError` naming every key of ``fields`` that is not a
    :class:`SimulationConfig` field, with the ones ``caller`` takes (``own`` lists its own
    parameters before the fields): :func:`mlcb.registry.check_parameters` on the setting."""
    from mlcb.registry import check_parameters

    check_parameters(SimulationConfig, fields, caller, f"it takes {own}the fields of SimulationConfig: ")


def machine_memory() -> int:
    """This machine's memory in bytes (the physical memory, or a smaller container limit)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not on POSIX
        return 2**62
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return int(total)


def _bytes(count: float) -> str:
    """A number of bytes in words: ``'1.5 GB'``."""
    for unit in ("bytes", "kB", "MB", "GB", "TB", "PB"):
        if count < 1000 or unit == "PB":
            return f"{count:,.0f} {unit}" if unit == "bytes" else f"{count:,.1f} {unit}"
        count /= 1000
    return f"{count:,.1f} PB"  # pragma: no cover


def check_size(label: str, needed: int, why: str, what: str = "setting") -> None:
    """An :class:`~mlcb.validation.InputError` with the estimate unless ``needed`` bytes fit in
    this machine's memory (:func:`machine_memory`); ``what`` the setting is (``"grid"``)."""
    memory = machine_memory()
    if needed > memory:
        raise InputError(
            f"{label}: this {what} needs about {_bytes(needed)} of memory ({why}), more than this "
            f"machine's {_bytes(memory)}; lower replications, checkpoints, experts or the environment's size"
        )


#: How many times an environment's numbers are held at once, its temporaries included.
COPIES = 8
#: Parameters of an environment that size its arrays (each holds one number per combination).
SIZE_PARAMETERS = ("n_experts", "n_arms", "n_features", "n_classes", "n_clusters", "dim")


def check_environment_size(env: str, params: dict[str, Any]) -> None:
    """Refuse, before the environment is built, parameters whose arrays cannot fit in memory: the
    product of its size parameters (:data:`SIZE_PARAMETERS`, given or default), each number 8
    bytes held :data:`COPIES` times (the temporaries that build it, the arrays, and the pool's
    state beside them)."""
    import inspect

    import envs

    try:
        target = envs.registry.entry(env).load()
        signature = inspect.signature(target)
    except (InputError, TypeError, ValueError, ImportError, AttributeError):
        return  # an unknown id is named when the environment is made
    cells = 1
    named = []
    for name in SIZE_PARAMETERS:
        given = params.get(name, signature.parameters[name].default if name in signature.parameters else None)
        if validation.is_real(given) and isinstance(given, int) and given > 1:
            cells *= int(given)
            named.append(f"{name} = {int(given):,}")
    own = getattr(target, "held_numbers", None)  # an environment that counts its own arrays
    if callable(own):
        merged = {
            name: params.get(name, parameter.default)
            for name, parameter in signature.parameters.items()
            if parameter.default is not inspect.Parameter.empty or name in params
        }
        counted = own(merged)
        if counted is None:  # parameters it cannot count: its constructor names them
            return
        sizes = [f"{k} = {v:,}" for k, v in merged.items() if type(v) is int and v > 1]
        cells, named = int(counted), [f"{int(counted):,} ({', '.join(sizes)})"]
    if len(named) and cells > 1:
        check_size(
            f"env_params of {env}",
            8 * COPIES * cells,
            f"{' x '.join(named)} numbers of 8 bytes, held about {COPIES} times while built and run",
        )


def held_bytes(obj: Any) -> int:
    """The bytes of the NumPy arrays an object holds as attributes (its own, one level down)."""
    total = 0
    for value in getattr(obj, "__dict__", {}).values():
        if isinstance(value, np.ndarray):
            total += value.nbytes
    return total


# --- setting files ------------------------------------------------------------------------------
#: Experts one ``[[experts]]`` table may stand for (``count``).
MAX_COUNT = 10**6
#: The keys of a TOML setting file besides the fields of :class:`SimulationConfig`.
FILE_KEYS = ("name",)


class SettingFile(NamedTuple):
    """What a TOML setting file describes: its ``name`` (the result's folder under ``--out``) and
    one :class:`SimulationConfig` per budget."""

    name: str
    configs: list[SimulationConfig]


def load_toml(path: str | Path, **fields: Any) -> SettingFile:
    """The settings a TOML setting file describes (one per budget), every key checked before any
    work; what ``mlcb run setting.toml`` runs.

    The file's keys are the fields of :class:`SimulationConfig` (``env``, ``env_params``,
    ``policy``, ``policy_params``, ``budget``, ``horizon``, ``replications``, ``seed``,
    ``delta``, ``smoothing``, ``checkpoints``, ``calibration``), ``name`` (default: the file's
    stem) and one or more ``[[experts]]`` tables: ``family`` (a registered expert name, see
    ``mlcb list``, or the ``"module:Class"`` entry point of one), ``count`` (how many such
    experts, default 1) and the family's parameters. ``budget`` may be a list: one setting each.
    Names resolve only to what is registered (built in, or by a plugin module loaded first, e.g.
    with ``--plugin``); nothing named in the file is imported. docs/command-line.md describes the
    format.

    Parameters
    ----------
    path : str or os.PathLike
        The TOML file.
    **fields
        Fields that override the file's (``budget`` may be a list; ``None`` values are ignored):
        the command line's ``--horizon``, ``--budget``, ...; ``env_params`` and ``policy_params``
        update the file's tables (the command line's ``--data`` and ``--label``).

    Returns
    -------
    SettingFile
        ``(name, configs)``.

    Raises
    ------
    mlcb.validation.InputError
        Naming the key (or the file) at fault and what is allowed.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "two-ucb.toml"
    >>> _ = path.write_text('''
    ... env = "mlcb/BanditExperts-v0"
    ... budget = [1, 2]
    ... horizon = 500
    ... env_params = { reward_means = [[0.5, 0.6], [0.5, 0.3]] }
    ... [[experts]]
    ... family = "ucb1"
    ... count = 2
    ... ''')
    >>> name, configs = load_toml(path, replications=2)
    >>> name, [c.budget for c in configs], configs[0].replications
    ('two-ucb', [1, 2], 2)
    """
    path, data = validation.read_toml("target", path)
    allowed = {f.name for f in dataclasses.fields(SimulationConfig)} | set(FILE_KEYS)
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise validation.InputError(
            f"{path.name}: unknown key(s) {', '.join(map(repr, unknown))}; "
            f"allowed keys: {', '.join(sorted(allowed))}"
        )
    experts = _toml_experts(data.pop("experts", None))
    budgets = validation.budgets("budget", data.pop("budget", 1))
    if "name" in data:
        name = validation.plain_name("name", data.pop("name"))
    else:
        name = validation.plain_name(f"name (from the file name {path.name!r}; set name = ...)", path.stem)
    overrides = {key: value for key, value in fields.items() if value is not None}
    if "budget" in overrides:
        budgets = validation.budgets("budget", overrides.pop("budget"))
    unknown = sorted(set(overrides) - allowed)
    if unknown:
        raise validation.InputTypeError(f"load_toml: unknown field(s) {', '.join(unknown)}")
    for table in ("env_params", "policy_params"):  # tables given here update the file's
        if (
            table in overrides
            and isinstance(overrides[table], dict)
            and isinstance(data.get(table, {}), dict)
        ):
            overrides[table] = {**data.get(table, {}), **overrides[table]}
    settings = {**data, **overrides}
    return SettingFile(name, [SimulationConfig(experts=experts, budget=m, **settings) for m in budgets])


def _toml_experts(tables: Any) -> tuple:
    """The pool of a setting file's ``[[experts]]`` tables."""
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise validation.InputError(
            "experts: the TOML file needs one or more [[experts]] tables, each with a family "
            f"(see `mlcb list`), got {tables!r}"
        )
    experts: list = []
    for index, table in enumerate(tables):
        params = dict(table)
        count = validation.integer(f"experts[{index}].count", params.pop("count", 1), maximum=MAX_COUNT)
        if "family" not in params:
            raise validation.InputError(
                f"experts[{index}]: each [[experts]] table needs a family (see `mlcb list`)"
            )
        expert = expert_from_file(params.pop("family"), params, f"experts[{index}].family")
        if len(experts) + count > MAX_COUNT:
            raise validation.InputError(
                f"experts: the [[experts]] tables add up to more than {MAX_COUNT:_} experts"
            )
        experts.extend([expert] * count)
    return tuple(experts)


def expert_from_file(family: Any, params: dict[str, Any], what: str) -> Any:
    """The expert a file names: ``family`` resolved among the registered experts only
    (:meth:`mlcb.registry.Registry.resolve`: a registered name with its defaults, or the
    ``"module:Class"`` entry point of one), built with ``params``. A bad parameter is an
    :class:`~mlcb.validation.InputError` naming ``what``'s table."""
    import agents
    from mlcb.registry import build

    entry, defaults = agents.registry.resolve(family, what)
    try:
        return build(entry.load(), {**(entry.defaults if defaults else {}), **params})
    except validation.InputError as error:
        table = what.removesuffix(".family")
        raise type(error)(f"{table}: {error}") from None
