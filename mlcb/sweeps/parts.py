"""A sweep's parts on disk: one per finished task, written, found, validated and set aside.

A part is the block ``first .. stop - 1`` of one setting's replications, kept as four files of a
Parquet dataset partitioned by setting key::

    data/{curves,experts,replications}/key=<setting key>/block-<first>-<stop>.parquet
    data/settings/key=<setting key>/block-<first>-<stop>.json

Each file is written atomically (:func:`mlcb.storage.store.write_file`), the description first and the
curves last, so a part counts as done only when all four files are there. Before a re-run uses a
part it is validated (:func:`read_part`); a damaged one is renamed ``*.corrupt`` and its
replications are planned again (:func:`plan`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mlcb.errors import CorruptPartWarning
from mlcb.storage import result_files
from mlcb.storage.result_files import FRAMES
from mlcb.storage.store import aside_name
from mlcb.sweeps.grid import Grid, Setting, Task, blocks
from mlcb.validation import InputError

#: The sweep's Parquet dataset, below its directory.
DATA = "data"
#: A part's name, ``block-<first>-<stop>`` (:attr:`mlcb.sweeps.grid.Task.name`): six digits each,
#: seven for the stop 1,000,000 of a setting's largest number of replications.
PART_NAME = r"block-(\d{6,7})-(\d{6,7})"


def part_files(root: Path, key: str, name: str) -> dict[str, Path]:
    """The four files of the part ``name`` (``block-<first>-<stop>``) of setting ``key``."""
    files = {f: root / DATA / f / f"key={key}" / f"{name}.parquet" for f in FRAMES}
    files["settings"] = root / DATA / "settings" / f"key={key}" / f"{name}.json"
    return files


def _write_parquet(frame: pd.DataFrame, handle: Any) -> None:
    frame.to_parquet(handle, index=False)


def write_part(root: Path, task: Task, output: dict) -> None:
    """Write a finished task's frames and description, each file atomically (description first,
    curves last: a part counts as done only when all four files are there and valid); never
    through a linked folder, and never onto a folder (:func:`check_folders`)."""
    from mlcb.storage.store import write_file

    files = part_files(root, task.key, task.name)
    check_folders(root, files)
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    check_folders(root, files)
    text = json.dumps(output["setting"], indent=1).encode()
    write_file(files["settings"], lambda handle: handle.write(text))
    for name in ("experts", "replications", "curves"):
        frame = output[name]
        write_file(files[name], functools.partial(_write_parquet, frame))


def read_part(root: Path, setting: Setting, name: str) -> tuple[dict[str, pd.DataFrame], dict]:
    """Read and validate one part: the frames' columns and dtypes, the setting's label, the
    replications of the block and the rows each must have. A problem is a ``ValueError`` naming
    the file."""
    from mlcb.config import checkpoint_grid

    match = re.fullmatch(PART_NAME, name)
    if match is None:
        raise InputError(f"{name}: not a part name")
    first, stop = int(match[1]), int(match[2])
    files = part_files(root, setting.key, name)
    meta = result_files.read_json(files["settings"], within=root)
    if not isinstance(meta, dict) or meta.get("key") != setting.key:
        raise InputError(f"{files['settings']}: does not describe the setting {setting.label!r}")
    result_files.check_setting(files["settings"], setting.label, meta)
    # The label the part was written under: a setting renamed since (its label is a name, no part
    # of its key) keeps its parts, read under its new name (they were set aside as damaged).
    written = meta["config"].get("label") if isinstance(meta.get("config"), dict) else None
    written = written if isinstance(written, str) else setting.label
    config = setting.config
    grid = checkpoint_grid(config.horizon, config.checkpoints)
    points = len(grid)
    count = stop - first
    rows = {"curves": count * points, "experts": count * points * config.n_experts, "replications": count}
    frames = {}
    for frame_name in FRAMES:
        path = files[frame_name]
        frame = result_files.read_frame(path, frame_name, within=root)
        result_files.check_values(path, frame, frame_name)
        if len(frame) != rows[frame_name]:
            raise InputError(f"{path}: {len(frame)} rows, expected {rows[frame_name]}")
        if not (frame["setting"] == written).all():
            raise InputError(f"{path}: rows of another setting than {written!r}")
        if written != setting.label:
            frame["setting"] = frame["setting"].replace(written, setting.label)
        reps = frame["replication"].to_numpy()
        if reps.min() != first or reps.max() != stop - 1 or len(np.unique(reps)) != count:
            raise InputError(f"{path}: replications differ from the block's {first}-{stop - 1}")
        frames[frame_name] = frame
    _check_part_rows(files, frames, meta, setting.label, count, grid)
    if written != setting.label:
        meta["config"]["label"] = setting.label
        if isinstance(meta.get("grid"), dict) and "label" in meta["grid"]:
            meta["grid"]["label"] = setting.label
    return frames, meta


def _check_part_rows(
    files: dict[str, Path], frames: dict[str, pd.DataFrame], meta: dict, label: str, count: int, grid: Any
) -> None:
    """The checks a saved result's rows get (:func:`mlcb.storage.result_files.check_rows`: each
    row once, the frames on the same replications and checkpoints, the experts within the pool,
    the setting columns those of its config), for the ``count`` replications of one part, whose
    checkpoints must be the setting's own ``grid``: a row moved onto another's place keeps the
    counts, and the means over the rows would be wrong."""
    config = meta["config"] if isinstance(meta.get("config"), dict) else {}
    described = {**meta, "config": {**config, "replications": count}}
    named = {**{name: files[name] for name in FRAMES}, "metadata": files["settings"]}
    result_files.check_rows(
        files["curves"].parent, [frames[n] for n in FRAMES], {"settings": {label: described}}, named
    )
    rounds = np.unique(frames["curves"]["round"].to_numpy())
    expected = np.asarray(grid, dtype=np.int64)
    if len(rounds) != len(expected) or (rounds != expected).any():
        stray = sorted(set(rounds.tolist()) ^ set(expected.tolist()))
        raise InputError(
            f"{files['curves']}: checkpoints differ from the setting's ({len(expected)} from round 1 to "
            f"{int(expected[-1]):,}): round {int(stray[0]):,}"
        )


def set_aside(root: Path, key: str, name: str) -> None:
    """Rename the files of a damaged part ``*.corrupt`` (kept for inspection, never read again).
    A file reached through a linked folder is left alone: the link is renamed instead, so that
    nothing outside the sweep is touched and new parts are written into a folder of its own."""
    for path in part_files(root, key, name).values():
        inside = path.relative_to(root).parts
        entries = [root.joinpath(*inside[: i + 1]) for i in range(len(inside))]  # data, ..., the file
        target = next((entry for entry in entries if entry.is_symlink()), path)
        if not (target.exists() or target.is_symlink()):
            continue
        aside = target.with_name(target.name + ".corrupt")
        if target != path and aside.exists():  # a folder: never onto another one
            aside = aside_name(target, "corrupt")
        with contextlib.suppress(OSError):
            os.replace(target, aside)


def found_parts(root: Path, key: str) -> list[str]:
    """Names of the blocks of setting ``key`` with all four files present."""
    folder = root / DATA / "curves" / f"key={key}"
    if not folder.is_dir():
        return []
    names = sorted(p.name[: -len(".parquet")] for p in folder.glob("block-*.parquet"))
    return [n for n in names if all(p.is_file() for p in part_files(root, key, n).values())]


def choose(names: list[str], replications: int) -> list[tuple[int, int, str]]:
    """Non-overlapping parts inside ``[0, replications)``, earliest first."""
    spans = []
    for name in names:
        match = re.fullmatch(PART_NAME, name)
        if match and 0 <= int(match[1]) < int(match[2]) <= replications:
            spans.append((int(match[1]), int(match[2]), name))
    chosen: list = []
    covered: set[int] = set()
    for first, stop, name in sorted(spans, key=lambda s: (s[0], -s[1])):
        if covered.isdisjoint(range(first, stop)):
            chosen.append((first, stop, name))
            covered.update(range(first, stop))
    return chosen


#: Bytes of validated parts' frames that :func:`plan` keeps for the reading of the result that
#: follows (:class:`Kept`); the parts past it are read from disk again.
KEEP_BYTES = 256 * 2**20


class Kept:
    """Parts validated by :func:`plan`, kept in memory for the sweep's result read next: each part
    was read and checked twice (once to plan, once to load), about 20 ms a part. A part is used
    once (:meth:`take`), and only while its four files are the ones read (same inode, size and
    modification time); otherwise it is read again. Sizes are counted as 8 bytes a cell (a label's
    text is about as long)."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = KEEP_BYTES if limit is None else limit
        self.size = 0
        self._parts: dict[tuple[str, str, str], tuple[tuple, dict[str, pd.DataFrame], dict, int]] = {}

    def keep(
        self, setting: Setting, name: str, stamped: tuple, frames: dict[str, pd.DataFrame], meta: dict
    ) -> None:
        size = 8 * sum(frame.shape[0] * frame.shape[1] for frame in frames.values())
        if self.size + size <= self.limit:
            self.size += size
            self._parts[(setting.key, setting.label, name)] = (stamped, frames, meta, size)

    def take(self, root: Path, setting: Setting, name: str) -> tuple[dict[str, pd.DataFrame], dict] | None:
        """The part kept of ``setting`` and ``name`` if its files are unchanged, else ``None``."""
        kept = self._parts.pop((setting.key, setting.label, name), None)
        if kept is None:
            return None
        stamped, frames, meta, size = kept
        self.size -= size
        return (frames, meta) if stamped == stamp(root, setting, name) else None


