"""Sweeps: a grid of settings run as tasks on this machine's cores or on a Dask cluster.

A *grid* (:mod:`mlcb.sweeps.grid`) starts from a preset and lists values: lists under ``[grid]``
expand into their product, or ``[[settings]]`` tables name the settings one by one. Every setting
is validated before any task starts; an invalid combination, such as a budget above the number of
experts, is a ``ValueError`` naming it.

Each setting's replications are split into *tasks* of ``block`` consecutive replications. A task
is plain data; a worker (:mod:`mlcb.sweeps.worker`) builds the setting again, checks that it is
the one the client validated, simulates the block with one thread and sends back the three tidy
frames and a JSON description. Results travel as frames; nothing is unpickled from disk.

The sweep directory ``OUT/NAME/`` (one writer at a time, :func:`mlcb.storage.store.lock`) holds

``sweep.json``
    the grid as given, every setting (label, values, key), the tasks and which are done (rewritten
    every few seconds and at the end; on a re-run the part files on disk are what counts);
``data/{curves,experts,replications}/key=<setting key>/block-<first>-<stop>.parquet``
    a Parquet dataset partitioned by setting: one file per finished task and frame;
``data/settings/key=<setting key>/block-<first>-<stop>.json``
    the setting's description as the task computed it (configuration record, theory curve).

The client writes each part as soon as its task returns (:mod:`mlcb.sweeps.parts`), so the workers
need no shared file system. Running the same sweep again skips every part already on disk (each
one validated first; a damaged one is set aside as ``*.corrupt`` and recomputed). Because
replication ``r`` of a setting draws from streams keyed by ``(seed, r)``, the results do not
depend on the executor, the task size or the order in which tasks finish.

Executors (:mod:`mlcb.sweeps.executors`): ``local`` (default) runs tasks in worker processes of
this machine; ``dask`` sends them to a Dask cluster (``scheduler="tcp://host:8786"``) or to a
``distributed.LocalCluster`` started for the sweep on 127.0.0.1 and closed after it. On Dask, the
tasks of a worker that dies are run again elsewhere by the scheduler; a task that raises is not
retried (the cause is in the setting) and is reported with its setting while the other tasks
finish.

This module holds the entry point :func:`sweep`, its :class:`Outcome`, ``sweep.json`` and reading a
sweep back (:func:`load`); it re-exports the grid's, the parts' and the executors' public names.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mlcb import validation
from mlcb.storage import outputs, provenance, result_files
from mlcb.sweeps.executors import (
    CONNECT_TIMEOUT,
    DASK_HINT,
    EXECUTORS,
    dask_client,
    first_line,
    run_dask,
    run_local,
)
from mlcb.sweeps.grid import (
    FIELDS,
    Grid,
    Setting,
    Task,
    build_config,
    load_grid,
    make_grid,
    whole_numbers,
)
from mlcb.sweeps.parts import (
    DATA,
    FRAMES,
    Kept,
    choose,
    foreign_entries,
    found_parts,
    plan,
    read_part,
    remove_sweep,
    write_part,
)
from mlcb.sweeps.worker import payload, run_task
from mlcb.validation import InputError, InputNotFound, InputTypeError

SWEEP_FILE = result_files.SWEEP_FILE


def own_files() -> tuple[str, ...]:
    """The files mlcb writes in a sweep's directory besides ``data/``: the description, every
    registered figure and the report."""
    figures = (outputs.figure_file(name) for name in outputs.FIGURES.names())
    return (SWEEP_FILE, *figures, outputs.REPORT)


#: Seconds between rewrites of ``sweep.json`` while tasks finish (and once at the end).
METADATA_EVERY = 2.0


@dataclass
class Outcome:
    """What :func:`sweep` did: the sweep's directory, the tasks run, skipped and failed (task and
    error, one line each), and ``result``, read back from the parts on disk when first asked
    (until then it holds the parts the sweep checked before its run, up to
    :data:`mlcb.sweeps.parts.KEEP_BYTES`, so that they are not read twice)."""

    path: Path
    computed: int
    skipped: int
    failed: list[tuple[str, str]]
    seconds: float
    _result: Any = field(default=None, repr=False)
    _kept: Kept | None = field(default=None, repr=False)

    @property
    def result(self) -> Any:
        """The :class:`~mlcb.storage.results.Result` of every finished part (:func:`load`)."""
        if self._result is None:
            self._result = _load(self.path, self._kept)
            self._kept = None
        return self._result


def _metadata(grid: Grid, done: set[str], todo: list[Task], failed: list[tuple[str, str]]) -> dict:
    return {
        "kind": "mlcb sweep",
        "name": grid.name,
        "preset": grid.preset,
        "replications": grid.replications,
        "block": grid.block,
        "grid": grid.description,
        "settings": [
            {"label": s.label, "key": s.key, "values": s.values, "config": s.config.to_dict()}
            for s in grid.settings
        ],
        "parts_done": sorted(done),
        "parts_to_do": sorted(f"key={t.key}/{t.name}" for t in todo if f"key={t.key}/{t.name}" not in done),
        "failed": [{"task": name, "error": error} for name, error in failed],
        "versions": provenance.versions(),
        "git_revision": provenance.git_revision(),
        "updated": pd.Timestamp.now(tz="UTC").isoformat(),
    }


def _write_json(path: Path, data: dict) -> None:
    from mlcb.storage.store import write_file

    text = json.dumps(data, indent=1, default=str).encode()
    write_file(path, lambda handle: handle.write(text))


def _check_directory(path: Path, grid: Grid, overwrite: bool) -> bool:
    """Whether ``path`` must be emptied first: refuses (``InputError``) a directory holding
    anything mlcb did not write, whatever ``overwrite``; and a sweep of other settings, a damaged
    sweep or a saved run unless ``overwrite`` (then ``True``)."""
    from mlcb.storage import store

    if not path.exists() and not path.is_symlink():
        return False
    if not path.is_dir() or path.is_symlink():
        what = "a symbolic link" if path.is_symlink() else "a file"
        raise InputError(f"{path} is {what}, not a sweep directory; move it away or choose another --out")
    keys = {s.key for s in grid.settings}
    why = None
    note = ""
    if is_sweep(path):
        try:
            saved = result_files.read_json(path / SWEEP_FILE)
            saved_keys = {s["key"] for s in saved["settings"]}
            if saved_keys != keys:
                why = _rewritten(saved, grid) or "holds a sweep of other settings"
                shared = len(saved_keys & keys)
                if shared and why == "holds a sweep of other settings":
                    note = (
                        f" ({shared} of its settings are this grid's: --overwrite deletes their finished "
                        "parts too; to keep them, run the settings that differ as a grid of their own, "
                        "with another name)"
                    )
        except (ValueError, KeyError, TypeError) as error:
            why = f"holds a damaged {SWEEP_FILE} ({first_line(error)})"
    elif any(path.iterdir()):
        why = "holds a saved run, not a sweep"
    removing = why is not None and overwrite
    if is_sweep(path):
        foreign = foreign_entries(path, own_files(), removing)
    else:
        foreign = store.foreign_entries(path)
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise InputError(
            f"{path} holds files that are no part of an mlcb sweep ({shown}); mlcb never deletes what it "
            "did not write: move them away, or choose another --out"
        )
    if why is not None and not overwrite:
        raise InputError(f"{path} {why}; pass --overwrite to replace it, or choose another --out{note}")
    return removing


def _rewritten(saved: dict, grid: Grid) -> str | None:
    """Why a saved sweep (``sweep.json``) whose keys are not the grid's holds the grid's settings
    all the same: their values with a number written another way (``2`` there, ``2.0`` here),
    named; or the very values, keyed by another mlcb (a key includes the version). ``None`` when
    the settings differ."""
    settings = saved["settings"]
    if not all(isinstance(s, dict) and isinstance(s.get("values"), dict) for s in settings):
        return None
    ours = {json.dumps(whole_numbers(s.values), sort_keys=True): s.values for s in grid.settings}
    theirs = {json.dumps(whole_numbers(s["values"]), sort_keys=True): s["values"] for s in settings}
    if len(settings) != len(grid.settings) or set(ours) != set(theirs):
        return None
    for same, values in ours.items():
        for name in sorted(set(values) | set(theirs[same]), key=str):
            before, now = (json.dumps(v.get(name), sort_keys=True) for v in (theirs[same], values))
            if before != now:
                return (
                    f"holds this grid's settings with a number written another way ({name} = {before} "
                    f"there, {now} here), which gives them other keys; write it as the saved sweep does "
                    "to resume it"
                )
    versions = saved.get("versions")
    version = versions.get("mlcb") if isinstance(versions, dict) else None
    ours_version = provenance.versions()["mlcb"]
    by = f" by mlcb {version}, this is {ours_version}" if version != ours_version else ""
    return (
        f"holds this grid's settings saved under other keys{by} (a setting's key includes mlcb's version "
        "and the code of one's own experts and policies, whose numbers may differ)"
    )


def _empty(path: Path) -> None:
    """Delete what mlcb wrote in ``path`` (a sweep's or a run's files: only those)."""
    from mlcb.storage import store

    if is_sweep(path):
        remove_sweep(path, own_files())
    else:
        store.remove_result(path)
        path.mkdir(exist_ok=True)


def _check_workers(workers: Any) -> int:
    if workers is None:
        return max(1, os.cpu_count() or 1)
    return validation.integer("workers", workers, maximum=4096)


def sweep(
    grid: str | Path | dict | Grid,
    *,
    out: str | Path = "results",
    executor: str = "local",
    scheduler: str | None = None,
    workers: int | None = None,
    block: int | None = None,
    overwrite: bool = False,
    progress: bool = False,
    timeout: float = CONNECT_TIMEOUT,
    on_part: Callable[[Task], None] | None = None,
    echo: Callable[[str], None] | None = None,
) -> Outcome:
    """Run a grid of settings into ``out / NAME`` (see the module docstring); returns an
    :class:`Outcome` whose ``result`` is the :class:`~mlcb.storage.results.Result` of every finished part.

    Parameters
    ----------
    grid : path, dict or Grid
        A grid TOML file, its contents as a dict, or a :class:`Grid` (:func:`make_grid`).
    out : path
        Output directory; the sweep writes ``out / NAME`` (``NAME`` from the grid).
    executor : {"local", "dask"}
        ``local``: worker processes of this machine. ``dask``: a Dask cluster at ``scheduler``, or
        a LocalCluster on 127.0.0.1 started and closed by the sweep.
    scheduler : str, Dask cluster or Client, optional
        A Dask scheduler address (``tcp://host:8786``), or a cluster or ``distributed.Client``
        already started, whose scheduler gets the tasks; only with ``executor="dask"``.
    workers : int, optional
        Processes of the local executor or of the LocalCluster (default: all cores).
    block : int, optional
        Replications per task (overrides the grid's ``block``; results do not depend on it).
    overwrite : bool
        Replace ``out / NAME`` when it holds something else than this sweep.
    progress : bool
        A progress bar over tasks (rate and ETA).
    timeout : float
        Seconds to wait for the scheduler at ``scheduler``.
    on_part : callable, optional
        Called with each :class:`Task` whose part was just written.
    echo : callable, optional
        Receives lines worth showing (the Dask dashboard's address).

    Examples
    --------
    >>> import mlcb, tempfile
    >>> grid = {"preset": "trap", "name": "doc", "horizon": 500, "replications": 2,
    ...         "grid": {"budget": [1, 2]}}
    >>> outcome = mlcb.sweep(grid, out=tempfile.mkdtemp(), workers=1)
    >>> outcome.computed, sorted(outcome.result.summary()["budget"].tolist())
    (4, [1, 2])
    """
    from mlcb.storage.store import Store

    started = time.perf_counter()
    _check_switches(overwrite=overwrite, progress=progress, on_part=on_part, echo=echo)
    grid = _as_grid(grid, block)
    scheduler = _address(scheduler)
    workers = check_options(executor, scheduler, timeout, workers)
    say = echo or (lambda _line: None)
    store = Store(out, grid.name)
    root = store.path
    with store.lock(), contextlib.ExitStack() as stack:
        replace = _check_directory(root, grid, overwrite)
        kept = Kept()
        done_tasks, todo = ([], grid.tasks()) if replace else plan(root, grid, kept=kept)
        client = None
        if todo and executor == "dask":  # connect before writing anything
            client = stack.enter_context(dask_client(scheduler, workers, timeout))
            link = getattr(client, "dashboard_link", None)
            say(f"dask: scheduler {client.scheduler.address}; dashboard {link or 'not available'}")
        if replace:
            _empty(root)
        root.mkdir(parents=True, exist_ok=True)
        record = _Record(root, grid, todo, done_tasks, progress, on_part)
        try:
            payloads = [payload(grid, t) for t in todo]
            if client is not None:
                run_dask(client, payloads, record.finished, record.failed_task)
            elif todo:
                run_local(payloads, workers, record.finished, record.failed_task)
        finally:
            record.close()
    return Outcome(
        root, record.computed, len(done_tasks), record.failed, time.perf_counter() - started, _kept=kept
    )


def _as_grid(grid: Any, block: int | None) -> Grid:
    """``grid`` (a TOML path, its contents or a :class:`Grid`) as a validated :class:`Grid`, with
    ``block`` replications per task when given."""
    if isinstance(grid, dict):
        grid = make_grid(grid)
    elif isinstance(grid, (str, os.PathLike)):
        grid = load_grid(os.fspath(grid))
    elif not isinstance(grid, Grid):
        raise InputTypeError(f"grid must be a TOML path, a dict or a Grid, got {type(grid).__name__}")
    if block is None:
        return grid
    size = validation.integer("block", block, maximum=10**6)
    return Grid(grid.name, grid.preset, grid.replications, size, grid.settings, grid.description)


def _check_switches(**given: Any) -> None:
    """``overwrite`` and ``progress`` must be True or False (``overwrite="no"``, a true string,
    would have replaced another sweep), ``on_part`` and ``echo`` a function or None (one that is
    not was called, and failed, only once a task had finished): checked before any work."""
    for name in ("overwrite", "progress"):
        validation.flag(name, given[name])
    for name in ("on_part", "echo"):
        value = given[name]
        if value is not None and not callable(value):
            raise InputTypeError(
                f"{name} must be a function or None, got {type(value).__name__} {validation.shown(value)}"
            )


def _address(scheduler: Any) -> Any:
    """The scheduler's address when ``scheduler`` is a Dask cluster (``LocalCluster``,
    dask-jobqueue's ``SLURMCluster``: its ``scheduler_address``) or a ``distributed.Client`` (the
    address it is connected to), which a notebook holds rather than the address; anything else
    as given (:func:`check_options` checks it)."""
    if isinstance(scheduler, str) or scheduler is None:
        return scheduler
    address = getattr(scheduler, "scheduler_address", None)
    if address is None and type(scheduler).__name__ == "Client":
        address = getattr(getattr(scheduler, "scheduler", None), "address", None)
    return address if isinstance(address, str) and address else scheduler


def check_options(executor: Any, scheduler: Any, timeout: Any, workers: Any) -> int:
    """Check the executor's options before anything runs (the command line too, before its first
    line); returns the number of workers."""
    if executor not in EXECUTORS:
        raise InputError(f"executor must be one of {EXECUTORS}, got {executor!r}")
    if scheduler is not None and executor != "dask":
        raise InputError("scheduler: an address is only used with executor 'dask' (--executor dask)")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        raise InputError(f"scheduler must be an address such as tcp://host:8786, got {scheduler!r}")
    if not (validation.is_real(timeout) and 0 < timeout <= 3600):
        raise InputError(f"timeout must be a number of seconds in (0, 3600], got {timeout!r}")
    if executor == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise InputError(DASK_HINT) from None
    return _check_workers(workers)


class _Record:
    """The bookkeeping of a sweep's run: each finished task's part written at once, ``sweep.json``
    rewritten every :data:`METADATA_EVERY` seconds and at the end (the parts are the truth), failed
    tasks collected, the progress shown: a bar over the tasks in a terminal; in a log (standard
    error not a terminal) a line when each setting's last task ends, no carriage returns."""

    def __init__(
        self,
        root: Path,
        grid: Grid,
        todo: list[Task],
        done_tasks: list[Task],
        progress: bool,
        on_part: Callable[[Task], None] | None,
    ) -> None:
        self.root, self.grid, self.todo, self.on_part = root, grid, todo, on_part
        self.done = {f"key={t.key}/{t.name}" for t in done_tasks}
        self.failed: list[tuple[str, str]] = []
        self.computed = 0
        self.bar = None
        self.lines = False
        self._left: dict[str, int] = {}
        self._started = time.monotonic()
        self._write_metadata()
        if progress and todo:
            from mlcb.engine.progress import interactive

            if interactive(sys.stderr):
                from tqdm.auto import tqdm

                tqdm.monitor_interval = 0  # no monitor thread: worker processes can be forked
                self.bar = tqdm(total=len(todo), desc=grid.name, unit="task")
            else:
                self.lines = True
                for task in todo:
                    self._left[task.label] = self._left.get(task.label, 0) + 1

    def _write_metadata(self) -> None:
        _write_json(self.root / SWEEP_FILE, _metadata(self.grid, self.done, self.todo, self.failed))
        self._written = time.monotonic()

    def finished(self, index: int, output: dict) -> None:
        """Task ``index`` of the to-do list returned ``output``: its part is written."""
        task = self.todo[index]
        write_part(self.root, task, output)
        self.done.add(f"key={task.key}/{task.name}")
        self.computed += 1
        if time.monotonic() - self._written >= METADATA_EVERY:
            self._write_metadata()
        if self.bar is not None:
            self.bar.update()
        self._line(task)
        if self.on_part is not None:
            self.on_part(task)

    def _line(self, task: Task) -> None:
        """In a log: one line when ``task`` was its setting's last."""
        if not self.lines:
            return
        self._left[task.label] -= 1
        if self._left[task.label] == 0:
            from mlcb.engine.progress import duration

            ended = sum(1 for left in self._left.values() if left == 0)
            print(
                f"{self.grid.name}: {task.label} done ({ended} of {len(self._left)} settings, "
                f"{duration(time.monotonic() - self._started)})",
                file=sys.stderr,
                flush=True,
            )

    def failed_task(self, index: int, error: BaseException) -> None:
        """Task ``index`` raised ``error``: named with its setting, the others go on."""
        task = self.todo[index]
        self.failed.append((task.describe(), first_line(error)))
        if self.bar is not None:
            self.bar.update()
            self.bar.write(f"failed: {task.describe()}: {first_line(error)}")
        elif self.lines:
            print(
                f"{self.grid.name}: failed: {task.describe()}: {first_line(error)}",
                file=sys.stderr,
                flush=True,
            )
            self._line(task)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self._write_metadata()


# --- reading a sweep back ------------------------------------------------------------------------
def is_sweep(path: str | Path) -> bool:
    """Whether ``path`` is a sweep directory (holds ``sweep.json``, or a link named so, which
    :func:`load` then refuses by name)."""
    meta_path = Path(path) / SWEEP_FILE
    return meta_path.is_file() or meta_path.is_symlink()


def load(path: str | Path) -> Any:
    """The :class:`~mlcb.storage.results.Result` of every finished part of the sweep in ``path`` (settings
    without a finished part are left out), validated part by part; its metadata also holds the
    grid under ``"sweep"``; a setting's description is its first part's, with ``seconds`` summed
    over its parts (compute time, not wall time). Nothing named in the files is imported or called.

    Parts are read as the sweep's own setting descriptions say (``sweep.json``, checked against
    each part's description), so a file whose rows do not fit its block is a ``ValueError``."""
    return _load(path, None)


def _load(path: str | Path, kept: Kept | None) -> Any:
    """:func:`load`, taking the parts of ``kept`` that are unchanged on disk instead of reading
    them again."""
    from mlcb.storage.results import Result

    path = validation.path("path", path)
    meta_path = path / SWEEP_FILE
    if not is_sweep(path):
        raise InputNotFound(f"{path} is not an mlcb sweep (no {SWEEP_FILE})")
    with result_files.open_regular(meta_path) as handle:  # a link or no regular file: refused
        text = handle.read()
    try:
        meta = result_files.loads(text)
        settings_meta = meta["settings"]
        failed = meta.get("failed", [])
        if not isinstance(failed, list) or not all(
            isinstance(f, dict) and all(isinstance(f.get(k), str) for k in ("task", "error")) for f in failed
        ):
            raise InputError("'failed' must be a list of {task, error} objects of strings")
        grid = Grid(
            str(meta["name"]),
            str(meta["preset"]),
            validation.integer("replications", meta["replications"], maximum=10**6),
            validation.integer("block", meta["block"], maximum=10**6),
            tuple(_Recorded.setting(s) for s in settings_meta),
            meta.get("grid") or {},
        )
    except RecursionError:
        raise InputError(f"{meta_path}: not a readable sweep description (nested too deep)") from None
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise InputError(f"{meta_path}: not a readable sweep description ({first_line(error)})") from None
    frames: dict[str, list[pd.DataFrame]] = {name: [] for name in FRAMES}
    settings: dict[str, dict] = {}
    for setting in grid.settings:
        for _, _, name in choose(found_parts(path, setting.key), grid.replications):
            known = kept.take(path, setting, name) if kept is not None else None
            part, part_meta = known if known is not None else read_part(path, setting, name)
            for frame_name in FRAMES:
                frames[frame_name].append(part[frame_name])
            first = settings.setdefault(setting.label, part_meta)
            if first is not part_meta and isinstance(part_meta.get("seconds"), (int, float)):
                first["seconds"] = float(first.get("seconds") or 0.0) + part_meta["seconds"]
    if not settings:
        raise InputError(f"{path}: the sweep has no finished part yet")
    joined = {name: pd.concat(frames[name], ignore_index=True) for name in FRAMES}
    order = {label: i for i, label in enumerate(settings)}
    for name, frame in joined.items():
        columns = ["setting", "replication", "round", "expert"][
            : {"curves": 3, "experts": 4, "replications": 2}[name]
        ]
        frame["_order"] = frame["setting"].map(order)
        joined[name] = (
            frame.sort_values(["_order", *columns[1:]], kind="stable")
            .drop(columns="_order")
            .reset_index(drop=True)
        )
    metadata = {
        "settings": settings,
        "sweep": {
            **{k: meta.get(k) for k in ("name", "preset", "replications", "block", "grid", "failed")},
            "planned": grid.replications * len(grid.settings),
        },
        "versions": meta.get("versions"),
        "git_revision": meta.get("git_revision"),
        "created": meta.get("updated"),
    }
    return Result(joined["curves"], joined["experts"], joined["replications"], metadata=metadata)


class _Recorded:
    """A setting as ``sweep.json`` records it: enough to read its parts (label, key, shapes)."""

    @staticmethod
    def setting(data: dict) -> Setting:
        config = data["config"]
        if not isinstance(config["experts"], list):
            raise InputError(
                f"the experts of setting {data['label']!r} must be a list, got {config['experts']!r}"
            )
        recorded = _RecordedConfig(
            str(data["key"]),
            int(validation.integer("horizon", config["horizon"], maximum=10**10)),
            int(validation.integer("checkpoints", config["checkpoints"], maximum=10**5)),
            len(config["experts"]),
            str(data["label"]),
        )
        return Setting(dict(data.get("values") or {}), recorded)


@dataclass(frozen=True)
class _RecordedConfig:
    recorded_key: str
    horizon: int
    checkpoints: int
    n_experts: int
    label: str

    def key(self) -> str:
        return self.recorded_key


def load_any(path: str | Path) -> Any:
    """A sweep (:func:`load`) or a saved result (:func:`mlcb.storage.results.load`) in ``path``."""
    from mlcb.storage.results import load as load_result

    return load(path) if is_sweep(path) else load_result(path)


def summary_line(outcome: Outcome) -> str:
    """One line about what a sweep did."""
    rate = (
        f", {outcome.computed / outcome.seconds:.2f} tasks/s"
        if outcome.seconds > 0 and outcome.computed
        else ""
    )
    return (
        f"{outcome.computed} task(s) run, {outcome.skipped} already done, {len(outcome.failed)} failed "
        f"in {outcome.seconds:.1f} s{rate}"
    )


__all__ = [
    "CONNECT_TIMEOUT",
    "DATA",
    "EXECUTORS",
    "FIELDS",
    "METADATA_EVERY",
    "SWEEP_FILE",
    "Grid",
    "Outcome",
    "Setting",
    "Task",
    "build_config",
    "dask_client",
    "is_sweep",
    "load",
    "load_any",
    "load_grid",
    "make_grid",
    "payload",
    "plan",
    "read_part",
    "run_task",
    "summary_line",
    "sweep",
    "write_part",
]
