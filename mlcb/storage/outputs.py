"""What mlcb writes beside a result's own files, registered like the policies, experts and
environments (:mod:`mlcb.registry`): figures and writers.

:data:`FIGURES`
    A figure is a function ``draw(result) -> matplotlib.figure.Figure`` registered under a name
    (``register_figure(name, "module:function", summary=...)``); it is saved as ``NAME.png`` by
    ``mlcb run``, ``mlcb compare``, ``mlcb sweep`` and ``mlcb plot --kind NAME``, and embedded in
    ``mlcb report``. The built-in ones are those of :mod:`mlcb.plot`.
:data:`WRITERS`
    A writer is a function ``write(result, directory)`` that writes the files it declares when it
    is registered (``register_writer(name, "module:function", files=(...), summary=...)``), for
    ``mlcb run --write NAME`` and :func:`write`. The built-in ``csv`` writes the tidy frames as CSV.

Entry points are ``"module:attr"`` strings imported on first use, so registering costs nothing
and this module imports no plotting library. The store (:mod:`mlcb.storage.store`) treats every
registered figure's and writer's files as mlcb's own (:func:`own_files`): ``--overwrite`` may
replace them, and nothing else. A plugin (``--plugin MODULE``) registers its own.

Examples
--------
>>> "regret" in FIGURES and "csv" in WRITERS
True
>>> writer_files("csv")
('curves.csv', 'experts.csv', 'replications.csv')
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mlcb.registry import Registry
from mlcb.storage import result_files
from mlcb.validation import InputError

#: Figures by name: ``draw(result) -> Figure``, saved as ``NAME.png``.
FIGURES = Registry("figure")
#: Writers by name: ``write(result, directory)``, writing the files of :func:`writer_files`.
WRITERS = Registry("writer")
#: The page of ``mlcb report`` when written into a result's directory.
REPORT = "report.html"

_WRITER_FILES: dict[str, tuple[str, ...]] = {}
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _check_name(kind: str, name: Any) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InputError(
            f"{kind} name must be lower-case letters, digits, '-' or '_' (it names a file), got {name!r}"
        )
    return name


def register_figure(name: str, entry_point: str, summary: str = "") -> None:
    """Register the figure ``name``: ``entry_point`` (``"module:function"``) draws it from a
    result, ``function(result) -> matplotlib.figure.Figure``; it is saved as ``NAME.png``.
    Re-registering a name replaces it."""
    FIGURES.register(_check_name("figure", name), entry_point, summary)


def register_writer(name: str, entry_point: str, files: Iterable[str], summary: str = "") -> None:
    """Register the writer ``name``: ``entry_point`` (``"module:function"``) is called as
    ``function(result, directory)`` and writes exactly ``files`` (plain file names) into
    ``directory``. The names must not be those of a result's own files, of a figure or of the
    report. Re-registering a name replaces it."""
    _check_name("writer", name)
    names = tuple(files) if not isinstance(files, str) else (files,)
    reserved = set(result_files.NAMES) | {figure_file(f) for f in FIGURES.names()} | {REPORT}
    for file in names:
        if not isinstance(file, str) or not _FILE.fullmatch(file):
            raise InputError(f"writer {name!r}: files must be plain file names, got {file!r}")
        if file in reserved:
            raise InputError(f"writer {name!r}: {file!r} is a file mlcb already writes")
    if not names:
        raise InputError(f"writer {name!r}: files must name at least one file")
    WRITERS.register(name, entry_point, summary)
    _WRITER_FILES[name] = names


def figure_file(name: str) -> str:
    """The file name of figure ``name``."""
    return f"{name}.png"


def writer_files(name: str) -> tuple[str, ...]:
    """The files writer ``name`` writes (an :class:`~mlcb.validation.InputError` naming the
    registered writers when there is none)."""
    WRITERS.entry(name)
    return _WRITER_FILES[name]


def own_files() -> frozenset[str]:
    """Every file name mlcb may write into a result's directory: the result's own files, every
    registered figure and writer's files, and the report."""
    figures = {figure_file(name) for name in FIGURES.names()}
    written = {file for name in WRITERS.names() for file in _WRITER_FILES[name]}
    return frozenset({*result_files.NAMES, *figures, *written, REPORT})


def check_figures(names: Iterable[str]) -> list[str]:
    """``names`` as a list, each a registered figure (else one :class:`~mlcb.validation.InputError`
    listing them)."""
    chosen = list(names)
    for name in chosen:
        FIGURES.entry(name)
    return chosen


def check_writers(names: Iterable[str]) -> list[str]:
    """``names`` as a list, each a registered writer (else one :class:`~mlcb.validation.InputError`
    listing them)."""
    chosen = list(names)
    for name in chosen:
        WRITERS.entry(name)
    return chosen


def draw(result: Any, name: str) -> Any:
    """The Figure of the registered figure ``name`` for ``result``."""
    return FIGURES.entry(name).load()(result)


def write(result: Any, directory: str | Path, names: Iterable[str]) -> list[Path]:
    """Run the writers ``names`` on ``result`` into the existing ``directory``; returns the files
    they declare. A writer that leaves one of its files unwritten is an error naming it."""
    directory = Path(directory)
    paths = []
    for name in check_writers(names):
        WRITERS.entry(name).load()(result, directory)
        for file in _WRITER_FILES[name]:
            path = directory / file
            if not path.is_file():
                raise RuntimeError(f"writer {name!r} did not write {file} into {directory}")
            paths.append(path)
    return paths


def write_csv(result: Any, directory: Path) -> None:
    """The built-in ``csv`` writer: ``curves.csv``, ``experts.csv`` and ``replications.csv``, the
    result's tidy frames as comma-separated text (for R or a spreadsheet)."""
    for frame in result_files.FRAMES:
        getattr(result, frame).to_csv(Path(directory) / f"{frame}.csv", index=False)


register_figure(
    "regret", "mlcb.plot:regret", "mean regret against rounds, log-log, by setting, with the certificate"
)
register_figure(
    "panels",
    "mlcb.plot:panels",
    "the paper's three panels: regret, deployment counts and training counts per expert",
)
register_figure(
    "theory",
    "mlcb.plot:theory",
    "log-log pseudo-regret with the certificate, the worst case and the theorem's curve",
)
register_figure("budget", "mlcb.plot:budget", "final regret against the budget M (and K and T)")
register_writer(
    "csv",
    "mlcb.storage.outputs:write_csv",
    files=tuple(f"{frame}.csv" for frame in result_files.FRAMES),
    summary="the tidy frames (curves, experts, replications) as CSV, for R or a spreadsheet",
)
