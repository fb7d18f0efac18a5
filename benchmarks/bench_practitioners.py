"""Speed of the practitioners' policies against M-LCB at the same size.

For each policy of ``mlcb.policies.PRACTITIONERS``: single-thread rounds per second of the
compiled engine on the trap instance with ``K = 10`` and ``K = 1000`` experts at ``M = 2``, and
its ratio to M-LCB's rate at the same size (target: at least 0.5; at K = 1000 only for the
rules that need not read every expert each round: Thompson sampling, R-ed-UCB and EXP3.P do,
as published, and are exempt there). Compilation happens before
the timed region; each figure is the best of ``--repeats`` runs. The runs of M-LCB and of the
policy alternate (M-LCB, policy, M-LCB, ...) so that both rates of a ratio see the same machine:
on a shared machine the speed of identical work drifts by tens of percent between seconds, and
a reference measured once per size would carry its drift into every ratio of that size.

    python benchmarks/bench_practitioners.py [--horizon T] [--repeats R] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mlcb import engine, policies, presets  # noqa: E402
from mlcb.config import checkpoint_grid  # noqa: E402

SIZES = (10, 1_000)
TARGET = 0.5
#: The rules that read every expert each round (a sample, a forecast, a probability per expert),
#: so that their cost grows with K: held to the target at K = 10 only.
READS_EVERY_EXPERT = ("bandit-thompson", "r-ed-ucb", "exp3p")


def config(policy: str, n_experts: int, budget: int, horizon: int):
    """The trap preset with ``n_experts`` experts run by ``policy``."""
    return presets.get("trap").config(
        budget, policy=policy, horizon=horizon, replications=1, env_params={"n_experts": n_experts}
    )


def paired_rates(configs, repeats: int) -> list[float]:
    """Best single-thread rounds/s of one replication of each config, after compiling and
    building tables, the configs' runs alternating."""
    runs = []
    for one in configs:
        problem = engine.build(one)
        grid = checkpoint_grid(one.horizon, 100)
        engine.run_replication(problem, one.seed, 0, one.horizon, grid)
        runs.append((one, problem, grid))
    best = [np.inf] * len(runs)
    for replication in range(repeats):
        for i, (one, problem, grid) in enumerate(runs):
            started = time.perf_counter()
            engine.run_replication(problem, one.seed, replication, one.horizon, grid)
            best[i] = min(best[i], time.perf_counter() - started)
    return [one.horizon / seconds for (one, _, _), seconds in zip(runs, best)]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=200_000, help="rounds per timed run")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per case (best kept)")
    parser.add_argument("--budget", type=int, default=2, help="the budget M")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    rows = []
    print(f"rounds/s, single thread, trap pools, M = {args.budget}, T = {args.horizon:,}")
    print(f"{'policy':<24}{'K':>6}{'rounds/s':>14}{'M-LCB':>14}{'ratio':>8}")
    for n_experts in SIZES:
        reference = config("mlcb", n_experts, args.budget, args.horizon)
        for name in policies.PRACTITIONERS:
            policy = config(name, n_experts, args.budget, args.horizon)
            mlcb_rate, rate = paired_rates([reference, policy], args.repeats)
            ratio = rate / mlcb_rate
            exempt = n_experts > SIZES[0] and name in READS_EVERY_EXPERT
            flag = "" if ratio >= TARGET else "  (exempt: reads every expert)" if exempt else "  below target"
            print(f"{name:<24}{n_experts:>6}{rate:>14,.0f}{mlcb_rate:>14,.0f}{ratio:>8.2f}{flag}")
            rows.append({"policy": name, "K": n_experts, "rate": rate, "mlcb": mlcb_rate, "ratio": ratio})
    out = {"horizon": args.horizon, "budget": args.budget, "rows": rows}
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
