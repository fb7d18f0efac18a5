"""A light start: ``import mlcb`` and ``mlcb --help`` import no NumPy, and a run imports the heavy
packages only when it needs them; the lazy names of ``mlcb`` (PEP 562) resolve as the eager ones
did; Numba's cache directory and the Gymnasium id still follow ``import mlcb``, in either order.

Each check runs in a fresh interpreter (what is imported is a property of a whole process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Packages that cost tenths of a second each to import, imported only when needed.
HEAVY = (
    "numpy",
    "numba",
    "pandas",
    "matplotlib",
    "seaborn",
    "scipy",
    "scipy.stats",
    "scipy.cluster",
    "torch",
    "river",
    "dask",
    "gymnasium",
)


def _python(code: str, cwd: Path | None = None) -> str:
    """Run ``code`` in a fresh interpreter with this checkout first on the path; its stdout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd or ROOT, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _imported_after(code: str, cwd: Path | None = None) -> set[str]:
    """The packages of :data:`HEAVY` imported once ``code`` has run."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    return set(json.loads(_python(probe, cwd).splitlines()[-1]))


def test_import_mlcb_imports_no_heavy_package():
    assert _imported_after("import mlcb") == set()


def test_help_imports_no_heavy_package():
    code = (
        "import contextlib, io\nfrom mlcb.cli import main\n"
        "for argv in (['--help'], ['run', '--help'], ['paper', '--help'], ['plot', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "        main(argv)"
    )
    assert _imported_after(code) == set()


def test_a_run_imports_what_it_needs_and_no_more(tmp_path):
    """Without figures a run never imports matplotlib or seaborn; with them, both, but not the
    parts of SciPy that seaborn imports for figures mlcb never draws (``scipy.stats``,
    ``scipy.cluster``: half a second); never an optional extra (torch, river, dask)."""
    run = "from mlcb.cli import main\nassert main(['run', 'trap', '-M', '2', '-T', '200', '-R', '1', '-q', '-o', 'out'{}]) == 0"
    bare = _imported_after(run.format(", '--no-plot'"), tmp_path)
    assert {"numpy", "numba", "pandas"} <= bare
    assert bare.isdisjoint({"matplotlib", "seaborn", "torch", "river", "dask"})
    drawn = _imported_after(run.format(""), tmp_path)
    assert {"matplotlib", "seaborn"} <= drawn
    assert drawn.isdisjoint({"scipy.stats", "scipy.cluster", "torch", "river", "dask"})
    assert sorted(p.name for p in (tmp_path / "out" / "trap").glob("*.png")) == ["panels.png", "regret.png"]


#: Modules of other environments, families and policies than the trap run's.
OTHERS = ("envs.glm", "envs.real_data", "agents.glm", "agents.classifiers", "mlcb.policies.corral")


def test_a_trap_run_imports_no_other_environment_family_or_policy(tmp_path):
    """The round loop's compiled code is cached per combination of argument classes: reading the
    trap's index names the trap's classes only (one index for every combination made a run import
    every module any earlier run on the machine had used, this test suite's among them)."""
    run = "from mlcb.cli import main\nassert main(['run', 'trap', '-M', '2', '-T', '200', '-R', '1', '-q', '--no-plot'])"
    probe = f"{run} == 0\nimport sys\nprint(sorted(m for m in {OTHERS!r} if m in sys.modules))"
    assert _python(probe, tmp_path).splitlines()[-1] == "[]"


def test_each_combination_of_classes_gets_a_round_loop_of_its_own():
    import numpy as np

    from mlcb import engine, presets
    from mlcb.engine import compiled_loop
    from mlcb.engine.replications import build_replication

    def round_loop(policy: str):
        config = presets.get("trap").config(2, "theory", horizon=10, replications=1, policy=policy)
        args = build_replication(engine.build(config), 0, 0, 10, np.arange(1, 11))
        return args.round_loop()

    mlcb_loop, again, robin_loop = round_loop("mlcb"), round_loop("mlcb"), round_loop("round-robin")
    assert mlcb_loop is again and robin_loop is not mlcb_loop
    names = [loop.py_func.__qualname__ for loop in (mlcb_loop, robin_loop)]
    assert len(set(names)) == 2
    assert [name.rpartition("_")[0] for name in names] == ["run_rounds"] * 2
    assert mlcb_loop.py_func.__code__ is compiled_loop.run_rounds.py_func.__code__


def _program(code: str, tmp_path: Path) -> list[str]:
    """``code`` (which patches the command line), then the ``mlcb`` program on a tiny run, in a
    fresh interpreter; the lines it printed."""
    main = "import sys\nfrom mlcb import cli\nsys.argv = ['mlcb', 'run', 'trap', '-M', '2', '-T', '50', '-R', '1', '-q']"
    return _python(f"import gc\n{code}\n{main}\nsys.exit(cli.program())", tmp_path).splitlines()


def test_the_program_pauses_the_collector_until_the_work_starts(tmp_path):
    """The ``mlcb`` program runs its start-up (imports, reading the input) with Python's cycle
    collector paused, then freezes what start-up built and switches the collector on for the work."""
    patch = """
from mlcb import engine
import mlcb.cli, mlcb.simulation
configs, run_problem = mlcb.cli.settings.configs, mlcb.simulation.run_problem
def _configs(args):
    print("start-up", gc.isenabled())
    return configs(args)
def _run_problem(*args, **kwargs):
    print("work", gc.isenabled(), gc.get_freeze_count() > 0)
    return run_problem(*args, **kwargs)
mlcb.cli.settings.configs, mlcb.simulation.run_problem = _configs, _run_problem
"""
    lines = _program(patch, tmp_path)
    assert "start-up False" in lines and "work True True" in lines


def test_main_leaves_the_callers_collector_alone(tmp_path, capsys):
    import gc

    from mlcb.cli import main

    frozen = gc.get_freeze_count()
    assert (
        main(["run", "trap", "-M", "2", "-T", "50", "-R", "1", "-q", "--no-plot", "-o", str(tmp_path)]) == 0
    )
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_the_lazy_names_resolve_to_the_objects_of_their_modules():
    import mlcb
    from mlcb.compare import compare
    from mlcb.config import SimulationConfig
    from mlcb.simulation import simulate
    from mlcb.storage.results import Result, load
    from mlcb.sweeps import sweep

    expected = {
        "Result": Result,
        "SimulationConfig": SimulationConfig,
        "compare": compare,
        "load": load,
        "simulate": simulate,
        "sweep": sweep,
    }
    assert set(mlcb.__all__) == set(expected) | {"__version__"}
    for name, value in expected.items():
        assert getattr(mlcb, name) is value, name
        assert name in dir(mlcb)
    assert mlcb.theory.__name__ == "mlcb.theory" and "theory" in dir(mlcb)
    with pytest.raises(AttributeError, match="no attribute 'simulation_config'"):
        mlcb.simulation_config  # noqa: B018


def test_the_function_compare_outlives_a_first_import_of_its_module():
    """``mlcb.compare`` is the function even when the module ``mlcb.compare`` is first imported
    after ``import mlcb`` (Python then sets the module as the package's attribute)."""
    out = _python(
        "import mlcb, mlcb.compare, mlcb.sweeps\nfrom mlcb import compare\n"
        "print(callable(mlcb.compare), compare is mlcb.compare.__globals__['compare'], mlcb.sweep.__name__)"
    )
    assert out.split() == ["True", "True", "sweep"]


def test_import_mlcb_changes_nothing_in_the_process():
    """``import mlcb`` (and its command line's start) adds no import hook and registers nothing:
    Gymnasium's registry and Numba's configuration are as they were."""
    out = _python(
        "import sys\nhooks = list(sys.meta_path)\nimport gymnasium, numba\nimport mlcb, mlcb.cli\n"
        "print(sys.meta_path == hooks, 'mlcb/BudgetedSelection-v0' in gymnasium.registry, "
        "repr(numba.config.CACHE_DIR))"
    )
    assert out.split() == ["True", "False", "''"]


@pytest.mark.parametrize("import_first", ["mlcb.selection_env", "gymnasium"])
def test_gymnasium_finds_the_selection_env_once_its_module_is_imported(import_first):
    """``import mlcb.selection_env`` registers ``mlcb/BudgetedSelection-v0``, whichever of it and
    Gymnasium comes first; the id with its module (``module:id``) works without it."""
    imports = (
        "import mlcb.selection_env\nimport gymnasium"
        if import_first == "mlcb.selection_env"
        else "import gymnasium\nimport mlcb.selection_env"
    )
    out = _python(
        f"{imports}\nenv = gymnasium.make('mlcb/BudgetedSelection-v0', preset='trap', budget=2, horizon=10)\n"
        "print(type(env.unwrapped).__name__)"
    )
    assert out.split() == ["BudgetedSelectionEnv"]
    out = _python(
        "import gymnasium\nenv = gymnasium.make('mlcb.selection_env:mlcb/BudgetedSelection-v0', "
        "preset='trap', budget=2, horizon=10)\nprint(type(env.unwrapped).__name__)"
    )
    assert out.split() == ["BudgetedSelectionEnv"]


def test_mlcb_kernels_cache_under_mlcb_and_ones_own_numba_functions_do_not(tmp_path):
    """mlcb's kernels are cached under ``~/.cache/mlcb/numba-<digest>`` by a cache of their own;
    a compiled function of one's own keeps Numba's default (beside its source), and Numba's
    configuration is left as it was."""
    own = tmp_path / "own_module.py"
    own.write_text("import numba\n@numba.njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    env_home = (
        f"import os, sys\nos.environ['XDG_CACHE_HOME'] = {str(tmp_path / 'home')!r}\n"
        f"os.environ.pop('NUMBA_CACHE_DIR', None)\nsys.path.insert(0, {str(tmp_path)!r})"
    )
    out = _python(
        f"{env_home}\nimport numba\nfrom mlcb.kernels.jit import cache_folder\nfrom mlcb.kernels.seeding import stream_keys\n"
        "import own_module\nprint(own_module.twice(21), repr(numba.config.CACHE_DIR))\n"
        "print(stream_keys(0, 0, 2).experts.shape[0], cache_folder())"
    )
    lines = out.splitlines()
    assert lines[0].split() == ["42", "''"]
    folder = Path(lines[1].split()[1])
    assert folder.parent == tmp_path / "home" / "mlcb" and folder.name.startswith("numba-")
    assert any(folder.rglob("*.nbi"))  # mlcb's kernel, cached there
    assert not list(folder.rglob("*twice*")) and list(
        (tmp_path / "__pycache__").glob("own_module.twice*.nbi")
    )


def test_cache_folders_of_other_digests_unused_for_a_month_are_removed(tmp_path):
    """Each digest of the sources has a cache folder of its own: one that no process has used for
    30 days goes when mlcb's cache is first used; a recent one, and one's own, stay."""
    import time

    folders = tmp_path / "mlcb"
    for name, age_days in (("numba-old", 40), ("numba-recent", 3)):
        (folders / name).mkdir(parents=True)
        (folders / name / "kernel.nbi").write_bytes(b"index")
        stamp = time.time() - age_days * 86400
        os.utime(folders / name, (stamp, stamp))
    (folders / "mine.txt").write_text("not a cache folder")
    env_home = f"import os\nos.environ['XDG_CACHE_HOME'] = {str(tmp_path)!r}\nos.environ.pop('NUMBA_CACHE_DIR', None)"
    out = _python(f"{env_home}\nfrom mlcb.kernels.jit import cache_folder\nprint(cache_folder())")
    own = Path(out.strip())
    assert sorted(p.name for p in folders.iterdir()) == sorted(["mine.txt", "numba-recent", own.name])
    assert own.is_dir() and time.time() - own.stat().st_mtime < 600
