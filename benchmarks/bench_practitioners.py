"""Speed of the practitioners' policies against M-LCB at the same size.

For each policy of ``mlcb.policies.PRACTITIONERS``: single-thread rounds per second of the
compiled engine on the trap instance with ``K = 10`` and ``K = 1000`` experts at ``M = 2``, and
its ratio to M-LCB's rate measured in the same run at the same size (target: at least 0.5).
Compilation happens before the timed region (``benchmarks/bench_suite.engine_rate``); each
figure is the best of ``--repeats`` runs.

    python benchmarks/bench_practitioners.py [--horizon T] [--repeats R] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_suite import engine_rate  # noqa: E402

from mlcb import policies, presets  # noqa: E402

SIZES = (10, 1_000)
TARGET = 0.5


def config(policy: str, n_experts: int, budget: int, horizon: int):
    """The trap preset with ``n_experts`` experts run by ``policy``."""
    return presets.get("trap").config(
        budget, policy=policy, horizon=horizon, replications=1, env_params={"n_experts": n_experts}
    )


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=200_000, help="rounds per timed run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per case (best kept)")
    parser.add_argument("--budget", type=int, default=2, help="the budget M")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    rows = []
    print(f"rounds/s, single thread, trap pools, M = {args.budget}, T = {args.horizon:,}")
    print(f"{'policy':<24}{'K':>6}{'rounds/s':>14}{'M-LCB':>14}{'ratio':>8}")
    for n_experts in SIZES:
        reference = engine_rate(config("mlcb", n_experts, args.budget, args.horizon), args.repeats)
        for name in policies.PRACTITIONERS:
            rate = engine_rate(config(name, n_experts, args.budget, args.horizon), args.repeats)
            ratio = rate / reference
            flag = "" if ratio >= TARGET else "  below target"
            print(f"{name:<24}{n_experts:>6}{rate:>14,.0f}{reference:>14,.0f}{ratio:>8.2f}{flag}")
            rows.append({"policy": name, "K": n_experts, "rate": rate, "mlcb": reference, "ratio": ratio})
    out = {"horizon": args.horizon, "budget": args.budget, "rows": rows}
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
