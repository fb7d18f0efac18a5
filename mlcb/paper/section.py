"""What one reproduced experiment returns: a :class:`Section` of prose, figures, the paper's
claims with one verdict each (:class:`Claim`) and tables of :class:`Row` s, each setting the
paper's number beside the package's (see :mod:`mlcb.paper`)."""

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

#: The verdict of a test's row (:mod:`mlcb.paper.rules` decides it by a stated rule, and
#: :mod:`mlcb.paper.verdicts` by the section's rule for many comparisons).
HOLDS, FAILS, NOT_SHOWN = "holds", "does not hold", "not shown"
VERDICTS = (HOLDS, FAILS, NOT_SHOWN)
#: The verdict of a claim some of whose tests hold and others do not (or are not shown): its
#: :class:`Claim` says under which conditions it holds.
HOLDS_IN_PART = "holds in part"
CLAIM_VERDICTS = (HOLDS, HOLDS_IN_PART, FAILS, NOT_SHOWN)
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
    ``verdict`` is whether the package's number bears the paper's claim out under ``condition``
    (the calibration, budget and other choices of the test, e.g. ``"authors; M = 2"``), one of
    :data:`VERDICTS`, or ``""`` on a row that tests no claim (a number for context: its ``paper``
    is :data:`NOT_PUBLISHED`, or a published number shown beside the one its claim is judged on).
    A row with a verdict tests the :class:`Claim` of its section keyed ``claim``; ``z`` is the
    distance of the mean from the boundary that decides the verdict, in standard errors
    (``nan`` where the verdict rests on none); ``df`` the degrees of freedom of ``stderr`` (``n - 1``
    over ``n`` replications; ``inf``: a normal standard error), which set the margin of the
    verdict (:func:`mlcb.paper.rules.critical`); ``reason`` says, from measured numbers, why a row
    does not hold or is not shown.

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
    reason: str = ""
    claim: str = ""
    condition: str = ""
    z: float = math.nan
    df: float = math.inf

    def __post_init__(self) -> None:
        if self.verdict and self.verdict not in VERDICTS:
            raise InputError(f"verdict must be one of {VERDICTS} or '' (no claim), got {self.verdict!r}")


@dataclass(frozen=True)
class Claim:
    """One claim of the paper (or a number it publishes) and its one verdict over the tests of
    it (the rows of the section's tables whose ``claim`` is ``key``).

    ``text`` is the claim in words, ``label`` a short name for summaries, ``source`` where the
    paper makes it, ``kind`` ``"claim"`` or ``"number"`` (a published number). ``verdict`` is one
    of :data:`CLAIM_VERDICTS`; ``holds``, ``fails`` and ``unshown`` list the conditions of the
    tests that hold, do not hold and are not shown; ``reason`` says, from measured numbers, why
    it does not hold (or is not shown) where it does not.
    """

    key: str
    text: str
    label: str
    verdict: str
    holds: str = ""
    fails: str = ""
    unshown: str = ""
    reason: str = ""
    source: str = "paper"
    kind: str = "claim"

    def __post_init__(self) -> None:
        if self.verdict not in CLAIM_VERDICTS:
            raise InputError(f"a claim's verdict must be one of {CLAIM_VERDICTS}, got {self.verdict!r}")


@dataclass(frozen=True)
class Table:
    """A table of reproduced numbers, one :class:`Row` each."""

    title: str
    rows: tuple[Row, ...]
    note: str = ""


