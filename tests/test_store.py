"""The results store: atomic saves, one writer, parts per setting, validation of what is read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlcb
from mlcb import engine, presets
from mlcb.cli import main
from mlcb.config import checkpoint_grid
from mlcb.engine import CorruptPartWarning
from mlcb.storage import store
from mlcb.storage.results import Result

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"horizon": 300, "replications": 3, "seed": 4}


def _cli(out: Path, *extra: str, budget: str = "1") -> int:
    return main(
        ["run", "trap", "--budget", budget, "--horizon", "300", "--replications", "3", "--seed", "4"]
        + ["--out", str(out), "--quiet", "--threads", "1", *extra]
    )


def _counting(monkeypatch, stop_at: int | None = None) -> list[int]:
    """Record the replications run (not the one-round warm-up); raise KeyboardInterrupt when
    ``stop_at`` starts."""
    ran: list[int] = []
    original = engine.run_replication

    def counting(problem, seed, replication, horizon, *args, **kwargs):
        if horizon > 1:
            if replication == stop_at:
                raise KeyboardInterrupt
            ran.append(replication)
        return original(problem, seed, replication, horizon, *args, **kwargs)

    monkeypatch.setattr(engine.replications, "run_replication", counting)
    return ran


def _assert_same(a: Result, b: Result) -> None:
    for name in ("curves", "experts", "replications"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))


def _one_line_error(capsys, code: int) -> str:
    captured = capsys.readouterr()
    assert code == 2
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mlcb: error:"), captured.err
    return lines[0]


def test_an_interrupted_setting_survives_a_run_of_another_setting(tmp_path, monkeypatch, capsys):
    with monkeypatch.context() as patch:
        _counting(patch, stop_at=2)
        assert _cli(tmp_path, "--no-plot") == 130  # interrupted: replications 0 and 1 kept
    key_a = presets.get("trap").config(1, **SMALL).key()
    kept = tmp_path / "trap" / ".parts" / key_a
    assert sorted(p.name for p in kept.glob("*.npz")) == ["replication-000000.npz", "replication-000001.npz"]
    assert _cli(tmp_path, "--no-plot", budget="2") == 0  # setting B, same --out
    assert len(list(kept.glob("*.npz"))) == 2  # A's parts are still there
    assert not (tmp_path / "trap" / ".parts" / presets.get("trap").config(2, **SMALL).key()).exists()
    ran = _counting(monkeypatch)
    assert _cli(tmp_path, "--no-plot", "--overwrite") == 0  # A again: resumes from its parts
    assert ran == [2]
    assert not (tmp_path / "trap" / ".parts").exists()
    full = mlcb.simulate(preset="trap", budget=1, **SMALL)
    _assert_same(mlcb.load(tmp_path / "trap"), full)


def test_a_second_writer_is_refused_naming_the_holder(tmp_path, capsys):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from mlcb.storage import store\n"
            "with store.lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(60)",
            str(tmp_path / "trap"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        line = _one_line_error(capsys, _cli(tmp_path))
        assert f"pid {holder.pid} on " in line and "being written" in line
        assert not (tmp_path / "trap").exists()  # nothing was done
    finally:
        holder.kill()
        holder.wait()
    assert _cli(tmp_path, "--no-plot") == 0  # the dead holder's lock is free
    assert not (tmp_path / ".trap.lock").exists()


def test_a_lock_held_in_this_process_refuses_a_save(tmp_path):
    result = mlcb.simulate(preset="trap", budget=1, **SMALL)
    with store.lock(tmp_path / "run"):
        with pytest.raises(store.LockedError, match=f"pid {os.getpid()}"):
            result.save(tmp_path / "run")
    result.save(tmp_path / "run")


def test_a_crash_in_the_middle_of_a_save_leaves_the_previous_result(tmp_path, monkeypatch):
    first = mlcb.simulate(preset="trap", budget=1, **SMALL)
    second = mlcb.simulate(preset="trap", budget=2, **SMALL)
    path = first.save(tmp_path / "run")
    written = []
    original = pd.DataFrame.to_parquet

    def failing(self, *args, **kwargs):
        if written:
            raise OSError("disk full")
        written.append(args)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", failing)
    with pytest.raises(OSError, match="disk full"):
        second.save(path)
    monkeypatch.undo()
    again = mlcb.load(path)
    _assert_same(again, first)
    assert list(again.metadata["settings"]) == ["mlcb M=1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no temporary left behind


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _garbage(path: Path) -> None:
    path.write_bytes(b"this is not a numpy archive\n" * 20)


def _mislabel(path: Path) -> None:
    path.write_bytes((path.parent / "replication-000002.npz").read_bytes())


def _bad_shape(path: Path) -> None:
    with np.load(path) as data:
        arrays = dict(data)
    arrays["trained"] = arrays["trained"][:, :3]
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)


def _of_another_setting(path: Path) -> None:
    """The part replaced by replication 1 of another seed: arrays of the very same shapes and
    index, once read as this setting's (the resumed numbers were then another setting's)."""
    other = path.parent.parent.parent / "other-parts"
    mlcb.simulate(preset="trap", budget=2, parts=other, **{**SMALL, "seed": SMALL["seed"] + 1})
    (folder,) = other.iterdir()
    path.write_bytes((folder / path.name).read_bytes())


def _unrecorded(path: Path) -> None:
    """The part without the setting it was made for, as an earlier mlcb wrote it."""
    with np.load(path) as data:
        arrays = {name: data[name] for name in data if name != "setting"}
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)


def _linked(path: Path) -> None:
    """The part replaced by a link to a valid copy of it outside the parts directory."""
    outside = path.parent.parent / "elsewhere.npz"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(outside)


@pytest.mark.parametrize(
    "damage", [_truncate, _empty, _garbage, _mislabel, _bad_shape, _of_another_setting, _unrecorded, _linked]
)
def test_a_corrupt_part_is_named_set_aside_and_recomputed(tmp_path, monkeypatch, damage):
    full = mlcb.simulate(preset="trap", budget=2, parts=tmp_path / "parts", **SMALL)
    (folder,) = (tmp_path / "parts").iterdir()
    victim = folder / "replication-000001.npz"
    damage(victim)
    ran = _counting(monkeypatch)
    with pytest.warns(CorruptPartWarning, match="replication-000001.npz") as caught:
        resumed = mlcb.simulate(preset="trap", budget=2, parts=tmp_path / "parts", **SMALL)
    assert len(caught) == 1 and "allow_pickle" not in str(caught[0].message)
    assert ran == [1]
    _assert_same(resumed, full)
    assert (folder / "replication-000001.npz.corrupt").is_file()
    assert engine.Replication.load(victim).index == 1  # recomputed and kept again


def test_a_part_names_the_setting_it_was_made_for(tmp_path):
    """A part records its folder's name, its setting's key: copied into another setting's
    folder, it is refused by name, though its arrays have the very shapes of that setting's."""
    grid = checkpoint_grid(300)
    replication = engine.run_replications(
        engine.build(presets.get("trap").config(1, horizon=300, replications=1)), 0, [0], 300, grid
    )[0]
    made = tmp_path / "0123456789abcdef" / "replication-000000.npz"
    made.parent.mkdir()
    replication.save(made)
    assert engine.Replication.load(made, len(grid), 10).index == 0
    copied = tmp_path / "fedcba9876543210" / made.name
    copied.parent.mkdir()
    copied.write_bytes(made.read_bytes())
    with pytest.raises(ValueError) as caught:
        engine.Replication.load(copied, len(grid), 10)
    assert str(caught.value) == (
        f"{copied}: not a valid replication part (made for setting '0123456789abcdef', not "
        "'fedcba9876543210' of its folder)"
    )


