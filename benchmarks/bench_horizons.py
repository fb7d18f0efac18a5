"""Speed at long horizons: trap K = 10, M = 2, one replication on one core, T = 10^6, 10^7, 10^8.

Each horizon runs in a child process of its own (so that its peak resident memory is its own),
after a short run that loads the compiled code; the tables of functions of a count and their
compressed continuation (mlcb.kernels.tables) are built outside the timed region, as a run builds them
once for all its replications, and that build is reported in its own column. Prints rounds/s,
the ratio to T = 10^6 measured in the same run (the target: no horizon below 0.9x), the peak
resident set of the child and the build's seconds. T = 10^6 is measured
before and after the long horizons (best of both), so that a machine whose load drifts during
the minutes of a 10^8-round run does not bias the ratios one way. A last row runs T = 10^6 on
the computed path (no tables) for reference.

    python benchmarks/bench_horizons.py [--horizons 1e6 1e7 1e8] [--repeats R] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = """
import json, resource, sys, time
import numpy as np
sys.path.insert(0, {root!r})
from mlcb.config import checkpoint_grid
from mlcb import engine, presets
from mlcb.kernels import tables
from mlcb.engine import Problem

horizon, repeats, budget = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
if budget >= 0:
    tables.TABLE_BUDGET_BYTES = tables.TAIL_BUDGET_BYTES = budget
config = presets.get("trap").config(2, horizon=horizon, replications=1)
problem = engine.build(config)
grid = checkpoint_grid(horizon, 100)
engine.run_replication(problem, 0, 0, 1_000, grid[grid <= 1_000])  # compiled code
started = time.perf_counter()
engine.build_replication(problem, 0, 0, horizon, grid)  # this horizon's tables (cached)
build = time.perf_counter() - started
best = float("inf")
for replication in range(repeats):
    started = time.perf_counter()
    engine.run_replication(problem, 0, replication, horizon, grid)
    best = min(best, time.perf_counter() - started)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"rate": horizon / best, "peak_mb": peak, "build_s": build}}))
"""


def measure(horizon: int, repeats: int, budget: int = -1) -> dict:
    """Rounds/s and peak RSS (MB) of ``horizon`` rounds in a fresh child process."""
    code = _CHILD.format(root=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", code, str(horizon), str(repeats), str(budget)],
        check=True,
        capture_output=True,
        text=True,
        env={"OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", **_environment()},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _environment() -> dict:
    import os

    return dict(os.environ)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizons", type=float, nargs="+", default=[1e6, 1e7, 1e8])
    parser.add_argument("--repeats", type=int, default=3, help="best of R at the first horizon")
    parser.add_argument("--json", help="also write the numbers to this file")
    args = parser.parse_args(argv)
    horizons = [int(h) for h in args.horizons]
    rows = {}
    for i, horizon in enumerate(horizons):
        rows[horizon] = measure(horizon, args.repeats if i == 0 else 1)
    again = measure(horizons[0], args.repeats)
    if again["rate"] > rows[horizons[0]]["rate"]:
        rows[horizons[0]] = again
    base = rows[horizons[0]]["rate"]
    computed = measure(horizons[0], 1, budget=0)
    print("trap K=10 M=2, one replication, one core")
    print(f"{'horizon':>12} {'rounds/s':>12} {'ratio':>7} {'peak MB':>9} {'build s':>8}")
    for horizon, row in rows.items():
        print(
            f"{horizon:>12,} {row['rate']:>12,.0f} {row['rate'] / base:>6.2f}x {row['peak_mb']:>9.0f}"
            f" {row['build_s']:>8.1f}"
        )
    print(
        f"{horizons[0]:>12,} {computed['rate']:>12,.0f} {computed['rate'] / base:>6.2f}x "
        f"{computed['peak_mb']:>9.0f} {computed['build_s']:>8.1f}  (computed path, no tables)"
    )
    report = {"horizons": {str(h): r for h, r in rows.items()}, "computed": computed}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
