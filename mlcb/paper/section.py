"""What one reproduced experiment returns: a :class:`Section` of prose, figures and tables of
:class:`Row` s, each setting the paper's number beside the package's (see :mod:`mlcb.paper`)."""

from __future__ import annotations

import dataclasses
import functools
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlcb.validation import InputError

#: The sizes an experiment runs at.
SIZES = ("quick", "paper")

#: The verdict of a claim's row (:mod:`mlcb.paper.measure` decides it by a stated rule).
HOLDS, FAILS, NOT_SHOWN = "holds", "does not hold", "not shown"
VERDICTS = (HOLDS, FAILS, NOT_SHOWN)
#: What a row's ``paper`` says when the paper publishes nothing about its quantity: a number shown
#: for context, which states no claim and so carries no verdict.
NOT_PUBLISHED = "not published"
#: The authors' public code (their experiments' constants), cited where a section follows it.
AUTHORS_CODE = "https://github.com/intsystems/Latypov-MS-Thesis"


@dataclass(frozen=True)
class Row:
    """One reproduced number: what is measured, the paper's value and the package's estimate.

    ``paper`` is the published value as the paper prints it (``"95.0 %"``), or its claim in words
    where it publishes none (``"M-LCB below LimitedAdvice"``); ``package`` and ``stderr`` are the
    package's mean and its standard error over replications (``nan`` where none applies);
    ``note`` says what stands in for the paper's setting and why the numbers may differ;
    ``verdict`` is whether the package's number bears the paper's claim out, one of
    :data:`VERDICTS` (decided by a rule of :mod:`mlcb.paper.measure`), or ``""`` on a row whose
    ``paper`` is :data:`NOT_PUBLISHED` (a number for context, no claim).

    Examples
    --------
    >>> Row("slope", "< 1", 0.62, 0.03, verdict="holds").verdict
    'holds'
    >>> Row("slope", "< 1", 0.62, verdict="maybe")
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: verdict must be one of ('holds', ...) or '' (no claim), got 'maybe'
    """

    quantity: str
    paper: str
    package: float
    stderr: float = math.nan
    unit: str = ""
    note: str = ""
    verdict: str = ""

    def __post_init__(self) -> None:
        if self.verdict and self.verdict not in VERDICTS:
            raise InputError(f"verdict must be one of {VERDICTS} or '' (no claim), got {self.verdict!r}")


@dataclass(frozen=True)
class Table:
    """A table of reproduced numbers, one :class:`Row` each."""

    title: str
    rows: tuple[Row, ...]
    note: str = ""


@dataclass(frozen=True)
class Section:
    """One experiment of the paper as reproduced: prose, figures (PNG files) and tables."""

    key: str
    title: str
    text: str
    figures: tuple[Path, ...] = field(default_factory=tuple)
    tables: tuple[Table, ...] = field(default_factory=tuple)

    def to_json(self, root: Path) -> dict[str, Any]:
        """Plain data: figure paths relative to ``root``, numbers as JSON numbers (``nan`` as null)."""

        def number(value: float) -> float | None:
            return None if not math.isfinite(value) else float(value)

        return {
            "key": self.key,
            "title": self.title,
            "text": self.text,
            "figures": [Path(f).resolve().relative_to(root.resolve()).as_posix() for f in self.figures],
            "tables": [
                {
                    "title": t.title,
                    "note": t.note,
                    "rows": [
                        {**dataclasses.asdict(r), "package": number(r.package), "stderr": number(r.stderr)}
                        for r in t.rows
                    ],
                }
                for t in self.tables
            ],
        }

    @classmethod
    def from_json(cls, data: Any, root: Path) -> Section:
        """The section ``data`` describes; a ``ValueError`` naming what is wrong. Figures must be
        regular files under ``root``."""
        try:
            figures = []
            for name in data["figures"]:
                path = root / str(name)
                if ".." in Path(str(name)).parts or path.is_symlink() or not path.is_file():
                    raise InputError(f"figure {name!r} is not a regular file under {root}")
                figures.append(path)
            tables = tuple(
                Table(
                    str(t["title"]),
                    tuple(
                        Row(
                            str(r["quantity"]),
                            str(r["paper"]),
                            math.nan if r["package"] is None else float(r["package"]),
                            math.nan if r["stderr"] is None else float(r["stderr"]),
                            str(r["unit"]),
                            str(r["note"]),
                            str(r["verdict"]),
                        )
                        for r in t["rows"]
                    ),
                    str(t["note"]),
                )
                for t in data["tables"]
            )
            return cls(str(data["key"]), str(data["title"]), str(data["text"]), tuple(figures), tables)
        except (KeyError, TypeError) as error:
            raise InputError(f"not a saved section: {type(error).__name__}: {error}") from None


#: Held while a figure is drawn: the sections of the page run at once (:func:`mlcb.paper.reproduce`),
#: and matplotlib is not thread-safe (pyplot's figures, the shared font objects).
FIGURES = threading.RLock()


def drawing(function: Callable) -> Callable:
    """``function``, which draws with matplotlib, run under :data:`FIGURES` (one at a time)."""

    @functools.wraps(function)
    def one_at_a_time(*args: Any, **kwargs: Any) -> Any:
        with FIGURES:
            return function(*args, **kwargs)

    return one_at_a_time


@drawing
def save_figure(figure: Any, path: Path, dpi: int = 100) -> Path:
    """Save a matplotlib ``figure`` as a PNG at ``path`` (parents made) at ``dpi``, cropped to what
    it draws; close it and return ``path``."""
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(figure)
    return path


def plan(sizes: dict[str, dict[str, Any]], size: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``sizes[size]`` with ``overrides`` replacing some: what a section's ``run``
    executes. A ``ValueError`` names an unknown size or override before any work.

    Examples
    --------
    >>> plan({"quick": {"horizon": 10, "replications": 2}}, "quick", {"horizon": 5})
    {'horizon': 5, 'replications': 2}
    """
    if size not in sizes:
        raise InputError(f"size must be one of {tuple(sizes)}, got {size!r}")
    unknown = sorted(set(overrides) - set(sizes[size]))
    if unknown:
        raise InputError(f"unknown size override(s) {', '.join(unknown)}; known: {', '.join(sizes[size])}")
    return {**sizes[size], **overrides}