def test_a_corrupt_part_is_one_line_on_the_command_line(tmp_path):
    """What `mlcb run` prints about a damaged part it recomputes: one line naming the file and
    what was done, no line of mlcb's source."""
    key = presets.get("trap").config(1, **SMALL).key()
    mlcb.simulate(preset="trap", budget=1, parts=tmp_path / "trap" / ".parts", **SMALL)
    damaged = tmp_path / "trap" / ".parts" / key / "replication-000001.npz"
    damaged.write_bytes(b"")
    command = [sys.executable, "-m", "mlcb.cli", "run", "trap", "--budget", "1", "--horizon", "300"]
    command += ["--replications", "3", "--seed", "4", "--out", str(tmp_path), "--no-plot", "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"mlcb: CorruptPartWarning: {damaged}: not a valid replication part (an empty file); moved to "
        "replication-000001.npz.corrupt, replication 1 is recomputed"
    ]


def test_parts_are_written_under_unique_temporary_names(tmp_path, monkeypatch):
    replication = engine.run_replications(
        engine.build(presets.get("trap").config(1, horizon=300, replications=1)),
        0,
        [0],
        300,
        checkpoint_grid(300),
    )[0]
    names = []
    original = os.replace

    def watch(src, dst):
        names.append(Path(src).name)
        return original(src, dst)

    monkeypatch.setattr(os, "replace", watch)
    replication.save(tmp_path / "replication-000000.npz")
    replication.save(tmp_path / "replication-000000.npz")
    assert len(set(names)) == 2 and all(str(os.getpid()) in n for n in names)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["replication-000000.npz"]