def stamp(root: Path, setting: Setting, name: str) -> tuple:
    """What changes when one of a part's four files is replaced or written: inode, size and
    modification time of each (``None`` for a file not there)."""
    stamps: list[tuple[int, int, int] | None] = []
    for path in part_files(root, setting.key, name).values():
        try:
            info = path.stat()
        except OSError:
            stamps.append(None)
        else:
            stamps.append((info.st_ino, info.st_size, info.st_mtime_ns))
    return tuple(stamps)


def plan(
    root: Path, grid: Grid, check: bool = True, kept: Kept | None = None
) -> tuple[list[Task], list[Task]]:
    """``(done, todo)``: the parts already on disk (validated when ``check``; a damaged one is set
    aside as ``*.corrupt`` with a warning and its replications planned again) and the tasks that
    remain, in blocks of at most ``grid.block``. Parts validated are kept in ``kept``, as far as it
    holds them."""
    done: list[Task] = []
    todo: list[Task] = []
    for setting in grid.settings:
        covered: set[int] = set()
        for first, stop, name in choose(found_parts(root, setting.key), grid.replications):
            if not all(p.is_file() for p in part_files(root, setting.key, name).values()):
                continue  # its folder was a link, set aside with an earlier part: planned again
            if check:
                before = stamp(root, setting, name) if kept is not None else ()
                try:
                    frames, meta = read_part(root, setting, name)
                except ValueError as error:
                    set_aside(root, setting.key, name)
                    warnings.warn(
                        f"{error}; the part's files renamed *.corrupt, replications {first}-{stop - 1} of "
                        f"{setting.label!r} recomputed",
                        CorruptPartWarning,
                        stacklevel=2,
                    )
                    continue
                if kept is not None:
                    kept.keep(setting, name, before, frames, meta)
            done.append(Task(setting.label, setting.key, first, stop))
            covered.update(range(first, stop))
        missing = [r for r in range(grid.replications) if r not in covered]
        todo.extend(Task(setting.label, setting.key, a, b) for a, b in blocks(missing, grid.block))
    return done, todo


