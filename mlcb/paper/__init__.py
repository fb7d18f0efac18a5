"""The paper, reproduced: every experiment of M-LCB's paper as a section of one report.

Each experiment module of this package has a function

    run(size: str, out: Path, seed: int = 0, threads: int | None = None) -> Section

that runs the experiment at ``size`` (``"quick"``: minutes on a laptop; ``"paper"``: the
paper's own size), writes its figures under ``out`` and returns a :class:`Section`: the figures,
and tables that set each number the paper publishes beside the package's estimate with its
standard error. ``mlcb paper`` runs them all and writes one HTML page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

#: The sizes an experiment runs at.
SIZES = ("quick", "paper")


@dataclass(frozen=True)
class Row:
    """One reproduced number: what is measured, the paper's value and the package's estimate.

    ``paper`` is the published value as the paper prints it (``"95.0 %"``), or its claim in words
    where it publishes none (``"M-LCB below LimitedAdvice"``); ``package`` and ``stderr`` are the
    package's mean and its standard error over replications (``nan`` where none applies);
    ``note`` says what stands in for the paper's setting and why the numbers may differ.
    """

    quantity: str
    paper: str
    package: float
    stderr: float = math.nan
    unit: str = ""
    note: str = ""


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
