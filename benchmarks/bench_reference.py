"""The engine against a single-purpose kernel of M-LCB on the trap (``reference_kernel.py``).

For each horizon T (default 10^6 and 10^7; ``--full`` adds 10^8) and budget M (default 1, 2,
4): one replication on one core (``threads=1``) of the ``trap`` preset's theory calibration, on
the compiled engine (:func:`mlcb.engine.run_replication`, checkpoints on the usual 100-point
grid) and on the reference kernel, alternately, best of ``--repeats`` each. Compilation and
every table (the engine's tables and their continuation, the reference's full-length tables) are
built before the timed regions. Each row prints both speeds in rounds per second (wall clock),
their ratio (engine / reference) in wall-clock time and in CPU time of the thread
(``time.thread_time``), which a machine shared with other work disturbs less, the latter against
the target 0.8, and whether the two gave the same regret, pseudo-regret and counts. The header
names the machine, the date and the versions.

    python benchmarks/bench_reference.py [--full | --quick | --horizons 1e6 1e7] [--budgets 1 2 4]
                                         [--repeats R] [--json FILE]

``--quick`` runs T = 10^5 and 10^6, two repeats. The reference's tables take 8 bytes per count
and table (4 GB at T = 10^8); the engine's are capped (docs/design.md, "Long horizons").
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import reference_kernel  # noqa: E402

from mlcb import engine, presets  # noqa: E402
from mlcb.config import checkpoint_grid  # noqa: E402

#: The speed the engine is to reach, as a multiple of the reference's, in thread CPU time.
TARGET = 0.8
SEED = 0


def _timed(run) -> tuple[float, float, object]:
    """``(wall seconds, thread CPU seconds, result)`` of ``run()``."""
    wall, cpu = time.perf_counter(), time.thread_time()
    out = run()
    return time.perf_counter() - wall, time.thread_time() - cpu, out


def _setting(horizon: int, budget: int) -> tuple:
    """The trap's theory calibration at ``(T, M)``: ``(config, the checkpoints, the first 1,000)``."""
    config = presets.get("trap").config(budget, horizon=horizon, replications=1, seed=SEED)
    grid = checkpoint_grid(horizon, 100)
    return config, grid, grid[grid <= 1_000]


def prepare_engine(horizon: int, budget: int) -> Callable[[], object]:
    """One replication of the engine at ``(T, M)``, its code compiled and its tables built: the
    call that runs it."""
    config, grid, small = _setting(horizon, budget)
    problem = engine.build(config)
    engine.run_replication(problem, SEED, 0, min(horizon, 1_000), small)
    engine.build_replication(problem, SEED, 0, horizon, grid)
    return lambda: engine.run_replication(problem, SEED, 0, horizon, grid)


def prepare_reference(horizon: int, budget: int) -> Callable[[], object]:
    """:func:`prepare_engine` for the reference kernel."""
    config, grid, small = _setting(horizon, budget)
    reference_kernel.run(SEED, 0, min(horizon, 1_000), budget, small, config.delta)
    reference_kernel.tables(horizon, config.delta)
    return lambda: reference_kernel.run(SEED, 0, horizon, budget, grid, config.delta)


def measure(horizon: int, budget: int, repeats: int) -> dict:
    """Best-of-``repeats`` speeds of the engine and of the reference at one ``(T, M)``."""
    # Compiled code and tables, outside the timed regions.
    run_engine, run_reference = prepare_engine(horizon, budget), prepare_reference(horizon, budget)
    best = {"engine": [np.inf, np.inf], "reference": [np.inf, np.inf]}
    same = True
    for _ in range(repeats):
        wall, cpu, ours = _timed(run_engine)
        best["engine"] = [min(best["engine"][0], wall), min(best["engine"][1], cpu)]
        wall, cpu, theirs = _timed(run_reference)
        best["reference"] = [min(best["reference"][0], wall), min(best["reference"][1], cpu)]
        same = same and all(
            np.array_equal(a, b)
            for a, b in zip((ours.regret, ours.pseudo_regret, ours.trained, ours.deployed), theirs)
        )
    return {
        "horizon": horizon,
        "budget": budget,
        "engine_rate": horizon / best["engine"][0],
        "reference_rate": horizon / best["reference"][0],
        "ratio": best["reference"][0] / best["engine"][0],
        "cpu_ratio": best["reference"][1] / best["engine"][1],
        "same": same,
    }


def machine() -> str:
    """The processor, its cores, the date and the versions that produced the figures."""
    import numba

    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{model}, {os.cpu_count()} cores, {platform.system()}; Python {platform.python_version()}, "
        f"NumPy {np.__version__}, Numba {numba.__version__}; {datetime.date.today().isoformat()}"
    )


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizons", type=float, nargs="+", default=[1e6, 1e7])
    parser.add_argument("--full", action="store_true", help="T = 10^6, 10^7 and 10^8")
    parser.add_argument("--budgets", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--repeats", type=int, default=3, help="best of R runs of each")
    parser.add_argument("--quick", action="store_true", help="T = 10^5 and 10^6, two repeats")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    horizons = [int(h) for h in args.horizons]
    if args.full:
        horizons = [1_000_000, 10_000_000, 100_000_000]
    if args.quick:
        horizons = [100_000, 1_000_000]
    repeats = 2 if args.quick else args.repeats
    if any(h < 1 for h in horizons) or any(not 1 <= m <= reference_kernel.K for m in args.budgets):
        parser.error(f"horizons must be >= 1 and budgets in [1, {reference_kernel.K}]")
    print(machine())
    print(f"trap, theory calibration, K = {reference_kernel.K}: one replication, one core, best of {repeats}")
    print(
        f"{'T':>13} {'M':>2} {'engine rounds/s':>16} {'reference rounds/s':>19} "
        f"{'wall ratio':>10} {'cpu ratio':>9} {'target':>6} {'met':>4} {'same':>5}"
    )
    rows = []
    for horizon in horizons:
        for budget in args.budgets:
            row = measure(horizon, budget, repeats)
            rows.append(row)
            print(
                f"{horizon:>13,} {budget:>2} {row['engine_rate']:>16,.0f} {row['reference_rate']:>19,.0f} "
                f"{row['ratio']:>9.2f}x {row['cpu_ratio']:>8.2f}x {TARGET:>5.1f}x "
                f"{'yes' if row['cpu_ratio'] >= TARGET else 'no':>4} {'yes' if row['same'] else 'NO':>5}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return rows


if __name__ == "__main__":
    main()