# --- what a sweep's directory may hold, and removing it -------------------------------------------
#: Names mlcb writes in a sweep's data folders, by depth below ``data/``.
_FRAME_FOLDER = re.compile(r"(curves|experts|replications|settings)(\.corrupt(-\d+-\d+)?)?")
_KEY_FOLDER = re.compile(r"key=[0-9a-f]+(\.corrupt(-\d+-\d+)?)?")
_PART = re.compile(
    r"block-\d{6,7}-\d{6,7}\.(parquet|json)(\.corrupt(-\d+-\d+)?)?"
    r"|\.block-\d{6,7}-\d{6,7}\.(parquet|json)\.\d+-[0-9a-f]{8}\.tmp"
)
_TEMPORARY = re.compile(r"\..+\.\d+-[0-9a-f]{8}\.tmp")


def _mine(entry: Path, depth: int, removing: bool) -> bool:
    """Whether ``entry``, ``depth`` levels below ``data/``, is what mlcb writes there (a link:
    mlcb removes the link itself, never what it points to). A folder where a part goes is set
    aside by a rerun (:func:`check_folders`), never deleted: it is foreign when ``removing``."""
    if entry.is_symlink():
        return True
    pattern = (_FRAME_FOLDER, _KEY_FOLDER, _PART)[min(depth, 2)]
    if not pattern.fullmatch(entry.name):
        return False
    if depth < 2:
        return entry.is_dir()
    return entry.is_file() or (entry.is_dir() and not removing)


