"""Machine instructions per round of the engine and of the single-purpose kernel, counted by Valgrind.

``bench_reference.py`` times the engine against ``reference_kernel.py``; on a shared machine
those timings move by 10 to 40 % from one hour to the next, more than most changes to the round
loop are worth. This script counts instead: each kernel runs in child processes under Valgrind's
instruction counter (``valgrind --tool=cachegrind --cache-sim=no``), which gives the same count
on every run of the same code. For each (kernel, T, M), one child runs the replication once and
another three times after the same set-up; half the difference is one run's instructions
(the Python around the call included: a few per round at T = 10^6). Both kernels run the
``trap`` preset's theory calibration, one replication, as ``bench_reference.py`` does.

    python benchmarks/count_reference.py [--horizons 1e6] [--budgets 1 2 4] [--json FILE]

The count is not the time: a round's time also depends on how many of its instructions the
processor runs at once (the kernel's rounds are more often waiting on a chain of dependent
operations, the engine's on the number of instructions). But an instruction the engine no
longer executes is one it no longer pays for, and the count shows it where a timing cannot.

Needs Valgrind (Debian: ``apt install valgrind``). Valgrind cannot run AVX-512 code, so the
children compile for the processor named by ``--cpu`` (default ``x86-64-v3``: AVX2 and FMA) into
a compiled-code cache of their own, first outside Valgrind (a minute), so that the counted runs
load it rather than compile under Valgrind (twenty times slower). A row at T = 10^6 takes about
a minute on two cores.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()
#: Runs of the replication in the second child (the first runs it once).
RUNS = 3


def child(kernel: str, horizon: int, budget: int, runs: int) -> None:
    """Set up one replication of the trap (compiled code, tables) and run it ``runs`` times,
    as ``bench_reference.py`` does."""
    sys.path.insert(0, str(HERE.parent))
    import bench_reference

    run = getattr(bench_reference, f"prepare_{kernel}")(horizon, budget)
    for _ in range(runs):
        run()


def _environment(cpu: str, cache: Path) -> dict[str, str]:
    return {
        **os.environ,
        "NUMBA_CPU_NAME": cpu,
        "NUMBA_CPU_FEATURES": "",
        "XDG_CACHE_HOME": str(cache),
        "NUMBA_CACHE_DIR": str(cache / "numba"),  # the reference kernel's cache too
        "PYTHONHASHSEED": "0",
        "OMP_NUM_THREADS": "1",
    }


def _command(kernel: str, horizon: int, budget: int, runs: int) -> list[str]:
    return [sys.executable, str(HERE), "--child", kernel, str(horizon), str(budget), str(runs)]


def _count(kernel: str, horizon: int, budget: int, runs: int, env: dict[str, str]) -> int:
    """Instructions of a child that runs the replication ``runs`` times."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "counts"
        result = subprocess.run(
            ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}"]
            + _command(kernel, horizon, budget, runs),
            env=env,
            capture_output=True,
            text=True,
        )
    found = re.search(r"I\s+refs:\s+([\d,]+)", result.stderr)
    if result.returncode != 0 or not found:
        raise RuntimeError(f"valgrind failed on {kernel} T={horizon} M={budget}:\n{result.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizons", type=float, nargs="+", default=[1e6])
    parser.add_argument("--budgets", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--cpu", default="x86-64-v3", help="the processor the children compile for")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--child", nargs=4, metavar=("KERNEL", "T", "M", "RUNS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kernel, horizon, budget, runs = args.child
        child(kernel, int(horizon), int(budget), int(runs))
        return []
    horizons = [int(h) for h in args.horizons]
    if any(h < 1_000 for h in horizons) or any(not 1 <= m <= 10 for m in args.budgets):
        parser.error("horizons must be >= 1000 and budgets in [1, 10] (the trap has K = 10)")
    if shutil.which("valgrind") is None:
        parser.error("needs valgrind on the PATH (Debian: apt install valgrind)")
    cache = Path(tempfile.mkdtemp(prefix="mlcb-count-"))
    env = _environment(args.cpu, cache)
    try:
        # Compile both kernels for the named processor outside Valgrind, into the children's cache.
        for kernel in ("engine", "reference"):
            subprocess.run(_command(kernel, 2_000, 1, 1), env=env, check=True)
        print(
            f"instructions per round, trap K = 10, theory calibration, one replication; code for {args.cpu}"
        )
        print(f"{'T':>13} {'M':>2} {'engine':>8} {'reference':>9} {'ratio':>6}")
        rows = []
        kernels = ("engine", "reference")
        jobs = [(k, h, m, r) for h in horizons for m in args.budgets for k in kernels for r in (1, RUNS)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            counts = dict(zip(jobs, pool.map(lambda job: _count(*job, env), jobs)))
        for horizon in horizons:
            for budget in args.budgets:
                per_round = {
                    k: (counts[(k, horizon, budget, RUNS)] - counts[(k, horizon, budget, 1)])
                    / (RUNS - 1)
                    / horizon
                    for k in kernels
                }
                row = {
                    "horizon": horizon,
                    "budget": budget,
                    "engine": per_round["engine"],
                    "reference": per_round["reference"],
                    "ratio": per_round["reference"] / per_round["engine"],
                }
                rows.append(row)
                print(
                    f"{horizon:>13,} {budget:>2} {row['engine']:>8.1f} {row['reference']:>9.1f} "
                    f"{row['ratio']:>5.2f}x",
                    flush=True,
                )
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return rows


if __name__ == "__main__":
    main()
