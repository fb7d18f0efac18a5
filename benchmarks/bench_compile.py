"""What compiling the round loop costs: the first run on a new machine, and each new combination.

The compiled round loop is specialised for the paths a run takes (docs/design.md, "Where a
round's time goes"): the pool's algorithms, the experts' common number of arms, the smoothing,
M-LCB's variant. Each combination a run uses is compiled once and cached on disk; this script
measures, in a child process with an empty cache (``XDG_CACHE_HOME`` and ``NUMBA_CACHE_DIR`` set
to a fresh folder), the CPU seconds of

* the first run of the trap (``trap`` preset, M = 2, 1,000 rounds): every kernel it uses;
* then, in the same process, each further combination alone: the first call of its round
  loop, the warm start (the loop's round 0) and ten rounds (the tables they read are built
  before and not counted). A run past the tables (T = 10^7, their compressed continuation) compiles the loop
  that serves every run past its tables, once.

    python benchmarks/bench_compile.py [--json FILE]

CPU seconds (user and system of the process), which a machine shared with other work disturbs
less than the wall clock; they still move by a tenth or so from run to run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: The combinations compiled after the first run: (label, preset fields, engine horizon).
COMBINATIONS = [
    ("trap past its tables (T = 10^7): the loop for every run past them", {}, 10_000_000),
    ("trap, smoothing 'average'", {"smoothing": "average"}, 1_000),
    ("trap, 'practical' calibration (bonus_scale 0.5)", {"calibration": "practical"}, 1_000),
    ("trap, Top-M", {"policy": "mlcb-topm"}, 1_000),
    ("trap with three arms per expert", {"env_params": {"n_experts": 10, "n_arms": 3}}, 1_000),
]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child() -> dict:
    """In a process with an empty cache: the CPU seconds of the first run and of each combination."""
    sys.path.insert(0, str(HERE.parent))
    import numpy as np

    from mlcb import engine, presets
    from mlcb.config import checkpoint_grid
    from mlcb.engine.replications import build_replication

    trap = presets.get("trap")
    grid = checkpoint_grid(1_000, 10)
    start = _cpu()
    engine.run_replication(engine.build(trap.config(2, horizon=1_000, replications=1)), 0, 0, 1_000, grid)
    rows = {"first run of the trap (every kernel it uses)": _cpu() - start}
    for label, fields, horizon in COMBINATIONS:
        fields = dict(fields)
        calibration = fields.pop("calibration", None)
        smoothing = fields.pop("smoothing", None)
        config = trap.config(2, calibration=calibration, horizon=horizon, replications=1, **fields)
        if smoothing:
            config = dataclasses.replace(config, smoothing=smoothing)
        arguments = build_replication(engine.build(config), 0, 0, horizon, np.array([horizon]))
        start = _cpu()
        run_rounds = arguments.round_loop()
        arguments.run_rounds(run_rounds, 0, 10)  # the warm start (round 0), then ten rounds
        rows[label] = _cpu() - start
    return rows


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child()))
        return {}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "XDG_CACHE_HOME": cache}
        out = subprocess.run(
            [sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, check=True
        )
    rows = json.loads(out.stdout.strip().splitlines()[-1])
    print("compiling the round loop, empty cache, CPU seconds of one process")
    for label, seconds in rows.items():
        print(f"  {seconds:6.2f} s  {label}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return rows


if __name__ == "__main__":
    main()