def test_a_different_experiment_is_refused_without_overwrite(tmp_path, capsys):
    assert _cli(tmp_path) == 0
    folder = tmp_path / "trap"
    assert (folder / "regret.png").is_file()
    capsys.readouterr()
    line = _one_line_error(capsys, _cli(tmp_path, "--no-plot", budget="2"))
    assert "different experiment" in line and "--overwrite" in line
    assert mlcb.load(folder).settings == ["mlcb M=1"]
    assert (folder / "regret.png").is_file()
    assert _cli(tmp_path, "--no-plot", "--overwrite", budget="2") == 0
    assert mlcb.load(folder).settings == ["mlcb M=2"]
    assert not (folder / "regret.png").exists()  # old figures went with the old result
    assert _cli(tmp_path, "--no-plot", budget="2") == 0  # the same experiment runs again
    compare = ["compare", "trap", "--policies", "mlcb", "--horizon", "300", "--replications", "2"]
    compare += ["--out", str(tmp_path), "--quiet", "--no-plot", "--budget"]
    assert main([*compare, "1"]) == 0
    capsys.readouterr()
    code = main([*compare, "2"])
    assert "different experiment" in _one_line_error(capsys, code)


def test_a_directory_of_other_files_is_not_replaced(tmp_path, capsys):
    folder = tmp_path / "trap"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    line = _one_line_error(capsys, _cli(tmp_path, "--no-plot"))
    assert "no part of an mlcb result" in line and "notes.txt" in line
    result = mlcb.simulate(preset="trap", budget=1, **SMALL)
    with pytest.raises(ValueError, match="notes.txt"):
        result.save(folder)
    assert (folder / "notes.txt").read_text() == "mine"


# --- issue 36, item 3: --overwrite replaces only what mlcb wrote --------------------------------
@pytest.mark.parametrize("in_place", ["nothing", "a result", "another experiment"])
@pytest.mark.parametrize("flags", [(), ("--overwrite",)], ids=["plain", "overwrite"])
def test_a_file_mlcb_did_not_write_stops_the_run_whatever_the_flag(tmp_path, capsys, in_place, flags):
    """The issue's case: ``thesis.tex`` in OUT/NAME. The run stops, naming it, and the message
    does not suggest --overwrite (which would have deleted it)."""
    folder = tmp_path / "trap"
    if in_place == "nothing":
        folder.mkdir()
    else:
        assert _cli(tmp_path, "--no-plot", budget="1" if in_place == "a result" else "2") == 0
    (folder / "thesis.tex").write_text("four years of work")
    capsys.readouterr()
    line = _one_line_error(capsys, _cli(tmp_path, "--no-plot", *flags))
    assert line == (
        f"mlcb: error: {folder} holds files that are no part of an mlcb result (thesis.tex); mlcb never "
        "deletes what it did not write: move them away, or choose another --out"
    )
    assert (folder / "thesis.tex").read_text() == "four years of work"


@pytest.mark.parametrize(
    ("make", "named"),
    [
        (lambda f: (f / "notes").mkdir(), "notes"),
        (
            lambda f: (
                (f / "regret.png").unlink(),
                (f / "regret.png").mkdir(),
                (f / "regret.png" / "a").touch(),
            ),
            "regret.png: a folder",
        ),
        (lambda f: (f / ".parts").write_text("mine"), ".parts: a file"),
        (
            lambda f: (
                (f / "curves.parquet").unlink(),
                (f / "curves.parquet").symlink_to(f.parent / "mine.txt"),
            ),
            "curves.parquet: a symbolic link",
        ),
    ],
    ids=["folder", "known-name-folder", "parts-file", "known-name-link"],
)
def test_overwrite_never_deletes_a_folder_or_link_of_the_users(tmp_path, capsys, make, named):
    """Neighbours of thesis.tex: a folder of one's own, a folder or a link under one of mlcb's own
    names (``regret.png/``, ``curves.parquet`` linked to a file), ``.parts`` as a file."""
    assert _cli(tmp_path) == 0
    folder = tmp_path / "trap"
    (tmp_path / "mine.txt").write_text("mine")
    make(folder)
    capsys.readouterr()
    line = _one_line_error(capsys, _cli(tmp_path, "--no-plot", "--overwrite", budget="2"))
    assert f"holds files that are no part of an mlcb result ({named})" in line
    assert "--overwrite" not in line
    assert (tmp_path / "mine.txt").read_text() == "mine"
    if not named.startswith("curves.parquet"):  # the result in place is still readable
        assert mlcb.load(folder).settings == ["mlcb M=1"]


def test_a_file_put_in_place_while_a_result_is_written_is_kept(tmp_path, monkeypatch, capsys):
    """The check is made again just before the old result is replaced: a file that appears while
    the run writes its result stops the swap, and nothing of the user's is removed."""
    from mlcb.storage import result_files

    assert _cli(tmp_path, "--no-plot") == 0
    folder = tmp_path / "trap"
    real = result_files.write

    def write_and_interfere(directory, frames, metadata):
        real(directory, frames, metadata)
        (folder / "late.txt").write_text("mine")

    monkeypatch.setattr(result_files, "write", write_and_interfere)
    capsys.readouterr()
    line = _one_line_error(capsys, _cli(tmp_path, "--no-plot", "--overwrite", budget="2"))
    assert "(late.txt)" in line
    assert (folder / "late.txt").read_text() == "mine"
    assert mlcb.load(folder).settings == ["mlcb M=1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trap"]  # no temporary left


