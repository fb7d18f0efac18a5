"""M-LCB against the policies practitioners run: the two tables of docs/comparisons.md.

1. The trap preset with the authors' calibration (``mlcb compare trap --set practitioners
   --calibration authors``): pseudo-regret at the horizon, mean and standard error over the
   replications, every policy at the same budget ``M`` (equal training budget).
2. A "late riser" instance: fast but mediocre experts (UCB1 on 2 arms, best reward mean 0.5)
   against slow but capable ones (epsilon-greedy on 10 arms, best reward mean 0.7, the best
   expert). A capable expert's running training loss is poor for a long time, so rules that
   rank experts by it never train it again; rules built for learning curves (M-LCB's rates,
   R-ed-UCB's forecasts) should.

Seeds are the defaults (seed 0), not tuned. Prints markdown tables; ``--json`` writes numbers.

    python benchmarks/practitioners_table.py [--horizon T] [--replications R] [--budgets 1 2 4]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mlcb  # noqa: E402
from mlcb import policies  # noqa: E402

NAMES = ("mlcb", *policies.PRACTITIONERS)


def table(result, budgets) -> tuple[str, dict]:
    """Markdown table of final pseudo-regret, mean +- standard error, policies by budget."""
    final = result.final()
    numbers = {}
    lines = ["| policy | " + " | ".join(f"M = {m}" for m in budgets) + " |"]
    lines.append("|---|" + "---:|" * len(budgets))
    for name in NAMES:
        cells = []
        for m in budgets:
            rows = final[(final.policy == name) & (final.budget == m)]
            if rows.empty:
                cells.append("")
                continue
            values = rows.pseudo_regret.to_numpy()
            mean = float(values.mean())
            se = float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else math.nan
            numbers[f"{name} M={m}"] = {"mean": mean, "se": se, "runs": len(values)}
            cells.append(f"{mean:,.0f} ± {se:,.0f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines), numbers


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=250_000, help="rounds of the trap table")
    parser.add_argument("--late-horizon", type=int, default=50_000, help="rounds of the late-riser table")
    parser.add_argument("--replications", type=int, default=30, help="replications per setting")
    parser.add_argument("--budgets", type=int, nargs="+", default=[1, 2, 4], help="budgets M")
    parser.add_argument("--threads", type=int, default=None, help="threads (default: all cores)")
    parser.add_argument("--skip-trap", action="store_true", help="only the late-riser table")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    budgets = tuple(args.budgets)
    out: dict = {"replications": args.replications, "budgets": budgets, "seed": 0}
    entries = [(name, budgets, {}, None) for name in NAMES]
    if not args.skip_trap:
        started = time.perf_counter()
        trap = mlcb.compare(
            "trap",
            [(name, budgets, {}, "counts") for name in NAMES],
            calibration="authors",
            horizon=args.horizon,
            replications=args.replications,
            threads=args.threads,
        )
        text, numbers = table(trap, budgets)
        print(f"trap, authors' calibration, T = {args.horizon:,}, R = {args.replications}: pseudo-regret")
        print(text)
        print(f"({time.perf_counter() - started:.0f} s)\n")
        out["trap"] = {"horizon": args.horizon, "pseudo_regret": numbers}
    started = time.perf_counter()
    late = mlcb.compare(
        "late-risers",
        entries,
        horizon=args.late_horizon,
        replications=args.replications,
        threads=args.threads,
    )
    text, numbers = table(late, budgets)
    print(f"late risers, T = {args.late_horizon:,}, R = {args.replications}: pseudo-regret")
    print(text)
    print(f"({time.perf_counter() - started:.0f} s)")
    out["late_riser"] = {"horizon": args.late_horizon, "pseudo_regret": numbers}
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
