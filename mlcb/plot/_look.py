"""How mlcb's figures look and are laid out (:mod:`mlcb.plot`): seaborn imported when a figure is
drawn, the figures' style and colours, their log axes, their grid of panels sized for a
documentation column, their legends below the panels, and the bands around a mean curve."""

from __future__ import annotations

import contextlib
import functools
import textwrap
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import LogLocator

from mlcb.validation import InputError

#: From this many replications on, a band of two standard errors; below, each run is drawn.
FEW_RUNS = 5
#: Inches: the width of every figure (a documentation column), and of one panel's height.
WIDTH = 7.0


class _Later:
    """The module ``module`` (or its ``attribute``), imported when first used: called (a class) or
    read from (a module)."""

    def __init__(self, module: str, attribute: str | None = None) -> None:
        self._where = (module, attribute)

    def _target(self) -> Any:
        import importlib

        module, attribute = self._where
        found = importlib.import_module(module)
        return found if attribute is None else getattr(found, attribute)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._target(), name)


#: What importing seaborn takes from SciPy for functions these figures never call (kernel density
#: estimates, clustered heat maps): ``{module: {name: (module, attribute) it stands for}}``.
_SEABORN_SCIPY: dict[str, dict[str, tuple[str, str | None]]] = {
    "scipy.stats": {"gaussian_kde": ("scipy.stats", "gaussian_kde")},
    "scipy.cluster": {"hierarchy": ("scipy.cluster.hierarchy", None)},
}


def seaborn() -> Any:
    """seaborn, imported on first use (it is not needed to import mlcb or run anything but a figure).

    Importing seaborn imports ``scipy.stats`` (half a second of CPU) for its kernel density
    estimates and ``scipy.cluster`` for its clustered heat maps. Where the process runs one thread
    and has imported neither, seaborn is given stand-ins while it is imported, which import the
    real ones when first used; the stand-ins are removed at once, so that importing
    ``scipy.stats`` later gives the module itself (docs/design.md, "Start-up")."""
    import sys
    import threading
    import types

    if "seaborn" in sys.modules:
        return sys.modules["seaborn"]
    standing: dict[str, types.ModuleType] = {}
    if threading.active_count() == 1:  # no other thread can import SciPy meanwhile
        for name, names in _SEABORN_SCIPY.items():
            if name not in sys.modules:
                module = types.ModuleType(name, "a stand-in while seaborn is imported (mlcb.plot)")
                for attribute, (target, inside) in names.items():
                    setattr(module, attribute, _Later(target, inside))
                standing[name] = module
    sys.modules.update(standing)
    try:
        import seaborn
    finally:
        for name, module in standing.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
            parent, _, child = name.rpartition(".")
            held = vars(sys.modules[parent]) if parent in sys.modules else {}
            if held.get(child) is module:  # (not getattr: SciPy imports a submodule asked for)
                del held[child]
    return seaborn


@contextlib.contextmanager
def style() -> Iterator[None]:
    """The figures' look (seaborn's ``ticks`` style with a light grid, the ``paper`` context a little
    enlarged), for the figures drawn inside; the caller's matplotlib settings are left as they were."""
    sns = seaborn()
    grid = {"axes.grid": True, "grid.color": ".92", "grid.linewidth": 0.6}
    with sns.axes_style("ticks", grid), sns.plotting_context("paper", font_scale=1.1):
        yield


@functools.lru_cache(maxsize=1)
def font_characters() -> frozenset[int] | None:
    """The characters the figures' fonts can draw (the font matplotlib chooses under
    :func:`style` and those it falls back on), or ``None`` where they cannot be told (then every
    character is drawn as it is). The figures write any other as its escape
    (:func:`mlcb.storage.outputs.displayable`)."""
    try:
        from matplotlib import font_manager, rcParams

        with style():
            paths = _font_files(font_manager, rcParams)
        return frozenset(code for path in paths for code in font_manager.get_font(path).get_charmap())
    except Exception:  # a matplotlib without these calls: draw the text as it is
        return None


