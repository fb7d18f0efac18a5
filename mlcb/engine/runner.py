"""One entry point for a setting's replications, which :func:`mlcb.simulate` and the sweep
workers both call: build the problem, choose the round loop, make the checkpoint grid, run the
replications (loading those already kept as parts) and time it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from mlcb.engine import python_loop, replications
from mlcb.engine.problem import Problem, choose_engine
from mlcb.storage.replications import Replication

if TYPE_CHECKING:  # the experiment layer: only its type is named here
    from mlcb.config import SimulationConfig


class Run(NamedTuple):
    """What :func:`run` did: the problem it built, the round loop it chose (``"compiled"`` or
    ``"python"``), the checkpoint grid, the replications (sorted as asked) and the seconds it took."""

    problem: Problem
    engine: str
    checkpoints: np.ndarray
    replications: list[Replication]
    seconds: float


def run(
    config: SimulationConfig,
    *,
    wanted: Iterable[int] | None = None,
    engine: str = "auto",
    threads: int | None = None,
    parts: Path | None = None,
    on_done: Callable[[Replication], None] | None = None,
    on_rounds: Callable[[int, int], None] | None = None,
) -> Run:
    """Run the replications ``wanted`` (default: all of ``config.replications``) of ``config``.

    Parameters
    ----------
    config : SimulationConfig
        The setting, validated.
    wanted : iterable of int, optional
        Replication indices (each keyed by ``(config.seed, index)`` alone).
    engine : {"auto", "compiled", "python"}
        The round loop (:func:`mlcb.engine.problem.choose_engine`).
    threads : int, optional
        Worker threads of the compiled loop (default: all cores).
    parts : Path, optional
        The setting's parts directory: replications kept there are loaded, new ones kept there.
    on_done : callable, optional
        Called with each replication as it is kept or loaded.
    on_rounds : callable, optional
        Called as ``on_rounds(replication, rounds)`` with the rounds played, as they are.

    Examples
    --------
    >>> from mlcb import presets
    >>> done = run(presets.get("trap").config(2, horizon=500, replications=2))
    >>> done.engine, [r.index for r in done.replications], int(done.checkpoints[-1])
    ('compiled', [0, 1], 500)
    """
    problem = Problem.from_config(config)
    chosen = choose_engine(problem, engine)
    grid = replications.checkpoint_grid(config.horizon, config.checkpoints)
    indices = range(config.replications) if wanted is None else wanted
    started = time.perf_counter()
    if chosen == "compiled":
        done = replications.run_replications(
            problem,
            config.seed,
            indices,
            config.horizon,
            grid,
            threads=threads,
            parts=parts,
            on_done=on_done,
            on_rounds=on_rounds,
        )
    else:
        done = python_loop.run_replications(
            problem,
            config.seed,
            indices,
            config.horizon,
            grid,
            parts=parts,
            on_done=on_done,
            on_rounds=on_rounds,
        )
    return Run(problem, chosen, grid, done, time.perf_counter() - started)