def test_removing_parts_leaves_a_users_file_in_a_parts_folder(tmp_path, monkeypatch):
    with monkeypatch.context() as patch:
        _counting(patch, stop_at=2)
        assert _cli(tmp_path, "--no-plot") == 130
    key = presets.get("trap").config(1, **SMALL).key()
    (tmp_path / "trap" / ".parts" / key / "notes.txt").write_text("mine")
    with pytest.warns(mlcb.errors.FileWarning, match="left in place, it holds files that mlcb did not write"):
        assert _cli(tmp_path, "--no-plot") == 0
    assert (tmp_path / "trap" / ".parts" / key / "notes.txt").read_text() == "mine"
    assert not list((tmp_path / "trap" / ".parts" / key).glob("*.npz"))


# --- issue 36, item 5: the store's folders get the checks its files have ----------------------
@pytest.mark.parametrize("linked", [".parts", "key folder"])
def test_a_linked_parts_folder_is_refused_and_nothing_outside_is_touched(tmp_path, capsys, linked):
    """``OUT/NAME/.parts`` (or a setting's folder in it) as a link: writing through it put parts
    outside --out, and removing the parts then deleted the target's key folder."""
    outside = tmp_path / "outside"
    key = presets.get("trap").config(1, **SMALL).key()
    (outside / key).mkdir(parents=True)
    (outside / key / "keep.txt").write_text("mine")
    out = tmp_path / "out"
    (out / "trap" / ".parts").mkdir(parents=True)
    if linked == ".parts":
        (out / "trap" / ".parts").rmdir()
        (out / "trap" / ".parts").symlink_to(outside)
    else:
        (out / "trap" / ".parts" / key).symlink_to(outside / key)
    line = _one_line_error(capsys, _cli(out, "--no-plot"))
    assert "a symbolic link" in line and "--overwrite" not in line
    assert sorted(p.name for p in (outside / key).iterdir()) == ["keep.txt"]
    line = _one_line_error(capsys, _cli(out, "--no-plot", "--overwrite"))
    assert "a symbolic link" in line
    assert sorted(p.name for p in (outside / key).iterdir()) == ["keep.txt"]


def test_simulate_refuses_a_linked_setting_folder(tmp_path):
    config = presets.get("trap").config(1, **SMALL)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / config.key()).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match=r"is a symbolic link; mlcb keeps parts only in folders of its own"):
        mlcb.simulate(config, parts=tmp_path / "parts")
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_linked_lock_file_is_refused_and_its_target_kept(tmp_path, capsys):
    """The lock file ``OUT/.NAME.lock`` linked to a file of the user's: opening it for the lock
    truncated the target."""
    (tmp_path / "precious.txt").write_text("mine")
    (tmp_path / ".trap.lock").symlink_to(tmp_path / "precious.txt")
    line = _one_line_error(capsys, _cli(tmp_path, "--no-plot"))
    assert ".trap.lock: is a symbolic link" in line
    assert (tmp_path / "precious.txt").read_text() == "mine"


def test_show_prints_a_result(tmp_path, capsys):
    assert _cli(tmp_path, "--no-plot") == 0
    capsys.readouterr()
    assert main(["show", str(tmp_path / "trap")]) == 0
    out = capsys.readouterr().out
    for text in (
        "mlcb M=1",
        "pseudo-regret",
        "policy mlcb",
        "budget 1",
        "calibration theory",
        "engine compiled",
        "family bandit",
        "certificate valid True",
        "versions: mlcb",
        "git revision:",
        "created: 20",
    ):
        assert text in out, text
    assert "made by another mlcb" not in out
    # A result of another version says so (`mlcb run` refuses its folder: the keys differ).
    metadata = json.loads((tmp_path / "trap" / "metadata.json").read_text())
    metadata["versions"]["mlcb"] = "0.0.1"
    (tmp_path / "trap" / "metadata.json").write_text(json.dumps(metadata))
    assert main(["show", str(tmp_path / "trap")]) == 0
    out = capsys.readouterr().out
    assert f"versions: mlcb 0.0.1, numpy {np.__version__}" in out
    assert f"(made by another mlcb: this is mlcb {mlcb.__version__})" in out


def _metadata_list(path: Path) -> None:
    (path / "metadata.json").write_text("[]")


def _settings_list(path: Path) -> None:
    (path / "metadata.json").write_text(json.dumps({"settings": [1, 2]}))


def _missing_frame(path: Path) -> None:
    (path / "experts.parquet").unlink()


def _frame_is_a_directory(path: Path) -> None:
    (path / "curves.parquet").unlink()
    (path / "curves.parquet").mkdir()


def _wrong_dtype(path: Path) -> None:
    curves = pd.read_parquet(path / "curves.parquet")
    curves["regret"] = curves["regret"].astype(str)
    curves.to_parquet(path / "curves.parquet", index=False)


