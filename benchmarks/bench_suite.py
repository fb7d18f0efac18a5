"""The engine's speed and memory suite (issue: near the hardware limit, cost not growing with K).

One run prints, in a stable format (``--json`` for machines), rounds per second and ratios for:

1. trap, K = 10, M = 2: compiled engine (one thread) against the pure-Python twin;
2. K in {10, 100, 1000, 10000} at M = 2 (trap-like pools), and the ratio of K = 1000 to K = 10;
3. M in {1, 2, 4, 8, 16} at K = 100;
4. one thread against all cores (replications in parallel);
5. peak memory (resident set) of a T = 10,000,000, 16-replication run, against the same child
   process that only imports mlcb.

Compilation and table building happen before every timed region; each figure is the best of
``--repeats`` runs. Sizes are parameters.

    python benchmarks/bench_suite.py [--horizon T] [--repeats R] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mlcb  # noqa: E402
from mlcb import engine, presets  # noqa: E402
from mlcb.config import checkpoint_grid  # noqa: E402

FORMAT_VERSION = 1


def trap_config(n_experts: int, budget: int, horizon: int, replications: int = 1):
    """The trap preset with ``n_experts`` experts (half epsilon-greedy, half UCB1)."""
    return presets.get("trap").config(
        budget, horizon=horizon, replications=replications, env_params={"n_experts": n_experts}
    )


def engine_rate(config, repeats: int) -> float:
    """Best single-thread rounds/s of one replication, after compiling and building tables."""
    problem = engine.build(config)
    grid = checkpoint_grid(config.horizon, 100)
    engine.run_replication(problem, config.seed, 0, config.horizon, grid)
    best = np.inf
    for replication in range(repeats):
        started = time.perf_counter()
        engine.run_replication(problem, config.seed, replication, config.horizon, grid)
        best = min(best, time.perf_counter() - started)
    return config.horizon / best


def twin_rate(config, rounds: int) -> float:
    from mlcb.testing.twins import core as twin

    started = time.perf_counter()
    twin.run(config.replace(horizon=rounds), 0, rounds)
    return rounds / (time.perf_counter() - started)


def threads_rates(config, threads: int, repeats: int) -> tuple[float, float]:
    """Best rounds/s of all replications with one thread and with ``threads`` threads.

    The runs alternate (1, N, 1, N, ...) so that both see the same machine: on a shared virtual
    machine the speed of identical work drifts by tens of percent between seconds.
    """
    mlcb.simulate(config.replace(replications=2), threads=threads)
    best = {1: np.inf, threads: np.inf}
    for _ in range(repeats):
        for count in (1, threads):
            started = time.perf_counter()
            mlcb.simulate(config, threads=count)
            best[count] = min(best[count], time.perf_counter() - started)
    work = config.horizon * config.replications
    return work / best[1], work / best[threads]


_MEMORY_CHILD = """
import sys
import mlcb
if sys.argv[1] == "run":
    mlcb.simulate(preset="trap", budget=2, horizon=int(sys.argv[2]), replications=int(sys.argv[3]),
                  checkpoints=100)
# VmHWM: the peak resident set of this address space (getrusage's ru_maxrss survives exec on Linux,
# so a child would report its parent's peak).
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def peak_memory_mb(horizon: int, replications: int) -> tuple[float, float]:
    """Peak resident memory (MB) of a child that runs the simulation, and of one that only
    imports mlcb (the baseline measured in the same run)."""

    def child(*args: str) -> float:
        out = subprocess.run(
            [sys.executable, "-c", _MEMORY_CHILD, *args], capture_output=True, text=True, check=True, cwd=ROOT
        )
        return int(out.stdout.split()[-1]) / 1024.0  # VmHWM is in kB

    return child("run", str(horizon), str(replications)), child("idle", "0", "0")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=1_000_000, help="rounds of the speed cases")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--memory-horizon", type=int, default=10_000_000)
    parser.add_argument("--memory-replications", type=int, default=16)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.horizon, args.repeats, args.memory_horizon, args.memory_replications = 50_000, 1, 200_000, 2
    horizon, repeats = args.horizon, args.repeats
    rows: list[tuple[str, str, float, str]] = []  # (group, case, value, unit)

    base = trap_config(10, 2, horizon)
    fast = engine_rate(base, repeats)
    slow = twin_rate(base, min(20_000, horizon))
    rows += [
        ("engine", "trap K=10 M=2 engine, 1 thread", fast, "rounds/s"),
        ("engine", "trap K=10 M=2 pure-Python twin", slow, "rounds/s"),
        ("engine", "engine / twin", fast / slow, "x"),
    ]

    by_k = {k: engine_rate(trap_config(k, 2, horizon), repeats) for k in (10, 100, 1_000, 10_000)}
    rows += [("experts", f"K={k} M=2", rate, "rounds/s") for k, rate in by_k.items()]
    rows.append(("experts", "K=1000 / K=10", by_k[1_000] / by_k[10], "x"))

    by_m = {m: engine_rate(trap_config(100, m, horizon), repeats) for m in (1, 2, 4, 8, 16)}
    rows += [("budget", f"K=100 M={m}", rate, "rounds/s") for m, rate in by_m.items()]

    cores = os.cpu_count() or 1
    parallel = trap_config(10, 2, horizon, replications=4 * cores)
    one, many = threads_rates(parallel, cores, max(repeats, 5))
    rows += [
        ("threads", "1 thread", one, "rounds/s"),
        ("threads", f"{cores} threads", many, "rounds/s"),
        ("threads", f"{cores} threads / 1 thread", many / one, "x"),
    ]

    peak, idle = peak_memory_mb(args.memory_horizon, args.memory_replications)
    rows += [
        ("memory", f"T={args.memory_horizon:,} R={args.memory_replications} peak RSS", peak, "MB"),
        ("memory", "import mlcb only (baseline)", idle, "MB"),
        ("memory", "run / baseline", peak / idle, "x"),
    ]

    print(
        f"mlcb benchmark suite, format {FORMAT_VERSION}: mlcb {mlcb.__version__}, "
        f"{platform.python_implementation()} {platform.python_version()}, {cores} cores, "
        f"speed cases T={horizon:,}, best of {repeats}"
    )
    group = None
    for name, case, value, unit in rows:
        if name != group:
            print(f"[{name}]")
            group = name
        number = f"{value:,.2f}" if unit == "x" else f"{value:,.0f}"
        print(f"  {case:<36} {number:>14} {unit}")
    figures = {
        "format": FORMAT_VERSION,
        "cores": cores,
        "horizon": horizon,
        "rows": [{"group": g, "case": c, "value": v, "unit": u} for g, c, v, u in rows],
    }
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return figures


if __name__ == "__main__":
    main()
