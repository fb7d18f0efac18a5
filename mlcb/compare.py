"""Several policies on one instance: the same seeds, the same xi_t, one tidy Result.

Every setting of a comparison uses the simulation's one seed, so replication ``r`` of every
policy faces the same instance and the same stream ``xi_1, xi_2, ...`` (common random numbers,
:mod:`mlcb.kernels.seeding`): differences between policies are not sampling noise of the environment.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mlcb import validation
from mlcb.config import SimulationConfig
from mlcb.presets import Entry
from mlcb.storage.results import Result
from mlcb.validation import InputError

#: The SimulationConfig fields a comparison takes for every setting (``budget``: a filter).
FIELDS = frozenset(f.name for f in dataclasses.fields(SimulationConfig)) - {"policy", "calibration"}


def _entries(items: Iterable[Any]) -> list[Entry]:
    if isinstance(items, (str, Entry)) or not isinstance(items, Iterable):
        raise InputError(
            "entries must be a list of Entry or (policy, budgets[, policy_params[, smoothing]]), "
            f"got {items!r}"
        )
    entries = []
    for item in items:
        if isinstance(item, str):
            raise InputError(f"entries: give budgets for policy {item!r}, e.g. Entry({item!r}, (1, 2))")
        if not isinstance(item, Entry):
            if not isinstance(item, (list, tuple)) or not 2 <= len(item) <= 4:
                raise InputError(
                    f"entries: each must be an Entry or (policy, budgets[, policy_params[, smoothing]]), "
                    f"got {item!r}"
                )
            item = Entry(*item)
        if not isinstance(item.policy, str):
            raise InputError(f"entries: a policy must be a name (str), got {item.policy!r}")
        budgets = tuple(validation.budgets(f"entries: budgets of {item.policy!r}", item.budgets))
        if not isinstance(item.policy_params, dict):
            raise InputError(
                f"entries: policy_params of {item.policy!r} must be a dict, got {item.policy_params!r}"
            )
        if item.smoothing is not None and not isinstance(item.smoothing, str):
            raise InputError(
                f"entries: smoothing of {item.policy!r} must be None or a name, got {item.smoothing!r}"
            )
        entries.append(Entry(item.policy, budgets, item.policy_params, item.smoothing))
    if not entries:
        raise InputError("entries must name at least one policy with its budgets")
    return entries


def _policies(policies: Any) -> list[str]:
    """``policies`` as a non-empty list of names (one name is a list of one)."""
    wanted = [policies] if isinstance(policies, str) else policies
    if not isinstance(wanted, Iterable) or isinstance(wanted, dict):
        raise InputError(f"policies must be a policy name or a non-empty list of them, got {policies!r}")
    wanted = list(wanted)
    if not wanted or not all(isinstance(name, str) for name in wanted):
        raise InputError(f"policies must be a policy name or a non-empty list of them, got {policies!r}")
    return wanted


def _chosen(entries: list[Entry], wanted: list[str], offered: tuple[int, ...]) -> list[Entry]:
    """The entries of the policies ``wanted``: those of the comparison in its order, then any other
    registered policy (one of one's own, registered by a plugin) at every budget the comparison
    runs, on the same seeds; an unknown name is refused, saying how to register more."""
    from mlcb import policies as registered

    by_policy = {e.policy: e for e in entries}
    unknown = [name for name in wanted if name not in by_policy and name not in registered.registry]
    if unknown:
        raise InputError(
            f"policies: {unknown} not in the comparison ({list(by_policy)}) nor registered policies "
            f"({', '.join(registered.names())}); a module of one's own registers more: --plugin MODULE"
        )
    repeated = sorted({name for name in wanted if wanted.count(name) > 1})
    if repeated:
        raise InputError(f"policies: {repeated} named twice")
    added = [Entry(name, offered) for name in wanted if name not in by_policy]
    return [e for e in entries if e.policy in wanted] + added


def preset_smoothing(preset: Any, policy: str) -> str | None:
    """The smoothing wrapper ``preset`` (a :class:`~mlcb.presets.Preset`) gives ``policy``
    (:meth:`~mlcb.presets.Preset.smoothing_for`: :meth:`~mlcb.presets.Preset.config` gives the
    same one, so a policy deploys alike however it is given).

    Examples
    --------
    >>> from mlcb import presets
    >>> preset_smoothing(presets.get("trap"), "limited-advice"), preset_smoothing(presets.get("trap"), "mlcb")
    ('last', 'counts')
    """
    return preset.smoothing_for(policy)


def comparison_configs(preset: str, entries: Iterable[Any] | None = None, **options: Any) -> list:
    """The settings of a comparison: ``preset``, ``entries`` and the keyword ``options``
    (``calibration``, ``policies``, ``entry_set`` and :class:`~mlcb.config.SimulationConfig`
    fields) as :func:`compare` takes them. A ``label`` prefixes every setting's name.

    Examples
    --------
    >>> [c.label for c in comparison_configs("trap", policies=["mlcb"], budget=[1, 2])]
    ['mlcb M=1', 'mlcb M=2']
    >>> [c.label for c in comparison_configs("trap", policies=["mlcb"], budget=[1], label="wide")]
    ['wide: mlcb M=1']
    """
    from mlcb import presets

    calibration = options.pop("calibration", None)
    policies = options.pop("policies", None)
    entry_set = options.pop("entry_set", None)
    fields = options

    if not isinstance(preset, str):
        raise InputError(f"preset must be a preset name (str), got {preset!r}")
    chosen = presets.get(preset)
    if entry_set is not None:
        if entries is not None:
            raise InputError("entry_set and entries are exclusive: name a set or give the entries")
        if entry_set not in chosen.entry_sets:
            sets = ", ".join(sorted(chosen.entry_sets)) or "none"
            raise InputError(
                f"entry_set must be one of preset {preset!r}'s comparison sets ({sets}), got {entry_set!r}"
            )
        entries = chosen.entry_sets[entry_set]
    unknown = sorted(set(fields) - FIELDS)
    if unknown:
        raise InputError(
            f"unknown field(s) {', '.join(unknown)}; a comparison takes {', '.join(sorted(FIELDS))} "
            "(policies and budgets come from entries, policies= and entry_set=, the command line's --set)"
        )
    entries = _entries(entries) if entries is not None else list(chosen.comparison)
    if not entries:
        raise InputError(f"preset {preset!r} defines no comparison; pass entries")
    offered = sorted({b for e in entries for b in e.budgets})
    if policies is not None:
        entries = _chosen(entries, _policies(policies), tuple(offered))
    budgets = fields.pop("budget", None)
    if budgets is not None:
        budgets = validation.budgets("budget", budgets)
        missing = [b for b in budgets if b not in offered]
        if missing:
            raise InputError(
                f"budget: {', '.join(map(str, missing))} not among the comparison's budgets "
                f"({', '.join(map(str, offered))})"
            )
    if not isinstance(fields.get("policy_params", {}), dict):
        raise InputError(f"policy_params must be a dict, got {fields['policy_params']!r}")
    prefix = fields.pop("label", None)
    if prefix is not None:
        prefix = validation.label("label", prefix)
    configs = []
    for entry in entries:
        wrapper = entry.smoothing or preset_smoothing(chosen, entry.policy)
        for budget in entry.budgets if budgets is None else [b for b in budgets if b in entry.budgets]:
            extra = {"smoothing": wrapper} if wrapper and "smoothing" not in fields else {}
            if prefix is not None:
                extra["label"] = f"{prefix}: {entry.policy} M={budget}"
            configs.append(
                chosen.config(
                    budget,
                    calibration,
                    policy=entry.policy,
                    policy_params={**entry.policy_params, **fields.get("policy_params", {})},
                    **extra,
                    **{k: v for k, v in fields.items() if k != "policy_params"},
                )
            )
    if not configs:
        raise InputError("budget: none of the requested budgets is in the comparison")
    _refuse_repeated(configs)
    return configs


def _refuse_repeated(configs: list) -> None:
    """An ``InputError`` when two settings of a comparison share a label (one policy at one budget
    in two entries): a result holds each setting once, and the refusal, which came only when the
    runs were joined, now comes before the first one starts."""
    seen: set[str] = set()
    for config in configs:
        if config.label in seen:
            raise InputError(
                f"entries: policy {config.policy!r} at budget {config.budget} is named twice (setting "
                f"{str(config.label)!r}); give each policy and budget once, or run the variants as two "
                "comparisons with distinct label= and join them with mlcb.Result.concat"
            )
        seen.add(config.label)


def compare(
    preset: str,
    entries: Iterable[Any] | None = None,
    *,
    calibration: str | None = None,
    policies: Iterable[str] | None = None,
    entry_set: str | None = None,
    threads: int | None = None,
    progress: bool = False,
    parts: str | Path | None = None,
    **fields: Any,
) -> Result:
    """Run several policies on one preset with common random numbers; returns one Result.

    Parameters
    ----------
    preset : str
        A preset name (:mod:`mlcb.presets`).
    entries : iterable of Entry or (policy, budgets[, policy_params[, smoothing]]), optional
        The policies and budgets; the preset's comparison by default. An entry without a
        smoothing wrapper gets the one the preset gives that policy (:func:`preset_smoothing`:
        LimitedAdvice deploys its last iterate on the trap, as in the paper's comparison), else
        its experts' family default: a policy deploys alike however it is given.
    calibration : str, optional
        The preset's calibration (M-LCB's constants and the experts' rates).
    policies : iterable of str, optional
        Keep only these policies of the comparison; a registered policy that the
        comparison does not hold (one of one's own, registered by a plugin) joins it at every
        budget the comparison runs, on the same seeds (common random numbers).
    entry_set : str, optional
        A further comparison the preset names instead of the paper's (``"practitioners"``:
        M-LCB against the policies practitioners run, at equal training budget).
    **fields
        :class:`~mlcb.config.SimulationConfig` fields for every setting (``horizon``,
        ``replications``, ``seed``, ``experts``, ...); ``budget`` (an int or a list of distinct
        ints, each among the comparison's budgets) keeps only those budgets; ``label`` prefixes
        every setting's name (``"my pool: mlcb M=1"``), so that comparisons of two pools fit in
        one result.

    Examples
    --------
    >>> import mlcb
    >>> result = mlcb.compare("trap", [("mlcb", (1,)), ("round-robin", (1,))], horizon=2_000,
    ...                       replications=2)
    >>> result.settings
    ['mlcb M=1', 'round-robin M=1']
    """
    from mlcb.engine.problem import build
    from mlcb.simulation import _check_threads, run_problem

    _check_threads(threads)
    validation.flag("progress", progress)
    if parts is not None:
        validation.path("parts", parts)
    options = {"calibration": calibration, "policies": policies, "entry_set": entry_set}
    problems = [build(config) for config in comparison_configs(preset, entries, **options, **fields)]
    results = []
    for problem in problems:  # every setting built and checked before the first runs
        started = time.perf_counter()
        result = run_problem(problem, threads=threads, progress=progress, parts=parts)
        result.metadata["settings"][problem.label]["seconds"] = time.perf_counter() - started
        results.append(result)
    return Result.concat(results)
