"""A light start: ``import mlcb`` and ``mlcb --help`` import no NumPy, and a run imports the heavy
packages only when it needs them; the lazy names of ``mlcb`` (PEP 562) resolve as the eager ones
did; Numba's cache directory and the Gymnasium id still follow ``import mlcb``, in either order.

Each check runs in a fresh interpreter (what is imported is a property of a whole process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Packages that cost tenths of a second each to import, imported only when needed.
HEAVY = ("numpy", "numba", "pandas", "matplotlib", "seaborn", "scipy", "torch", "river", "dask", "gymnasium")


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
    """Without figures a run never imports matplotlib; with them, matplotlib and no seaborn; never
    an optional extra (torch, river, dask)."""
    run = "from mlcb.cli import main\nassert main(['run', 'trap', '-M', '2', '-T', '200', '-R', '1', '-q', '-o', 'out'{}]) == 0"
    bare = _imported_after(run.format(", '--no-plot'"), tmp_path)
    assert {"numpy", "numba", "pandas"} <= bare
    assert bare.isdisjoint({"matplotlib", "seaborn", "torch", "river", "dask"})
    drawn = _imported_after(run.format(""), tmp_path)
    assert "matplotlib" in drawn
    assert drawn.isdisjoint({"seaborn", "torch", "river", "dask"})
    assert sorted(p.name for p in (tmp_path / "out" / "trap").glob("*.png")) == ["panels.png", "regret.png"]


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


@pytest.mark.parametrize("order", ["mlcb first", "gymnasium first"])
def test_gymnasium_finds_the_selection_env_after_import_mlcb(order):
    imports = "import mlcb\nimport gymnasium" if order == "mlcb first" else "import gymnasium\nimport mlcb"
    out = _python(
        f"{imports}\nimport sys\nprint('mlcb.selection_env' in sys.modules)\n"
        "env = gymnasium.make('mlcb/BudgetedSelection-v0', preset='trap', budget=2, horizon=10)\n"
        "print(type(env.unwrapped).__name__, gymnasium.__spec__.loader is gymnasium.__loader__)"
    )
    assert out.split() == ["False", "BudgetedSelectionEnv", "True"]


@pytest.mark.parametrize("order", ["mlcb first", "numba first"])
def test_numba_caches_under_mlcb_after_import_mlcb(order, tmp_path):
    imports = "import mlcb\nimport numba" if order == "mlcb first" else "import numba\nimport mlcb"
    env_home = f"import os\nos.environ['XDG_CACHE_HOME'] = {str(tmp_path)!r}\nos.environ.pop('NUMBA_CACHE_DIR', None)"
    out = _python(f"{env_home}\n{imports}\nprint(numba.config.CACHE_DIR)")
    assert Path(out.strip()).parent == tmp_path / "mlcb"
    assert Path(out.strip()).name.startswith("numba-")


def test_a_package_imported_without_mlcb_is_left_alone():
    """Without ``import mlcb``, Numba keeps its own cache setting and Gymnasium its registry."""
    out = _python("import gymnasium\nprint('mlcb/BudgetedSelection-v0' in gymnasium.registry)")
    assert out.strip() == "False"


# --- the figure process of the command line ---------------------------------------------------
@pytest.fixture(scope="module")
def small_result():
    import mlcb

    return mlcb.simulate(preset="trap", budget=2, horizon=300, replications=2)


def test_the_figure_process_draws_the_same_bytes(small_result):
    from mlcb.cli.figures import FigureProcess
    from mlcb.report import figure_png

    helper = FigureProcess()
    helper.draw(small_result, ("regret", "panels"), dpi=80)
    drawn = helper.figures()
    assert drawn is not None and set(drawn) == {"regret", "panels"}
    for kind, data in drawn.items():
        assert data == figure_png(small_result, kind, 80), kind
    assert helper.figures() is None  # collected once


def test_a_figure_the_process_cannot_draw_is_drawn_in_place(small_result, tmp_path):
    """A failing figure makes the process answer nothing; save_figures then draws every figure
    itself, so the error is the one drawing in place raises."""
    from mlcb.cli.figures import FigureProcess
    from mlcb.report import save_figures
    from mlcb.validation import InputError

    helper = FigureProcess()
    helper.draw(small_result, ("regret", "no-such-kind"))
    assert helper.figures() is None
    with pytest.raises(InputError, match="unknown figure .no-such-kind."):
        save_figures(small_result, tmp_path, ["regret", "no-such-kind"], drawn=None)


def test_a_process_that_dies_or_is_not_collected(small_result):
    from mlcb.cli.figures import FigureProcess

    helper = FigureProcess()
    helper.process.kill()
    helper.draw(small_result, ("regret",))
    assert helper.figures() is None
    unused = FigureProcess()
    process = unused.process
    unused.close()  # an error before the run ended: the process is stopped
    assert process.poll() is not None and unused.process is None


def test_the_figure_process_is_used_only_where_it_saves_time(monkeypatch):
    from mlcb.cli import figures

    monkeypatch.setattr(figures, "sys", types.SimpleNamespace(modules={}))  # as if no matplotlib yet
    monkeypatch.setattr(figures, "_idle_cores", lambda: 1)
    monkeypatch.setattr(
        figures, "FigureProcess", type("Started", (figures.FigureProcess,), {"__init__": lambda self: None})
    )
    assert figures.FigureProcess.start() is None  # no idle core besides this process's own
    monkeypatch.setattr(figures, "_idle_cores", lambda: 2)
    assert figures.FigureProcess.start() is not None
    monkeypatch.setenv(figures.VARIABLE, "0")
    assert figures.FigureProcess.start() is None  # turned off
    monkeypatch.delenv(figures.VARIABLE)
    monkeypatch.setattr(figures, "sys", types.SimpleNamespace(modules={"matplotlib": None}))
    assert figures.FigureProcess.start() is None  # matplotlib imported: drawing in place costs no import


def test_the_command_line_with_and_without_the_figure_process(tmp_path):
    """``python -m mlcb.cli run`` (the command line as a process) writes the same figures with
    the figure process and without it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    outputs = {}
    for setting in ("1", "0"):
        out = tmp_path / f"out-{setting}"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "mlcb.cli",
                "run",
                "trap",
                "-M",
                "2",
                "-T",
                "300",
                "-R",
                "2",
                "-q",
                "-o",
                str(out),
            ],
            capture_output=True,
            text=True,
            env={**env, "MLCB_FIGURE_PROCESS": setting},
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        outputs[setting] = {p.name: p.read_bytes() for p in (out / "trap").glob("*.png")}
    assert sorted(outputs["1"]) == ["panels.png", "regret.png"]
    assert outputs["1"] == outputs["0"]


