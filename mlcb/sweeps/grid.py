"""A sweep's grid: the settings it runs, validated before any task, and its tasks.

A *grid* starts from a preset and lists values: lists under ``[grid]`` expand into their product,
or ``[[settings]]`` tables name the settings one by one (each may name itself with ``label``).
Every setting is described as a :class:`mlcb.config.SimulationConfig` and built once by
:func:`make_grid` (:func:`mlcb.engine.problem.build`: so validated, every check before any task);
an invalid combination, such as a budget above the number of experts, is a ``ValueError`` naming
it. Each setting's replications are cut into :class:`Task` blocks of ``block`` consecutive
replications.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlcb import validation
from mlcb.engine.problem import build
from mlcb.engine.sizes import check_size, frame_bytes
from mlcb.validation import InputError, read_toml

#: Setting fields a grid may set or vary (``env_params.NAME`` and ``policy_params.NAME`` too).
FIELDS = (
    "policy",
    "budget",
    "n_experts",
    "horizon",
    "delta",
    "calibration",
    "smoothing",
    "seed",
    "checkpoints",
    "env_params",
    "policy_params",
)
#: Short names of varied fields in setting labels.
_SHORT = {"budget": "M", "n_experts": "K", "horizon": "T"}


@dataclass(frozen=True)
class Setting:
    """One setting of a grid: its values (plain data) and its validated configuration, which
    carries its label."""

    values: dict
    config: Any

    @property
    def label(self) -> str:
        return str(self.config.label)

    @functools.cached_property
    def key(self) -> str:
        """The setting's key, digested once: a sweep names it in every task and part (a million
        replications in blocks of one digested it a million times while planning)."""
        return self.config.key()


@dataclass(frozen=True)
class Grid:
    """A validated grid: every setting built, labels and keys distinct."""

    name: str
    preset: str
    replications: int
    block: int
    settings: tuple[Setting, ...]
    description: dict = field(default_factory=dict)

    @functools.cached_property
    def _by_key(self) -> dict[str, Setting]:
        return {s.key: s for s in self.settings}

    def setting(self, key: str) -> Setting:
        """The setting whose key is ``key`` (looked up in a table made once: a sweep asks for
        every task's, and a scan per task grew with settings times tasks)."""
        return self._by_key[key]

    def tasks(self) -> list[Task]:
        """Every task of the grid, ``block`` replications each (a fresh sweep's plan)."""
        return [
            Task(s.label, s.key, a, b)
            for s in self.settings
            for a, b in blocks(range(self.replications), self.block)
        ]


@dataclass(frozen=True)
class Task:
    """Replications ``first .. stop - 1`` of the setting ``label`` (key ``key``)."""

    label: str
    key: str
    first: int
    stop: int

    @property
    def name(self) -> str:
        return f"block-{self.first:06d}-{self.stop:06d}"

    def describe(self) -> str:
        return f"{self.label}, replications {self.first}-{self.stop - 1}"


def blocks(replications: Iterable[int], size: int) -> list[tuple[int, int]]:
    """Runs of consecutive replications cut into blocks of at most ``size``."""
    out: list[tuple[int, int]] = []
    values = sorted(replications)
    for _, run in itertools.groupby(enumerate(values), key=lambda pair: pair[1] - pair[0]):
        members = [r for _, r in run]
        for start in range(0, len(members), size):
            chunk = members[start : start + size]
            out.append((chunk[0], chunk[-1] + 1))
    return out


def _as_list(key: str, value: Any) -> list:
    if isinstance(value, list):
        if not value:
            raise InputError(f"grid.{key}: an empty list gives no settings; give one or more values")
        return value
    return [value]


def _check_field(key: str, where: str, value: Any = None) -> None:
    """A ``ValueError`` for a key that is no setting field, or a list given to a field of one
    value outside ``[grid]`` (``where`` names the place)."""
    if key in FIELDS or re.fullmatch(r"(env_params|policy_params)\.[A-Za-z_]\w*", key):
        if isinstance(value, list) and key in FIELDS and key not in ("env_params", "policy_params"):
            raise InputError(
                f"{where}: {key} = {value!r} gives several values to one setting; list the values "
                f"under [grid] to run a setting for each (e.g. [grid] {key} = {json.dumps(value)})"
            )
        return
    allowed = ", ".join(FIELDS) + ", env_params.NAME, policy_params.NAME"
    raise InputError(f"{where}: unknown key {key!r}; allowed: {allowed}")


def _describe_values(values: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in values.items()) or "the shared setting"


def _table(group: str, value: Any) -> dict:
    """A copy of the parameters ``group`` (``env_params`` or ``policy_params``) of a setting: a
    table, or an ``InputError`` naming the group and what it got (was Python's own "'int' object
    is not iterable")."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(
            f"{group} must be a table of parameters ({group} = {{NAME = value}}, or "
            f'"{group}.NAME" = value), got {validation.shown(value)}'
        )
    return dict(value)


def _once(key: str, twice: bool, other: str) -> None:
    """An ``InputError`` when the parameter ``key`` of a setting is also given ``other``: one of
    the two would be dropped without a word."""
    if twice:
        raise InputError(f"{key} is given twice, as {key} and {other}; set it in one place")


def build_config(preset_name: str, values: dict, replications: int, label: str | None = None) -> Any:
    """The :class:`~mlcb.config.SimulationConfig` of the preset ``preset_name`` with the setting
    ``values`` (grid fields), ``replications`` and ``label``; raises ``ValueError`` on a bad
    combination."""
    from mlcb import presets

    preset = presets.get(preset_name)
    rest = dict(values)
    rest.pop("label", None)  # a setting's own name: given to the description as label
    budget = rest.pop("budget", None)
    calibration = rest.pop("calibration", None)
    tables = {group: _table(group, rest.pop(group, None)) for group in ("env_params", "policy_params")}
    for key in list(rest):
        group, dot, name = key.partition(".")
        if dot and group in tables:
            _once(key, name in tables[group], f"in the table {group}")
            tables[group][name] = rest.pop(key)
    env_params, policy_params = tables["env_params"], tables["policy_params"]
    if "n_experts" in rest:
        _once("n_experts", "n_experts" in env_params, "as env_params.n_experts")
        env_params["n_experts"] = rest.pop("n_experts")
    fields = {"env_params": env_params, "replications": replications, "label": label, **rest}
    if policy_params:
        fields["policy_params"] = policy_params
    return preset.config(budget, calibration, **fields)


def _value_of(key: str, values: dict, config: Any) -> Any:
    """The value of grid field ``key`` in the built setting (defaults filled in)."""
    if key == "n_experts":
        return config.n_experts
    if key.startswith(("env_params.", "policy_params.")):
        group, name = key.split(".", 1)
        return getattr(config, group).get(name, values.get(key))
    value = getattr(config, key, values.get(key))
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value


def _label(values: dict, varied: list[str], config: Any) -> str:
    """A setting's label: the one its ``[[settings]]`` table gives, else its policy, budget and
    the values the grid varies (``mlcb M=2 K=10 env_params.n_arms=4``).

    A grid that varies many fields would make a label longer than a label may be
    (:data:`~mlcb.validation.MAX_LABEL` characters; it was refused as if the researcher had
    written it). Such a label names the parameters without their table (``n_arms=4``) and, if
    that is still too long, is cut and ends with the start of the setting's key, which tells it
    from the others. Labels that fit are as they always were (saved parts carry them)."""
    if "label" in values:
        return validation.label("label", values["label"])
    head = [str(config.policy), f"M={config.budget}"]
    shown = [(key, _value_of(key, values, config)) for key in varied if key not in ("policy", "budget")]
    label = " ".join(head + [f"{_SHORT.get(key, key)}={value}" for key, value in shown])
    if len(label) <= validation.MAX_LABEL:
        return label
    label = " ".join(head + [f"{_SHORT.get(key, key.split('.')[-1])}={value}" for key, value in shown])
    if len(label) <= validation.MAX_LABEL:
        return label
    tail = f"... {config.key()[:8]}"
    return label[: validation.MAX_LABEL - len(tail)].rstrip() + tail


#: The most settings a grid may hold (validating one takes about a millisecond).
MAX_SETTINGS = 100_000
#: Grids of at least this many settings show their validation's progress when asked.
PROGRESS_FROM = 1_000


def _live() -> bool:
    """Whether standard error shows a progress bar (a terminal); a log gets none."""
    from mlcb.engine.progress import interactive

    return interactive(sys.stderr)


def make_grid(data: dict, name: str | None = None, progress: bool = False) -> Grid:
    """Validate a grid given as a dict (the TOML file's contents) and build every setting.

    Keys: ``preset`` (required), ``name``, ``replications``, ``block`` (replications per task),
    any of :data:`FIELDS` as the base setting, and either ``[grid]`` (each list expands into the
    product) or ``[[settings]]`` (explicit settings, each over the base). Every problem is an
    ``InputError`` naming the key or the setting at fault, raised before any work: a grid of more
    than :data:`MAX_SETTINGS` settings before any is built, and one whose results would not fit in
    this machine's memory when read back, with the estimate. With ``progress``, a grid of
    :data:`PROGRESS_FROM` settings or more shows a progress bar while it is validated.

    Examples
    --------
    >>> grid = make_grid({"preset": "trap", "horizon": 1_000, "replications": 4,
    ...                   "grid": {"budget": [1, 2], "n_experts": [4, 6]}})
    >>> [s.label for s in grid.settings]
    ['mlcb M=1 K=4', 'mlcb M=1 K=6', 'mlcb M=2 K=4', 'mlcb M=2 K=6']
    """
    if not isinstance(data, dict):
        raise InputError(f"grid: expected a table of keys, got {type(data).__name__}")
    description = json.loads(json.dumps(data, default=str))
    data = dict(data)
    if "preset" not in data:
        setting = sorted(set(data) & {"env", "env_params", "experts"})
        raise InputError(
            'preset: a grid needs a preset to start from (see `mlcb list`), e.g. preset = "trap"'
            + (
                f"; with {', '.join(setting)} this is a setting file of its own environment and "
                "pool: run it with 'mlcb run FILE' (one run per budget)"
                if setting
                else ""
            )
        )
    preset = data.pop("preset")
    from mlcb import presets

    if not isinstance(preset, str):
        raise InputError(f"preset must be a preset name, got {preset!r}")
    base_preset = presets.get(preset)
    grid_name = validation.plain_name("name", data.pop("name", name or f"{preset}-sweep"))
    replications = validation.integer(
        "replications", data.pop("replications", base_preset.replications), maximum=10**6
    )
    block = validation.integer("block", data.pop("block", 1), maximum=10**6)
    table = data.pop("grid", None)
    explicit = data.pop("settings", None)
    for key, value in data.items():
        _check_field(key, "grid file", value)
    base = data
    if table is not None and explicit is not None:
        raise InputError("grid and settings: give [grid] (a product) or [[settings]] (a list), not both")
    if table is not None:
        if not isinstance(table, dict) or not table:
            raise InputError(f"grid must be a table of lists, e.g. budget = [1, 2, 4], got {table!r}")
        for key in table:
            _check_field(key, "grid")
            if key in base:
                raise InputError(f"grid.{key}: also set outside [grid]; set it in one place")
        keys = list(table)
        lists = [_as_list(k, table[k]) for k in keys]
        _check_count(
            math.prod(len(values) for values in lists), [f"{k}: {len(v):,}" for k, v in zip(keys, lists)]
        )
        combos = [dict(zip(keys, combo)) for combo in itertools.product(*lists)]
        varied = [k for k, values in zip(keys, lists) if len(values) > 1]
    elif explicit is not None:
        if not isinstance(explicit, list) or not explicit or not all(isinstance(s, dict) for s in explicit):
            raise InputError("settings must be one or more [[settings]] tables of setting fields")
        for index, entry in enumerate(explicit):
            for key, value in entry.items():
                if key != "label":  # a setting's own name
                    _check_field(key, f"settings[{index}]", value)
        _check_count(len(explicit), ["[[settings]] tables"])
        combos = [dict(entry) for entry in explicit]
        keys = sorted({k for entry in combos for k in entry} - {"label"})
        varied = [k for k in keys if len({json.dumps(c.get(k), sort_keys=True) for c in combos}) > 1]
    else:
        combos, varied = [{}], []
    settings: list[Setting] = []
    labels: dict[str, str] = {}
    keys_seen: dict[str, str] = {}
    written: dict[str, str] = {}
    needed = 0
    bar = None
    if progress and len(combos) >= PROGRESS_FROM and not _live():  # a log: one line, no bar
        print(f"validating {grid_name}: {len(combos):,} settings", file=sys.stderr, flush=True)
    elif progress and len(combos) >= PROGRESS_FROM:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(combos), desc=f"validating {grid_name}", unit="setting", leave=False)
    try:
        for combo in combos:
            values = {**base, **combo}
            try:
                config = build_config(preset, values, replications)
                config = config.replace(label=_label(values, varied, config))
                build(config)  # every check that needs the setting built, before any task
            except (ValueError, TypeError) as error:
                message = str(error).splitlines()[0] if str(error) else type(error).__name__
                where = f"grid setting {_describe_values(combo)}" if combo else "grid: the shared setting"
                if (
                    message.startswith("policy_params:")
                    and "has no parameter" in message
                    and "policy" in varied
                    and table is not None
                ):
                    message += (
                        " (a parameter that one policy of the grid takes goes in [[settings]] tables, "
                        "one per setting, instead of [grid])"
                    )
                raise InputError(f"{where} is invalid: {message}") from None
            needed += frame_bytes(config)
            settings.append(_setting(values, config, combo, labels, keys_seen, written))
            if bar is not None:
                bar.update()
    finally:
        if bar is not None:
            bar.close()
    check_size(
        f"grid {grid_name}",
        needed,
        f"{len(settings):,} settings of {replications:,} replications, read back together at the end",
        "grid",
    )
    return Grid(grid_name, preset, replications, block, tuple(settings), description)


def _check_count(count: int, parts: list[str]) -> None:
    """An ``InputError`` with the count for a grid of more than :data:`MAX_SETTINGS` settings."""
    if count > MAX_SETTINGS:
        raise InputError(
            f"grid: {count:,} settings ({' x '.join(parts)}), more than {MAX_SETTINGS:,}; split it into "
            "several sweeps"
        )


def whole_numbers(value: Any) -> Any:
    """``value`` (plain JSON data) with every float that holds a whole number written as an int:
    what two ways of writing one number (``2`` and ``2.0``) have in common.

    A setting's key digests its values as written, so ``n_arms = 2`` and ``n_arms = 2.0`` are
    two keys; the keys are kept as they are (a sweep saved under them resumes), and this form
    only tells such settings apart from settings that differ in their numbers.

    Examples
    --------
    >>> whole_numbers({"n_arms": 2.0, "noise": [0.5, 1.0], "flag": True})
    {'n_arms': 2, 'noise': [0.5, 1], 'flag': True}
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: whole_numbers(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [whole_numbers(item) for item in value]
    return value


def _setting(values: dict, config: Any, combo: dict, labels: dict, keys_seen: dict, written: dict) -> Setting:
    """The :class:`Setting` of one combination, its label and key checked against the others',
    and its values against the others' written another way (``2`` and ``2.0``: two keys for one
    setting, its replications run and saved twice)."""
    label = str(config.label)
    if label in labels:
        raise InputError(
            f"grid: settings {labels[label]} and {_describe_values(combo)} share the label {label!r}"
        )
    key = config.key()
    if key in keys_seen:
        raise InputError(
            f"grid: settings {keys_seen[key]} and {_describe_values(combo)} are the same setting"
        )
    same = json.dumps(whole_numbers(config.identity().value), sort_keys=True)
    if same in written:
        raise InputError(
            f"grid: settings {written[same]} and {_describe_values(combo)} are the same setting with a "
            "number written two ways (such as 2 and 2.0), which would run it twice under two keys; "
            "write each value one way"
        )
    labels[label] = keys_seen[key] = written[same] = _describe_values(combo)
    return Setting(json.loads(json.dumps(values)), config)


def load_grid(path: str | Path, progress: bool = False) -> Grid:
    """Read and validate a grid TOML file (:func:`make_grid`); the file's stem is the default name."""
    path, data = read_toml("grid", path)
    from mlcb.config.toml import data_paths_from

    return make_grid(data_paths_from(path, data), name=path.stem, progress=progress)