def _font_files(font_manager: Any, rc: Any) -> list[str]:
    """The files of the fonts matplotlib draws text with under the current settings: for each
    family of ``font.family`` (a generic one, ``sans-serif``, stands for its list of names), the
    font ``findfont`` finds without falling back to its default, in order; the default font where
    it finds none."""
    props = font_manager.FontProperties()
    names = []
    for family in props.get_family():
        key = family.lower()
        if key in font_manager.font_family_aliases:
            names += list(rc["font.sans-serif" if key in ("sans", "sans serif") else f"font.{key}"])
        else:
            names.append(family)
    paths: list[str] = []
    for name in names:
        copy = props.copy()
        copy.set_family(name)
        try:
            path = font_manager.fontManager.findfont(
                copy, fallback_to_default=False, rebuild_if_missing=False
            )
        except ValueError:  # a name of the list that no installed font has
            continue
        if path not in paths:
            paths.append(path)
    return paths or [font_manager.fontManager.findfont(props)]  # none: matplotlib's default font


def colours(count: int) -> list[Any]:
    """``count`` distinguishable colours: seaborn's default palette (ten colours), ``tab20`` (ten
    hues, dark and light) up to twenty, evenly spaced hues (``husl``) beyond, so that no two
    settings share a colour."""
    sns = seaborn()
    if count <= 10:
        return list(sns.color_palette(n_colors=count))
    return list(sns.color_palette("tab20" if count <= 20 else "husl", count))


class _MinorWhileNarrow(LogLocator):
    """Minor ticks of a base-10 log axis (2, 3, ..., 9 times each power of ten) only while the axis
    spans under two decades; a wider one is read by its decades. Each tick is a set of artists
    that matplotlib builds, measures and lays out (docs/design.md, "Start-up")."""

    def __init__(self) -> None:
        super().__init__(10.0, subs="auto")

    def tick_values(self, vmin: float, vmax: float) -> Any:
        low, high = sorted((vmin, vmax))
        if low > 0 and high / low >= 100.0:
            return np.array([])
        return super().tick_values(vmin, vmax)


class NoTicks(LogLocator):
    """No ticks (the minor ticks of an axis whose major ticks are the values drawn)."""

    def tick_values(self, vmin: float, vmax: float) -> Any:
        return np.array([])


def log_scale(ax: Any, which: str) -> None:
    """The ``which`` ("x" or "y") axis of ``ax`` on a log scale, with :class:`_MinorWhileNarrow`."""
    if which == "x":
        ax.set_xscale("log")
        ax.xaxis.set_minor_locator(_MinorWhileNarrow())
    else:
        ax.set_yscale("log")
        ax.yaxis.set_minor_locator(_MinorWhileNarrow())