class _Replied:
    """Stands in for the figure process: its reply is given."""

    def __init__(self, reply: bytes, returncode: int = 0) -> None:
        self.reply, self.returncode = reply, returncode

    def communicate(self, request, timeout=None):
        return self.reply, None


def _helper(reply: bytes, returncode: int = 0):
    from mlcb.cli.figures import FigureProcess

    helper = FigureProcess.__new__(FigureProcess)
    helper.process, helper.request = _Replied(reply, returncode), b"request"
    return helper


def test_the_reply_is_read_whole_and_its_warnings_are_given_again():
    header = {"figures": [["regret", 3], ["panels", 2]], "warnings": [["RuntimeWarning", "r"], ["Odd", "o"]]}
    reply = json.dumps(header).encode() + b"\nabcde"
    with pytest.warns(RuntimeWarning, match="^r$"), pytest.warns(UserWarning, match="^o$"):
        assert _helper(reply).figures() == {"regret": b"abc", "panels": b"de"}
    assert _helper(reply[:-1]).figures() is None  # bytes missing
    assert _helper(b"not json\nabcde").figures() is None
    assert _helper(reply, returncode=1).figures() is None


def test_a_figure_a_plugin_registers_is_drawn_in_place(small_result, monkeypatch):
    """The figure process loads no plugin: a built-in name registered again by a plugin is left
    to the command's own process."""
    from mlcb.cli.figures import FigureProcess
    from mlcb.registry import Entry
    from mlcb.storage import outputs

    monkeypatch.setitem(outputs.FIGURES._entries, "regret", Entry("regret", "my_plugin:regret", {}, ""))
    helper = FigureProcess()
    helper.draw(small_result, ("regret",))
    assert helper.request is None and helper.figures() is None
    helper.close()