def _not_parquet(path: Path) -> None:
    (path / "replications.parquet").write_bytes(b"PAR1 garbage")


@pytest.mark.parametrize(
    "damage, file, what",
    [
        (_metadata_list, "metadata.json", "metadata.json: expected a JSON object, got list"),
        (
            _settings_list,
            "metadata.json",
            "metadata.json: 'settings' must be an object of settings, got list",
        ),
        (_missing_frame, "experts.parquet", "experts.parquet: missing; "),
        (_frame_is_a_directory, "curves.parquet", "curves.parquet: not a regular file; "),
        (_wrong_dtype, "curves.parquet", "curves.parquet: column 'regret' has dtype "),
        (_not_parquet, "replications.parquet", "replications.parquet: not a readable Parquet file"),
    ],
)
def test_a_damaged_result_is_one_line_everywhere(tmp_path, capsys, damage, file, what):
    path = mlcb.simulate(preset="trap", budget=1, **SMALL).save(tmp_path / "run")
    damage(path)
    with pytest.raises(ValueError) as caught:
        mlcb.load(path)
    message = str(caught.value)
    assert what in message and len(message.splitlines()) == 1
    for command in (["show", str(path)], ["plot", str(path), "--out", str(tmp_path / "figures")]):
        line = _one_line_error(capsys, main(command))
        assert file in line
    assert not (tmp_path / "figures").exists()


def _link_to_a_copy(path: Path) -> None:
    """``metadata.json`` linked to a valid copy outside the result directory."""
    outside = path.parent / "outside.json"
    outside.write_bytes((path / "metadata.json").read_bytes())
    (path / "metadata.json").unlink()
    (path / "metadata.json").symlink_to(outside)


def _link_to_another_result(path: Path) -> None:
    """``replications.parquet`` linked to the same file of another saved result."""
    other = mlcb.simulate(preset="trap", budget=1, **SMALL).save(path.parent / "other")
    (path / "replications.parquet").unlink()
    (path / "replications.parquet").symlink_to(other / "replications.parquet")


def _named_pipe(path: Path) -> None:
    (path / "metadata.json").unlink()
    os.mkfifo(path / "metadata.json")


@pytest.mark.parametrize(
    "damage, file, what",
    [
        (_link_to_a_copy, "metadata.json", "is a symbolic link"),
        (_link_to_another_result, "replications.parquet", "is a symbolic link"),
        (_named_pipe, "metadata.json", "not a regular file"),
    ],
)
def test_result_files_that_are_links_or_not_regular_files_are_refused(tmp_path, capsys, damage, file, what):
    """A result's files are never read through a link (the linked file may be valid: it is still
    not this result's), nor from a pipe; the API, show, plot and a run into it name the file."""
    path = mlcb.simulate(preset="trap", budget=1, **SMALL).save(tmp_path / "trap")
    damage(path)
    with pytest.raises(ValueError, match=f"{file}: {what}"):
        mlcb.load(path)
    for command in (["show", str(path)], ["plot", str(path), "--out", str(tmp_path / "figures")]):
        line = _one_line_error(capsys, main(command))
        assert f"{file}: {what}" in line
    # A run into it: the link or pipe is not mlcb's, and stops the run whatever the flags.
    kind = "a symbolic link" if what == "is a symbolic link" else "not a regular file"
    for flags in ((), ("--overwrite",)):
        line = _one_line_error(capsys, _cli(tmp_path, "--no-plot", *flags))
        assert f"holds files that are no part of an mlcb result ({file}: {kind})" in line
        assert "--overwrite" not in line
    assert not (tmp_path / "figures").exists()


def test_a_missing_result_is_one_line(tmp_path, capsys):
    assert "none: no such folder (a saved mlcb result is a folder" in _one_line_error(
        capsys, main(["show", str(tmp_path / "none")])
    )
    assert "not a saved mlcb result" in _one_line_error(capsys, main(["plot", str(tmp_path)]))
    (tmp_path / "setting.toml").write_text("")
    assert "setting.toml is a file, not a saved mlcb result" in _one_line_error(
        capsys, main(["show", str(tmp_path / "setting.toml")])
    )


def test_a_setting_without_the_expected_keys_is_still_shown_and_drawn(tmp_path, capsys):
    path = mlcb.simulate(preset="trap", budget=1, **SMALL).save(tmp_path / "run")
    (path / "metadata.json").write_text(json.dumps({"settings": {"mlcb M=1": {}}}))
    assert main(["show", str(path)]) == 0
    assert "policy ?" in capsys.readouterr().out
    assert main(["plot", str(path), "--out", str(tmp_path / "figures")]) == 0
    assert (tmp_path / "figures" / "regret.png").is_file()


