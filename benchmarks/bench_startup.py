"""Start-up times of the command line and the package against their targets.

Three commands, each run in fresh processes (``--repeats`` times, default 7, after the package's
bytecode is compiled and one warm-up run has filled Numba's on-disk cache of compiled code),
wall-clock seconds from start to exit:

- ``python -c "import mlcb"``: target under 0.5 s;
- ``mlcb --help``: target under 0.3 s;
- a tiny run, ``mlcb run trap --budget 2 --horizon 1000 --replications 2 --out DIR`` with its two
  figures (regret and panels, as by default), into a new folder each time: target under 2 s.

For each it prints the median and the fastest wall time, the median CPU time of the process
(user + system: what the command costs when it has a core to itself; on a loaded machine the
wall time waits for a core as well), and the ratio of the median wall time to the target (below 1
meets it). The machine's load average is printed before and after. Then, from one more tiny run in
a probe process: how many compiled kernels the run loads from the cache, and the seconds spent
loading them (the first load carries Numba's one-off initialisation of its compiler's tables),
and which of the optional or heavy packages each command imports.

``mlcb`` is the console script beside the Python running this script when there is one (the
installed command), else ``python -m mlcb.cli``.

    python benchmarks/bench_startup.py [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Seconds, the issue's targets.
TARGETS = {"import mlcb": 0.5, "mlcb --help": 0.3, "mlcb run (tiny, with figures)": 2.0}
RUN = ["run", "trap", "--budget", "2", "--horizon", "1000", "--replications", "2", "--quiet"]
#: Packages whose import a command should not pay for unless it needs them.
HEAVY = ("numpy", "pandas", "numba", "scipy", "matplotlib", "seaborn", "torch", "river", "dask", "gymnasium")

#: Counts each kernel loaded from Numba's cache during a tiny run, and the seconds of each load.
PROBE = """
import json, sys, time
import numba.core.dispatcher as dispatcher
loads = []
compile_for_args = dispatcher.Dispatcher._compile_for_args
def timed(self, *args, **kws):
    started = time.perf_counter()
    try:
        return compile_for_args(self, *args, **kws)
    finally:
        name = self.py_func.__module__ + "." + self.py_func.__qualname__
        loads.append((name, time.perf_counter() - started))
dispatcher.Dispatcher._compile_for_args = timed
from mlcb.cli import main
assert main(sys.argv[1:]) == 0
print(json.dumps(loads))
"""


def _environment() -> dict[str, str]:
    """This checkout first on the path, so that the commands run the code beside this script."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _mlcb() -> list[str]:
    script = Path(sys.executable).with_name("mlcb")
    return [str(script)] if script.exists() else [sys.executable, "-m", "mlcb.cli"]


def _timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of ``command`` run to its end in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=_environment(), capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _commands(scratch: Path) -> dict[str, object]:
    """Each measured command, a function of the repeat (the run writes a new folder each time)."""
    return {
        "import mlcb": lambda i: [sys.executable, "-c", "import mlcb"],
        "mlcb --help": lambda i: [*_mlcb(), "--help"],
        "mlcb run (tiny, with figures)": lambda i: [*_mlcb(), *RUN, "--out", str(scratch / f"run-{i}")],
    }


def _imports(code: str, cwd: Path) -> list[str]:
    """The packages of :data:`HEAVY` imported once ``code`` has run, in a fresh process."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=cwd, env=_environment(), capture_output=True, text=True
    )
    return json.loads(done.stdout.splitlines()[-1]) if done.returncode == 0 else ["(failed)"]


def _compile_bytecode() -> None:
    """The package's bytecode written beside its sources, as ``make setup`` does after installing
    (``compileall``): where ``PYTHONDONTWRITEBYTECODE`` is set, Python would otherwise compile
    every module of mlcb again in each process (about 0.1 s of the tiny run)."""
    folders = [str(ROOT / package) for package in ("mlcb", "agents", "envs")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], check=True, capture_output=True)


def load() -> str:
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="fresh processes per command (default 7)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be an integer >= 1, got {args.repeats}")
    scratch = Path(tempfile.mkdtemp(prefix="mlcb-bench-startup-"))
    try:
        print(f"{load()}; {os.cpu_count()} cores; mlcb = {' '.join(_mlcb())}")
        commands = _commands(scratch)
        _compile_bytecode()
        for command in commands.values():  # warm-up: Numba's cache filled, files in the OS cache
            _timed(command(-1), scratch)  # type: ignore[operator]
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for i in range(args.repeats):  # interleaved, so that a busy moment touches every command alike
            for name, command in commands.items():
                times[name].append(_timed(command(i), scratch))  # type: ignore[operator]
        print(f"\n{'command':<32}{'median s':>10}{'fastest s':>11}{'CPU s':>8}{'target s':>10}{'ratio':>8}")
        for name, measured in times.items():
            walls = [wall for wall, _ in measured]
            median = statistics.median(walls)
            cpu = statistics.median(c for _, c in measured)
            ratio = median / TARGETS[name]
            verdict = "meets" if ratio < 1 else "misses"
            print(
                f"{name:<32}{median:>10.3f}{min(walls):>11.3f}{cpu:>8.3f}{TARGETS[name]:>10.1f}"
                f"{ratio:>8.2f}  {verdict} the target"
            )
        print(f"\n{load()}")

        probe = subprocess.run(
            [sys.executable, "-c", PROBE, *RUN, "--out", str(scratch / "probe")],
            cwd=scratch,
            env=_environment(),
            capture_output=True,
            text=True,
        )
        if probe.returncode == 0:
            loads = json.loads(probe.stdout.splitlines()[-1])
            print(
                f"\nkernels loaded from the cache by the tiny run: {len(loads)}, "
                f"{sum(s for _, s in loads):.3f} s in all (the first, with Numba's initialisation: "
                f"{loads[0][1]:.3f} s)"
                if loads
                else "\nkernels loaded from the cache by the tiny run: none"
            )
            for name, seconds in loads:
                print(f"  {seconds:8.3f} s  {name}")
        run = f"from mlcb.cli import main\nassert main({[*RUN, '--out', str(scratch / 'imports')]!r}) == 0"
        print("\nheavy or optional packages imported (of " + ", ".join(HEAVY) + "):")
        print(f"  import mlcb:   {', '.join(_imports('import mlcb', scratch)) or 'none'}")
        helped = "import contextlib\nfrom mlcb.cli import main\n"
        helped += "with contextlib.suppress(SystemExit): main(['--help'])"
        print(f"  mlcb --help:   {', '.join(_imports(helped, scratch)) or 'none'}")
        print(f"  tiny mlcb run: {', '.join(_imports(run, scratch)) or 'none'}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
