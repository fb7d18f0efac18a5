"""``simulate``: run one setting's replications on the compiled or the Python engine; a Result."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import numpy as np

from mlcb import validation
from mlcb.config import SimulationConfig, check_field_names
from mlcb.engine.collect import collect_result
from mlcb.engine.problem import ENGINES, Problem, build, choose_engine
from mlcb.engine.progress import Progress
from mlcb.engine.runner import run
from mlcb.storage.replications import claim_parts
from mlcb.storage.results import Result
from mlcb.validation import InputError, InputTypeError

__all__ = ["simulate"]


def parts_record(config: SimulationConfig, engine: str) -> dict[str, str]:
    """What made a setting's parts (:func:`mlcb.storage.replications.claim_parts`): its label, the
    digest of its identity (:meth:`SimulationConfig.identity`), mlcb's version and the engine.
    A config whose identity cannot be established is refused (an ``InputError``)."""
    from mlcb._version import __version__
    from mlcb.storage.identity import digest

    config.check_resumable()
    return {
        "setting": str(config.label),
        "digest": digest(config.identity().value),
        "mlcb": __version__,
        "engine": engine,
    }


def _check_threads(threads: Any) -> int | None:
    if threads is None:
        return None
    number = validation.whole_number(threads)
    if number is None or number < 1:
        raise InputError(f"threads must be None or an integer >= 1, got {threads!r}")
    return number


def _check_one_budget(budget: Any) -> None:
    """A ``ValueError`` for a list of budgets: ``simulate`` runs one setting."""
    if isinstance(budget, (list, tuple, range, set, frozenset, np.ndarray)):
        raise InputError(
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
        Show the progress on standard error (:mod:`mlcb.engine.progress`): a bar over the rounds
        in a terminal, plain lines in a log; either says when the round loop is being compiled.
    parts : path, optional
        Directory where every finished replication is saved at once; a later call with the same
        setting and directory loads them instead of running them again (resume after an
        interruption or a failing expert). The setting's parts are kept in a folder named by its
        key (:meth:`SimulationConfig.key`) and reused only when made by the same setting, mlcb
        version and engine; a setting whose identity cannot be established (an expert holding an
        object mlcb cannot describe) is refused here, with a line saying how to give it.
    engine : {"auto", "compiled", "python"}
        The round loop. ``"compiled"`` runs everything in compiled code, replications in
        parallel threads; ``"python"`` runs any pool, Python experts included, with the
        replications in lockstep (:mod:`mlcb.engine.python_loop`). ``"auto"`` (default) takes the
        compiled engine whenever the experts' family is compiled. For the same seed both give
        the same results.
    **fields
        :class:`SimulationConfig` fields (``budget``, ``horizon``, ``replications``, ``seed``,
        ``delta``, ``policy``, ``policy_params``, ``experts``, ``label``, ...), and
        ``calibration`` with a preset.

    Examples
    --------
    >>> import mlcb
    >>> result = mlcb.simulate(preset="trap", budget=2, horizon=5_000, replications=4, seed=1)
    >>> int(result.final()["round"].iloc[0])
    5000

    A ``label`` names the setting, so that two pools at the same budget fit in one result:

    >>> import agents
    >>> pools = {"UCB1": [agents.make("ucb1")] * 10, "KL-UCB": [agents.make("kl-ucb")] * 10}
    >>> both = mlcb.Result.concat([
    ...     mlcb.simulate(preset="trap", experts=pool, label=name, horizon=500, replications=2)
    ...     for name, pool in pools.items()
    ... ])
    >>> both.settings
    ['UCB1', 'KL-UCB']
    """
    threads = _check_threads(threads)
    validation.flag("progress", progress)
    if engine not in ENGINES:
        raise InputError(f"engine must be one of {ENGINES}, got {engine!r}")
    if config is not None and preset is not None:
        raise InputTypeError(
            "simulate takes config or preset, not both: config=SimulationConfig(...) or "
            "preset=NAME with keyword fields"
        )
    if isinstance(config, str):  # simulate("trap", ...): a preset's name in config's place
        raise InputTypeError(
            f"config must be a SimulationConfig, got the str {config!r}; a preset is named by "
            f"keyword: simulate(preset={config!r}, ...)"
        )
    if config is not None and not isinstance(config, SimulationConfig):
        raise InputTypeError(f"config must be a SimulationConfig, got {type(config).__name__}")
    if preset is not None and not isinstance(preset, str):
        raise InputTypeError(f"preset must be a preset name (str), got {preset!r}")
    if parts is not None and not isinstance(parts, (str, os.PathLike)):
        raise InputTypeError(f"parts must be None or a directory path, got {parts!r}")
    if parts is not None:
        validation.path("parts", parts)
    check_field_names(fields, "simulate", "config, preset, threads, progress, parts, engine and ")
    _check_one_budget(fields.get("budget"))
    if preset is not None:
        from mlcb import presets

        config = presets.get(preset).config(**fields)
    elif config is None:
        config = SimulationConfig(**fields)
    elif fields:
        config = config.replace(**fields)
    return run_problem(build(config), engine=engine, threads=threads, parts=parts, progress=progress)


def run_problem(
    problem: Problem,
    *,
    engine: str = "auto",
    threads: int | None = None,
    parts: str | Path | None = None,
    progress: bool = False,
) -> Result:
    """Run a built setting's replications (:func:`mlcb.engine.problem.build`) and collect them
    into a Result: what :func:`simulate` does once the setting is built. With ``parts`` (a
    directory), the setting's parts are kept in its folder there, claimed first."""
    folder = None
    if parts is not None:
        folder = Path(parts) / problem.config.key()
        claim_parts(folder, parts_record(problem.config, choose_engine(problem, engine)))
    config = problem.config
    shown = Progress(problem.label, config.replications, config.horizon) if progress else None
    with shown or contextlib.nullcontext():
        done = run(
            problem,
            engine=engine,
            threads=threads,
            parts=folder,
            on_done=shown.done if shown else None,
            on_rounds=shown.rounds if shown else None,
        )
    return collect_result(problem, done.replications, {"seconds": done.seconds, "engine": done.engine})
