"""The Python engine's price, measured in one run against baselines of the same run.

Prints, on the trap instance (K = 10, M = 2, R = 8 replications, one core):

1. the compiled engine's rounds/s (the fast path; it must not regress);
2. the Python engine on the same built-in compiled families (each round one compiled call for
   the policy and two for the pool): rounds/s and the ratio to (1), the price of generality;
3. the Python engine's own cost per replication-round with a trivial Python expert: the whole
   run's time, minus the time the same experts' ``learn`` / ``deploy`` calls (with the
   environment's ``round_data``) take in a bare Python loop that makes exactly the calls the
   run made. The target: at most 5 microseconds of engine overhead per replication-round.

Compilation happens before every timed region; each figure is the best of ``--repeats`` runs.

    python benchmarks/bench_python_engine.py [--horizon T] [--replications R] [--repeats N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mlcb  # noqa: E402
from mlcb import engine, presets  # noqa: E402
from mlcb.config import checkpoint_grid  # noqa: E402
from mlcb.engine import (
    python_loop,
)

TARGET_OVERHEAD_US = 5.0


class Trivial:
    """The cheapest honest Python expert: plays arm 0, counts its steps."""

    heuristic = True

    def __init__(self) -> None:
        self.steps = 0

    def learn(self, data) -> float:
        self.steps += 1
        return data.loss(0)

    def deploy(self, data):
        return data.loss(0), data.mean(0)


def best_of(repeats: int, run) -> float:
    best = np.inf
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def compiled_rate(config, repeats: int) -> float:
    problem = engine.build(config)
    grid = checkpoint_grid(config.horizon, 100)
    engine.run_replication(problem, config.seed, 0, config.horizon, grid)
    seconds = best_of(
        repeats,
        lambda: [
            engine.run_replication(problem, config.seed, r, config.horizon, grid)
            for r in range(config.replications)
        ],
    )
    return config.horizon * config.replications / seconds


def python_run(config, repeats: int) -> tuple[float, list]:
    problem = engine.build(config)
    grid = checkpoint_grid(config.horizon, 100)
    python_loop.run_replications(problem, config.seed, [0], 50, grid[grid <= 50])  # compile
    out: list = []

    def run() -> None:
        out[:] = python_loop.run_replications(
            problem, config.seed, range(config.replications), config.horizon, grid, block=config.replications
        )

    return best_of(repeats, run), out


def expert_work(config, results: list, repeats: int) -> float:
    """Seconds that the experts' calls of the run take alone: ``learn`` for every training and
    ``deploy`` for every deployment (counted from the run's results), each with ``round_data``."""
    env = engine.build(config).env
    params, state = env.build(config.seed, 0, 100)
    trained = int(sum(r.trained[-1].sum() for r in results))
    deployed = int(sum(r.deployed[-1].sum() for r in results))
    learner = Trivial()
    round_data = env.round_data

    def run() -> None:
        for t in range(trained):
            learner.learn(round_data(params, state, t, 0))
        for t in range(deployed):
            learner.deploy(round_data(params, state, t, 0))

    return best_of(repeats, run)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=20_000)
    parser.add_argument("--replications", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    trap = presets.get("trap").config(2, horizon=args.horizon, replications=args.replications, seed=1)
    rep_rounds = args.horizon * args.replications

    fast = compiled_rate(trap.replace(horizon=args.horizon * 10), args.repeats)
    seconds, _ = python_run(trap, args.repeats)
    general = rep_rounds / seconds

    trivial = mlcb.SimulationConfig(
        env="mlcb/Trap-v0",
        experts=(Trivial(),) * 10,
        budget=2,
        horizon=args.horizon,
        replications=args.replications,
        seed=1,
    )
    total, results = python_run(trivial, args.repeats)
    work = expert_work(trivial, results, args.repeats)
    overhead = (total - work) / rep_rounds * 1e6
    verdict = "met" if overhead <= TARGET_OVERHEAD_US else "NOT met"

    print(f"trap K=10 M=2, R={args.replications}, one core               rounds/s (replication-rounds)")
    print(f"compiled engine                                    {fast:>14,.0f}")
    print(f"Python engine, built-in compiled families          {general:>14,.0f}")
    print(f"  ratio compiled / Python engine                   {fast / general:>14,.1f}x")
    print(f"Python engine, trivial Python expert               {rep_rounds / total:>14,.0f}")
    print(f"  whole run per replication-round                  {total / rep_rounds * 1e6:>11.2f} us")
    print(f"  the experts' own calls alone                     {work / rep_rounds * 1e6:>11.2f} us")
    print(
        f"  engine overhead per replication-round            {overhead:>11.2f} us"
        f"   (target <= {TARGET_OVERHEAD_US:.0f} us: {verdict})"
    )


if __name__ == "__main__":
    main()
