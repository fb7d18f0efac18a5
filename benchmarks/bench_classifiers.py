"""The compiled online classifiers (agents/classifiers.py): time per replication, after compilation.

Prints, for the ``ctg`` preset (K = 15 classifiers, the shipped cardiotocography data read once,
2,125 rounds), ``ctg-35`` (the same on 35 columns) and ``warfarin-like`` (K = 7, scikit-learn's
digits bootstrapped to 20,000 rounds), or ``warfarin`` on your copy of the IWPC file with
``--warfarin PATH``:

1. the reference pass (every expert trained on every round: ``L_k*``, the best fixed expert);
2. one whole replication of M-LCB at each budget on one thread (reference pass, warm start, the
   round loop), the best of ``--repeat`` runs; the references are computed afresh each time
   (the family caches them per stream, so a comparison's later settings skip the pass);
3. the learners' speed: training steps per second inside the reference pass.

The target: a ``ctg`` replication in well under a second.

    python benchmarks/bench_classifiers.py [--repeat N] [--warfarin PATH]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mlcb import engine, presets  # noqa: E402
from mlcb.config import checkpoint_grid  # noqa: E402
from mlcb.engine import hindsight  # noqa: E402
from mlcb.engine.replications import run_replication  # noqa: E402

TARGET_SECONDS = 1.0


def reference_pass(experts: list, env, horizon: int) -> None:
    """``L_k*`` of every expert on replication 0 of seed 0, computed afresh (the engine keeps them
    per stream)."""
    hindsight.clear()
    hindsight.losses(experts, env, 0, 0, horizon)


def best_time(function, repeat: int) -> float:
    """The fastest of ``repeat`` calls of ``function`` (the first call, which compiles, apart)."""
    function()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def fresh_replication(problem, horizon: int, grid) -> None:
    """Replication 0 of seed 0, its references computed afresh."""
    hindsight.clear()
    run_replication(problem, 0, 0, horizon, grid)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each measurement (best kept)")
    parser.add_argument(
        "--warfarin", metavar="PATH", help="your IWPC subject file: the warfarin preset on it"
    )
    args = parser.parse_args()
    slowest = 0.0
    runs = [("ctg", {}), ("ctg-35", {})]
    runs.append(("warfarin", {"dataset": args.warfarin}) if args.warfarin else ("warfarin-like", {}))
    for name, data in runs:
        preset = presets.get(name)
        config = preset.config(preset.budgets[0], replications=1, env_params=data)
        problem = engine.build(config)
        env, experts = problem.env, list(problem.experts)
        reference = best_time(lambda e=experts, v=env, h=config.horizon: reference_pass(e, v, h), args.repeat)
        steps = len(experts) * (config.horizon + 1)
        print(
            f"{name}: K = {len(experts)}, T = {config.horizon:,}; reference pass {reference * 1e3:.1f} ms "
            f"({steps / reference / 1e6:.2f} M training steps/s)"
        )
        for budget in preset.budgets:
            problem = engine.build(preset.config(budget, replications=1, env_params=data))
            grid = checkpoint_grid(config.horizon, config.checkpoints)
            seconds = best_time(
                lambda p=problem, h=config.horizon, g=grid: fresh_replication(p, h, g), args.repeat
            )
            print(f"  mlcb M={budget}: one replication {seconds * 1e3:.1f} ms")
            if name == "ctg":
                slowest = max(slowest, seconds)
    verdict = "met" if slowest < TARGET_SECONDS else "MISSED"
    print(f"target: a ctg replication under {TARGET_SECONDS:.0f} s: {verdict} (slowest {slowest:.3f} s)")
    return 0 if slowest < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
