"""Machine instructions per round of the engine and of the single-purpose kernel, counted by Valgrind.

``bench_reference.py`` times the engine against ``reference_kernel.py``; on a shared machine
those timings move by 10 to 40 % from one hour to the next, more than most changes to the round
loop are worth. This script counts instead: each kernel runs in child processes under Valgrind's
instruction counter (``valgrind --tool=cachegrind --cache-sim=no``), which gives the same count
on every run of the same code. For each (kernel, T, M), one child runs the replication once and
another three times after the same set-up; half the difference is one run's instructions
(the Python around the call included: a few per round at T = 10^6). Both kernels run the
``trap`` preset's theory calibration, one replication, as ``bench_reference.py`` does.

    python benchmarks/count_reference.py [--horizons 1e6] [--budgets 1 2 4] [--events] [--json FILE]

The count is not the time: a round's time also depends on how many of its instructions the
processor runs at once (the kernel's rounds are more often waiting on a chain of dependent
operations, the engine's on the number of instructions). But an instruction the engine no
longer executes is one it no longer pays for, and the count shows it where a timing cannot.

Needs Valgrind (Debian: ``apt install valgrind``). Valgrind cannot run AVX-512 code, so the
children compile for the processor named by ``--cpu`` (default ``x86-64-v3``: AVX2 and FMA) into
a compiled-code cache of their own, first outside Valgrind (a minute), so that the counted runs
load it rather than compile under Valgrind (twenty times slower). A row at T = 10^6 takes about
a minute on two cores.

``--events`` also runs Valgrind's models of the caches and of a branch predictor
(``--cache-sim=yes --branch-sim=yes``; the three rows at T = 10^6 in 5 minutes on two cores)
and prints, per round, the memory reads and writes, the first-level data cache misses, the
last-level data cache misses, the branches and the mispredicted branches. The accesses and
branches are counted; the misses and mispredictions are a model's, not the processor's (an
idealised cache; a predictor simple enough to mispredict the exit of a loop of two iterations),
so they compare the two kernels rather than predict a time.
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
#: What ``--events`` reads from Valgrind's summary besides the instructions: each row's name,
#: the column it is printed under and the summary line's label.
EVENTS = (
    ("data_refs", "reads+writes", r"D\s+refs:"),
    ("d1_misses", "D1 misses", r"D1\s+misses:"),
    ("ll_misses", "LLd misses", r"LLd\s+misses:"),
    ("branches", "branches", r"Branches:"),
    ("mispredicts", "mispredicted", r"Mispredicts:"),
)


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


def _count(
    kernel: str, horizon: int, budget: int, runs: int, env: dict[str, str], events: bool = False
) -> dict[str, int]:
    """Instructions (``"instructions"``) of a child that runs the replication ``runs`` times, and
    with ``events`` the simulated events of :data:`EVENTS` too."""
    simulate = "yes" if events else "no"
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "counts"
        result = subprocess.run(
            ["valgrind", "--tool=cachegrind", f"--cache-sim={simulate}"]
            + ([f"--branch-sim={simulate}"] if events else [])
            + [f"--cachegrind-out-file={out}"]
            + _command(kernel, horizon, budget, runs),
            env=env,
            capture_output=True,
            text=True,
        )
    labels = [("instructions", r"I\s+refs:")] + [(name, label) for name, _, label in EVENTS if events]
    counts = {}
    for name, label in labels:
        found = re.search(label + r"\s+([\d,]+)", result.stderr)
        if result.returncode != 0 or not found:
            raise RuntimeError(
                f"valgrind failed on {kernel} T={horizon} M={budget}:\n{result.stderr[-2000:]}"
            )
        counts[name] = int(found.group(1).replace(",", ""))
    return counts


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizons", type=float, nargs="+", default=[1e6])
    parser.add_argument("--budgets", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--cpu", default="x86-64-v3", help="the processor the children compile for")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument(
        "--events",
        action="store_true",
        help="also simulate the caches and a branch predictor: memory accesses, misses and "
        "mispredicted branches per round (slower: about 100 s a row at T = 10^6)",
    )
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
    kernels = ("engine", "reference")
    try:
        # Compile both kernels for the named processor outside Valgrind, into the children's cache.
        for kernel in kernels:
            subprocess.run(_command(kernel, 2_000, 1, 1), env=env, check=True)
        print(
            f"instructions per round, trap K = 10, theory calibration, one replication; code for {args.cpu}"
        )
        print(f"{'T':>13} {'M':>2} {'engine':>8} {'reference':>9} {'ratio':>6}")
        rows = []
        jobs = [(k, h, m, r) for h in horizons for m in args.budgets for k in kernels for r in (1, RUNS)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            counts = dict(zip(jobs, pool.map(lambda job: _count(*job, env, args.events), jobs)))
        for horizon in horizons:
            for budget in args.budgets:
                per_round = {
                    k: {
                        name: (
                            counts[(k, horizon, budget, RUNS)][name] - counts[(k, horizon, budget, 1)][name]
                        )
                        / (RUNS - 1)
                        / horizon
                        for name in counts[(k, horizon, budget, 1)]
                    }
                    for k in kernels
                }
                row = {
                    "horizon": horizon,
                    "budget": budget,
                    "engine": per_round["engine"]["instructions"],
                    "reference": per_round["reference"]["instructions"],
                    "ratio": per_round["reference"]["instructions"] / per_round["engine"]["instructions"],
                }
                if args.events:
                    row["events"] = {name: {k: per_round[k][name] for k in kernels} for name, _, _ in EVENTS}
                rows.append(row)
                print(
                    f"{horizon:>13,} {budget:>2} {row['engine']:>8.1f} {row['reference']:>9.1f} "
                    f"{row['ratio']:>5.2f}x",
                    flush=True,
                )
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if args.events:
        _print_events(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return rows


def _print_events(rows: list[dict]) -> None:
    """The simulated events per round of each row, engine then reference (``--events``)."""
    print("\nsimulated per round (Valgrind's cache and branch models), engine / reference")
    print(f"{'T':>13} {'M':>2} " + " ".join(f"{column:>17}" for _, column, _ in EVENTS))
    for row in rows:
        cells = [
            f"{row['events'][name]['engine']:.2f} / {row['events'][name]['reference']:.2f}"
            for name, _, _ in EVENTS
        ]
        print(f"{row['horizon']:>13,} {row['budget']:>2} " + " ".join(f"{cell:>17}" for cell in cells))


if __name__ == "__main__":
    main()
