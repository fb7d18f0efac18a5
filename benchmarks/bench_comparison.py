"""Time of the paper's full trap comparison (issue: baselines), with the time per policy.

Runs ``mlcb.compare("trap")`` at the preset's size: M-LCB and LimitedAdvice for M in {1, 2, 3, 4},
Smooth CORRAL for M = 1, 100 replications of T = 250,000 rounds, all cores. The target is under
5 minutes on 2 cores. Compilation happens first, outside the timed region.

    python benchmarks/bench_comparison.py [--replications R] [--horizon T] [--calibration NAME]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mlcb  # noqa: E402
from mlcb.compare import comparison_configs  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=None)
    parser.add_argument("--horizon", type=int, default=None)
    parser.add_argument("--calibration", default="theory")
    args = parser.parse_args(argv)
    fields = {k: v for k, v in (("replications", args.replications), ("horizon", args.horizon)) if v}
    configs = comparison_configs("trap", calibration=args.calibration, **fields)
    for config in configs:  # compile every policy's kernels before timing
        mlcb.simulate(config.replace(horizon=100, replications=1))
    per_policy: dict[str, float] = defaultdict(float)
    started = time.perf_counter()
    for config in configs:
        begun = time.perf_counter()
        mlcb.simulate(config)
        per_policy[config.policy] += time.perf_counter() - begun
    total = time.perf_counter() - started
    first = configs[0]
    print(
        f"trap comparison: {len(configs)} settings, R = {first.replications}, T = {first.horizon:,}, "
        f"calibration {args.calibration}"
    )
    for policy, seconds in per_policy.items():
        budgets = [c.budget for c in configs if c.policy == policy]
        print(f"  {policy:<16} M in {budgets!s:<14} {seconds:8.1f} s")
    print(f"  {'total':<31} {total:8.1f} s   (target: < 300 s on 2 cores)")


if __name__ == "__main__":
    main()
