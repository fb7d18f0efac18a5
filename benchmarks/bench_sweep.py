"""Sweep executors: the local executor against a serial loop, and Dask against the local executor.

Part 1: a sweep of ``--tasks`` tasks (the trap at M in {1, 2, 3, 4}, one replication of
``--horizon`` rounds per task) run (a) as a serial loop over the same tasks in this process, one
thread, and (b) with the local executor on ``--workers`` processes. Target: at least 1.8x on 2 cores.

Part 2: the same number of longer tasks (``--long-block`` replications each, about a second or
more) with the local executor and with Dask on a LocalCluster of ``--workers`` processes started
and closed by the sweep (its start-up is counted). Target: Dask's overhead under 15 percent.

Both sweeps of a part write into fresh directories and give identical results (checked). The
machine's load average is printed before and after: other work on the machine slows the parallel
runs more than the serial loop. Compilation happens first, outside the timed regions.

    python benchmarks/bench_sweep.py [--tasks 64] [--horizon 250000] [--long-block 18] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

import mlcb  # noqa: E402
from mlcb import sweeps  # noqa: E402

BUDGETS = [1, 2, 3, 4]


def grid(name: str, tasks: int, horizon: int, block: int) -> dict:
    per_setting = -(-tasks // len(BUDGETS))
    return {
        "preset": "trap",
        "name": name,
        "horizon": horizon,
        "replications": per_setting * block,
        "block": block,
        "grid": {"budget": BUDGETS},
    }


def same(left: mlcb.Result, right: mlcb.Result) -> bool:
    try:
        for name in ("curves", "experts", "replications"):
            pd.testing.assert_frame_equal(getattr(left, name), getattr(right, name))
    except AssertionError:
        return False
    return True


def load() -> str:
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=64)
    parser.add_argument("--horizon", type=int, default=250_000)
    parser.add_argument("--long-block", type=int, default=18)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-dask", action="store_true")
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} cores, {args.workers} workers; {load()}")
    mlcb.simulate(preset="trap", horizon=100, replications=1)  # compile (or load the cache)
    work = Path(tempfile.mkdtemp(prefix="bench-sweep-"))

    # Part 1: serial loop against the local executor.
    short = grid("short", args.tasks, args.horizon, 1)
    spec = sweeps.make_grid(short)
    tasks = spec.tasks()
    started = time.perf_counter()
    outputs = [sweeps.run_task(sweeps.payload(spec, task)) for task in tasks]
    serial = time.perf_counter() - started
    started = time.perf_counter()
    local = mlcb.sweep(short, out=work / "local", workers=args.workers)
    parallel = time.perf_counter() - started
    serial_curves = pd.concat([o["curves"] for o in outputs], ignore_index=True)
    print(
        f"part 1: {len(tasks)} tasks of 1 replication, T = {args.horizon:,} "
        f"(about {serial / len(tasks):.2f} s each)"
    )
    print(f"  serial loop        {serial:7.1f} s")
    speedup = serial / parallel
    print(f"  local executor     {parallel:7.1f} s   speed-up {speedup:.2f}x (target >= 1.8x on 2 cores)")
    print(f"  results identical: {serial_curves.equals(local.result.curves)}; {load()}")

    if args.skip_dask:
        return
    # Part 2: local executor against Dask on a LocalCluster, tasks of about a second or more.
    long = grid("long", args.tasks, args.horizon, args.long_block)
    started = time.perf_counter()
    local = mlcb.sweep(long, out=work / "long-local", workers=args.workers)
    local_seconds = time.perf_counter() - started
    connected: list[float] = []
    started = time.perf_counter()
    on_dask = mlcb.sweep(
        long,
        out=work / "long-dask",
        executor="dask",
        workers=args.workers,
        echo=lambda _line: connected.append(time.perf_counter()),
    )
    dask_seconds = time.perf_counter() - started
    start_up = connected[0] - started if connected else float("nan")
    per_task = local_seconds * args.workers / local.computed
    print(f"part 2: {local.computed} tasks of {args.long_block} replications (about {per_task:.2f} s each)")
    print(f"  local executor     {local_seconds:7.1f} s")
    overhead = 100 * (dask_seconds / local_seconds - 1)
    print(
        f"  dask LocalCluster  {dask_seconds:7.1f} s   overhead {overhead:+.1f}% "
        "(target < 15%; includes starting the cluster)"
    )
    print(
        f"    of which starting the cluster {start_up:.1f} s; overhead without it "
        f"{100 * ((dask_seconds - start_up) / local_seconds - 1):+.1f}%"
    )
    print(f"  results identical: {same(local.result, on_dask.result)}; {load()}")


if __name__ == "__main__":
    main()
