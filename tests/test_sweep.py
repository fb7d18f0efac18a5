"""Sweeps with the local executor: the grid, validation before any task, parts on disk, resume
after an interruption, task sizes, and failures reported with their setting."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import mlcb
from mlcb import engine, sweeps
from mlcb.cli import main
from mlcb.engine import CorruptPartWarning
from mlcb.sweeps.executors import PARENT_POLL

FRAMES = ("curves", "experts", "replications")
GRID = {
    "preset": "trap",
    "name": "small",
    "horizon": 1_500,
    "replications": 5,
    "block": 2,
    "checkpoints": 30,
    "grid": {"budget": [1, 2], "n_experts": [4, 6]},
}


def assert_same(left: mlcb.Result, right: mlcb.Result) -> None:
    for name in FRAMES:
        pd.testing.assert_frame_equal(getattr(left, name), getattr(right, name))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The grid run with the local executor, two processes, blocks of 2."""
    return mlcb.sweep(GRID, out=tmp_path_factory.mktemp("reference"), workers=2)


# --- the grid ----------------------------------------------------------------------------------
def test_grid_expands_into_the_product_in_order():
    grid = sweeps.make_grid(GRID)
    assert [s.label for s in grid.settings] == [
        "mlcb M=1 K=4",
        "mlcb M=1 K=6",
        "mlcb M=2 K=4",
        "mlcb M=2 K=6",
    ]
    assert [(s.config.budget, s.config.n_experts) for s in grid.settings] == [(1, 4), (1, 6), (2, 4), (2, 6)]
    assert all(s.config.horizon == 1_500 and s.config.replications == 5 for s in grid.settings)
    assert [(t.first, t.stop) for t in grid.tasks()[:3]] == [(0, 2), (2, 4), (4, 5)]
    assert len(grid.tasks()) == 12


def test_planning_a_sweep_digests_each_key_once(monkeypatch, tmp_path):
    """Every task names its setting's key and every payload looks its setting up by key: the key
    is digested once per setting, and the look-up is a table (a digest per access and a scan of
    the settings per task made a grid of 2,000 settings in 40,000 tasks wait minutes before its
    first task)."""
    from mlcb.config import SimulationConfig
    from mlcb.sweeps import parts

    grid = sweeps.make_grid({**GRID, "block": 1})
    digested = []
    real = SimulationConfig.key
    monkeypatch.setattr(SimulationConfig, "key", lambda self: digested.append(self) or real(self))
    tasks = grid.tasks()
    payloads = [sweeps.payload(grid, task) for task in tasks]
    assert parts.plan(tmp_path, grid)[1] == tasks
    assert len(tasks) == 20 and len(digested) == 4
    assert [p["key"] for p in payloads] == [t.key for t in tasks]
    assert all(grid.setting(t.key).values == p["values"] for t, p in zip(tasks, payloads))


def test_a_grid_of_many_varied_fields_labels_every_setting_within_the_limit():
    """Varying several fields made labels of more than 120 characters, refused as "label must be
    1 to 120 printable characters" though the researcher wrote none. A long label names the
    parameters without their table, and one still too long is cut and ends with the start of
    its key; short labels are as before (saved parts carry them)."""
    from mlcb.validation import MAX_LABEL

    many = {
        "env_params.n_arms": [20, 30],
        "delta": [0.012345678901234567, 0.2],
        "policy_params.bonus_scale": [0.123456789012345, 1],
        "calibration": ["practical", "theory"],
    }
    grid = sweeps.make_grid({"preset": "trap", "replications": 1, "grid": many})
    labels = [s.label for s in grid.settings]
    assert len(set(labels)) == len(labels) == 16 and max(map(len, labels)) <= MAX_LABEL
    assert labels[:2] == [
        "mlcb M=1 n_arms=20 delta=0.012345678901234567 bonus_scale=0.123456789012345 calibration=practical",
        "mlcb M=1 env_params.n_arms=20 delta=0.012345678901234567 policy_params.bonus_scale=0.123456789012345 "
        "calibration=theory",
    ]
    seeds = [2**63 - 2, 2**63 - 1]  # the longest a setting holds (a larger one is refused)
    long = {
        "seed": seeds,
        "env_params.n_arms": [20, 30],
        "delta": [0.12345678912345678, 0.2],
        "policy_params.bonus_scale": [1 / 9, 1],
        "calibration": ["practical", "theory"],
    }
    grid = sweeps.make_grid({"preset": "trap", "replications": 1, "grid": long})
    labels = [s.label for s in grid.settings]
    assert len(set(labels)) == 32 and max(map(len, labels)) == MAX_LABEL
    head = f"mlcb M=1 seed={seeds[0]} n_arms=20 delta=0.12345678912345678 bonus_scale=0.1111111111111111"
    assert labels[0] == f"{head} calibra... {grid.settings[0].key[:8]}"
    assert labels[1] == f"{head} calibration=theory"
    assert labels[6] == (
        f"mlcb M=1 seed={seeds[0]} env_params.n_arms=20 delta=0.2 policy_params.bonus_scale=1 calibration=practical"
    )
    short = sweeps.make_grid({"preset": "trap", "replications": 1, "grid": {"env_params.n_arms": [2, 3]}})
    assert [s.label for s in short.settings] == [
        "mlcb M=1 env_params.n_arms=2",
        "mlcb M=1 env_params.n_arms=3",
    ]


def test_explicit_settings_and_labels():
    grid = sweeps.make_grid(
        {
            "preset": "trap",
            "horizon": 500,
            "replications": 2,
            "settings": [
                {"policy": "mlcb", "budget": 2},
                {"policy": "limited-advice", "budget": 2},
                {"policy": "mlcb", "budget": 3, "calibration": "practical"},
            ],
        }
    )
    assert [s.label for s in grid.settings] == [
        "mlcb M=2 calibration=theory",
        "limited-advice M=2 calibration=theory",
        "mlcb M=3 calibration=practical",
    ]
    assert grid.settings[2].config.policy_params == {"bonus_scale": 0.5}
    assert grid.name == "trap-sweep"