def test_output_path_errors_are_one_line_before_any_work(tmp_path, capsys, monkeypatch):
    ran = _counting(monkeypatch)
    file = tmp_path / "a-file"
    file.write_text("")
    assert "is a file" in _one_line_error(capsys, _cli(file))
    assert "a-file" in _one_line_error(capsys, _cli(file / "below"))
    (tmp_path / "trap").write_text("")
    assert "is a file" in _one_line_error(capsys, _cli(tmp_path))
    toml = tmp_path / "escape.toml"
    toml.write_text(
        'name = "../escaped"\nhorizon = 300\nreplications = 1\n[[experts]]\nfamily = "ucb1"\ncount = 2\n'
    )
    out = tmp_path / "out"
    code = main(["run", str(toml), "--out", str(out), "--quiet", "--no-plot"])
    _one_line_error(capsys, code)
    assert not (tmp_path / "escaped").exists()
    for name in ("../escaped", "/tmp/escaped", ".", "a/../../escaped"):
        with pytest.raises(ValueError, match="outside --out"):
            store.Store(out, name)
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert "not writable" in _one_line_error(capsys, _cli(locked))
    assert ran == []


def test_a_writer_that_died_mid_swap_is_recovered(tmp_path):
    result = mlcb.simulate(preset="trap", budget=1, **SMALL)
    path = result.save(tmp_path / "trap")
    (path / ".parts" / "somekey").mkdir(parents=True)
    os.rename(path, tmp_path / ".trap.old-1-dead")  # died after renaming the old result aside
    (tmp_path / ".trap.tmp-1-dead").mkdir()
    box = store.Store(tmp_path, "trap")
    with box.lock():
        box.recover()
    _assert_same(mlcb.load(path), result)
    assert (path / ".parts" / "somekey").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trap"]


# --- any interleaving of interruptions and resumptions gives the uninterrupted result ----------
_CONFIG = presets.get("trap").config(2, horizon=200, replications=5, seed=3)
_GRID = checkpoint_grid(_CONFIG.horizon, _CONFIG.checkpoints)


def _replications(parts: Path | None, threads: int, on_done=None) -> list:
    return engine.run_replications(
        engine.build(_CONFIG),
        _CONFIG.seed,
        range(_CONFIG.replications),
        _CONFIG.horizon,
        _GRID,
        threads=threads,
        parts=parts,
        on_done=on_done,
    )


_BASELINE: list = []


@settings(max_examples=10, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.integers(min_value=0, max_value=4), st.none() | st.integers(min_value=0, max_value=4)),
        min_size=1,
        max_size=4,
    ),
    threads=st.sampled_from([1, 2]),
)
def test_any_interleaving_of_interruptions_gives_the_uninterrupted_result(steps, threads):
    """Interrupt after ``k`` replications (loaded or new), then maybe damage one kept part (cut it
    in half, as a crash in the middle of a write would), in any order; the last run resumes."""
    if not _BASELINE:
        _BASELINE.extend(_replications(None, 1))
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore", CorruptPartWarning)
        parts = Path(folder)
        for k, damaged in steps:
            calls = [0]

            def interrupt(_replication, k=k, calls=calls):
                calls[0] += 1
                if calls[0] > k:
                    raise KeyboardInterrupt

            try:
                _replications(parts, threads, interrupt)
            except KeyboardInterrupt:
                pass
            assert not list(parts.glob("*.tmp"))
            victim = parts / f"replication-{damaged:06d}.npz" if damaged is not None else None
            if victim is not None and victim.exists():
                _truncate(victim)
        resumed = _replications(parts, threads)
    for got, want in zip(resumed, _BASELINE, strict=True):
        assert got.index == want.index
        for name in engine.Replication._ARRAYS:
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
        assert (got.best_expert, got.best_loss) == (want.best_expert, want.best_loss)


# --- saved files of the right names but the wrong contents ------------------------------------------
@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """A saved result of two settings (budgets 1 and 2), copied by each test that damages it."""
    runs = [mlcb.simulate(preset="trap", budget=m, **SMALL) for m in (1, 2)]
    return Result.concat(runs).save(tmp_path_factory.mktemp("saved") / "run")


def _edit_metadata(path: Path, edit) -> None:
    meta = json.loads((path / "metadata.json").read_text())
    edit(meta)
    (path / "metadata.json").write_text(json.dumps(meta))


def _edit_setting(field: str, value, config: bool = False):
    def edit(meta: dict) -> None:
        setting = meta["settings"]["mlcb M=1"]
        (setting["config"] if config else setting)[field] = value

    return lambda path: _edit_metadata(path, edit)


def _edit_frame(path: Path, name: str, edit) -> None:
    frame = pd.read_parquet(path / f"{name}.parquet")
    edit(frame).to_parquet(path / f"{name}.parquet", index=False)


def _huge_number(path: Path) -> None:
    """A whole number of 400 digits (JSON numbers have no size; Python reads it exactly, and
    it overflowed where a figure read it as a float: "a bug in mlcb")."""
    _edit_metadata(
        path, lambda meta: meta["settings"]["mlcb M=1"]["theory"]["rounds"].__setitem__(0, 10**400)
    )


