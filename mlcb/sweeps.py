"""Sweeps: a grid of settings run as tasks on this machine's cores or on a Dask cluster.

A *grid* starts from a preset and lists values: lists under ``[grid]`` expand into their product,
or ``[[settings]]`` tables name the settings one by one. Every setting is validated (built as a
:class:`mlcb.config.SimulationConfig`) before any task starts; an invalid combination, such as a
budget above the number of experts, is a ``ValueError`` naming it.

Each setting's replications are split into *tasks* of ``block`` consecutive replications. A task
is plain data (the preset's name, the setting's values, the replication range): the worker builds
the setting again, checks that it is the one the client validated (same key), simulates the block
with one thread and sends back the three tidy frames and a JSON description. Results travel as
frames; nothing is unpickled from disk.

The sweep directory ``OUT/NAME/`` (one writer at a time, :func:`mlcb.store.lock`) holds

``sweep.json``
    the grid as given, every setting (label, values, key), the tasks and which are done (rewritten
    every few seconds and at the end; on a re-run the part files on disk are what counts);
``data/{curves,experts,replications}/key=<setting key>/block-<first>-<stop>.parquet``
    a Parquet dataset partitioned by setting: one file per finished task and frame;
``data/settings/key=<setting key>/block-<first>-<stop>.json``
    the setting's description as the task computed it (configuration record, theory curve).

The client writes each part as soon as its task returns (every file written under a temporary
name, fsync'ed and renamed, :func:`mlcb.store.write_file`), so the workers need no shared file
system. Running the same sweep again skips every part already on disk (each one validated first; a
damaged one is set aside as ``*.corrupt`` and recomputed). Because replication ``r`` of a setting
draws from streams keyed by ``(seed, r)``, the results do not depend on the executor, the task size
or the order in which tasks finish.

Executors: ``local`` (default) runs tasks in worker processes of this machine; ``dask`` sends them
to a Dask cluster (``scheduler="tcp://host:8786"``) or to a ``distributed.LocalCluster`` started
for the sweep on 127.0.0.1 and closed after it. On Dask, the tasks of a worker that dies are run
again elsewhere by the scheduler; a task that raises is not retried (the cause is in the setting)
and is reported with its setting while the other tasks finish.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import json
import multiprocessing
import os
import re
import shutil
import time
import tomllib
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mlcb import validation

EXECUTORS = ("local", "dask")
SWEEP_FILE = "sweep.json"
DATA = "data"
_FRAMES = ("curves", "experts", "replications")
#: Keys of a grid file besides the setting fields.
_GRID_KEYS = ("name", "preset", "replications", "block", "grid", "settings")
#: Setting fields a grid may set or vary (``env_params.NAME`` and ``policy_params.NAME`` too).
FIELDS = (
    "policy",
    "budget",
    "n_experts",
    "horizon",
    "delta",
    "calibration",
    "smoothing",
    "seed",
    "checkpoints",
    "env_params",
    "policy_params",
)
#: Short names of varied fields in setting labels.
_SHORT = {"budget": "M", "n_experts": "K", "horizon": "T"}
#: Seconds between rewrites of ``sweep.json`` while tasks finish (and once at the end).
METADATA_EVERY = 2.0
#: Seconds to wait for a Dask scheduler before giving up.
CONNECT_TIMEOUT = 10.0
_DASK_HINT = "the dask executor needs dask.distributed: pip install 'mlcb[dask]'"


class SweepError(RuntimeError):
    """Some tasks of a sweep failed for a reason in their setting; the others finished."""


# --- the grid ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Setting:
    """One setting of a grid: its label, its values (plain data) and its validated configuration."""

    label: str
    values: dict
    config: Any

    @property
    def key(self) -> str:
        return self.config.key()


@dataclass(frozen=True)
class Grid:
    """A validated grid: every setting built, labels and keys distinct."""

    name: str
    preset: str
    replications: int
    block: int
    settings: tuple[Setting, ...]
    description: dict = field(default_factory=dict)

    def tasks(self) -> list[Task]:
        """Every task of the grid, ``block`` replications each (a fresh sweep's plan)."""
        return [
            Task(s.label, s.key, a, b)
            for s in self.settings
            for a, b in _blocks(range(self.replications), self.block)
        ]


@dataclass(frozen=True)
class Task:
    """Replications ``first .. stop - 1`` of the setting ``label`` (key ``key``)."""

    label: str
    key: str
    first: int
    stop: int

    @property
    def name(self) -> str:
        return f"block-{self.first:06d}-{self.stop:06d}"

    def describe(self) -> str:
        return f"{self.label}, replications {self.first}-{self.stop - 1}"


def _blocks(replications: Iterable[int], size: int) -> list[tuple[int, int]]:
    """Runs of consecutive replications cut into blocks of at most ``size``."""
    out: list[tuple[int, int]] = []
    values = sorted(replications)
    for _, run in itertools.groupby(enumerate(values), key=lambda pair: pair[1] - pair[0]):
        run = [r for _, r in run]
        for start in range(0, len(run), size):
            chunk = run[start : start + size]
            out.append((chunk[0], chunk[-1] + 1))
    return out


def _as_list(key: str, value: Any) -> list:
    if isinstance(value, list):
        if not value:
            raise ValueError(f"grid.{key}: an empty list gives no settings; give one or more values")
        return value
    return [value]


def _check_field(key: str, where: str) -> None:
    if key in FIELDS or re.fullmatch(r"(env_params|policy_params)\.[A-Za-z_]\w*", key):
        return
    allowed = ", ".join(FIELDS) + ", env_params.NAME, policy_params.NAME"
    raise ValueError(f"{where}: unknown key {key!r}; allowed: {allowed}")


def _describe_values(values: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in values.items()) or "the base setting"


def build_config(preset_name: str, values: dict, replications: int) -> Any:
    """The :class:`~mlcb.config.SimulationConfig` of the preset ``preset_name`` with the setting
    ``values`` (grid fields) and ``replications``; raises ``ValueError`` on a bad combination."""
    from mlcb import presets

    preset = presets.get(preset_name)
    rest = dict(values)
    budget = rest.pop("budget", None)
    calibration = rest.pop("calibration", None)
    env_params = dict(rest.pop("env_params", None) or {})
    policy_params = dict(rest.pop("policy_params", None) or {})
    for key in list(rest):
        if key.startswith("env_params."):
            env_params[key.split(".", 1)[1]] = rest.pop(key)
        elif key.startswith("policy_params."):
            policy_params[key.split(".", 1)[1]] = rest.pop(key)
    if "n_experts" in rest:
        env_params["n_experts"] = rest.pop("n_experts")
    fields = {"env_params": env_params, "replications": replications, **rest}
    if policy_params:
        fields["policy_params"] = policy_params
    return preset.config(budget, calibration, **fields)


def _value_of(key: str, values: dict, config: Any) -> Any:
    """The value of grid field ``key`` in the built setting (defaults filled in)."""
    if key == "n_experts":
        return config.n_experts
    if key.startswith(("env_params.", "policy_params.")):
        group, name = key.split(".", 1)
        return getattr(config, group).get(name, values.get(key))
    value = getattr(config, key, values.get(key))
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value


def _label(values: dict, varied: list[str], config: Any) -> str:
    parts = [str(config.policy), f"M={config.budget}"]
    for key in varied:
        if key in ("policy", "budget"):
            continue
        parts.append(f"{_SHORT.get(key, key)}={_value_of(key, values, config)}")
    return " ".join(parts)


def make_grid(data: dict, name: str | None = None) -> Grid:
    """Validate a grid given as a dict (the TOML file's contents) and build every setting.

    Keys: ``preset`` (required), ``name``, ``replications``, ``block`` (replications per task),
    any of :data:`FIELDS` as the base setting, and either ``[grid]`` (each list expands into the
    product) or ``[[settings]]`` (explicit settings, each over the base). Every problem is a
    ``ValueError`` naming the key or the setting at fault, raised before any work.

    Examples
    --------
    >>> grid = make_grid({"preset": "trap", "horizon": 1_000, "replications": 4,
    ...                   "grid": {"budget": [1, 2], "n_experts": [4, 6]}})
    >>> [s.label for s in grid.settings]
    ['mlcb M=1 K=4', 'mlcb M=1 K=6', 'mlcb M=2 K=4', 'mlcb M=2 K=6']
    """
    if not isinstance(data, dict):
        raise ValueError(f"grid: expected a table of keys, got {type(data).__name__}")
    description = json.loads(json.dumps(data, default=str))
    data = dict(data)
    if "preset" not in data:
        raise ValueError(
            'preset: a grid needs a preset to start from (see `mlcb list`), e.g. preset = "trap"'
        )
    preset = data.pop("preset")
    from mlcb import presets

    if not isinstance(preset, str):
        raise ValueError(f"preset must be a preset name, got {preset!r}")
    base_preset = presets.get(preset)
    grid_name = validation.plain_name("name", data.pop("name", name or f"{preset}-sweep"))
    replications = validation.integer(
        "replications", data.pop("replications", base_preset.replications), maximum=10**6
    )
    block = validation.integer("block", data.pop("block", 1), maximum=10**6)
    table = data.pop("grid", None)
    explicit = data.pop("settings", None)
    for key in data:
        _check_field(key, "grid file")
    base = data
    if table is not None and explicit is not None:
        raise ValueError("grid and settings: give [grid] (a product) or [[settings]] (a list), not both")
    if table is not None:
        if not isinstance(table, dict) or not table:
            raise ValueError(f"grid must be a table of lists, e.g. budget = [1, 2, 4], got {table!r}")
        for key in table:
            _check_field(key, "grid")
            if key in base:
                raise ValueError(f"grid.{key}: also set outside [grid]; set it in one place")
        keys = list(table)
        lists = [_as_list(k, table[k]) for k in keys]
        combos = [dict(zip(keys, combo)) for combo in itertools.product(*lists)]
        varied = [k for k, values in zip(keys, lists) if len(values) > 1]
    elif explicit is not None:
        if not isinstance(explicit, list) or not explicit or not all(isinstance(s, dict) for s in explicit):
            raise ValueError("settings must be one or more [[settings]] tables of setting fields")
        for index, entry in enumerate(explicit):
            for key in entry:
                _check_field(key, f"settings[{index}]")
        combos = [dict(entry) for entry in explicit]
        keys = sorted({k for entry in combos for k in entry})
        varied = [k for k in keys if len({json.dumps(c.get(k), sort_keys=True) for c in combos}) > 1]
    else:
        combos, varied = [{}], []
    settings: list[Setting] = []
    labels: dict[str, str] = {}
    keys_seen: dict[str, str] = {}
    for combo in combos:
        values = {**base, **combo}
        try:
            config = build_config(preset, values, replications)
        except (ValueError, TypeError) as error:
            message = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise ValueError(f"grid setting {_describe_values(combo)} is invalid: {message}") from None
        label = _label(values, varied, config)
        if label in labels:
            raise ValueError(
                f"grid: settings {labels[label]} and {_describe_values(combo)} share the label {label!r}"
            )
        key = config.key()
        if key in keys_seen:
            raise ValueError(
                f"grid: settings {keys_seen[key]} and {_describe_values(combo)} are the same setting"
            )
        labels[label] = keys_seen[key] = _describe_values(combo)
        settings.append(Setting(label, json.loads(json.dumps(values)), config))
    return Grid(grid_name, preset, replications, block, tuple(settings), description)


def load_grid(path: str | Path) -> Grid:
    """Read and validate a grid TOML file (:func:`make_grid`); the file's stem is the default name."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"grid: no such TOML file {str(path)!r}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path.name}: not a valid UTF-8 TOML file: {error}") from None
    return make_grid(data, name=path.stem)


# --- one task (runs on a worker) ----------------------------------------------------------------
def rate_exponent(experts: list, env: Any, family: Any, delta: float, horizon: int) -> float | None:
    """The largest rate exponent ``alpha`` of the pool: an expert's declared ``alpha`` where it has
    one in (0, 1), else the log-log slope of its rate function ``U_k(n)`` over the last decade of
    counts up to ``horizon`` (at least 1,000). ``None`` when the rates are not tabulated."""
    from mlcb import theory

    declared = [getattr(e, "alpha", None) for e in experts]
    top = max(1_000, int(horizon))
    counts = np.unique(np.geomspace(top / 10, top, 12).astype(np.int64))
    try:
        rates = family.rates(experts, env, counts, delta / (2 * len(experts)))
    except Exception:  # a rate the family cannot tabulate: no exponent rather than no result
        rates = None
    values = []
    for k, alpha in enumerate(declared):
        if isinstance(alpha, (int, float)) and 0 < alpha < 1:
            values.append(float(alpha))
        elif rates is not None:
            slope = theory.loglog_slope(counts.astype(float), np.asarray(rates[k], dtype=float), tail=1.0)
            if np.isfinite(slope):
                values.append(float(slope))
    return max(values) if values else None


#: Rate exponents of recent settings, by key.
_EXPONENTS: dict[str, float | None] = {}


def run_task(task: dict) -> dict:
    """Run one task given as plain data (``preset``, ``values``, ``replications``, ``key``,
    ``label``, ``first``, ``stop``); returns the three tidy frames and the setting's description
    (plain JSON). Raises when the worker builds a different setting than the client validated."""
    from mlcb.engine import python_loop
    from mlcb.engine.replications import checkpoint_grid
    from mlcb.engine.replications import run_replications as run_compiled
    from mlcb.results import Result
    from mlcb.simulation import Problem, choose_engine

    started = time.perf_counter()
    config = build_config(task["preset"], task["values"], task["replications"])
    if config.key() != task["key"]:
        raise ValueError(
            f"{task['label']}: this worker builds a different setting (key {config.key()} instead of "
            f"{task['key']}); run the same mlcb version on the workers as on the client"
        )
    problem = Problem.from_config(config)
    engine = choose_engine(problem, "auto")
    grid = checkpoint_grid(config.horizon, config.checkpoints)
    wanted = range(task["first"], task["stop"])
    if engine == "compiled":
        replications = run_compiled(
            problem, config.seed, wanted, config.horizon, grid, threads=task.get("threads", 1)
        )
    else:
        replications = python_loop.run_replications(problem, config.seed, wanted, config.horizon, grid)
    if task["key"] not in _EXPONENTS:  # once per setting and process
        while len(_EXPONENTS) >= 64:
            _EXPONENTS.pop(next(iter(_EXPONENTS)))
        _EXPONENTS[task["key"]] = rate_exponent(
            list(config.experts), problem.env, problem.family, config.delta, config.horizon
        )
    alpha = _EXPONENTS[task["key"]]
    extra = {
        "engine": engine,
        "rate_exponent": alpha,
        "n_experts": config.n_experts,
        "horizon": config.horizon,
        "grid": task["values"],
    }
    result = Result.from_replications(config, replications, grid, extra)
    label = task["label"]
    frames = {}
    for name in _FRAMES:
        frame = getattr(result, name)
        frame["setting"] = label
        frames[name] = frame
    (meta,) = result.metadata["settings"].values()
    meta["seconds"] = time.perf_counter() - started
    meta = json.loads(json.dumps(meta, default=str))
    return {**frames, "setting": meta, "versions": result.metadata.get("versions")}


# --- parts on disk -------------------------------------------------------------------------------
def _part_files(root: Path, key: str, name: str) -> dict[str, Path]:
    files = {f: root / DATA / f / f"key={key}" / f"{name}.parquet" for f in _FRAMES}
    files["settings"] = root / DATA / "settings" / f"key={key}" / f"{name}.json"
    return files


def write_part(root: Path, task: Task, output: dict) -> None:
    """Write a finished task's frames and description, each file atomically (description first,
    curves last: a part counts as done only when all four files are there and valid)."""
    from mlcb.store import write_file

    files = _part_files(root, task.key, task.name)
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(output["setting"], indent=1).encode()
    write_file(files["settings"], lambda handle: handle.write(text))
    for name in ("experts", "replications", "curves"):
        frame = output[name]
        write_file(files[name], lambda handle, frame=frame: frame.to_parquet(handle, index=False))


def read_part(root: Path, setting: Setting, name: str) -> tuple[dict[str, pd.DataFrame], dict]:
    """Read and validate one part: the frames' columns and dtypes, the setting's label, the
    replications of the block and the rows each must have. A problem is a ``ValueError`` naming
    the file."""
    from mlcb.engine.replications import checkpoint_grid
    from mlcb.results import _SCHEMA, _check_columns

    match = re.fullmatch(r"block-(\d{6})-(\d{6})", name)
    if match is None:
        raise ValueError(f"{name}: not a part name")
    first, stop = int(match[1]), int(match[2])
    files = _part_files(root, setting.key, name)
    try:
        meta = json.loads(files["settings"].read_text())
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"{files['settings']}: not readable JSON ({error})") from None
    if not isinstance(meta, dict) or meta.get("key") != setting.key:
        raise ValueError(f"{files['settings']}: does not describe the setting {setting.label!r}")
    config = setting.config
    points = len(checkpoint_grid(config.horizon, config.checkpoints))
    count = stop - first
    rows = {"curves": count * points, "experts": count * points * config.n_experts, "replications": count}
    frames = {}
    for frame_name in _FRAMES:
        path = files[frame_name]
        try:
            frame = pd.read_parquet(path)
        except Exception as error:  # pyarrow raises many kinds on a damaged file
            raise ValueError(f"{path}: not a readable Parquet file ({type(error).__name__})") from None
        _check_columns(path, frame, _SCHEMA[frame_name])
        if len(frame) != rows[frame_name]:
            raise ValueError(f"{path}: {len(frame)} rows, expected {rows[frame_name]}")
        if not (frame["setting"] == setting.label).all():
            raise ValueError(f"{path}: rows of another setting than {setting.label!r}")
        reps = frame["replication"].to_numpy()
        if reps.min() != first or reps.max() != stop - 1 or len(np.unique(reps)) != count:
            raise ValueError(f"{path}: replications differ from the block's {first}-{stop - 1}")
        frames[frame_name] = frame
    return frames, meta


def _set_aside(root: Path, key: str, name: str) -> None:
    for path in _part_files(root, key, name).values():
        if path.exists():
            with contextlib.suppress(OSError):
                os.replace(path, path.with_name(path.name + ".corrupt"))


def _found_parts(root: Path, key: str) -> list[str]:
    """Names of the blocks of setting ``key`` with all four files present."""
    folder = root / DATA / "curves" / f"key={key}"
    if not folder.is_dir():
        return []
    names = sorted(p.name[: -len(".parquet")] for p in folder.glob("block-*.parquet"))
    return [n for n in names if all(p.is_file() for p in _part_files(root, key, n).values())]


def _choose(names: list[str], replications: int) -> list[tuple[int, int, str]]:
    """Non-overlapping parts inside ``[0, replications)``, earliest first."""
    spans = []
    for name in names:
        match = re.fullmatch(r"block-(\d{6})-(\d{6})", name)
        if match and 0 <= int(match[1]) < int(match[2]) <= replications:
            spans.append((int(match[1]), int(match[2]), name))
    chosen, covered = [], set()
    for first, stop, name in sorted(spans, key=lambda s: (s[0], -s[1])):
        if covered.isdisjoint(range(first, stop)):
            chosen.append((first, stop, name))
            covered.update(range(first, stop))
    return chosen


def plan(root: Path, grid: Grid, check: bool = True) -> tuple[list[Task], list[Task]]:
    """``(done, todo)``: the parts already on disk (validated when ``check``; a damaged one is set
    aside as ``*.corrupt`` with a warning and its replications planned again) and the tasks that
    remain, in blocks of at most ``grid.block``."""
    done: list[Task] = []
    todo: list[Task] = []
    for setting in grid.settings:
        covered: set[int] = set()
        for first, stop, name in _choose(_found_parts(root, setting.key), grid.replications):
            if check:
                try:
                    read_part(root, setting, name)
                except ValueError as error:
                    _set_aside(root, setting.key, name)
                    warnings.warn(f"{error}; set aside as *.corrupt, recomputed", stacklevel=2)
                    continue
            done.append(Task(setting.label, setting.key, first, stop))
            covered.update(range(first, stop))
        missing = [r for r in range(grid.replications) if r not in covered]
        todo.extend(Task(setting.label, setting.key, a, b) for a, b in _blocks(missing, grid.block))
    return done, todo


# --- executors -----------------------------------------------------------------------------------
def _payload(grid: Grid, task: Task) -> dict:
    setting = next(s for s in grid.settings if s.key == task.key)
    return {
        "preset": grid.preset,
        "values": setting.values,
        "replications": grid.replications,
        "key": task.key,
        "label": task.label,
        "first": task.first,
        "stop": task.stop,
        "threads": 1,
    }


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


def _start_method() -> str:
    """``fork`` where it is safe (POSIX, and this process runs no other thread): workers start at
    once with everything imported and need no ``if __name__ == "__main__"`` guard in a script;
    ``spawn`` otherwise."""
    import threading

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return "fork"
    return "spawn"


def _run_local(payloads: list[dict], workers: int, on_result: Callable, on_error: Callable) -> None:
    """Run ``payloads`` in ``workers`` processes; a pool broken by a dying worker is started again
    (up to three times) for the tasks that had not finished."""
    from concurrent.futures.process import BrokenProcessPool

    pending = list(range(len(payloads)))
    context = multiprocessing.get_context(_start_method())
    for _attempt in range(4):
        broken = []
        with concurrent.futures.ProcessPoolExecutor(min(workers, len(pending)), mp_context=context) as pool:
            futures = {pool.submit(run_task, payloads[i]): i for i in pending}
            try:
                for future in concurrent.futures.as_completed(futures):
                    index = futures[future]
                    error = future.exception()
                    if isinstance(error, BrokenProcessPool):
                        broken.append(index)
                    elif error is not None:
                        on_error(index, error)
                    else:
                        on_result(index, future.result())
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
        if not broken:
            return
        pending = sorted(broken)
    for index in pending:
        on_error(index, RuntimeError("worker processes kept dying"))


@contextlib.contextmanager
def dask_client(scheduler: str | None, workers: int, timeout: float = CONNECT_TIMEOUT):
    """A ``distributed.Client``: connected to ``scheduler`` (a ``ValueError`` naming it when it
    cannot be reached within ``timeout`` seconds), or to a LocalCluster of ``workers`` processes
    on 127.0.0.1, closed on exit."""
    try:
        import distributed
    except ImportError:
        raise ValueError(_DASK_HINT) from None
    if scheduler is None:
        with (
            warnings.catch_warnings(),
            distributed.LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
                silence_logs=40,
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            warnings.simplefilter("ignore")
            yield client
        return
    try:
        client = distributed.Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as error:
        raise ValueError(
            f"scheduler: cannot reach a Dask scheduler at {scheduler!r} within {timeout:g} s "
            f"({_first_line(error)})"
        ) from None
    try:
        yield client
    finally:
        client.close()


def _run_dask(client: Any, payloads: list[dict], on_result: Callable, on_error: Callable) -> None:
    import distributed

    futures = {}
    for index, payload in enumerate(payloads):
        block = f"{payload['first']:06d}-{payload['stop']:06d}"
        key = f"mlcb-{payload['key']}-{block}-{os.getpid()}-{time.time_ns()}"
        futures[client.submit(run_task, payload, key=key, pure=False, retries=0)] = index
    try:
        for future in distributed.as_completed(list(futures)):
            index = futures[future]
            if future.status == "error":
                on_error(index, future.exception())
            else:
                on_result(index, future.result())
            future.release()
    except BaseException:
        client.cancel(list(futures))
        raise


# --- the sweep -----------------------------------------------------------------------------------
@dataclass
class Outcome:
    """What :func:`sweep` did: the sweep's directory, the tasks run, skipped and failed (task and
    error, one line each), and ``result``, read back from the parts on disk when first asked."""

    path: Path
    computed: int
    skipped: int
    failed: list[tuple[str, str]]
    seconds: float
    _result: Any = field(default=None, repr=False)

    @property
    def result(self) -> Any:
        """The :class:`~mlcb.results.Result` of every finished part (:func:`load`)."""
        if self._result is None:
            self._result = load(self.path)
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
        "updated": pd.Timestamp.now(tz="UTC").isoformat(),
    }


def _write_json(path: Path, data: dict) -> None:
    from mlcb.store import write_file

    text = json.dumps(data, indent=1, default=str).encode()
    write_file(path, lambda handle: handle.write(text))


def _check_directory(path: Path, grid: Grid, overwrite: bool) -> bool:
    """Whether ``path`` must be emptied first: refuses (``ValueError``) a directory that is no
    sweep, or a sweep of other settings, unless ``overwrite`` (then ``True``)."""
    if not path.exists():
        return False
    meta_path = path / SWEEP_FILE
    keys = {s.key for s in grid.settings}
    if meta_path.is_file():
        try:
            saved = json.loads(meta_path.read_text())
            saved_keys = {s["key"] for s in saved["settings"]}
        except (OSError, ValueError, KeyError, TypeError):
            saved_keys = None
        if saved_keys == keys:
            return False
        why = "holds a sweep of other settings" if saved_keys is not None else f"holds a damaged {SWEEP_FILE}"
    elif path.is_dir() and any(path.iterdir()):
        why = "holds files that are no part of an mlcb sweep"
    elif path.is_dir():
        return False
    else:
        why = "is a file"
    if not overwrite or not path.is_dir():
        raise ValueError(f"{path} {why}; pass --overwrite to replace it, or choose another --out")
    return True


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
    :class:`Outcome` whose ``result`` is the :class:`~mlcb.results.Result` of every finished part.

    Parameters
    ----------
    grid : path, dict or Grid
        A grid TOML file, its contents as a dict, or a :class:`Grid` (:func:`make_grid`).
    out : path
        Output directory; the sweep writes ``out / NAME`` (``NAME`` from the grid).
    executor : {"local", "dask"}
        ``local``: worker processes of this machine. ``dask``: a Dask cluster at ``scheduler``, or
        a LocalCluster on 127.0.0.1 started and closed by the sweep.
    scheduler : str, optional
        A Dask scheduler address (``tcp://host:8786``); only with ``executor="dask"``.
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
    from mlcb.store import Store

    started = time.perf_counter()
    if isinstance(grid, Grid):
        pass
    elif isinstance(grid, dict):
        grid = make_grid(grid)
    elif isinstance(grid, (str, os.PathLike)):
        grid = load_grid(grid)
    else:
        raise TypeError(f"grid must be a TOML path, a dict or a Grid, got {type(grid).__name__}")
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {EXECUTORS}, got {executor!r}")
    if scheduler is not None and executor != "dask":
        raise ValueError("scheduler: an address is only used with executor 'dask' (--executor dask)")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        raise ValueError(f"scheduler must be an address such as tcp://host:8786, got {scheduler!r}")
    if not (validation.is_real(timeout) and 0 < timeout <= 3600):
        raise ValueError(f"timeout must be a number of seconds in (0, 3600], got {timeout!r}")
    workers = _check_workers(workers)
    if block is not None:
        grid = Grid(
            grid.name,
            grid.preset,
            grid.replications,
            validation.integer("block", block, maximum=10**6),
            grid.settings,
            grid.description,
        )
    if executor == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ValueError(_DASK_HINT) from None
    say = echo or (lambda _line: None)
    store = Store(out, grid.name)
    root = store.path
    failed: list[tuple[str, str]] = []
    with store.lock(), contextlib.ExitStack() as stack:
        replace = _check_directory(root, grid, overwrite)
        done_tasks, todo = ([], grid.tasks()) if replace else plan(root, grid)
        client = None
        if todo and executor == "dask":  # connect before writing anything
            client = stack.enter_context(dask_client(scheduler, workers, timeout))
            link = getattr(client, "dashboard_link", None)
            say(f"dask: scheduler {client.scheduler.address}; dashboard {link or 'not available'}")
        if replace:
            shutil.rmtree(root)
        root.mkdir(parents=True, exist_ok=True)
        done = {f"key={t.key}/{t.name}" for t in done_tasks}
        _write_json(root / SWEEP_FILE, _metadata(grid, done, todo, failed))
        payloads = [_payload(grid, t) for t in todo]
        bar = None
        if progress and todo:
            from tqdm.auto import tqdm

            tqdm.monitor_interval = 0  # no monitor thread: worker processes can be forked
            bar = tqdm(total=len(todo), desc=grid.name, unit="task")
        computed = 0
        written = [time.monotonic()]

        def on_result(index: int, output: dict) -> None:
            nonlocal computed
            task = todo[index]
            write_part(root, task, output)
            done.add(f"key={task.key}/{task.name}")
            computed += 1
            if time.monotonic() - written[0] >= METADATA_EVERY:  # the parts are the truth
                _write_json(root / SWEEP_FILE, _metadata(grid, done, todo, failed))
                written[0] = time.monotonic()
            if bar is not None:
                bar.update()
            if on_part is not None:
                on_part(task)

        def on_error(index: int, error: BaseException) -> None:
            task = todo[index]
            failed.append((task.describe(), _first_line(error)))
            if bar is not None:
                bar.update()
                bar.write(f"failed: {task.describe()}: {_first_line(error)}")

        try:
            if client is not None:
                _run_dask(client, payloads, on_result, on_error)
            elif todo:
                _run_local(payloads, workers, on_result, on_error)
        finally:
            if bar is not None:
                bar.close()
            _write_json(root / SWEEP_FILE, _metadata(grid, done, todo, failed))
    return Outcome(root, computed, len(done_tasks), failed, time.perf_counter() - started)


# --- reading a sweep back ------------------------------------------------------------------------
def is_sweep(path: str | Path) -> bool:
    """Whether ``path`` is a sweep directory (holds ``sweep.json``)."""
    return (Path(path) / SWEEP_FILE).is_file()


def load(path: str | Path) -> Any:
    """The :class:`~mlcb.results.Result` of every finished part of the sweep in ``path`` (settings
    without a finished part are left out), validated part by part; its metadata also holds the
    grid under ``"sweep"``; a setting's description is its first part's, with ``seconds`` summed
    over its parts (compute time, not wall time). Nothing named in the files is imported or called.

    Parts are read as the sweep's own setting descriptions say (``sweep.json``, checked against
    each part's description), so a file whose rows do not fit its block is a ``ValueError``."""
    from mlcb.results import Result

    path = Path(path)
    meta_path = path / SWEEP_FILE
    if not meta_path.is_file():
        raise FileNotFoundError(f"{path} is not an mlcb sweep (no {SWEEP_FILE})")
    try:
        meta = json.loads(meta_path.read_text())
        settings_meta = meta["settings"]
        grid = Grid(
            str(meta["name"]),
            str(meta["preset"]),
            int(meta["replications"]),
            int(meta["block"]),
            tuple(_Recorded.setting(s) for s in settings_meta),
            meta.get("grid") or {},
        )
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{meta_path}: not a readable sweep description ({_first_line(error)})") from None
    frames: dict[str, list[pd.DataFrame]] = {name: [] for name in _FRAMES}
    settings: dict[str, dict] = {}
    for setting in grid.settings:
        for _, _, name in _choose(_found_parts(path, setting.key), grid.replications):
            part, part_meta = read_part(path, setting, name)
            for frame_name in _FRAMES:
                frames[frame_name].append(part[frame_name])
            first = settings.setdefault(setting.label, part_meta)
            if first is not part_meta and isinstance(part_meta.get("seconds"), (int, float)):
                first["seconds"] = float(first.get("seconds") or 0.0) + part_meta["seconds"]
    if not settings:
        raise ValueError(f"{path}: the sweep has no finished part yet")
    joined = {name: pd.concat(frames[name], ignore_index=True) for name in _FRAMES}
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
        "sweep": {k: meta.get(k) for k in ("name", "preset", "replications", "block", "grid", "failed")},
        "versions": meta.get("versions"),
        "created": meta.get("updated"),
    }
    return Result(joined["curves"], joined["experts"], joined["replications"], metadata=metadata)


class _Recorded:
    """A setting as ``sweep.json`` records it: enough to read its parts (label, key, shapes)."""

    @staticmethod
    def setting(data: dict) -> Setting:
        config = data["config"]
        recorded = _RecordedConfig(
            str(data["key"]),
            int(validation.integer("horizon", config["horizon"], maximum=10**10)),
            int(validation.integer("checkpoints", config["checkpoints"], maximum=10**5)),
            len(config["experts"]),
        )
        return Setting(str(data["label"]), dict(data.get("values") or {}), recorded)


@dataclass(frozen=True)
class _RecordedConfig:
    recorded_key: str
    horizon: int
    checkpoints: int
    n_experts: int

    def key(self) -> str:
        return self.recorded_key


def load_any(path: str | Path) -> Any:
    """A sweep (:func:`load`) or a saved result (:func:`mlcb.results.load`) in ``path``."""
    from mlcb.results import load as load_result

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


__all__ = ["Grid", "Outcome", "Setting", "Task", "load", "load_grid", "make_grid", "sweep"]
