"""Engine speed on the paper's trap instance (K = 10, M = 2): compiled engine vs pure-Python twin.

Prints rounds per second of one replication on one core for the compiled engine (after
compilation, best of several repeats) and for the pure-Python twin of ``mlcb/testing/twins/core.py``, measured
in the same process, and their ratio. The issue's targets: >= 3 million rounds/s and >= 15x.

    python benchmarks/bench_engine.py [--horizon T] [--twin-rounds N] [--repeats R]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mlcb import engine, presets  # noqa: E402
from mlcb.config import checkpoint_grid  # noqa: E402
from mlcb.testing.twins import core as twin  # noqa: E402


def engine_rate(config, horizon: int, repeats: int) -> float:
    problem = engine.build(config)
    grid = checkpoint_grid(horizon, 100)
    engine.run_replication(problem, config.seed, 0, min(horizon, 1_000), grid[grid <= 1_000])  # compile
    engine.run_replication(problem, config.seed, 0, horizon, grid)  # tables for this horizon
    best = np.inf
    for replication in range(repeats):
        started = time.perf_counter()
        engine.run_replication(problem, config.seed, replication, horizon, grid)
        best = min(best, time.perf_counter() - started)
    return horizon / best


def twin_rate(config, rounds: int) -> float:
    started = time.perf_counter()
    twin.run(config, 0, rounds)
    return rounds / (time.perf_counter() - started)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=2_000_000)
    parser.add_argument("--twin-rounds", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    config = presets.get("trap").config(2, horizon=args.horizon, replications=1)
    fast = engine_rate(config, args.horizon, args.repeats)
    slow = twin_rate(config.replace(horizon=args.twin_rounds), args.twin_rounds)
    print("benchmark              rounds/s")
    print(f"engine (1 core)     {fast:>12,.0f}")
    print(f"pure-Python twin    {slow:>12,.0f}")
    print(f"ratio engine/twin   {fast / slow:>12,.1f}x")


if __name__ == "__main__":
    main()