def _a_whole_number(number: str):
    """Round 10 of the worst case written as ``number``: every whole number beyond 64 bits is
    refused alike, from 2**63 (19 digits, once let through) to one of more digits than Python
    reads by default (once a message about Python's own limit). The number is written as text:
    Python does not write so long a number itself."""

    def edit(path: Path) -> None:
        _edit_metadata(path, lambda meta: meta["settings"]["mlcb M=1"]["theory"]["rounds"].__setitem__(0, -1))
        text = (path / "metadata.json").read_text()
        (path / "metadata.json").write_text(text.replace("[-1,", f"[{number},", 1))

    return edit


def _moved_onto(frame: pd.DataFrame, column: str, source, target) -> pd.DataFrame:
    """The rows of setting 'mlcb M=1' at ``column == source`` moved to ``target``."""
    moved = (frame["setting"] == "mlcb M=1") & (frame[column] == source)
    return frame.assign(**{column: frame[column].where(~moved, target)})


def _a_row_onto_another(frame: pd.DataFrame) -> pd.DataFrame:
    """Replication 0's row at round 2 moved onto round 3: the counts of rows and of rounds hold."""
    moved = (frame["setting"] == "mlcb M=1") & (frame["replication"] == 0) & (frame["round"] == 2)
    return frame.assign(round=frame["round"].where(~moved, 3))


def _a_setting_more(meta: dict) -> None:
    meta["settings"]["ghost"] = meta["settings"]["mlcb M=1"]


def _budget_of_rows(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(budget=frame["budget"].where(frame["setting"] != "mlcb M=1", 3))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        # Kinds of the fields the readers take (each was read as it was: a list as a reference
        # and a 400-digit round were "a bug in mlcb" in the report and the figures; a string
        # horizon or number of seconds was shown, or summed, as it was).
        (
            _edit_setting("reference", ["L*"]),
            "metadata.json: setting 'mlcb M=1': 'reference' must be a string, got ['L*']",
        ),
        (
            _edit_setting("theory", {"rounds": [1, 2, 3], "worst_case": [1.0]}),
            "metadata.json: setting 'mlcb M=1': 'theory' must be null or a curve {rounds, worst_case}",
        ),
        (
            _edit_setting("seconds", "12.5"),
            "metadata.json: setting 'mlcb M=1': 'seconds' must be a number >= 0, got '12.5'",
        ),
        (
            _edit_setting("certificate_valid", "yes"),
            "metadata.json: setting 'mlcb M=1': 'certificate_valid' must be true or false, got 'yes'",
        ),
        (
            _edit_setting("horizon", "300", config=True),
            "metadata.json: setting 'mlcb M=1': config 'horizon' must be a whole number >= 1, got '300'",
        ),
        (
            lambda p: _edit_metadata(p, lambda m: m.update(versions=["mlcb 0.1"])),
            "metadata.json: 'versions' must be an object, got ['mlcb 0.1']",
        ),
        (_huge_number, "is larger than a 64-bit integer"),
        (
            _a_whole_number("9300000000000000000"),
            "the whole number 9300000000000000000 is larger than a 64-bit",
        ),
        (
            _a_whole_number("1" + "0" * 5000),
            "the whole number 100000000000...0000 (5,001 digits) is larger than",
        ),
        # Rows that disagree with the metadata, or within a setting.
        (
            lambda p: _edit_metadata(p, _a_setting_more),
            "metadata.json: describes setting(s) ['ghost'] that curves.parquet holds no rows of",
        ),
        (
            lambda p: _edit_frame(p, "experts", _budget_of_rows),
            "experts.parquet: setting 'mlcb M=1' has budget 3, its metadata says 1",
        ),
        (
            lambda p: _edit_frame(p, "replications", lambda f: f.assign(best_expert=10)),
            "replications.parquet: setting 'mlcb M=1' has best_expert 10, outside its pool of 10 experts",
        ),
        (
            lambda p: _edit_frame(p, "experts", lambda f: f.assign(deployed=f["round"] + 1)),
            "experts.parquet: setting 'mlcb M=1' has expert 0 deployed 2 times by round 1, more than once",
        ),
        (
            lambda p: _edit_frame(p, "curves", lambda f: f.assign(round=f["round"] * 2)),
            "curves.parquet: setting 'mlcb M=1' is recorded from round 2 to 600, its metadata says rounds 1",
        ),
        # The sizes a setting records beside its config (a sweep's do), taken by the figures.
        (
            _edit_setting("n_experts", 99),
            "metadata.json: setting 'mlcb M=1' has n_experts 99, its config says 10",
        ),
        (
            _edit_setting("horizon", 3000),
            "metadata.json: setting 'mlcb M=1' has horizon 3,000, its config says 300",
        ),
        # A row moved onto another's place: every count holds, the means would not.
        (
            lambda p: _edit_frame(p, "curves", _a_row_onto_another),
            "curves.parquet: setting 'mlcb M=1' has two rows at replication 0, round 3; a result holds one",
        ),
        (
            lambda p: _edit_frame(p, "experts", lambda f: _moved_onto(f, "expert", 1, 0)),
            "experts.parquet: setting 'mlcb M=1' has two rows at replication 0, round 1, expert 0; a result "
            "holds one",
        ),
        (
            lambda p: _edit_frame(p, "experts", lambda f: _moved_onto(f, "replication", 0, 7)),
            "experts.parquet: setting 'mlcb M=1' has rows at replication 7, which curves.parquet does not hold"
            "; the frames of a result share their replications",
        ),
        (
            lambda p: _edit_frame(p, "experts", lambda f: _moved_onto(f, "round", 300, 299)),
            "experts.parquet: setting 'mlcb M=1' has rows at checkpoint 299, which curves.parquet does not "
            "hold; the frames of a result share their checkpoints",
        ),
    ],
    ids=[
        "reference-list",
        "theory-lengths",
        "seconds-string",
        "flag-string",
        "horizon-string",
        "versions-list",
        "huge-number",
        "number-past-64-bits",
        "number-past-python-digits",
        "setting-without-rows",
        "budget-disagrees",
        "best-expert-outside-pool",
        "deployed-too-often",
        "rounds-past-horizon",
        "experts-disagree-with-config",
        "horizon-disagrees-with-config",
        "curves-row-onto-another",
        "experts-row-onto-another",
        "experts-other-replication",
        "experts-other-checkpoint",
    ],
)
def test_a_result_with_foreign_contents_is_one_line_naming_the_file(saved, tmp_path, capsys, damage, message):
    """Files with the right names whose contents another program (or a hand) wrote: the API,
    show, plot and report each refuse them in one line naming the file and what is wrong, never a
    traceback and never a summary of what the files do not hold."""
    import shutil

    path = Path(shutil.copytree(saved, tmp_path / "run"))
    damage(path)
    with pytest.raises(ValueError) as caught:
        mlcb.load(path)
    assert message in str(caught.value) and len(str(caught.value).splitlines()) == 1
    for command in (
        ["show", str(path)],
        ["plot", str(path), "--out", str(tmp_path / "figures")],
        ["report", str(path), "--out", str(tmp_path / "report.html")],
    ):
        line = _one_line_error(capsys, main(command))
        assert message in line, line
    assert not (tmp_path / "figures").exists() and not (tmp_path / "report.html").exists()


