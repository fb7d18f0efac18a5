"""TOML setting files: what ``mlcb run setting.toml`` runs, read into
:class:`~mlcb.config.SimulationConfig` descriptions (:func:`load_toml`).

Every key is checked before any work; names resolve only to what is registered (built in, or by a
plugin module loaded first), and nothing named in a file is imported.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, NamedTuple

from mlcb import validation
from mlcb.config import SimulationConfig

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
    ``delta``, ``smoothing``, ``checkpoints``, ``calibration``, ``label``), ``name`` (default: the file's
    stem) and one or more ``[[experts]]`` tables: ``family`` (a registered expert name, see
    ``mlcb list``, or the ``"module:Class"`` entry point of one), ``count`` (how many such
    experts, default 1) and the family's parameters. ``budget`` may be a list: one setting each
    (a ``label`` then names each with its budget: ``"{label} M={budget}"``). A relative
    ``env_params.dataset`` path is read from the file's folder, wherever the command runs
    (:func:`data_paths_from`); one given in ``fields`` from the working directory.
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
    data = data_paths_from(path, data)
    allowed = {f.name for f in dataclasses.fields(SimulationConfig)} | set(FILE_KEYS)
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise validation.InputError(
            f"{path.name}: unknown key(s) {', '.join(map(repr, unknown))}; "
            f"allowed keys: {', '.join(sorted(allowed))}{_grid_hint(unknown)}"
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
    label = settings.pop("label", None)
    return SettingFile(
        name,
        [
            SimulationConfig(
                experts=experts, budget=m, label=budget_label(label, m, len(budgets)), **settings
            )
            for m in budgets
        ],
    )


def data_paths_from(file: Path, data: dict) -> dict:
    """``data``, the table of the setting or grid file ``file``, with every relative ``dataset``
    path of its environment parameters read from the file's folder (and ``~`` expanded), so that
    a file means the same data wherever the command runs: an ``env_params`` table's ``dataset``,
    a grid's ``env_params.dataset`` (a value or a list of them), in the file's base, its
    ``[grid]`` and each of its ``[[settings]]``. Bundled data set names (``"ctg"``), absolute
    paths and bare names that are no file here nor beside the file are left as they are; a bare
    name of a file or folder (``"mydata"``) is read beside the file.

    Examples
    --------
    >>> data_paths_from(Path("/studies/a/setting.toml"), {"env_params": {"dataset": "mine.csv"}})
    {'env_params': {'dataset': '/studies/a/mine.csv'}}
    >>> data_paths_from(Path("/studies/a/grid.toml"), {"grid": {"env_params.dataset": ["ctg", "../b.csv"]}})
    {'grid': {'env_params.dataset': ['ctg', '/studies/a/../b.csv']}}
    """
    folder = Path(os.path.abspath(file)).parent

    def resolved(value: Any) -> Any:
        if isinstance(value, list):
            return [resolved(item) for item in value]
        if not isinstance(value, str) or not value:
            return value
        from envs.real_data import DATASETS
        from envs.tabular import is_path

        if value in DATASETS:
            return value
        # A bare name (no separator, no suffix) is a path where one of that name exists, as the
        # environment reads it: beside the file, whatever the working directory holds.
        bare = not is_path(value) and not value.startswith("~")
        if bare and not (os.path.exists(folder / value) or os.path.exists(value)):
            return value  # no bundled name, no file: the environment names the choices
        return str(folder / Path(value).expanduser())

    def walk(table: dict) -> dict:
        out = {}
        for key, value in table.items():
            if key == "env_params" and isinstance(value, dict) and "dataset" in value:
                value = {**value, "dataset": resolved(value["dataset"])}
            elif key == "env_params.dataset":
                value = resolved(value)
            elif isinstance(value, dict):
                value = walk(value)
            elif isinstance(value, list) and all(isinstance(item, dict) for item in value):
                value = [walk(item) for item in value]
            out[key] = value
        return out

    return walk(data)


#: Keys of a sweep's grid file (:mod:`mlcb.sweeps.grid`) that a setting file does not have.
GRID_KEYS = ("preset", "grid", "settings", "block")


def _grid_hint(unknown: list[str]) -> str:
    """Where a setting file holds a sweep grid's keys, the door those keys belong to."""
    if not set(unknown) & set(GRID_KEYS):
        return ""
    return (
        ". A setting file names its environment and pool itself (env, env_params, [[experts]]); "
        "to start from a preset, run 'mlcb run PRESET' with options (--budget, --horizon, ...), "
        "or write a sweep grid (preset = ..., [grid]) and run 'mlcb sweep FILE'"
    )


def budget_label(label: Any, budget: int, count: int) -> Any:
    """The label of the setting at ``budget`` among ``count`` budgets named ``label``: the label
    itself for one budget, ``"{label} M={budget}"`` for several (so that they stay distinct);
    ``None`` (the default label) stays ``None``. The label given is checked first
    (:func:`mlcb.validation.label`), so that an empty or blank one is refused with several budgets
    as with one (it made the labels ``" M=1"``, ``" M=2"``).

    >>> budget_label("ridge pool", 2, 3), budget_label("ridge pool", 2, 1), budget_label(None, 2, 3)
    ('ridge pool M=2', 'ridge pool', None)
    >>> budget_label("", 2, 3)
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: label must be 1 to 120 printable characters ..., got ''
    """
    if label is None:
        return None
    label = validation.label("label", label)
    return label if count == 1 else f"{label} M={budget}"


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