def test_sweep_equals_simulate(reference):
    """Each setting of the sweep holds exactly what ``simulate`` gives for it."""
    result = reference.result
    assert result.settings == ["mlcb M=1 K=4", "mlcb M=1 K=6", "mlcb M=2 K=4", "mlcb M=2 K=6"]
    config = sweeps.make_grid(GRID).settings[3].config
    alone = mlcb.simulate(config)
    rows = result.curves[result.curves["setting"] == "mlcb M=2 K=6"].reset_index(drop=True)
    expected = alone.curves.assign(setting="mlcb M=2 K=6")
    pd.testing.assert_frame_equal(rows, expected)
    assert reference.computed == 12 and reference.skipped == 0 and not reference.failed
    meta = result.metadata["settings"]["mlcb M=2 K=6"]
    assert (
        meta["key"] == config.key()
        and meta["n_experts"] == 6
        and meta["rate_exponent"] == pytest.approx(2 / 3)
    )


def test_sweep_metadata_lists_the_grid_and_the_parts(reference):
    meta = json.loads((reference.path / "sweep.json").read_text())
    assert meta["grid"] == GRID
    assert len(meta["settings"]) == 4 and len(meta["parts_done"]) == 12 and meta["parts_to_do"] == []
    key = meta["settings"][0]["key"]
    assert f"key={key}/block-000000-000002" in meta["parts_done"]
    files = sorted(p.name for p in (reference.path / "data" / "curves" / f"key={key}").iterdir())
    assert files == [
        "block-000000-000002.parquet",
        "block-000002-000004.parquet",
        "block-000004-000005.parquet",
    ]
    # A partitioned Parquet dataset: readable as one table with the setting key as a column.
    table = pd.read_parquet(reference.path / "data" / "curves")
    assert len(table) == len(reference.result.curves) and table["key"].nunique() == 4


