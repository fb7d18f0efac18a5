"""The paper, reproduced: every experiment of M-LCB's paper as a section of one HTML page.

Each experiment module of this package (:data:`EXPERIMENTS`) has a function

    run(size: str, out: Path, seed: int = 0, threads: int | None = None) -> Section

that runs the experiment at ``size`` (:data:`SIZES`: ``"quick"``, minutes on a laptop, or
``"paper"``, the paper's own size), writes its figures under ``out`` and returns a
:class:`Section`, and, where it needs optional packages, ``REQUIRES`` (their import names);
without one of them :func:`reproduce` skips the section and says what to install.

A section states the paper's claims (and the numbers it publishes), each with **one verdict**,
"holds", "holds in part", "does not hold" or "not shown", the conditions (calibration, budget,
data) under which it holds, and a measured reason where it does not (:class:`Claim`); a sentence
to quote (its ``headline``); prose and figures; and the tables of the tests behind the verdicts:
each row sets the paper's number or claim beside the package's estimate with its standard error,
its verdict under its condition (the rules of :mod:`mlcb.paper.rules`, decided together by
Holm's rule for many comparisons, :mod:`mlcb.paper.verdicts`) and its reason where it does not
hold. A row the paper publishes nothing about is shown for context and carries no verdict.

:func:`reproduce` (``mlcb paper``) runs them all and writes ``index.html``, the sections'
sentences at the top; every finished section is kept as JSON beside its figures, so an
interrupted run resumes where it stopped. :data:`DURATIONS` says how long each size takes.

Examples
--------
>>> from mlcb.paper import Row
>>> Row("mean accuracy, M = 4", "95.0 %", 0.93, 0.004).paper
'95.0 %'
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mlcb.paper.section import (
    NOT_PUBLISHED,
    SIZES,
    UNRECORDED,
    VERDICTS,
    Claim,
    Row,
    Section,
    Table,
    code,
    save_figure,
)
from mlcb.validation import InputError, shown

__all__ = [
    "DURATIONS",
    "EXPERIMENTS",
    "Claim",
    "NOT_PUBLISHED",
    "SIZES",
    "VERDICTS",
    "Row",
    "Section",
    "Table",
    "UNRECORDED",
    "code",
    "reproduce",
    "save_figure",
]

#: The sections of the page, in the paper's order: key -> module of this package.
EXPERIMENTS = {
    "trap": "mlcb.paper.trap",
    "glm": "mlcb.paper.glm",
    "real-data": "mlcb.paper.real_data",
    "lower-bound": "mlcb.paper.lower_bound",
}

#: How long ``mlcb paper`` takes at each size on two cores, every section, without a Warfarin
#: file (measured on two cores shared with other work: the quick size in 3 min 40 s, the paper's
#: in 17 min).
DURATIONS = {"quick": "about four minutes", "paper": "under 20 minutes"}

#: Optional packages a section may list in its module's ``REQUIRES``, by their distribution names.
OPTIONAL = {"river": "river", "sklearn": "scikit-learn", "torch": "torch"}

#: The version of a saved section's JSON (a section saved by another version is recomputed; 2: rows
#: carry a verdict; 3: one verdict per claim, rows carry their claim, condition, margin and reason;
#: 4: rows carry the degrees of freedom of their standard error, which set a verdict's margin).
FORMAT = 4


def _check_names(only: Any) -> list[str]:
    if only is None:
        return list(EXPERIMENTS)
    names = [only] if isinstance(only, str) else list(only)
    unknown = [name for name in names if name not in EXPERIMENTS]
    if unknown or not names:
        raise InputError(f"only must name sections among {', '.join(EXPERIMENTS)}, got {only!r}")
    return [name for name in EXPERIMENTS if name in names]


def reproduce(
    size: str = "quick",
    out: str | Path = "results/paper",
    *,
    seed: int = 0,
    threads: int | None = None,
    only: Any = None,
    overwrite: bool = False,
    progress: bool = False,
    warfarin: Any = None,
) -> Path:
    """Run the paper's experiments and write ``out/index.html``; returns its path.

    The sections run at once, each in a thread. Interrupted (``KeyboardInterrupt``, Ctrl-C), it
    stops the sections in progress, waits for them (about a second, or the compile in progress)
    and raises the interrupt: every finished section is kept in ``out/sections`` and the same call
    resumes from them (a section in progress starts over). A second interrupt leaves without
    waiting.

    Parameters
    ----------
    size : {"quick", "paper"}
        ``"quick"``: every experiment at a size that runs in :data:`DURATIONS` ``["quick"]`` on
        two cores; ``"paper"``: the paper's own sizes (:data:`DURATIONS` ``["paper"]``).
    out : str or Path
        The directory of the page, its figures (``figures/``) and finished sections
        (``sections/<key>.json``).
    seed : int
        The seed of every simulation.
    threads : int, optional
        Threads per simulation (default: every core).
    only : str or list of str, optional
        Run only these sections (:data:`EXPERIMENTS`); the page shows every finished section.
    overwrite : bool
        Recompute sections already finished at this size and seed (default: keep them).
    progress : bool
        Print one line per section as it starts and ends.
    warfarin : str or Path, optional
        The user's copy of the IWPC warfarin subject file (:func:`envs.warfarin.read`, read and
        checked before any work): the real-data section runs the paper's Warfarin experiment on it
        instead of a stand-in. A section saved with other data is computed again.
    """
    from mlcb import validation
    from mlcb.config import check_within_64_bits
    from mlcb.kernels.seeding import check_seed
    from mlcb.paper import page
    from mlcb.storage.store import lock, make_folders

    validation.choice("size", size, SIZES)
    names = _check_names(only)
    check_seed(seed)
    check_within_64_bits("seed", seed)  # before OUT/sections is made, as every setting checks it
    validation.flag("overwrite", overwrite)
    validation.flag("progress", progress)
    if str(out).strip() == "":
        raise InputError("out must name a directory, got an empty path")
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise InputError(f"out: {root} exists and is not a directory")
    options, extra = _data_options(warfarin)
    # One run at a time writes a folder: a second is refused at once, naming the first (two would
    # compute the same sections twice and write the page in turn).
    make_folders(root.parent)
    with lock(root):
        sections_dir, figures_dir = root / "sections", root / "figures"
        if not overwrite:
            others = [
                f"{key}: {other}"
                for key in names
                if (other := _other_run(sections_dir / f"{key}.json", size, seed, options.get(key, {})))
            ]
            if others:
                raise InputError(
                    f"out: {root} holds finished sections of another run ({'; '.join(others)}); name "
                    "another out for this one, or pass --overwrite (overwrite=True) to replace them"
                )
        sections_dir.mkdir(parents=True, exist_ok=True)
        ours = code()
        modules = {}
        for key in names:
            saved = sections_dir / f"{key}.json"
            kept = None if overwrite else _load(saved, root, size, seed, options.get(key, {}))
            if kept is not None:
                if kept[2] != ours:  # said always: the page shows these numbers beside this code's
                    print(
                        f"{key}: kept from an earlier run ({saved}), computed by {kept[2] or UNRECORDED}; "
                        f"this is {ours}: --overwrite (overwrite=True) computes it again",
                        flush=True,
                    )
                elif progress:
                    print(f"{key}: kept from an earlier run ({saved})")
                continue
            module = importlib.import_module(EXPERIMENTS[key])
            required = getattr(module, "REQUIRES", ())
            missing = [name for name in required if importlib.util.find_spec(name) is None]
            if missing:
                install = " ".join(OPTIONAL.get(name, name) for name in missing)
                print(f"{key}: skipped, it needs {', '.join(missing)} (pip install {install})", flush=True)
                continue
            modules[key] = module
        if modules:
            import matplotlib

            matplotlib.use("Agg")  # files only, no display (and figures drawn outside the main thread)

        def compute(key: str) -> dict[str, Any]:
            if progress:
                print(f"{key}: running ({size})", flush=True)
            started = time.perf_counter()
            section = modules[key].run(size, figures_dir, seed=seed, threads=threads, **extra.get(key, {}))
            seconds = time.perf_counter() - started
            record = {
                "format": FORMAT,
                "size": size,
                "seed": seed,
                "seconds": seconds,
                "code": ours,
                **section.to_json(root),
            }
            if options.get(key):
                record["options"] = options[key]
            return record

        def save(key: str, record: dict[str, Any]) -> None:
            _write_json(sections_dir / f"{key}.json", record)
            if progress:
                print(f"{key}: done in {record['seconds']:.0f} s", flush=True)

        _at_once(list(modules), compute, save, progress)
        finished = {
            key: _load(sections_dir / f"{key}.json", root, size, seed, options.get(key, {}))
            for key in EXPERIMENTS
        }
        return page.write(root, {k: v for k, v in finished.items() if v is not None}, size=size, seed=seed)


#: The start of the name of each thread in which :func:`reproduce` runs a section (then its key).
SECTION_THREAD = "mlcb-paper-"


def sections_running() -> bool:
    """Whether a section that :func:`reproduce` started still runs in a thread of this process:
    after an interrupt :func:`reproduce` stops them and waits, but a second interrupt leaves them
    running (until their compiled code returns; it cannot be stopped inside), and ``mlcb paper``
    then ends its process at once rather than wait for them (:func:`mlcb.cli.startup.end`)."""
    return any(t.is_alive() and t.name.startswith(SECTION_THREAD) for t in threading.enumerate())


def _held(call: Callable[[], None]) -> None:
    """``call()`` with an interrupt held until it returns, then raised: a ``KeyboardInterrupt``
    raised inside library code (drawing and saving a section's figure) can leave a lock held that
    the sections still running need, and they would wait for it for ever. In Python's main thread
    only, and only where Python's own handler is in place."""
    if threading.current_thread() is not threading.main_thread():
        call()
        return
    caught: list[int] = []
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        call()
        return
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        call()
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def _at_once(
    keys: list[str],
    compute: Callable[[str], dict[str, Any]],
    save: Callable[[str, dict[str, Any]], None],
    progress: bool = False,
) -> None:
    """``compute(key)`` for every key at once, each in a thread of its own, and ``save(key, record)``
    in this thread as each finishes; then the first error, in the order of ``keys``, is raised.

    The sections are independent (every number is keyed by the seed and the replication), so
    running them at once changes no number; it fills the cores while a section does its serial
    parts (loading or compiling kernels, building tables, its statistics and figures).

    An interrupt reaches this thread only: it stops the sections' runs
    (:mod:`mlcb.engine.stopping`: within a slice of rounds, or the compile or table in progress),
    saves a section that finishes meanwhile, waits for the threads, then propagates; a second
    interrupt leaves at once (the threads are daemons, still running).
    """
    if len(keys) == 1:
        save(keys[0], compute(keys[0]))
        return
    from mlcb.engine import stopping

    finished: queue.Queue = queue.Queue()
    stop = threading.Event()

    def work(key: str) -> None:
        try:
            with stopping.stop_when(stop):
                finished.put((key, compute(key), None))
        except BaseException as error:  # noqa: BLE001 - handed to the main thread
            finished.put((key, None, error))

    threads = [
        threading.Thread(target=work, args=(key,), name=f"{SECTION_THREAD}{key}", daemon=True) for key in keys
    ]
    for thread in threads:
        thread.start()
    errors: dict[str, BaseException] = {}
    left = len(keys)
    try:
        while left:
            key, record, error = finished.get()
            left -= 1
            if error is not None:
                errors[key] = error
            else:
                _held(lambda: save(key, record))  # noqa: B023 - called at once
    except KeyboardInterrupt:
        stop.set()
        if progress:
            print(
                f"interrupted: stopping {left} section{'s' * (left > 1)} in progress "
                "(Ctrl-C again leaves at once)",
                file=sys.stderr,
                flush=True,
            )
        while left:  # a section that finishes now is saved; one stopped has nothing to save
            key, record, error = finished.get()
            left -= 1
            if error is None:
                save(key, record)
        for thread in threads:
            thread.join()
        raise
    for key in keys:
        if key in errors:
            raise errors[key]


def _data_options(warfarin: Any) -> tuple[dict[str, dict], dict[str, dict]]:
    """The data a section runs on, per section key: what its saved JSON records (a section saved
    with other data is computed again), and the keyword arguments of its ``run``. The Warfarin
    file is read and checked here, before any work."""
    from mlcb.paper import real_data

    table = real_data.warfarin_table(warfarin)
    recorded = {
        "data": "cardiotocography shipped; warfarin " + (f"sha256 {table.digest}" if table else "stand-in")
    }
    return {"real-data": recorded}, ({"real-data": {"warfarin": table}} if table is not None else {})


def _write_json(path: Path, data: dict) -> None:
    from mlcb.storage.store import write_file

    text = json.dumps(data, indent=1, allow_nan=False).encode()
    write_file(path, lambda handle: handle.write(text))


def _other_run(path: Path, size: str, seed: int, options: dict) -> str | None:
    """What run the section saved at ``path`` is of, where it is a finished section of this format
    saved at another size, seed or data than these (``"size 'paper', seed 0"``); ``None`` otherwise
    (none, damaged, of another format, or of this run). A run replaces such a section only when
    told to (``overwrite``): a quick run into the folder of a paper-size one would lose minutes of
    work, one without ``--warfarin`` the sections of the user's file."""
    if path.is_symlink() or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (ValueError, OSError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    theirs = (data.get("size"), data.get("seed"), data.get("options", {}))
    if theirs == (size, seed, options or {}):
        return None
    described = f"size {shown(theirs[0])}, seed {shown(theirs[1])}"
    if theirs[2] != (options or {}):
        described += ", " + _data_said(theirs[2].get("data") if isinstance(theirs[2], dict) else None)
    return described


def _data_said(recorded: Any) -> str:
    """The data a saved section records (:func:`_data_options`), in words: ``the Warfarin
    stand-in``, ``a Warfarin file of sha256 46c8485d3077...``."""
    said = recorded.rpartition("warfarin ")[2] if isinstance(recorded, str) else ""
    if said == "stand-in":
        return "the Warfarin stand-in"
    if said.startswith("sha256 ") and said[7:].isalnum():
        return f"a Warfarin file of sha256 {said[7:19]}..."
    return f"data {shown(recorded)}" if isinstance(recorded, str) else "other data"


def _load(
    path: Path, root: Path, size: str, seed: int, options: dict | None = None
) -> tuple[Section, float, str | None] | None:
    """The section saved at ``path`` for this size, seed and data (``options``), with its seconds
    and the code that computed it (:func:`code`; ``None`` where the section does not record it);
    ``None`` when there is none (or it is damaged, or from another size, seed, data or format: it is
    then recomputed)."""
    if path.is_symlink() or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or (data.get("format"), data.get("size"), data.get("seed")) != (
            FORMAT,
            size,
            seed,
        ):
            return None
        if data.get("options", {}) != (options or {}):
            return None
        computed_by = data.get("code")
        return (
            Section.from_json(data, root),
            float(data.get("seconds", math.nan)),
            computed_by if isinstance(computed_by, str) and computed_by.isprintable() else None,
        )
    except (ValueError, OSError):
        return None