def foreign_entries(root: Path, own_files: tuple[str, ...], removing: bool = False) -> list[str]:
    """Paths (relative to ``root``) in a sweep's directory that mlcb did not write: anything but
    ``own_files`` (``sweep.json``, the figures, the report), temporaries, and the ``data/``
    folders and parts; with ``removing``, also a folder where a part goes (a rerun would set it
    aside, but removing the sweep would delete what it holds)."""
    foreign: list[str] = []
    for entry in sorted(root.iterdir()):
        if entry.name == DATA and entry.is_dir() and not entry.is_symlink():
            foreign.extend(_foreign_below(entry, root, 0, removing))
        elif not (
            (entry.name in own_files or _TEMPORARY.fullmatch(entry.name))
            and entry.is_file()
            and not entry.is_symlink()
        ):
            foreign.append(entry.name)
    return foreign


def _foreign_below(folder: Path, root: Path, depth: int, removing: bool) -> list[str]:
    foreign: list[str] = []
    for entry in sorted(folder.iterdir()):
        if not _mine(entry, depth, removing):
            foreign.append(str(entry.relative_to(root)))
        elif entry.is_dir() and not entry.is_symlink() and depth < 2:
            foreign.extend(_foreign_below(entry, root, depth + 1, removing))
    return foreign


def remove_sweep(root: Path, own_files: tuple[str, ...]) -> None:
    """Delete what mlcb wrote in the sweep directory ``root`` (call after :func:`foreign_entries`
    found nothing else): its files, the data folders and parts, links unlinked, never followed."""
    for entry in sorted(root.iterdir()):
        if entry.name == DATA and entry.is_dir() and not entry.is_symlink():
            _remove_below(entry)
            with contextlib.suppress(OSError):
                entry.rmdir()
        elif entry.name in own_files or _TEMPORARY.fullmatch(entry.name):
            with contextlib.suppress(OSError):
                entry.unlink()


def _remove_below(folder: Path) -> None:
    """Unlink links and regular files below ``folder``, remove the emptied folders (what
    :func:`foreign_entries` with ``removing`` allows: mlcb's own)."""
    for entry in folder.iterdir():
        if entry.is_symlink() or entry.is_file():
            entry.unlink()
        elif entry.is_dir():
            _remove_below(entry)
            entry.rmdir()


def check_folders(root: Path, files: dict[str, Path]) -> None:
    """An ``InputError`` when a folder between ``root`` and one of ``files`` is a link (a write
    would land outside the sweep) or not a folder; a file's place holding something that is not a
    regular file (a folder, a pipe, a link) is set aside as ``*.corrupt-<pid>-<ns>``, named in a
    warning, so that the part can be written."""
    for path in files.values():
        inside = path.relative_to(root).parts
        for i in range(len(inside) - 1):
            folder = root.joinpath(*inside[: i + 1])
            if folder.is_symlink():
                raise InputError(
                    f"{folder}: is a symbolic link; a sweep writes its parts only into folders of its own "
                    "(remove the link)"
                )
            if folder.exists() and not folder.is_dir():
                raise InputError(
                    f"{folder}: not a folder; move it away so that the sweep can write its parts"
                )
        if (path.exists() or path.is_symlink()) and (path.is_symlink() or not path.is_file()):
            aside = aside_name(path, "corrupt")
            os.rename(path, aside)
            warnings.warn(
                f"{path}: not a regular file where a part goes; set aside as {aside.name}",
                CorruptPartWarning,
                stacklevel=2,
            )
