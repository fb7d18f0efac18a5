"""Several policies on one instance: the same seeds, the same xi_t, one tidy Result.

Every setting of a comparison uses the simulation's one seed, so replication ``r`` of every
policy faces the same instance and the same stream ``xi_1, xi_2, ...`` (common random numbers,
:mod:`mlcb.seeding`): differences between policies are not sampling noise of the environment.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mlcb.presets import Entry
from mlcb.results import Result


def _entries(items: Iterable[Any]) -> list[Entry]:
    entries = []
    for item in items:
        if isinstance(item, Entry):
            entries.append(item)
        elif isinstance(item, str):
            raise ValueError(f"entries: give budgets for policy {item!r}, e.g. Entry({item!r}, (1, 2))")
        else:
            entries.append(Entry(*item))
    if not entries:
        raise ValueError("entries must name at least one policy with its budgets")
    return entries


def comparison_configs(
    preset: str,
    entries: Iterable[Any] | None = None,
    calibration: str | None = None,
    policies: Iterable[str] | None = None,
    **fields: Any,
) -> list:
    """The validated settings of a comparison (all built before anything runs)."""
    from mlcb import presets

    chosen = presets.get(preset)
    entries = _entries(entries) if entries is not None else list(chosen.comparison)
    if not entries:
        raise ValueError(f"preset {preset!r} defines no comparison; pass entries")
    if policies is not None:
        wanted = list(policies)
        unknown = sorted(set(wanted) - {e.policy for e in entries})
        if unknown:
            raise ValueError(f"policies: {unknown} not in the comparison ({[e.policy for e in entries]})")
        entries = [e for e in entries if e.policy in wanted]
    budgets = fields.pop("budget", None)
    configs = []
    for entry in entries:
        for budget in entry.budgets if budgets is None else [b for b in budgets if b in entry.budgets]:
            extra = {"smoothing": entry.smoothing} if entry.smoothing and "smoothing" not in fields else {}
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
        raise ValueError("budget: none of the requested budgets is in the comparison")
    return configs


def compare(
    preset: str,
    entries: Iterable[Any] | None = None,
    *,
    calibration: str | None = None,
    policies: Iterable[str] | None = None,
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
        The policies and budgets; the preset's comparison by default.
    calibration : str, optional
        The preset's calibration (M-LCB's constants and the experts' rates).
    policies : iterable of str, optional
        Keep only these policies of the comparison.
    **fields
        :class:`~mlcb.config.SimulationConfig` fields for every setting (``horizon``,
        ``replications``, ``seed``, ...); ``budget`` (a list) keeps only those budgets.

    Examples
    --------
    >>> import mlcb
    >>> result = mlcb.compare("trap", [("mlcb", (1,)), ("round-robin", (1,))], horizon=2_000,
    ...                       replications=2)
    >>> result.settings
    ['mlcb M=1', 'round-robin M=1']
    """
    from mlcb.simulation import simulate

    configs = comparison_configs(preset, entries, calibration, policies, **fields)
    results = []
    for config in configs:
        started = time.perf_counter()
        result = simulate(config, threads=threads, progress=progress, parts=parts)
        result.metadata["settings"][config.label]["seconds"] = time.perf_counter() - started
        results.append(result)
    return Result.concat(results)