def value_scale(ax: Any, values: Any, spread: Any = (), whole: bool = False) -> None:
    """Log y-axis, its bottom at the smallest positive of the curves' ``values`` (the lower edge
    of a band or of a run, ``spread``, that reaches further down runs off the bottom rather than
    stretch the axis over decades of nothing); symmetric log (linear within 1 of 0, every value
    and spread shown) when some are negative, as the realised regret against a reference can be,
    or when ``whole`` (a curve that is zero throughout, which a log axis would not show)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    spread = np.asarray(spread, dtype=float)
    everything = np.concatenate([values, spread[np.isfinite(spread)]])
    if whole or (everything < 0).any():
        ax.set_yscale("symlog", linthresh=1.0)
        lowest = float(everything.min()) if everything.size else 0.0
        ax.set_ylim(bottom=lowest - 0.1 * max(1.0, abs(lowest)))
        return
    log_scale(ax, "y")
    positive = values[values > 0]
    if positive.size:
        ax.set_ylim(bottom=float(positive.min()) / 1.5)


def curve(axis: Any, rounds: Any, values: Any, style: str, **line: Any) -> None:
    """``values`` against ``rounds`` in ``style``; a curve of one point (a horizon of 1, a worst
    case recorded from round 10 on at a horizon of 10) as a marker, which a line would not show."""
    if np.size(rounds) == 1:
        line = {"marker": "o", "markersize": 4, **line}
    axis.plot(rounds, values, style, **line)


def vanishes(curves: list[np.ndarray]) -> bool:
    """Whether some mean curve has no value a log axis shows (all zero: a pseudo-regret of 0 where
    every expert is as good as the best)."""
    return any(not (curve[np.isfinite(curve)] > 0).any() for curve in curves)


def corner_text(axis: Any, text: str, **style: Any) -> Any:
    """``text`` in a box in the lower right corner of ``axis``, or in its upper left where fewer
    points of the curves drawn lie under the box there (a regret along zero on a symmetric log
    axis, a regret rising early): the box never hides more of the data than it must."""
    axis.get_xlim(), axis.get_ylim()  # the limits settled, so that the transform is final
    to_axes = axis.transData + axis.transAxes.inverted()
    points = [
        to_axes.transform(np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float))
        for line in axis.lines
        if np.size(line.get_xdata())
    ]
    xy = np.concatenate(points) if points else np.zeros((0, 2))
    measure = getattr(axis.figure.canvas, "get_renderer", None)  # Agg's canvas (a figure of ours)
    if measure is None:
        return axis.text(0.98, 0.03, text, transform=axis.transAxes, ha="right", va="bottom", **style)
    renderer = measure()
    hidden = []
    for x, y, ha, va in ((0.98, 0.03, "right", "bottom"), (0.02, 0.97, "left", "top")):
        box = axis.text(x, y, text, transform=axis.transAxes, ha=ha, va=va, **style)
        extent = box.get_window_extent(renderer).transformed(axis.transAxes.inverted())
        x0, y0, x1, y1 = extent.x0 - 0.03, extent.y0 - 0.03, extent.x1 + 0.03, extent.y1 + 0.03  # its frame
        inside = (xy[:, 0] >= x0) & (xy[:, 0] <= x1) & (xy[:, 1] >= y0) & (xy[:, 1] <= y1)
        hidden.append((int(inside.sum()), box))
        if hidden[0][0] == 0:
            return box
    keep = min(hidden, key=lambda pair: pair[0])[1]
    for _, box in hidden:
        if box is not keep:
            box.remove()
    return keep


#: With more settings than this in one panel, their means are drawn without bands or runs.
SPREAD_SETTINGS = 4


def runs_shown(curves: pd.DataFrame, settings: int = 1) -> int:
    """The most replications any setting of ``curves`` has; 0 (draw no spread) for more than
    :data:`SPREAD_SETTINGS` settings in one panel, where bands would hide each other."""
    if not len(curves) or settings > SPREAD_SETTINGS:
        return 0
    return int(curves.groupby("setting")["replication"].nunique().max())


def band_text(runs: int) -> str:
    """What the band (or the thin lines) around a mean curve are, for a legend."""
    if runs >= FEW_RUNS:
        return "band: mean ± 2 standard errors"
    if runs > 1:
        return f"thin lines: each of the {runs} runs"
    if runs == 1:
        return "one run"
    return f"no bands with over {SPREAD_SETTINGS} settings"


# --- layout ----------------------------------------------------------------------------------
def wrap(text: str, inches: float, size: float = 9.0) -> str:
    """``text`` broken into lines that fit ``inches`` at a font of ``size`` points (a character
    taken as 0.62 of the font size wide, a little wider than DejaVu Sans' average)."""
    return textwrap.fill(text, max(12, int(inches * 72 / (0.62 * size))), break_long_words=True)


@functools.cache
def facet_grid() -> type:
    """seaborn's :class:`~seaborn.FacetGrid`, but for the layout pass it runs while it is built: the
    figures are laid out by matplotlib's constrained layout when drawn, and that pass over empty
    panels cost a third of a second a figure."""
    base = seaborn().FacetGrid

    def tight_layout(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self._building:
            return self
        return base.tight_layout(self, *args, **kwargs)

    namespace = {"__doc__": base.__doc__, "_building": True, "tight_layout": tight_layout}
    return type("FacetGrid", (base,), namespace)


def grid(sns: Any, panels: list[str], columns: int, height: float, sharex: bool = False) -> Any:
    """A :class:`seaborn.FacetGrid` of one panel per entry of ``panels`` (``columns`` a row), each
    ``height`` inches tall, :data:`WIDTH` wide in all, laid out by matplotlib's constrained
    layout (which keeps titles, labels and the legend below the panels from overlapping)."""
    frame = pd.DataFrame({"panel": panels})
    columns = max(1, min(columns, len(panels)))
    aspect = WIDTH / columns / height
    facets = facet_grid()
    if len(panels) == 1:
        grid = facets(frame, height=height, aspect=aspect, despine=True)
    else:
        grid = facets(
            frame,
            col="panel",
            col_wrap=columns,
            height=height,
            aspect=aspect,
            sharex=sharex,
            sharey=False,
            despine=True,
        )
    grid.set_titles("")
    grid._building = False
    grid.figure.set_layout_engine("constrained")
    return grid


def given(ax: Any, count: int) -> list[Any]:
    """The ``count`` matplotlib Axes the caller gave (one, or a sequence or array of them)."""
    given = np.asarray(ax, dtype=object).ravel()
    if given.size < count or not all(hasattr(a, "plot") and hasattr(a, "figure") for a in given[:count]):
        wanted = "a matplotlib Axes" if count == 1 else f"a sequence of at least {count} matplotlib Axes"
        raise InputError(f"ax must be {wanted}, got {ax!r}")
    return list(given[:count])


def columns(labels: list[str], width: float) -> int:
    """How many legend entries of ``labels`` fit side by side in ``width`` inches (8-point text)."""
    longest = max(len(line) for label in labels for line in label.splitlines())
    entry = 0.6 + longest * 8.0 * 0.55 / 72  # inches: the handle, then the text
    return max(1, min(len(labels), int(width // entry)))


def grow(figure: Any, legends: list[Any]) -> None:
    """Make ``figure`` taller by the height of the tallest of ``legends`` (placed below panels), so
    that the panels keep their size however many entries a legend has."""
    renderer = figure.canvas.get_renderer()
    height = max(legend.get_window_extent(renderer).height for legend in legends) / figure.dpi
    figure.set_figheight(figure.get_figheight() + height + 0.1)


def legend(figure: Any, handles: list, labels: list[str], own: bool, ax: Any = None) -> None:
    """The legend: below the panels, in as many columns as its entries fit, the figure made taller
    to hold it, on a figure of our own; inside ``ax`` on the caller's axes."""
    if not handles:
        return
    if not own:
        ax.legend(handles, labels, fontsize="x-small", loc="best")
        return
    legend = figure.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=columns(labels, WIDTH),
        fontsize=8,
        frameon=False,
        borderaxespad=0.2,
    )
    grow(figure, [legend])


def proxy(**style: Any) -> Any:
    """A legend handle: a line of ``style`` that draws nothing."""
    from matplotlib.lines import Line2D

    return Line2D([], [], **style)


def band_handle(runs: int, colour: Any) -> Any:
    """The legend handle of a band (a patch) or of thin run lines."""
    from matplotlib.patches import Patch

    if runs >= FEW_RUNS:
        return Patch(facecolor=colour, alpha=0.25, linewidth=0)
    return proxy(color=colour, linewidth=0.7, alpha=0.5)


def mean_and_spread(sns: Any, ax: Any, rows: pd.DataFrame, y: str, runs: int, **line: Any) -> np.ndarray:
    """The mean of ``y`` over replications against the round, with its band of two standard
    errors (``runs >= FEW_RUNS``) or each run as a thin line (fewer): one call per colour.
    Returns the lowest values the band or the runs reach (for the axis' scale)."""
    colour = line.pop("color")
    if len(rows) == 0:
        return np.zeros(0)
    # One round (a horizon of 1): points, which a line would not show.
    point = {"marker": "o", "markersize": 4} if rows["round"].nunique() == 1 else {}
    line = {**point, **line}
    if 1 < runs < FEW_RUNS:  # few runs: each drawn
        sns.lineplot(
            **point,
            data=rows,
            x="round",
            y=y,
            units="replication",
            estimator=None,
            color=colour,
            linewidth=0.6,
            alpha=0.45,
            ax=ax,
            legend=False,
        )
    band = ("se", 2) if runs >= FEW_RUNS else None
    sns.lineplot(data=rows, x="round", y=y, errorbar=band, color=colour, ax=ax, legend=False, **line)
    if 1 < runs < FEW_RUNS:
        return rows[y].to_numpy(float)
    if runs >= FEW_RUNS:
        grouped = rows.groupby("round")[y]
        return (grouped.mean() - 2 * grouped.sem()).to_numpy(float)
    return np.zeros(0)
