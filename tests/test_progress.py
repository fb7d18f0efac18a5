"""What a run shows while it runs: progress in rounds (moving within a long replication), a line
while Numba compiles, and plain lines, no carriage returns, when standard error is a log file."""

from __future__ import annotations

import io
import subprocess
import sys

import numba
import numpy as np
import pytest

import mlcb
from mlcb import engine, presets
from mlcb.config import checkpoint_grid
from mlcb.engine import python_loop
from mlcb.engine import replications as compiled_replications
from mlcb.engine.progress import Progress
from mlcb.kernels.jit import JIT_DISABLED, CompileWatch


def _arrays(replication):
    return {
        name: getattr(replication, name)
        for name in ("regret", "pseudo_regret", "certificate", "trained", "deployed", "trace_selected")
    }


@pytest.mark.parametrize("name", ["trap", "glm"])
def test_rounds_played_in_slices_are_the_rounds_of_one_call(name, monkeypatch):
    config = presets.get(name).config(2, horizon=3_000, replications=1)
    problem = engine.build(config)
    grid = checkpoint_grid(config.horizon, 20)
    whole = engine.run_replication(problem, 3, 1, config.horizon, grid, trace_rounds=config.horizon)
    monkeypatch.setattr(compiled_replications, "FIRST_SLICE", 7)  # many slices, of growing sizes
    told: list[tuple[int, int]] = []
    sliced = engine.run_replication(
        problem,
        3,
        1,
        config.horizon,
        grid,
        trace_rounds=config.horizon,
        on_rounds=lambda r, n: told.append((r, n)),
    )
    assert len(told) > 3 and {r for r, _ in told} == {1} and sum(n for _, n in told) == config.horizon
    for key, value in _arrays(whole).items():
        np.testing.assert_array_equal(getattr(sliced, key), value, err_msg=key)


@pytest.mark.skipif(JIT_DISABLED, reason="no dispatch to skip without the JIT")
def test_a_slice_after_the_first_calls_the_compiled_function_the_dispatcher_chose():
    """Numba's dispatcher typed the round loop's arguments on every slice (0.5 ms a call, against
    1 us for the call): the slices after the first call the compiled function itself, the one
    the dispatcher ran for these argument types."""
    from numba import types

    from mlcb.kernels.dispatch import direct

    @numba.njit
    def plus_one(x):
        return x + 1

    plus_one(1)
    assert direct(plus_one, (1,)) is plus_one.overloads[(types.int64,)].entry_point  # its only one
    plus_one(1.5)
    assert direct(plus_one, (2,)) is plus_one.overloads[(types.int64,)].entry_point
    assert direct(plus_one, (2.5,))(2.5) == 3.5
    assert direct(plus_one, (1j,)) is plus_one  # nothing compiled for it: the dispatcher


def test_the_python_engine_reports_its_rounds(monkeypatch):
    config = presets.get("trap").config(2, horizon=700, replications=3)
    problem = engine.build(config)
    grid = checkpoint_grid(config.horizon, 10)
    told: dict[int, int] = {}

    def on_rounds(replication, rounds):
        told[replication] = told.get(replication, 0) + rounds

    monkeypatch.setattr(python_loop, "REPORT_EVERY", 64)
    python_loop.run_replications(problem, 0, range(3), config.horizon, grid, on_rounds=on_rounds, block=2)
    assert told == {0: 700, 1: 700, 2: 700}


def test_a_log_gets_a_line_per_setting_and_no_carriage_returns():
    log = io.StringIO()
    with Progress("trap M=2", replications=3, horizon=10_000, stream=log, line_every=0.0) as progress:
        progress.done(0)  # loaded from its part: its rounds count at once
        for replication in (1, 2):
            for _ in range(4):
                progress.rounds(replication, 2_500)
            progress.done(replication)
    text = log.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert lines[-1].startswith("trap M=2: 3 replications of 10,000 rounds in ")
    assert any("% of the rounds" in line for line in lines[:-1])  # a long setting: lines while it runs


@pytest.mark.skipif(JIT_DISABLED, reason="nothing is compiled with the JIT disabled")
def test_compiling_is_said_while_it_happens():
    log = io.StringIO()
    with Progress("mine", replications=1, horizon=10, stream=log) as progress:
        numba.njit(lambda x: x + 1)(1)  # a fresh function: compiled here
        said = log.getvalue()
        progress.rounds(0, 10)
        progress.done(0)
    assert said.startswith("mine: compiling the engine for this setting (")
    assert "mine: compiled in " in log.getvalue()
    assert "of it compiling" in log.getvalue().splitlines()[-1]
    with CompileWatch() as watch:
        numba.njit(lambda x: x - 1)(1)
    assert watch.count >= 1 and watch.seconds > 0


def test_simulate_shows_its_progress_on_standard_error_as_lines(capsys):
    mlcb.simulate(preset="trap", budget=2, horizon=2_000, replications=2, progress=True)
    err = capsys.readouterr().err
    assert "\r" not in err
    assert err.splitlines()[-1].startswith("mlcb M=2: 2 replications of 2,000 rounds in ")


def test_the_command_line_in_a_log_file_writes_lines(tmp_path):
    log = tmp_path / "log.txt"
    with open(log, "w") as out:
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
                "1e3",
                "-R",
                "2",
                "--out",
                str(tmp_path),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
        )
    text = log.read_text()
    assert done.returncode == 0, text
    assert "\r" not in text
    assert "mlcb M=2: 2 replications of 1,000 rounds in " in text


def test_a_sweep_in_a_log_writes_a_line_per_setting(tmp_path, capsys):
    grid = {"name": "logged", "preset": "trap", "horizon": 300, "replications": 2, "block": 1}
    mlcb.sweep({**grid, "grid": {"budget": [1, 2]}}, out=tmp_path, workers=1, progress=True)
    err = capsys.readouterr().err
    assert "\r" not in err
    done = [line for line in err.splitlines() if line.startswith("logged: ") and " done (" in line]
    assert len(done) == 2 and done[-1].startswith("logged: mlcb M=") and "(2 of 2 settings, " in done[-1]