def test_a_result_written_by_this_version_passes_every_check(saved):
    """The checks refuse only what mlcb does not write: its own result of two settings, and the
    same after a save of what was loaded, read back whole."""
    again = mlcb.load(saved)
    assert again.settings == ["mlcb M=1", "mlcb M=2"]
    with tempfile.TemporaryDirectory() as folder:
        _assert_same(again, mlcb.load(again.save(Path(folder) / "copy")))


def test_a_folder_of_results_or_a_sweep_given_for_a_result_says_what_to_read(saved, tmp_path, capsys):
    """The ``--out`` folder of several runs (``mlcb show results``) names the results in it; a
    sweep's folder given to ``mlcb.load`` names the reader of sweeps. Both were "not a saved mlcb
    result (missing [...])", as for a folder of anything else."""
    import shutil

    shutil.copytree(saved, tmp_path / "results" / "trap")
    line = _one_line_error(capsys, main(["show", str(tmp_path / "results")]))
    assert "results is not a saved mlcb result but holds 1 in its folders (trap): name one" in line
    (tmp_path / "grid").mkdir()
    (tmp_path / "grid" / "sweep.json").write_text("{}")
    with pytest.raises(FileNotFoundError) as caught:
        mlcb.load(tmp_path / "grid")
    assert "grid is a sweep, not a saved mlcb result of one run: read it with mlcb.sweeps.load(" in str(
        caught.value
    )


@pytest.mark.parametrize("target", ["loop", "missing"], ids=["loop-of-links", "missing-target"])
def test_a_link_that_leads_nowhere_is_named_as_such(saved, tmp_path, capsys, target):
    """A result, an --out or a figure folder that is a link round a loop, or to a missing path,
    was 'no such folder' or 'cannot create the directory (File exists)': the line names the link
    and says what it is, for the reader of results and for every writer."""
    link = tmp_path / "loop"
    link.symlink_to(target)
    said = f"{link}: a symbolic link that leads to nothing (to a missing path, or round a loop of links)"
    with pytest.raises(FileNotFoundError, match="leads to nothing"):
        mlcb.load(link)
    with pytest.raises(ValueError) as caught:
        store.Store(link / "deeper", "trap")
    assert str(caught.value) == f"--out {said}"
    assert _one_line_error(capsys, main(["show", str(link)])) == f"mlcb: error: {said}"
    assert (
        _one_line_error(capsys, main(["plot", str(saved), "--out", str(link)]))
        == f"mlcb: error: --out {said}"
    )