@dataclass(frozen=True)
class Section:
    """One experiment of the paper as reproduced: prose, figures (PNG files), the paper's claims
    with their verdicts, the tables of the tests and numbers behind them, ``headline``: the
    section's verdicts in one sentence a reader can quote, and ``summary``: each claim's verdict
    and where it holds (both built from the verdicts)."""

    key: str
    title: str
    text: str
    figures: tuple[Path, ...] = field(default_factory=tuple)
    tables: tuple[Table, ...] = field(default_factory=tuple)
    claims: tuple[Claim, ...] = field(default_factory=tuple)
    summary: str = ""
    headline: str = ""

    def to_json(self, root: Path) -> dict[str, Any]:
        """Plain data: figure paths relative to ``root`` with the SHA-256 of each file (a figure
        another run drew over it is not this section's, :meth:`from_json`), numbers as JSON
        numbers (``nan`` as null)."""

        def number(value: float) -> float | None:
            return None if not math.isfinite(value) else float(value)

        figures = [Path(f).resolve().relative_to(root.resolve()).as_posix() for f in self.figures]
        return {
            "key": self.key,
            "title": self.title,
            "text": self.text,
            "summary": self.summary,
            "headline": self.headline,
            "figures": figures,
            "figure_sha256": {name: _digest(Path(f)) for name, f in zip(figures, self.figures)},
            "claims": [dataclasses.asdict(c) for c in self.claims],
            "tables": [
                {
                    "title": t.title,
                    "note": t.note,
                    "rows": [
                        {
                            **dataclasses.asdict(r),
                            "package": number(r.package),
                            "stderr": number(r.stderr),
                            "z": number(r.z),
                            "df": None if math.isinf(r.df) else number(r.df),
                        }
                        for r in t.rows
                    ],
                }
                for t in self.tables
            ],
        }

    @classmethod
    def from_json(cls, data: Any, root: Path) -> Section:
        """The section ``data`` describes; a ``ValueError`` naming what is wrong. Figures must be
        regular files under ``root``, with the SHA-256 ``data`` records for them (an interrupted
        run at another size or seed may have drawn over a figure before saving its section)."""
        try:
            figures = []
            digests = data.get("figure_sha256", {})
            for name in data["figures"]:
                path = root / str(name)
                if ".." in Path(str(name)).parts or path.is_symlink() or not path.is_file():
                    raise InputError(f"figure {name!r} is not a regular file under {root}")
                if name in digests and _digest(path) != digests[name]:
                    raise InputError(f"figure {name!r} is not the one this section drew (another run's)")
                figures.append(path)
            tables = tuple(
                Table(
                    str(t["title"]),
                    tuple(Row(**_row_fields(r)) for r in t["rows"]),
                    str(t["note"]),
                )
                for t in data["tables"]
            )
            claims = tuple(Claim(**{name: str(c[name]) for name in _CLAIM_FIELDS}) for c in data["claims"])
            return cls(
                str(data["key"]),
                str(data["title"]),
                str(data["text"]),
                tuple(figures),
                tables,
                claims,
                str(data["summary"]),
                str(data["headline"]),
            )
        except (KeyError, TypeError, AttributeError) as error:
            raise InputError(f"not a saved section: {type(error).__name__}: {error}") from None


def _digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


_ROW_NUMBERS = ("package", "stderr", "z", "df")
_ROW_TEXTS = tuple(f.name for f in dataclasses.fields(Row) if f.name not in _ROW_NUMBERS)
_CLAIM_FIELDS = tuple(f.name for f in dataclasses.fields(Claim))


def _row_fields(data: Any) -> dict[str, Any]:
    """The fields of a :class:`Row` from its saved ``data``: texts as str, numbers as float."""
    fields: dict[str, Any] = {name: str(data[name]) for name in _ROW_TEXTS}
    for name in _ROW_NUMBERS:
        missing = math.inf if name == "df" else math.nan  # a normal standard error: no degrees
        fields[name] = missing if data[name] is None else float(data[name])
    return fields


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


def figure_title(figure: Any) -> str:
    """What a matplotlib ``figure`` is titled: its suptitle, else its axes' titles, on one line."""
    titles = [figure._suptitle.get_text()] if getattr(figure, "_suptitle", None) is not None else []
    if not any(titles):
        titles = [ax.get_title() or ax.get_title(loc="left") for ax in figure.axes]
    return " ".join(" ".join(t.split()) for t in titles if t.strip())


@drawing
def save_figure(figure: Any, path: Path, dpi: int = 100) -> Path:
    """Save a matplotlib ``figure`` as a PNG at ``path`` (parents made) at ``dpi``, cropped to what
    it draws, its title (:func:`figure_title`) in the PNG's ``Title`` entry (the page's caption);
    close it and return ``path``."""
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    title = figure_title(figure)
    metadata = {"Title": title} if title else {}
    figure.savefig(path, format="png", dpi=dpi, bbox_inches="tight", metadata=metadata)
    plt.close(figure)
    return path


@drawing
def panels(result: Any, metric: str, title: str, band: str = "") -> Any:
    """The paper's three panels of ``result`` (:func:`mlcb.plot.panels`, whose legend says what
    panel (a)'s line and band are) under ``title``; ``band``, when given, is noted under panel
    (a)'s title (what the paper's own figure shaded, to compare with). Returns the matplotlib
    Figure."""
    from mlcb import plot

    figure = plot.panels(result, metric).figure
    if band:
        first = figure.axes[0]
        first.set_title(f"{first.get_title()}\n({band})", fontsize=9, loc="left")
    figure.suptitle(title, y=1.02)
    return figure


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


#: What the page and ``mlcb paper`` say of a section saved before sections recorded their code.
UNRECORDED = "code of an unrecorded version"


def code() -> str:
    """The code that computes a section now, as a section records it and the page shows it:
    ``mlcb 0.1.0, revision 2db1b475fc61...`` (the git revision, with ``-dirty`` for uncommitted
    changes, where the package runs from a checkout; the version alone where it is installed).

    Examples
    --------
    >>> code().startswith("mlcb ")
    True
    """
    from mlcb._version import __version__
    from mlcb.storage.provenance import git_revision

    revision = git_revision()
    return f"mlcb {__version__}" + (f", revision {revision}" if revision else "")
