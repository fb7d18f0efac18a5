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
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mlcb.registry import Registry
from mlcb.storage import result_files
from mlcb.validation import InputError, printable

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


def register_figure(name: str, entry_point: str, summary: str = "", *, override: bool = False) -> None:
    """Register the figure ``name``: ``entry_point`` (``"module:function"``) draws it from a
    result, ``function(result) -> matplotlib.figure.Figure``; it is saved as ``NAME.png``.
    A name that is taken is refused unless ``override=True`` (a one-line warning then says which
    registration holds it: :meth:`mlcb.registry.Registry.register`)."""
    FIGURES.register(_check_name("figure", name), entry_point, summary, override=override)


def register_writer(
    name: str, entry_point: str, files: Iterable[str], summary: str = "", *, override: bool = False
) -> None:
    """Register the writer ``name``: ``entry_point`` (``"module:function"``) is called as
    ``function(result, directory)`` and writes exactly ``files`` (plain file names) into
    ``directory``. The names must not be those of a result's own files, of a figure or of the
    report. A name that is taken is refused unless ``override=True`` (a one-line warning then
    says which registration holds it), and so are other files for a taken name."""
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
    if name in WRITERS and _WRITER_FILES.get(name) != names and not override:
        raise InputError(
            f"writer name {name!r} is taken (by {WRITERS.entry(name).entry_point!r}, writing "
            f"{', '.join(_WRITER_FILES[name])}); register it under another name, or pass override=True"
        )
    WRITERS.register(name, entry_point, summary, override=override)
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


def draw(result: Any, name: str, characters: frozenset[int] | None = None) -> Any:
    """The Figure of the registered figure ``name`` for ``result``, drawn from the copy of it that
    figures show (:func:`displayable` with ``figure=True`` and the fonts' ``characters``): no
    control character of a label reaches a font, nor one the fonts lack, and no ``$`` starts
    matplotlib's mathematical notation."""
    return FIGURES.entry(name).load()(displayable(result, figure=True, characters=characters))


def _shower(figure: bool, characters: frozenset[int] | None) -> Callable[[str], str]:
    """How a text is displayed: control characters escaped; for a figure, each character outside
    ``characters`` (what the figures' fonts can draw, where known) too, and ``$`` (matplotlib
    reads the text between two ``$`` as mathematical notation, and fails on some). A character
    the fonts lack was drawn as an empty box, the same for every such character (two labels in
    another script then read alike in a legend), with a warning of two lines for each character
    and figure."""

    def show(text: str) -> str:
        text = printable(text)
        if not figure:
            return text
        if characters is not None and not all(ord(c) in characters for c in text):
            text = "".join(
                c if ord(c) in characters else c.encode("unicode_escape").decode("ascii") for c in text
            )
        return text.replace("$", "\\$")

    return show


def _display_text(value: Any, show: Callable[[str], str]) -> Any:
    """A JSON value (metadata) with every string in it as ``show`` displays it, keys too."""
    if isinstance(value, str):
        return show(value)
    if isinstance(value, dict):
        return {show(k) if isinstance(k, str) else k: _display_text(v, show) for k, v in value.items()}
    if isinstance(value, list):
        return [_display_text(v, show) for v in value]
    return value


def _needs_display(value: Any, show: Callable[[str], str]) -> bool:
    if isinstance(value, str):
        return show(value) != value
    if isinstance(value, dict):
        return any(_needs_display(k, show) or _needs_display(v, show) for k, v in value.items())
    if isinstance(value, list):
        return any(_needs_display(v, show) for v in value)
    return False


def displayable(result: Any, figure: bool = False, characters: frozenset[int] | None = None) -> Any:
    """``result`` as figures and reports show it: where a setting's label or any other text of
    it (a frame's text column, the metadata) holds a control or format character (a terminal
    escape, a carriage return, a bidirectional override: a hand-edited file's, say), a copy in
    which each is written as its escape (:func:`mlcb.validation.printable`), so that no font is
    asked for a glyph it lacks and no warning carries the raw character; with ``figure``, a copy
    in which each ``$`` is escaped too (matplotlib's text is never read as mathematical notation),
    and each character outside ``characters`` (those the figures' fonts can draw,
    :func:`mlcb.plot._look.font_characters`; ``None``: all). Otherwise ``result`` itself. Two
    labels that would read the same are told apart by a suffix; the numbers are the result's own.
    Anything but a :class:`~mlcb.storage.results.Result` is returned as it is (a result is told by
    its frames and its metadata: this module imports no results module).
    """
    import pandas as pd

    show = _shower(figure, characters)
    given = {name: getattr(result, name, None) for name in result_files.FRAMES}
    frames = {name: f for name, f in given.items() if isinstance(f, pd.DataFrame)}
    if len(frames) < len(given) or not isinstance(getattr(result, "metadata", None), dict):
        return result
    texts = {
        (name, column): frame[column]
        for name, frame in frames.items()
        for column in frame.columns
        if pd.api.types.is_string_dtype(frame[column].dtype)
        or pd.api.types.is_object_dtype(frame[column].dtype)
        or isinstance(frame[column].dtype, pd.CategoricalDtype)
    }
    changed = {
        key: values
        for key, values in texts.items()
        if any(_needs_display(v, show) for v in _distinct(values))
    }
    if not changed and not _needs_display(result.metadata, show):
        return result
    labels = {label: show(label) for label in result.settings}
    seen: dict[str, int] = {}
    for label, shown_label in labels.items():  # keep the labels distinct
        count = seen.get(shown_label, 0)
        seen[shown_label] = count + 1
        if count:
            labels[label] = f"{shown_label} ({count + 1})"
    copies = {}
    for name, frame in frames.items():
        frame = frame.copy()
        for (where, column), values in changed.items():
            if where == name:
                mapping = labels if column == "setting" else {}
                frame[column] = values.map(lambda v, m=mapping: m.get(v, _display_text(v, show)))
        copies[name] = frame
    metadata = {k: _display_text(v, show) for k, v in result.metadata.items() if k != "settings"}
    settings = result.metadata.get("settings")
    if isinstance(settings, dict):
        metadata["settings"] = {
            labels.get(k, show(str(k))): _display_text(v, show) for k, v in settings.items()
        }
    return type(result)(copies["curves"], copies["experts"], copies["replications"], metadata=metadata)


def _distinct(values: Any) -> list:
    """The distinct values of a frame's column (a label repeated on every row is looked at once)."""
    try:
        return list(values.unique())
    except TypeError:  # unhashable values
        return list(values)


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