def test_show_prints_a_sweep(reference, capsys):
    assert main(["show", str(reference.path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        f"sweep: {reference.path} (small, preset trap, 5 replication(s) per setting in tasks of 2"
    )
    assert f"grid: {json.dumps(GRID)}" in out and "pseudo-regret" in out and "versions: mlcb" in out
    for label in ("mlcb M=1 K=4", "mlcb M=1 K=6", "mlcb M=2 K=4", "mlcb M=2 K=6"):
        assert f"  {label}: policy mlcb, budget {label[7]}, calibration theory, engine compiled" in out


def test_task_size_does_not_change_results(reference, tmp_path):
    other = mlcb.sweep(GRID, out=tmp_path, workers=2, block=3)
    assert other.computed == 8
    assert_same(reference.result, other.result)


def test_rerun_skips_done_parts_and_recomputes_missing_and_damaged(reference, tmp_path):
    out = tmp_path / "copy"
    import shutil

    shutil.copytree(reference.path, out / "small")
    key = sweeps.make_grid(GRID).settings[1].key
    (out / "small" / "data" / "experts" / f"key={key}" / "block-000002-000004.parquet").unlink()
    damaged = out / "small" / "data" / "curves" / f"key={key}" / "block-000000-000002.parquet"
    damaged.write_bytes(b"not parquet")
    with pytest.warns(UserWarning, match="block-000000-000002.parquet: not a readable Parquet file"):
        again = mlcb.sweep(GRID, out=out, workers=2)
    assert (again.computed, again.skipped) == (2, 10)
    assert damaged.with_name(damaged.name + ".corrupt").exists()
    assert_same(reference.result, again.result)
    third = mlcb.sweep(GRID, out=out, workers=2)
    assert (third.computed, third.skipped) == (0, 12)


def test_a_rerun_reads_each_part_once_and_a_part_replaced_since_again(reference, tmp_path, monkeypatch):
    """A rerun validated every part to plan the tasks, then read and validated each again for its
    result (a finished sweep of 400 parts took 12 s to rerun, now 8). The parts kept give the
    result read from disk; a part replaced after the sweep returned is read from disk."""
    import shutil

    from mlcb.sweeps import parts

    expected = reference.result
    out = tmp_path / "copy"
    shutil.copytree(reference.path, out / "small")
    reads: list[str] = []
    real = parts.read_part

    def counted(root, setting, name):
        reads.append(name)
        return real(root, setting, name)

    monkeypatch.setattr(parts, "read_part", counted)
    monkeypatch.setattr(sweeps, "read_part", counted)
    again = mlcb.sweep(GRID, out=out, workers=2)
    assert (again.computed, again.skipped, len(reads)) == (0, 12, 12)
    assert_same(expected, again.result)
    assert len(reads) == 12
    later = mlcb.sweep(GRID, out=out, workers=2)
    key = sweeps.make_grid(GRID).settings[1].key
    replaced = out / "small" / "data" / "curves" / f"key={key}" / "block-000000-000002.parquet"
    frame = pd.read_parquet(replaced)
    frame.loc[0, "regret"] += 1.0
    frame.to_parquet(replaced, index=False)
    assert later.result.curves["regret"].sum() == pytest.approx(expected.curves["regret"].sum() + 1.0)
    assert len(reads) == 12 + 12 + 1
    monkeypatch.setattr(parts, "KEEP_BYTES", 0)  # no room to keep a part: each is read twice
    assert mlcb.sweep(GRID, out=out, workers=2).result.curves.shape == expected.curves.shape
    assert len(reads) == 25 + 24


def test_a_renamed_setting_keeps_its_parts(tmp_path):
    """A label names a setting and is no part of its key: renaming a ``[[settings]]`` table's
    label and running the same sweep again reads the finished parts under the new name. They
    were set aside as damaged ("rows of another setting than 'renamed'") and recomputed."""
    import warnings

    named = {
        "preset": "trap",
        "name": "named",
        "horizon": 200,
        "replications": 2,
        "checkpoints": 5,
        "settings": [{"budget": 1, "label": "first"}, {"budget": 2}],
    }
    before = mlcb.sweep(named, out=tmp_path, workers=1)
    renamed = {**named, "settings": [{"budget": 1, "label": "renamed"}, {"budget": 2}]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptPartWarning)
        after = mlcb.sweep(renamed, out=tmp_path, workers=1)
    assert (after.computed, after.skipped) == (0, 4)
    assert after.result.settings == ["renamed", "mlcb M=2"]
    assert after.result.metadata["settings"]["renamed"]["config"]["label"] == "renamed"
    for name in FRAMES:
        expected = getattr(before.result, name).replace({"setting": {"first": "renamed"}})
        pd.testing.assert_frame_equal(getattr(after.result, name), expected)


def test_a_damaged_part_is_one_line_on_the_command_line(reference, tmp_path):
    """What `mlcb sweep` prints about a damaged part it recomputes: one line naming the file and
    what was done, no line of mlcb's source."""
    import shutil

    shutil.copytree(reference.path, tmp_path / "small")
    key = sweeps.make_grid(GRID).settings[0].key
    damaged = tmp_path / "small" / "data" / "replications" / f"key={key}" / "block-000002-000004.parquet"
    damaged.write_bytes(b"PAR1 not parquet")
    grid_file = tmp_path / "small.toml"
    lines = [f"{k} = {json.dumps(v)}" for k, v in GRID.items() if k != "grid"]
    grid_file.write_text("\n".join([*lines, "[grid]", "budget = [1, 2]", "n_experts = [4, 6]"]) + "\n")
    command = [sys.executable, "-m", "mlcb.cli", "sweep", str(grid_file), "--out", str(tmp_path)]
    done = subprocess.run(
        [*command, "-w", "1", "--no-plot", "-q"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"mlcb: CorruptPartWarning: {damaged}: not a readable Parquet file (")
    assert line.endswith(
        "); the part's files renamed *.corrupt, replications 2-3 of 'mlcb M=1 K=4' recomputed"
    )
    assert "1 task(s) run, 11 already done, 0 failed" in done.stdout


def test_more_replications_reuse_the_parts(reference, tmp_path):
    import shutil

    shutil.copytree(reference.path, tmp_path / "small")
    bigger = mlcb.sweep({**GRID, "replications": 6}, out=tmp_path, workers=2)
    assert (bigger.computed, bigger.skipped) == (4, 12)  # replication 5 of each setting
    result = bigger.result
    assert result.replications.groupby("setting").size().tolist() == [6, 6, 6, 6]
    old = result.curves[result.curves["replication"] < 5].reset_index(drop=True)
    pd.testing.assert_frame_equal(old, reference.result.curves)


def _interruptible() -> None:
    """In the child before it runs: SIGINT back to its default action. A shell starts background
    jobs with SIGINT ignored, and Python then leaves it ignored: a suite run as `make test &`
    would see the interrupt do nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


#: A grid whose first setting's two tasks take milliseconds and whose second setting's take about
#: a second each: a signal sent when the first part appears lands while tasks remain, however
#: loaded the machine is (one worker runs the tasks in order).
SLOW_GRID = {
    "preset": "trap",
    "name": "small",
    "replications": 2,
    "block": 1,
    "checkpoints": 30,
    "budget": 1,
    "n_experts": 4,
    "settings": [{"horizon": 1_500}, {"horizon": 4_000_000}],
}


@pytest.fixture(scope="module")
def slow_reference(tmp_path_factory):
    return mlcb.sweep(SLOW_GRID, out=tmp_path_factory.mktemp("slow-reference"), workers=1)


@pytest.mark.parametrize(
    ("sent", "status", "message"),
    [
        (signal.SIGINT, 130, "mlcb: interrupted; finished replications are kept"),
        (signal.SIGTERM, -signal.SIGTERM, None),  # the default action: no word, nothing lost
    ],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_stopped_command_resumes_to_the_same_result(slow_reference, tmp_path, sent, status, message):
    """SIGINT or SIGTERM to `mlcb sweep` after its first part: the parts on disk stay, the worker
    processes do not outlive the command (they would hold the sweep's lock and keep the resume
    waiting), the same command finishes the rest, and the result equals the undisturbed one."""
    grid_file = tmp_path / "small.toml"
    lines = [f"{k} = {json.dumps(v)}" for k, v in SLOW_GRID.items() if k != "settings"]
    lines += [f"[[settings]]\nhorizon = {s['horizon']}" for s in SLOW_GRID["settings"]]
    grid_file.write_text("\n".join(lines) + "\n")
    command = [sys.executable, "-m", "mlcb.cli", "sweep", str(grid_file), "--out", str(tmp_path), "-w", "1"]
    command += ["--no-plot", "-q"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_interruptible
    )
    parts = tmp_path / "small" / "data" / "curves"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if parts.is_dir() and any(parts.glob("*/*.parquet")):
            break
        time.sleep(0.01)
    process.send_signal(sent)
    _, err = process.communicate(timeout=120)
    assert process.returncode == status, err
    assert "Traceback" not in err
    if message is not None:
        assert message in err
    done = len(list(parts.glob("*/*.parquet")))
    assert 1 <= done < 4
    # An orphaned worker checks its parent every PARENT_POLL (0.2 s) and leaves at once: the lock
    # is free within 2 s, or the resume fails naming the holder (a worker that lingers for seconds).
    deadline = time.monotonic() + 10 * PARENT_POLL
    while True:
        finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
        if "is being written by" not in finished.stderr or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert finished.returncode == 0, finished.stderr
    assert f"{4 - done} task(s) run, {done} already done, 0 failed" in finished.stdout
    assert_same(slow_reference.result, sweeps.load(tmp_path / "small"))


# --- validation before any task ----------------------------------------------------------------
def test_invalid_combination_is_named_before_any_task(tmp_path):
    grid = {**GRID, "grid": {"budget": [2, 5], "n_experts": [4, 6]}}
    with pytest.raises(
        ValueError,
        match=r"grid setting budget=5, n_experts=4 is invalid: budget must be an integer in \[1, n_experts=4\], got 5",
    ):
        mlcb.sweep(grid, out=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_cli_rejects_a_bad_grid_in_one_line(tmp_path, capsys):
    grid_file = tmp_path / "bad.toml"
    grid_file.write_text('preset = "trap"\nhorizon = 100\n[grid]\nbudget = [1, 11]\n')
    assert main(["sweep", str(grid_file), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == (
        "mlcb: error: grid setting budget=11 is invalid: budget must be an integer in [1, n_experts=10], got 11\n"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ({"horizon": 100}, "preset: a grid needs a preset"),
        (
            {"env": "mlcb/Trap-v0", "experts": [{"family": "ucb1"}]},
            'e.g. preset = "trap"; with env, experts '
            "this is a setting file of its own environment and pool: run it with 'mlcb run FILE'",
        ),
        ({"preset": "nope"}, "unknown preset 'nope'"),
        ({"preset": "trap", "budgets": [1]}, "grid file: unknown key 'budgets'"),
        ({"preset": "trap", "grid": {"horizon": []}}, "grid.horizon: an empty list"),
        ({"preset": "trap", "grid": {"budget": [1]}, "settings": [{}]}, "not both"),
        ({"preset": "trap", "budget": 1, "grid": {"budget": [1, 2]}}, "grid.budget: also set outside"),
        ({"preset": "trap", "grid": {"horizon": [100, 0]}}, "grid setting horizon=0 is invalid: horizon"),
        ({"preset": "trap", "grid": {"delta": [0.1, 2.0]}}, "grid setting delta=2.0 is invalid: delta"),
        ({"preset": "trap", "replications": 0}, "replications must be an integer >= 1"),
        (
            {"preset": "trap", "budget": [1, 11]},
            "grid file: budget = [1, 11] gives several values to one setting; list the values under [grid]",
        ),
        (
            {"preset": "trap", "settings": [{"budget": [1, 2]}]},
            "settings[0]: budget = [1, 2] gives several values",
        ),
        (
            {"preset": "trap", "horizon": 0},
            "grid: the shared setting is invalid: horizon must be an integer >= 1, got 0",
        ),
        ({"preset": "trap", "settings": [{"budget": 1}, {"budget": 1}]}, "share the label"),
        ({"preset": "trap", "name": "../x"}, "name"),
        # The parameters' tables: not a table (was "'int' object is not iterable"); a parameter
        # given twice, of which one was dropped without a word.
        (
            {"preset": "trap", "env_params": 3},
            "grid: the shared setting is invalid: env_params must be a table of parameters (env_params = "
            '{NAME = value}, or "env_params.NAME" = value), got 3',
        ),
        (
            {"preset": "trap", "grid": {"policy_params": [{"bonus_scale": 0.5}, [1]]}},
            "grid setting policy_params=[1] is invalid: policy_params must be a table of parameters",
        ),
        (
            {"preset": "trap", "grid": {"n_experts": [4, 6], "env_params.n_experts": [5]}},
            "grid setting n_experts=4, env_params.n_experts=5 is invalid: n_experts is given twice, as "
            "n_experts and as env_params.n_experts; set it in one place",
        ),
        (
            {"preset": "trap", "env_params": {"n_arms": 2}, "grid": {"env_params.n_arms": [3, 4]}},
            "grid setting env_params.n_arms=3 is invalid: env_params.n_arms is given twice, as "
            "env_params.n_arms and in the table env_params; set it in one place",
        ),
        (
            {"preset": "trap", "n_experts": 4, "settings": [{"env_params": {"n_experts": 6}}]},
            "n_experts is given twice",
        ),
        # A parameter of one policy given to a grid of several: where it goes instead.
        (
            {
                "preset": "trap",
                "grid": {"policy": ["mlcb", "limited-advice"], "policy_params.eta_scale": [0.5]},
            },
            "grid setting policy='mlcb', policy_params.eta_scale=0.5 is invalid: policy_params: MLCB has no "
            "parameter 'eta_scale'; its parameters: bonus_scale, bounds, authors_c, top_m, selection (a "
            "parameter that one policy of the grid takes goes in [[settings]] tables, one per setting, "
            "instead of [grid])",
        ),
        # One setting with a number written two ways: two keys, its replications run twice.
        (
            {"preset": "trap", "grid": {"env_params.n_arms": [2, 2.0]}},
            "grid: settings env_params.n_arms=2 and env_params.n_arms=2.0 are the same setting with a "
            "number written two ways (such as 2 and 2.0), which would run it twice under two keys; "
            "write each value one way",
        ),
        (
            {
                "preset": "trap",
                "policy": "limited-advice",
                "grid": {"policy_params": [{"eta_scale": 1}, {"eta_scale": 1.0}]},
            },
            "are the same setting with a number written two ways",
        ),
        # A count beyond the kernels' integers (was Numba's "non-precise type pyobject" as the
        # run started): named with its range before any work.
        (
            {"preset": "trap", "policy": "bandit-ucb1", "grid": {"policy_params.burn_in": [100, 10**18]}},
            "grid setting policy_params.burn_in=1000000000000000000 is invalid: policy_params: "
            "burn_in must be an integer in [0, 10_000_000_000]",
        ),
    ],
)
def test_bad_grids_are_refused(grid, message, tmp_path):
    import re

    with pytest.raises(ValueError, match=re.escape(message)):
        mlcb.sweep(grid, out=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_bad_options_are_refused_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="executor must be one of"):
        mlcb.sweep(GRID, out=tmp_path, executor="slurm")
    with pytest.raises(ValueError, match="only used with executor 'dask'"):
        mlcb.sweep(GRID, out=tmp_path, scheduler="tcp://127.0.0.1:1")
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        mlcb.sweep(GRID, out=tmp_path, workers=0)
    with pytest.raises(ValueError, match="block must be an integer >= 1"):
        mlcb.sweep(GRID, out=tmp_path, block=0)
    assert list(tmp_path.iterdir()) == []


def test_switches_and_callbacks_are_checked_before_any_work(reference, tmp_path):
    """``overwrite="no"`` is a true string: it replaced another sweep. A callback that is no
    function failed only when the first task had finished. Both are refused first."""
    import shutil

    shutil.copytree(reference.path, tmp_path / "small")
    other = {**GRID, "grid": {"budget": [1, 3], "n_experts": [4, 6]}}
    with pytest.raises(ValueError, match="^overwrite must be True or False, got 'no'$"):
        mlcb.sweep(other, out=tmp_path, overwrite="no")
    with pytest.raises(ValueError, match="^progress must be True or False, got 'yes'$"):
        mlcb.sweep(other, out=tmp_path, progress="yes")
    with pytest.raises(TypeError, match="^on_part must be a function or None, got int 3$"):
        mlcb.sweep({**GRID, "name": "fresh"}, out=tmp_path, on_part=3)
    with pytest.raises(TypeError, match="^echo must be a function or None, got str 'print'$"):
        mlcb.sweep({**GRID, "name": "fresh"}, out=tmp_path, executor="dask", echo="print")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small"]
    assert json.loads((tmp_path / "small" / "sweep.json").read_text())["grid"] == GRID


def test_a_directory_of_another_sweep_is_refused(reference, tmp_path):
    import shutil

    shutil.copytree(reference.path, tmp_path / "small")
    other = {**GRID, "grid": {"budget": [1, 3], "n_experts": [4, 6]}}
    with pytest.raises(ValueError, match="holds a sweep of other settings; pass --overwrite") as caught:
        mlcb.sweep(other, out=tmp_path)
    # Two of its settings (M=1) are the new grid's: --overwrite would delete their parts too.
    assert str(caught.value).endswith(
        "or choose another --out (2 of its settings are this grid's: --overwrite deletes their finished "
        "parts too; to keep them, run the settings that differ as a grid of their own, with another name)"
    )
    replaced = mlcb.sweep({**other, "replications": 1}, out=tmp_path, overwrite=True, workers=2)
    assert replaced.computed == 4 and replaced.result.settings[1] == "mlcb M=1 K=6"


def test_the_part_of_the_millionth_replication_is_the_sweeps_own(tmp_path):
    """A setting of 10**6 replications (the most allowed) ends in the part ``block-999999-1000000``,
    seven digits: it was never found again (recomputed at every rerun, left out by ``load``) and
    counted as a file of one's own, so the sweep could not be resumed at all."""
    from mlcb.sweeps import parts

    grid = sweeps.make_grid(
        {
            "preset": "trap",
            "name": "big",
            "horizon": 50,
            "replications": 10**6,
            "block": 10**6,
            "checkpoints": 5,
            "n_experts": 4,
        }
    )
    setting = grid.settings[0]
    last = sweeps.Task(setting.label, setting.key, 10**6 - 1, 10**6)
    assert last.name == "block-999999-1000000"
    root = tmp_path / "big"
    parts.write_part(root, last, sweeps.run_task(sweeps.payload(grid, last)))
    (root / "sweep.json").write_text(json.dumps(sweeps._metadata(grid, set(), [], [])))
    done, todo = parts.plan(root, grid)
    assert done == [last] and [(t.first, t.stop) for t in todo] == [(0, 10**6 - 1)]
    assert parts.foreign_entries(root, sweeps.own_files()) == []
    assert sweeps.load(root).replications["replication"].tolist() == [10**6 - 1]


def test_a_sweep_of_the_same_settings_under_other_keys_says_why(reference, tmp_path):
    """A saved sweep whose keys are not the grid's, though its settings are the grid's, is named
    for what differs: a number written another way (``2`` saved, ``2.0`` now: the key digests the
    value as written, so no saved part would be reused), or the mlcb version that keyed it. It
    said "holds a sweep of other settings" and offered --overwrite, which discards the parts."""
    import shutil

    written = {**GRID, "replications": 1, "grid": {"env_params.n_arms": [2, 3]}}
    saved = sweeps.make_grid(written)
    (tmp_path / "small").mkdir()
    (tmp_path / "small" / "sweep.json").write_text(json.dumps(sweeps._metadata(saved, set(), [], [])))
    rewritten = {**written, "grid": {"env_params.n_arms": [2.0, 3]}}
    with pytest.raises(ValueError) as caught:
        mlcb.sweep(rewritten, out=tmp_path)
    assert str(caught.value) == (
        f"{tmp_path / 'small'} holds this grid's settings with a number written another way "
        "(env_params.n_arms = 2 there, 2.0 here), which gives them other keys; write it as the saved "
        "sweep does to resume it; pass --overwrite to replace it, or choose another --out"
    )
    shutil.copytree(reference.path, tmp_path / "old" / "small")
    meta = json.loads((tmp_path / "old" / "small" / "sweep.json").read_text())
    meta["versions"]["mlcb"] = "0.0.1"
    meta["settings"][0]["key"] = "0" * 16
    (tmp_path / "old" / "small" / "sweep.json").write_text(json.dumps(meta))
    with pytest.raises(
        ValueError, match="holds this grid's settings saved under other keys by mlcb 0.0.1, this is "
    ):
        mlcb.sweep(GRID, out=tmp_path / "old")
    meta["settings"][0]["values"] = [1]  # a description damaged there: no comparison, no traceback
    (tmp_path / "old" / "small" / "sweep.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="holds a sweep of other settings; pass --overwrite"):
        mlcb.sweep(GRID, out=tmp_path / "old")
    assert sorted(p.name for p in (tmp_path / "small").iterdir()) == ["sweep.json"]


# --- issue 36, items 3 and 5: overwrite replaces only mlcb's files; the sweep's folders checked -----
@pytest.mark.parametrize("place", ["thesis.tex", "data/notes.txt", "data/curves/notes.txt"])
def test_overwrite_never_deletes_a_file_mlcb_did_not_write(reference, tmp_path, capsys, place):
    """``thesis.tex`` beside a sweep of other settings, or a file of one's own inside its data
    folders: ``--overwrite`` stops, naming it, and never suggests itself."""
    import shutil

    shutil.copytree(reference.path, tmp_path / "small")
    mine = tmp_path / "small" / place
    mine.write_text("mine")
    other = {**GRID, "grid": {"budget": [1, 3], "n_experts": [4, 6]}}
    for overwrite in (False, True):
        with pytest.raises(ValueError) as caught:
            mlcb.sweep(other, out=tmp_path, overwrite=overwrite)
        assert str(caught.value) == (
            f"{tmp_path / 'small'} holds files that are no part of an mlcb sweep ({place}); mlcb never "
            "deletes what it did not write: move them away, or choose another --out"
        )
    assert mine.read_text() == "mine"
    grid = tmp_path / "small.toml"
    grid.write_text('preset = "trap"\nhorizon = 100\nreplications = 1\n')
    assert main(["sweep", str(grid), "--out", str(tmp_path), "--overwrite", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"({place})" in err and "--overwrite" not in err
    assert mine.read_text() == "mine"


def test_a_folder_of_ones_own_is_not_replaced_by_a_sweep(tmp_path):
    (tmp_path / "small").mkdir()
    (tmp_path / "small" / "thesis.tex").write_text("mine")
    with pytest.raises(ValueError, match=r"holds files that are no part of an mlcb sweep \(thesis.tex\)"):
        mlcb.sweep({**GRID, "replications": 1}, out=tmp_path, overwrite=True)
    assert (tmp_path / "small" / "thesis.tex").read_text() == "mine"


def test_a_part_replaced_by_a_folder_is_set_aside_and_the_rerun_recovers(reference, tmp_path, capsys):
    """A block's Parquet file replaced by a folder made every rerun end in IsADirectoryError, while
    `mlcb show` reported 0 failed tasks."""
    import shutil

    shutil.copytree(reference.path, tmp_path / "small")
    key = sweeps.make_grid(GRID).settings[2].key
    block = tmp_path / "small" / "data" / "curves" / f"key={key}" / "block-000002-000004.parquet"
    block.unlink()
    block.mkdir()
    (block / "inside").touch()
    assert main(["show", str(tmp_path / "small")]) == 0
    shown = capsys.readouterr().out
    assert "18 of 20 replications finished" in shown
    with pytest.warns(CorruptPartWarning, match="not a regular file where a part goes; set aside as"):
        again = mlcb.sweep(GRID, out=tmp_path, workers=1)
    assert (again.computed, again.skipped) == (1, 11)
    assert_same(reference.result, again.result)
    assert main(["show", str(tmp_path / "small")]) == 0
    assert "20 of 20 replications finished" in capsys.readouterr().out


def test_a_linked_data_folder_is_refused_and_nothing_outside_is_written(reference, tmp_path):
    import shutil

    shutil.copytree(reference.path, tmp_path / "small")
    shutil.move(tmp_path / "small" / "data", tmp_path / "elsewhere")
    (tmp_path / "small" / "data").symlink_to(tmp_path / "elsewhere")
    before = sorted(str(p) for p in (tmp_path / "elsewhere").rglob("*"))
    with pytest.raises(ValueError, match=r"holds files that are no part of an mlcb sweep \(data\)"):
        mlcb.sweep({**GRID, "replications": 6}, out=tmp_path, overwrite=True)
    assert sorted(str(p) for p in (tmp_path / "elsewhere").rglob("*")) == before


# --- failures ----------------------------------------------------------------------------------
def test_a_failing_task_is_reported_with_its_setting_while_the_others_finish(monkeypatch, tmp_path, capsys):
    """Worker processes are forked after the patch: the engine fails for the budget-2 settings."""
    real = engine.run_replications

    def failing(problem, *args, **kwargs):
        if problem.budget == 2:
            raise RuntimeError("an expert diverged")
        return real(problem, *args, **kwargs)

    monkeypatch.setattr(engine.replications, "run_replications", failing)
    monkeypatch.setattr(sweeps.executors, "_start_method", lambda: "fork")  # the workers inherit the patch
    outcome = mlcb.sweep(GRID, out=tmp_path, workers=2)
    assert outcome.computed == 6 and len(outcome.failed) == 6
    assert {task.split(",")[0] for task, _ in outcome.failed} == {"mlcb M=2 K=4", "mlcb M=2 K=6"}
    assert all(error == "RuntimeError: an expert diverged" for _, error in outcome.failed)
    assert outcome.result.settings == ["mlcb M=1 K=4", "mlcb M=1 K=6"]
    meta = json.loads((outcome.path / "sweep.json").read_text())
    assert len(meta["failed"]) == 6 and len(meta["parts_to_do"]) == 6
    monkeypatch.setattr(engine.replications, "run_replications", real)
    healed = mlcb.sweep(GRID, out=tmp_path, workers=2)
    assert (healed.computed, healed.skipped, healed.failed) == (6, 6, [])


def test_cli_lists_failed_tasks_and_exits_1(monkeypatch, tmp_path, capsys):
    real = engine.run_replications

    def failing(problem, *args, **kwargs):
        if problem.budget == 2 and len(problem.experts) == 6:
            raise RuntimeError("boom")
        return real(problem, *args, **kwargs)

    monkeypatch.setattr(engine.replications, "run_replications", failing)
    monkeypatch.setattr(sweeps.executors, "_start_method", lambda: "fork")
    grid_file = tmp_path / "g.toml"
    grid_file.write_text(
        'preset = "trap"\nname = "g"\nhorizon = 300\nreplications = 1\n[grid]\nbudget = [1, 2]\nn_experts = [4, 6]\n'
    )
    status = main(["sweep", str(grid_file), "--out", str(tmp_path), "-q", "-w", "2"])
    captured = capsys.readouterr()
    assert status == 1
    assert "mlcb: task failed: mlcb M=2 K=6, replications 0-0: RuntimeError: boom" in captured.err
    assert "1 task(s) failed, the others are saved" in captured.err
    assert "3 task(s) run, 0 already done, 1 failed" in captured.out
    assert (tmp_path / "g" / "budget.png").is_file()


def test_worker_builds_the_setting_it_was_sent():
    grid = sweeps.make_grid({**GRID, "replications": 1})
    task = grid.tasks()[0]
    payload = sweeps.payload(grid, task)
    output = sweeps.run_task(payload)
    assert set(output) >= {"curves", "experts", "replications", "setting"}
    assert (output["curves"]["setting"] == task.label).all()
    with pytest.raises(ValueError, match="this worker builds a different setting"):
        sweeps.run_task({**payload, "key": "0" * 16})


def test_a_damaged_sweep_file_is_named(reference, tmp_path):
    import shutil

    shutil.copytree(reference.path, tmp_path / "s")
    (tmp_path / "s" / "sweep.json").write_text("{")
    with pytest.raises(ValueError, match="sweep.json: not a readable sweep description"):
        sweeps.load(tmp_path / "s")
    with pytest.raises(FileNotFoundError, match="is not an mlcb sweep"):
        sweeps.load(tmp_path)
    assert np.isfinite(reference.result.summary()["pseudo_regret"]).all()


def test_part_and_sweep_files_that_are_links_are_refused(reference, tmp_path):
    """A part linked to the same, valid, part of another sweep is not read: loading names it, a
    re-run sets it aside and recomputes it; a linked ``sweep.json`` or data folder is refused too."""
    import shutil

    shutil.copytree(reference.path, tmp_path / "small")
    key = sweeps.make_grid(GRID).settings[1].key
    name = f"key={key}/block-000000-000002.parquet"
    linked = tmp_path / "small" / "data" / "curves" / name
    linked.unlink()
    linked.symlink_to(reference.path / "data" / "curves" / name)
    with pytest.raises(ValueError, match="block-000000-000002.parquet: is a symbolic link"):
        sweeps.load(tmp_path / "small")
    with pytest.warns(CorruptPartWarning, match="block-000000-000002.parquet: is a symbolic link"):
        again = mlcb.sweep(GRID, out=tmp_path, workers=1)
    assert (again.computed, again.skipped) == (1, 11) and not linked.is_symlink()
    assert_same(reference.result, again.result)

    folder = tmp_path / "small" / "data" / "experts" / f"key={key}"
    shutil.move(folder, tmp_path / "elsewhere")
    folder.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match=f"key={key}: is a symbolic link"):
        sweeps.load(tmp_path / "small")
    before = sorted(p.name for p in (tmp_path / "elsewhere").iterdir())
    with pytest.warns(CorruptPartWarning, match=f"key={key}: is a symbolic link"):
        healed = mlcb.sweep(GRID, out=tmp_path, workers=1)
    assert healed.computed == 3 and not folder.is_symlink()  # the setting's three blocks
    assert sorted(p.name for p in (tmp_path / "elsewhere").iterdir()) == before  # left alone
    assert_same(reference.result, healed.result)

    meta = tmp_path / "small" / "sweep.json"
    meta.rename(tmp_path / "sweep-copy.json")
    meta.symlink_to(tmp_path / "sweep-copy.json")
    with pytest.raises(ValueError, match="sweep.json: is a symbolic link"):
        sweeps.load(tmp_path / "small")


def test_the_documented_grids_are_valid():
    """The grid files shown in the README and docs/sweeps.md validate as written."""
    import re
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    texts = [(root / "README.md").read_text(), (root / "docs" / "sweeps.md").read_text()]
    blocks = [b for text in texts for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "preset" in b]
    assert len(blocks) >= 3
    sizes = []
    for block in blocks:
        grid = sweeps.make_grid(tomllib.loads(block), name="doc")
        sizes.append(len(grid.settings))
    assert 8 in sizes and 16 in sizes and 3 in sizes


@pytest.mark.parametrize(("field", "value"), [("replications", -3), ("block", 0), ("replications", "many")])
def test_a_sweep_description_with_bad_counts_is_named(reference, tmp_path, field, value):
    import shutil

    shutil.copytree(reference.path, tmp_path / "s")
    meta = json.loads((tmp_path / "s" / "sweep.json").read_text())
    meta[field] = value
    (tmp_path / "s" / "sweep.json").write_text(json.dumps(meta))
    with pytest.raises(
        ValueError, match=rf"sweep.json: not a readable sweep description \(InputError: {field} must"
    ):
        sweeps.load(tmp_path / "s")


def test_a_part_description_of_the_wrong_kinds_is_named(reference, tmp_path, capsys):
    """A part's description (``data/settings/key=.../block-*.json``) is what the figures and the
    report read of its setting: a field of another kind than mlcb writes (a list as the
    reference was "a bug in mlcb" in the report) names the part's file, in loading and in
    ``mlcb show``; a sweep's run sets the part aside and computes it again."""
    import shutil

    shutil.copytree(reference.path, tmp_path / "small")
    key = sweeps.make_grid(GRID).settings[0].key
    part = tmp_path / "small" / "data" / "settings" / f"key={key}" / "block-000000-000002.json"
    meta = json.loads(part.read_text())
    part.write_text(json.dumps({**meta, "reference": ["L*"]}))
    message = "block-000000-000002.json: setting 'mlcb M=1 K=4': 'reference' must be a string, got ['L*']"
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("*", r"\*")):
        sweeps.load(tmp_path / "small")
    assert main(["show", str(tmp_path / "small")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    with pytest.warns(CorruptPartWarning, match="'reference' must be a string"):
        again = mlcb.sweep(GRID, out=tmp_path, workers=1)
    assert (again.computed, again.skipped) == (1, 11)
    assert_same(reference.result, again.result)


def _round_moved(frames: dict) -> str:
    curves = frames["curves"]
    curves.loc[1, "round"] = curves.loc[0, "round"]  # a row moved onto another's checkpoint
    return "curves: setting 'mlcb M=1 K=4' has two rows at replication 0, round "


def _expert_relabelled(frames: dict) -> str:
    experts = frames["experts"]
    experts.loc[experts["expert"] == 1, "expert"] = 2
    return "experts: setting 'mlcb M=1 K=4' has two rows at replication 0, round "


def _expert_outside_the_pool(frames: dict) -> str:
    experts = frames["experts"]
    experts.loc[experts["expert"] == 3, "expert"] = 7
    return "experts: setting 'mlcb M=1 K=4' has rows of expert 7, outside its pool of 4 experts"


def _checkpoints_moved(frames: dict) -> str:
    for name in ("curves", "experts"):
        frame = frames[name]
        frame.loc[frame["round"] == sorted(frame["round"].unique())[-2], "round"] = 1_499
    return "curves: checkpoints differ from the setting's (28 from round 1 to 1,500): round "


def _budget_changed(frames: dict) -> str:
    frames["replications"]["budget"] = 3
    return "replications: setting 'mlcb M=1 K=4' has budget 3, its metadata says 1"


@pytest.mark.parametrize(
    "edit", [_round_moved, _expert_relabelled, _expert_outside_the_pool, _checkpoints_moved, _budget_changed]
)
def test_a_part_whose_rows_were_edited_is_set_aside(edit, reference, tmp_path, capsys):
    """A part's rows get the checks a saved result's get: a row moved onto another's checkpoint,
    an expert's rows relabelled, checkpoints off the setting's grid kept the row counts and were
    read, giving wrong means (only counts and replications were checked). Loading names the
    file; a run of the sweep sets the part aside and computes it again."""
    import shutil

    shutil.copytree(reference.path, tmp_path / "small")
    key = sweeps.make_grid(GRID).settings[0].key
    data = tmp_path / "small" / "data"
    files = {name: data / name / f"key={key}" / "block-000000-000002.parquet" for name in FRAMES}
    frames = {name: pd.read_parquet(path) for name, path in files.items()}
    message = edit(frames)
    for name, frame in frames.items():
        frame.to_parquet(files[name], index=False)
    file, said = message.split(": ", 1)
    expected = f"{files[file]}: {said}"
    with pytest.raises(ValueError) as caught:
        sweeps.load(tmp_path / "small")
    assert str(caught.value).startswith(expected), caught.value
    assert main(["show", str(tmp_path / "small")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err
    with pytest.warns(CorruptPartWarning, match="block-000000-000002"):
        again = mlcb.sweep(GRID, out=tmp_path, workers=1)
    assert (again.computed, again.skipped) == (1, 11)
    assert_same(reference.result, again.result)


def _failed_five(meta: dict) -> None:
    meta["failed"] = 5


def _experts_text(meta: dict) -> None:
    meta["settings"][0]["config"]["experts"] = "ucb1 x 4"  # its length was taken for the pool's


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_failed_five, "sweep.json: not a readable sweep description (InputError: 'failed' must"),
        (_experts_text, "(InputError: the experts of setting 'mlcb M=1 K=4' must be a list, got 'ucb1 x 4')"),
    ],
    ids=["failed-not-a-list", "experts-not-a-list"],
)
def test_a_sweep_description_of_the_wrong_kinds_is_named(reference, tmp_path, edit, message):
    import shutil

    shutil.copytree(reference.path, tmp_path / "s")
    meta = json.loads((tmp_path / "s" / "sweep.json").read_text())
    edit(meta)
    (tmp_path / "s" / "sweep.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError) as caught:
        sweeps.load(tmp_path / "s")
    assert message in str(caught.value)


def test_a_pool_size_written_as_a_float_is_the_whole_number(tmp_path):
    """``n_experts = 1e1`` in a grid (TOML has no other way to write 10 that way) is 10: the
    setting of ``n_experts = 10``, its key and label included; a fraction is named (both were a
    raw "can't multiply sequence by non-int of type 'float'")."""
    whole = sweeps.make_grid({**GRID, "grid": {"n_experts": [1e1]}})
    plain = sweeps.make_grid({**GRID, "grid": {"n_experts": [10]}})
    assert [s.key for s in whole.settings] == [s.key for s in plain.settings]
    assert whole.settings[0].config.env_params["n_experts"] == 10
    with pytest.raises(ValueError) as caught:
        sweeps.make_grid({**GRID, "grid": {"n_experts": [4.5]}})
    assert (
        str(caught.value)
        == "grid setting n_experts=4.5 is invalid: n_experts must be an integer >= 1, got 4.5"
    )
    with pytest.raises(ValueError, match="n_experts must be an integer >= 1, got '10'"):
        mlcb.simulate(preset="trap", env_params={"n_experts": "10"}, budget=1, horizon=100, replications=1)
