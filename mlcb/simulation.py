"""``simulate``: run one setting's replications on the compiled or the Python engine; a Result."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mlcb import validation
from mlcb.config import SimulationConfig
from mlcb.contracts import family_of
from mlcb.engine import python_loop
from mlcb.engine.collect import collect_result
from mlcb.engine.replications import checkpoint_grid
from mlcb.engine.replications import run_replications as run_compiled
from mlcb.storage.results import Result

ENGINES = ("auto", "compiled", "python")


@dataclass(frozen=True)
class Problem:
    """The built objects of one setting, as the engines read them."""

    env: Any
    experts: tuple
    policy: Any
    budget: int
    delta: float
    smoothing: str
    family: Any

    @classmethod
    def from_config(cls, config: SimulationConfig) -> Problem:
        return cls(
            config.make_env(),
            config.experts,
            config.make_policy(),
            config.budget,
            config.delta,
            str(config.smoothing),  # set to the family's default when the config was made
            family_of(list(config.experts)),
        )

    @property
    def compiled(self) -> bool:
        """Whether the expert family has a compiled pool (then the compiled engine can run it)."""
        return callable(getattr(self.family, "build_pool", None))


def choose_engine(problem: Problem, name: str) -> str:
    """``"compiled"`` or ``"python"``: the engine ``name`` (``"auto"``: compiled whenever every
    part is compiled), or a ``ValueError`` when the compiled engine cannot run the problem."""
    if name not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {name!r}")
    if name == "auto":
        return "compiled" if problem.compiled else "python"
    if name == "compiled" and not problem.compiled:
        raise ValueError(
            f"engine='compiled' needs experts of a compiled family; the {problem.family.name!r} family "
            "runs on engine='python' (or 'auto')"
        )
    return name


def _check_threads(threads: Any) -> int | None:
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be None or an integer >= 1, got {threads!r}")
    return threads


def _check_one_budget(budget: Any) -> None:
    """A ``ValueError`` for a list of budgets: ``simulate`` runs one setting."""
    if isinstance(budget, (list, tuple, range, set, frozenset, np.ndarray)):
        raise ValueError(
            f"budget: simulate runs one setting and takes one integer budget, got {budget!r}; for "
            "several budgets use mlcb.compare(preset, budget=[...]), mlcb.sweep (a grid) or the "
            "command line's --budget M1 M2 ..."
        )


def simulate(
    config: SimulationConfig | None = None,
    *,
    preset: str | None = None,
    threads: int | None = None,
    progress: bool = False,
    parts: str | Path | None = None,
    engine: str = "auto",
    **fields: Any,
) -> Result:
    """Simulate one setting: ``replications`` runs of ``horizon`` rounds; returns a Result.

    Parameters
    ----------
    config : SimulationConfig, optional
        The setting (never together with ``preset``). Without it, ``preset`` (with
        ``calibration`` and ``budget``) or the keyword ``fields`` of :class:`SimulationConfig`
        describe it.
    preset : str, optional
        A preset name (:mod:`mlcb.presets`); other keywords override its fields.
    threads : int, optional
        Worker threads of the compiled engine (default: all cores). Results do not depend on it.
    progress : bool
        Show a progress bar over replications.
    parts : path, optional
        Directory where every finished replication is saved at once; a later call with the same
        setting and directory loads them instead of running them again (resume after an
        interruption or a failing expert).
    engine : {"auto", "compiled", "python"}
        The round loop. ``"compiled"`` runs everything in compiled code, replications in
        parallel threads; ``"python"`` runs any pool, Python experts included, with the
        replications in lockstep (:mod:`mlcb.engine.python_loop`). ``"auto"`` (default) takes the
        compiled engine whenever the experts' family is compiled. For the same seed both give
        the same results.
    **fields
        :class:`SimulationConfig` fields (``budget``, ``horizon``, ``replications``, ``seed``,
        ``delta``, ``policy``, ``policy_params``, ``experts``, ...), and ``calibration`` with a
        preset.

    Examples
    --------
    >>> import mlcb
    >>> result = mlcb.simulate(preset="trap", budget=2, horizon=5_000, replications=4, seed=1)
    >>> int(result.final()["round"].iloc[0])
    5000
    """
    threads = _check_threads(threads)
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if config is not None and preset is not None:
        raise TypeError(
            "simulate takes config or preset, not both: config=SimulationConfig(...) or "
            "preset=NAME with keyword fields"
        )
    if config is not None and not isinstance(config, SimulationConfig):
        raise TypeError(f"config must be a SimulationConfig, got {type(config).__name__}")
    if preset is not None and not isinstance(preset, str):
        raise TypeError(f"preset must be a preset name (str), got {preset!r}")
    if parts is not None and not isinstance(parts, (str, os.PathLike)):
        raise TypeError(f"parts must be None or a directory path, got {parts!r}")
    if parts is not None:
        validation.path("parts", parts)
    _check_one_budget(fields.get("budget"))
    if preset is not None:
        from mlcb import presets

        config = presets.get(preset).config(**fields)
    elif config is None:
        config = SimulationConfig(**fields)
    elif fields:
        config = config.replace(**fields)
    problem = Problem.from_config(config)
    chosen = choose_engine(problem, engine)
    grid = checkpoint_grid(config.horizon, config.checkpoints)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=config.replications, desc=config.label, unit="rep", leave=False)
    started = time.perf_counter()
    try:
        common: dict[str, Any] = {
            "parts": None if parts is None else Path(parts) / config.key(),
            "on_done": (lambda _: bar.update()) if bar else None,
        }
        if chosen == "compiled":
            replications = run_compiled(
                problem,
                config.seed,
                range(config.replications),
                config.horizon,
                grid,
                threads=threads,
                **common,
            )
        else:
            replications = python_loop.run_replications(
                problem, config.seed, range(config.replications), config.horizon, grid, **common
            )
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - started
    return collect_result(config, replications, grid, {"seconds": elapsed, "engine": chosen})
