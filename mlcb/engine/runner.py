"""One entry point for a setting's replications, which :func:`mlcb.simulate` and the sweep
workers both call: choose the round loop for a built problem (:func:`mlcb.engine.problem.build`),
run the replications on its checkpoint grid (loading those already kept as parts) and time it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

import numpy as np

from mlcb.engine import python_loop, replications
from mlcb.engine.problem import Problem, choose_engine
from mlcb.storage.replications import Replication


class Run(NamedTuple):
    """What :func:`run` did: the problem it ran, the round loop it chose (``"compiled"`` or
    ``"python"``), the checkpoint grid, the replications (sorted as asked) and the seconds it took."""

    problem: Problem
    engine: str
    checkpoints: np.ndarray
    replications: list[Replication]
    seconds: float


def run(
    problem: Problem,
    *,
    wanted: Iterable[int] | None = None,
    engine: str = "auto",
    threads: int | None = None,
    parts: Path | None = None,
    on_done: Callable[[Replication], None] | None = None,
    on_rounds: Callable[[int, int], None] | None = None,
) -> Run:
    """Run the replications ``wanted`` (default: all of the setting's) of ``problem``.

    Parameters
    ----------
    problem : Problem
        The setting, built (:func:`mlcb.engine.problem.build`).
    wanted : iterable of int, optional
        Replication indices (each keyed by ``(seed, index)`` alone).
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
    >>> from mlcb.engine.problem import build
    >>> done = run(build(presets.get("trap").config(2, horizon=500, replications=2)))
    >>> done.engine, [r.index for r in done.replications], int(done.checkpoints[-1])
    ('compiled', [0, 1], 500)
    """
    chosen = choose_engine(problem, engine)
    grid = problem.checkpoints
    indices = range(problem.config.replications) if wanted is None else wanted
    started = time.perf_counter()
    if chosen == "compiled":
        done = replications.run_replications(
            problem,
            problem.seed,
            indices,
            problem.horizon,
            grid,
            threads=threads,
            parts=parts,
            on_done=on_done,
            on_rounds=on_rounds,
        )
    else:
        done = python_loop.run_replications(
            problem,
            problem.seed,
            indices,
            problem.horizon,
            grid,
            parts=parts,
            on_done=on_done,
            on_rounds=on_rounds,
        )
    return Run(problem, chosen, grid, done, time.perf_counter() - started)
