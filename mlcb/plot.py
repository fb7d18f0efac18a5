"""Figures from a :class:`~mlcb.storage.results.Result` (matplotlib; plots read the tidy frames and the
plain metadata only: nothing named in a result is ever imported or called).

``regret``
    mean regret against rounds with a 5-95% band over replications, the data-dependent certificate
    Delta(t) and, where the result recorded it, the numeric worst-case bound B_num(t)
    (:func:`mlcb.theory.worst_case.worst_case_curve`), log-log, with the slope fitted over the last decade
    of rounds in the legend.
``panels``
    the paper's three panels: cumulative regret, deployment counts per expert, training counts
    per expert.
``theory``
    one panel per setting: pseudo-regret, the certificate Delta(t), the main theorem's curve and
    the worst case B_num(t) on log-log axes, with the slope fitted over the last decade of rounds
    and the theorem's exponent ``max(1/2, alpha)``.
``budget``
    final regret against the budget M with the theorem's ``sqrt(K/M) + (K/M)^(1-alpha)`` shape
    overlaid, and against K and T when the result holds settings over several of them.

:data:`KINDS` names them. Figures are registered like policies and experts
(:mod:`mlcb.storage.outputs`): :func:`register` adds one of one's own (a plugin's, say), which
:func:`draw`, ``mlcb plot --kind``, ``mlcb report`` and the sweeps' figures then know; :func:`names`
lists them all.
"""

from __future__ import annotations

import colorsys
import functools
import os
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import LogLocator

from mlcb import theory
from mlcb.storage import outputs
from mlcb.storage.results import Result
from mlcb.validation import InputError, InputTypeError

_METRICS = ("regret", "pseudo_regret", "top_m_regret")
#: The built-in figure kinds (every registered one: :func:`names`).
KINDS = ("regret", "panels", "theory", "budget")
#: Settings drawn by :func:`theory` at most (one panel each).
THEORY_PANELS = 6


def _result(result: Any) -> Result:
    """``result`` itself, or the result saved in the folder ``result`` names; anything else is an
    :class:`~mlcb.validation.InputTypeError` naming it."""
    if isinstance(result, Result):
        return result
    if isinstance(result, (str, os.PathLike)):
        return Result.load(os.fspath(result))
    raise InputTypeError(
        f"result must be a Result (mlcb.simulate, mlcb.load) or the folder of a saved one, "
        f"got {type(result).__name__}"
    )


def colours(count: int) -> list[Any]:
    """``count`` colours of matplotlib's colour cycle (its default: ``tab10``), repeated as needed."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key().get("color") or ["C0"]
    return [cycle[i % len(cycle)] for i in range(count)]


def default_metric(result: Result) -> str:
    """The figures' default curve: ``"pseudo_regret"`` where the result has it, else the realised
    ``"regret"`` (streams of real data, where no expected loss is known, record no pseudo-regret)."""
    values = result.curves["pseudo_regret"].to_numpy(float) if len(result.curves) else np.zeros(0)
    return "pseudo_regret" if np.isfinite(values).any() else "regret"


def _metric(result: Result, metric: str | None) -> str:
    """``metric``, checked, or the result's :func:`default_metric`."""
    if metric is None:
        return default_metric(result)
    if metric not in _METRICS:
        raise InputError(f"metric must be one of {_METRICS}, got {metric!r}")
    return metric


class _MinorWhileNarrow(LogLocator):
    """Minor ticks of a base-10 log axis (2, 3, ..., 9 times each power of ten) only while the axis
    spans under two decades; a wider one is read by its decades. Each tick is a set of artists
    that matplotlib builds, measures and lays out: on a run's two figures the minor ticks of their
    log axes took about 0.25 s of 0.75 (docs/design.md, "Start-up")."""

    def __init__(self) -> None:
        super().__init__(10.0, subs="auto")

    def tick_values(self, vmin: float, vmax: float) -> Any:
        low, high = sorted((vmin, vmax))
        if low > 0 and high / low >= 100.0:
            return np.array([])
        return super().tick_values(vmin, vmax)


def _log_scale(ax: Any, which: str) -> None:
    """The ``which`` ("x" or "y") axis of ``ax`` on a log scale, with :class:`_MinorWhileNarrow`."""
    if which == "x":
        ax.set_xscale("log")
        ax.xaxis.set_minor_locator(_MinorWhileNarrow())
    else:
        ax.set_yscale("log")
        ax.yaxis.set_minor_locator(_MinorWhileNarrow())


def _value_scale(ax: Any, values: Any) -> None:
    """Log y-axis; symmetric log (linear within 1 of 0, the axis starting just below the
    lowest of ``values``) when some of the values drawn are negative, as the realised regret
    against a reference can be."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if (values < 0).any():
        ax.set_yscale("symlog", linthresh=1.0)
        lowest = float(values.min())
        ax.set_ylim(bottom=lowest - 0.1 * max(1.0, abs(lowest)))
    else:
        _log_scale(ax, "y")


def regret(
    result: Result | str | os.PathLike[str],
    metric: str | None = None,
    theory_curves: bool = True,
    ax: Any = None,
) -> Any:
    """Regret against rounds, one colour per setting; returns the matplotlib Figure.

    Parameters
    ----------
    metric : {"pseudo_regret", "regret", "top_m_regret"}, optional
        The curve: the mean over replications, with the band from their 5% to 95% quantiles.
        Default :func:`default_metric`: pseudo-regret where recorded, else regret.
    theory_curves : bool
        Also draw, per setting, the mean certificate Delta(t) (dashed) and, where the result
        recorded it, the worst-case bound B_num(t) (dotted).
    ax : matplotlib Axes, optional
        Draw into these axes (a panel of a figure of one's own); default: a new figure.
    """
    result = _result(result)
    metric = _metric(result, metric)
    curves = result.curves[result.curves["round"] > 0]
    own = ax is None
    outside = len(result.settings) > 3  # many lines: the legend beside the axes, not over the curves
    if ax is None:
        _, ax = plt.subplots(figsize=(10.5 if outside else 7.5, 5))
    palette = dict(zip(result.settings, colours(len(result.settings))))
    _mean_curves(curves, metric, result.settings, ax, palette)
    handles, labels = ax.get_legend_handles_labels()
    labels = [_with_slope(label, curves, metric) for label in labels]
    if theory_curves:
        # One setting: its own entries; several: one grey entry per line style (colours match).
        alone = len(result.settings) == 1
        styles: dict[str, str] = {}
        for setting in result.settings:
            rows = curves[curves["setting"] == setting]
            mean = rows.groupby("round")["certificate"].mean()
            (line,) = ax.plot(mean.index, mean.values, linestyle="--", color=palette[setting], linewidth=1)
            if np.isfinite(mean.to_numpy(float)).any():
                styles.setdefault("--", "certificate Delta(t)")
                if alone:
                    handles.append(line)
                    labels.append(f"{setting}: certificate Delta(t){_heuristic_note(result, setting)}")
            bound = _bound_curve(result, setting)
            if bound is not None:
                (line,) = ax.plot(*bound, linestyle=":", color=palette[setting], linewidth=1)
                styles.setdefault(":", "worst case B_num(t)")
                if alone:
                    handles.append(line)
                    labels.append(f"{setting}: worst case B_num(t)")
        if not alone:
            for style, text in styles.items():
                (proxy,) = ax.plot([], [], linestyle=style, color="grey", linewidth=1)
                handles.append(proxy)
                labels.append(f"{text} (colour of its setting)")
    _log_scale(ax, "x")
    _value_scale(ax, curves.groupby(["setting", "round"])[metric].quantile(0.05))  # the bands' floor
    ax.set_xlabel("round t")
    ax.set_ylabel(metric.replace("_", " "))
    calibrations = ", ".join(sorted(result.curves["calibration"].unique()))
    ax.set_title(
        f"{metric.replace('_', ' ')}: mean, 5-95% band over replications; calibration {calibrations}"
        f"{_references(result)}",
        fontsize=10,
    )
    if outside:
        ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    else:
        ax.legend(handles, labels, fontsize=7, loc="upper left")
    if own:  # a figure of one's own is laid out by its owner
        ax.figure.tight_layout()
    return ax.figure


def last_decade_slope(rounds: Any, values: Any) -> float:
    """Least-squares log-log slope of ``values`` against ``rounds`` over the last decade of rounds
    (``rounds >= max(rounds) / 10``); ``nan`` with fewer than two usable points there.

    Examples
    --------
    >>> rounds = np.geomspace(1, 10_000, 41)
    >>> round(last_decade_slope(rounds, np.sqrt(rounds) + 5 * rounds ** 0.1), 2)
    0.43
    """
    x = np.asarray(rounds, dtype=float)
    y = np.asarray(values, dtype=float)
    if x.size == 0:
        return float("nan")
    keep = x >= x.max() / 10.0
    return theory.loglog_slope(x[keep], y[keep], tail=1.0)


def _with_slope(label: str, curves: pd.DataFrame, metric: str) -> str:
    rows = curves[curves["setting"] == label]
    if rows.empty:
        return label
    mean = rows.groupby("round")[metric].mean()
    slope = last_decade_slope(mean.index.to_numpy(float), mean.to_numpy(float))
    return f"{label} (slope {slope:.2f} over the last decade)" if np.isfinite(slope) else label


def _heuristic_note(result: Result, setting: str) -> str:
    """``" (heuristic)"`` when the setting's certificate is recorded as not valid."""
    settings = result.metadata.get("settings") if isinstance(result.metadata, dict) else None
    meta = settings.get(setting) if isinstance(settings, dict) else None
    return " (heuristic)" if isinstance(meta, dict) and meta.get("certificate_valid") is False else ""


def _references(result: Result) -> str:
    """What regret is measured against, where a family recorded it (``"reference"``)."""
    settings = result.metadata.get("settings") if isinstance(result.metadata, dict) else None
    found = {m.get("reference") for m in (settings or {}).values() if isinstance(m, dict)} - {None}
    return f"; against {', '.join(sorted(str(r) for r in found))}" if found else ""


def _bound_curve(result: Result, setting: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The recorded ``(rounds, B_num)`` of ``setting``; ``None`` when absent or malformed."""
    settings = result.metadata.get("settings") if isinstance(result.metadata, dict) else None
    meta = settings.get(setting) if isinstance(settings, dict) else None
    curve = meta.get("theory") if isinstance(meta, dict) else None
    if not isinstance(curve, dict):
        return None
    try:
        rounds = np.asarray(curve.get("rounds"), dtype=float)
        values = np.asarray(curve.get("worst_case"), dtype=float)
    except (TypeError, ValueError):
        return None
    if rounds.ndim != 1 or rounds.shape != values.shape or rounds.size == 0:
        return None
    return rounds, values


def _axes(axes: Any, count: int, figsize: tuple[float, float], columns: int | None = None) -> tuple[Any, Any]:
    """``(figure, axes)``: ``count`` axes given by the caller (any sequence or array of at least
    ``count`` matplotlib Axes of one figure), or a new figure of ``count`` panels in a grid of
    ``columns`` (default: one row). ``axes`` is returned as a 2-D array, filled row by row."""
    if axes is None:
        columns = count if columns is None else columns
        rows = -(-count // columns)
        return plt.subplots(rows, columns, figsize=figsize, squeeze=False)
    given = np.asarray(axes, dtype=object).ravel()
    if given.size < count or not all(hasattr(ax, "plot") and hasattr(ax, "figure") for ax in given):
        raise InputError(f"axes must be a sequence of at least {count} matplotlib Axes, got {axes!r}")
    return given[0].figure, given.reshape(1, -1)


def panels(result: Result | str | os.PathLike[str], metric: str | None = None, axes: Any = None) -> Any:
    """The paper's three panels; returns the matplotlib Figure.

    (a) ``metric`` (default :func:`default_metric`) against rounds with a band over replications;
    (b) deployment counts per expert at the horizon (mean over replications); (c) training
    counts per expert at the horizon. ``axes``: three matplotlib Axes to draw into (default: a new
    figure).
    """
    result = _result(result)
    metric = _metric(result, metric)
    own = axes is None
    figure, grid = _axes(axes, 3, (16, 4.6))
    axes = grid[0]
    curves = result.curves
    _mean_curves(curves, metric, result.settings, axes[0])
    axes[0].set_title(f"(a) {metric.replace('_', ' ')}{_references(result)}")
    axes[0].set_xlabel("round t")
    last = result.experts.groupby("setting")["round"].transform("max")
    final = result.experts[result.experts["round"] == last]
    for ax, column, title in (
        (axes[1], "deployed", "(b) deployments per expert"),
        (axes[2], "trained", "(c) training rounds per expert"),
    ):
        _bars(final, column, result.settings, ax)
        ax.set_title(title)
        _log_scale(ax, "y")
    if own:  # a figure of one's own is laid out by its owner
        figure.tight_layout()
    return figure


# --- the theory figure -----------------------------------------------------------------------------
def _setting_meta(result: Result, setting: str) -> dict:
    settings = result.metadata.get("settings") if isinstance(result.metadata, dict) else None
    meta = settings.get(setting) if isinstance(settings, dict) else None
    return meta if isinstance(meta, dict) else {}


def setting_values(result: Result, setting: str) -> dict[str, Any]:
    """What the figures need of a setting, from the result's frames and plain metadata only:
    ``policy``, ``M``, ``K``, ``T``, ``delta``, ``calibration`` and the rate exponent ``alpha``
    (``None`` when the result does not record it)."""
    meta = _setting_meta(result, setting)
    config: dict = meta["config"] if isinstance(meta.get("config"), dict) else {}
    rows = result.curves[result.curves["setting"] == setting]
    experts = config.get("experts")
    n_experts = meta.get("n_experts", len(experts) if isinstance(experts, list) else None)
    if n_experts is None:
        n_experts = int(result.experts.loc[result.experts["setting"] == setting, "expert"].max()) + 1
    alpha = meta.get("rate_exponent")
    if alpha is None and isinstance(experts, list):  # a plain run: the experts' declared exponents
        values = [e.get("alpha") for e in experts if isinstance(e, dict)]
        declared = [a for a in values if isinstance(a, (int, float)) and 0 < a < 1]
        alpha = max(declared) if declared else None
    delta = config.get("delta", 0.1)
    return {
        "policy": str(rows["policy"].iloc[0]) if len(rows) else str(config.get("policy", "?")),
        "M": int(rows["budget"].iloc[0]) if len(rows) else int(config.get("budget", 1)),
        "K": int(n_experts),
        "T": int(rows["round"].max()) if len(rows) else int(config.get("horizon", 1)),
        "delta": float(delta) if isinstance(delta, (int, float)) and 0 < delta < 1 else 0.1,
        "calibration": str(rows["calibration"].iloc[0]) if len(rows) else "?",
        "alpha": float(alpha) if isinstance(alpha, (int, float)) and 0 <= alpha < 1 else None,
    }


def theory_figure(
    result: Result | str | os.PathLike[str],
    metric: str | None = None,
    settings: list[str] | None = None,
    axes: Any = None,
) -> Any:
    """The theory figure: one log-log panel per setting (at most :data:`THEORY_PANELS`) with the
    mean ``metric`` and its 5-95% band, the mean certificate Delta(t), the worst case B_num(t)
    where recorded, and the main theorem's curve with unit constants
    (:func:`mlcb.theory.theorem_rate`). The legend gives the slope of the regret fitted over the
    last decade of rounds, the theorem curve's slope there, and the theorem's exponent
    ``max(1/2, alpha)``, the rate a slope approaches only for very long horizons. ``metric``
    defaults to :func:`default_metric`; ``axes``, one matplotlib Axes per setting drawn, to draw
    into (default: a new figure). Returns the matplotlib Figure."""
    result = _result(result)
    metric = _metric(result, metric)
    chosen = list(settings) if settings is not None else result.settings[:THEORY_PANELS]
    unknown = [s for s in chosen if s not in result.settings]
    if unknown or not chosen:
        raise InputError(
            f"settings must name settings of the result {result.settings[:4]}, got {unknown or chosen}"
        )
    columns = 2 if len(chosen) == 4 else min(3, len(chosen))
    rows_count = -(-len(chosen) // columns)
    own = axes is None
    figure, axes = _axes(axes, len(chosen), (5.6 * columns, 4.6 * rows_count), columns)
    palette = colours(4)
    for ax, setting in zip(axes.ravel(), chosen):
        values = setting_values(result, setting)
        rows = result.curves[(result.curves["setting"] == setting) & (result.curves["round"] > 0)]
        stats = rows.groupby("round")[metric].agg(
            mean="mean", low=lambda v: v.quantile(0.05), high=lambda v: v.quantile(0.95)
        )
        rounds = stats.index.to_numpy(float)
        slope = last_decade_slope(rounds, stats["mean"].to_numpy())
        ax.plot(
            rounds, stats["mean"], color=palette[0], label=f"{metric.replace('_', ' ')}: mean, 5-95% band"
        )
        ax.fill_between(rounds, stats["low"], stats["high"], color=palette[0], alpha=0.2, linewidth=0)
        certificate = rows.groupby("round")["certificate"].mean()
        if np.isfinite(certificate.to_numpy(float)).any():
            ax.plot(
                certificate.index, certificate.values, "--", color=palette[1], label="certificate Delta(t)"
            )
        bound = _bound_curve(result, setting)
        if bound is not None:
            ax.plot(*bound, ":", color=palette[2], label="worst case B_num(t)")
        alpha = values["alpha"]
        if alpha is not None:
            curve = theory.theorem_rate(rounds, values["K"], values["M"], alpha, values["delta"])
            theorem_slope = last_decade_slope(rounds, curve)
            ax.plot(
                rounds,
                curve,
                "-.",
                color=palette[3],
                label=f"theorem, unit constants (slope {theorem_slope:.2f})",
            )
        if np.isfinite(slope):
            top = rounds.max()
            keep = rounds >= top / 10
            anchor = stats["mean"].to_numpy()[keep]
            xs = rounds[keep]
            level = np.exp(np.mean(np.log(anchor[anchor > 0]) - slope * np.log(xs[anchor > 0])))
            ax.plot(
                xs,
                level * xs**slope,
                color="black",
                linewidth=2.2,
                alpha=0.6,
                label=f"fit over last decade: slope {slope:.2f}",
            )
        exponent = "unknown" if alpha is None else f"{max(0.5, alpha):.2f} (alpha = {alpha:.2f})"
        ax.plot([], [], " ", label=f"theorem exponent max(1/2, alpha) = {exponent}")
        _log_scale(ax, "x")
        _value_scale(ax, stats.to_numpy())
        ax.set_xlabel("round t")
        ax.set_ylabel(metric.replace("_", " "))
        ax.set_title(f"{setting} (K={values['K']}, {values['calibration']})", fontsize=10)
        ax.legend(fontsize=7, loc="upper left")
    if own:
        for ax in axes.ravel()[len(chosen) :]:
            ax.set_axis_off()
        if settings is None and len(result.settings) > len(chosen):
            figure.suptitle(f"first {len(chosen)} of {len(result.settings)} settings", fontsize=9)
        figure.tight_layout()
    return figure


# --- the budget figure -----------------------------------------------------------------------------
def _final_table(result: Result, metric: str) -> pd.DataFrame:
    final = result.final()[["setting", "replication", metric]].copy()
    values = {s: setting_values(result, s) for s in result.settings}
    for column in ("policy", "M", "K", "T", "calibration", "alpha", "delta"):
        final[column] = final["setting"].map(lambda s, c=column: values[s][c])
    return final


def _mean_curves(curves: pd.DataFrame, metric: str, settings: list, ax: Any, palette: Any = None) -> None:
    """The mean of ``metric`` over replications against the round, one line per setting, with the
    band of the middle 90 % of the replications (their 5% and 95% quantiles, linear
    interpolation; missing values left out), and a legend of the settings."""
    palette = palette or dict(zip(settings, colours(len(settings))))
    rows = curves[["setting", "round", metric]].dropna()
    for setting in settings:
        grouped = rows[rows["setting"] == setting].groupby("round")[metric]
        mean = grouped.mean()
        if mean.empty:
            continue
        x = mean.index.to_numpy(float)
        ax.plot(x, mean.to_numpy(float), color=palette[setting], label=setting)
        if grouped.size().max() > 1:
            low, high = grouped.quantile(0.05), grouped.quantile(0.95)
            ax.fill_between(x, low.to_numpy(float), high.to_numpy(float), color=palette[setting], alpha=0.2)
    ax.set_xlabel("round")
    ax.set_ylabel(metric)
    ax.legend(title="setting")


def _desaturated(colour: Any, proportion: float = 0.75) -> tuple[float, float, float]:
    """``colour`` with its saturation (HLS) scaled by ``proportion``: the muted tone of filled bars."""
    from matplotlib.colors import to_rgb

    hue, lightness, saturation = colorsys.rgb_to_hls(*to_rgb(colour))
    return colorsys.hls_to_rgb(hue, lightness, saturation * proportion)


def _bars(final: pd.DataFrame, column: str, settings: list, ax: Any) -> None:
    """Mean ``column`` over replications per expert, one bar per setting side by side at each
    expert (the experts in increasing order on a categorical axis)."""
    experts = np.sort(final["expert"].unique())
    means = final.groupby(["setting", "expert"])[column].mean()
    width = 0.8 / max(1, len(settings))
    positions = np.arange(len(experts), dtype=float)
    present = set(means.index.get_level_values("setting"))
    for i, (setting, colour) in enumerate(zip(settings, colours(len(settings)))):
        if setting not in present:
            continue
        heights = means.xs(setting, level="setting").reindex(experts).to_numpy(float)
        offset = width * (i + 0.5) - 0.4
        ax.bar(positions + offset, heights, width=width, color=_desaturated(colour), label=setting)
    ax.set_xticks(positions, [str(e) for e in experts])
    ax.set_xlim(-0.5, len(experts) - 0.5)
    ax.set_xlabel("expert")
    ax.set_ylabel(column)


def _means_with_bars(final: pd.DataFrame, x: str, metric: str, lines: list, palette: dict, ax: Any) -> None:
    """Mean ``metric`` against ``x``, one line (with markers) per entry of ``lines``, with error bars
    of two standard errors over replications (none where a point has one replication)."""
    for line in lines:
        grouped = final[final["line"] == line].dropna(subset=[x, metric]).groupby(x)[metric]
        mean = grouped.mean()
        if mean.empty:
            continue
        xs = mean.index.to_numpy(float)
        ax.plot(
            xs,
            mean.to_numpy(float),
            color=palette[line],
            marker="o",
            markeredgecolor="w",
            markeredgewidth=0.75,
            label=line,
        )
        error = 2.0 * grouped.sem().to_numpy(float)
        ax.errorbar(xs, mean.to_numpy(float), yerr=error, linestyle="", color=palette[line])
    ax.set_xlabel(x)
    ax.set_ylabel(metric)


def _line_label(names: tuple, row: pd.Series) -> str:
    """The legend label of a line of a budget figure: ``policy M=2 K=10`` and the like."""
    return " ".join(f"{c}={v}" if c in "MKT" else v for c, v in zip(names, row))


def _shape(dimension: str, x: np.ndarray, row: pd.Series) -> np.ndarray | None:
    """The theorem's dependence on ``dimension`` at ``x``, the other quantities of ``row`` fixed;
    ``None`` without a rate exponent."""
    alpha = row["alpha"]
    if alpha is None or not np.isfinite(alpha):
        return None
    if dimension == "M":
        ratio = row["K"] / x
        return np.sqrt(ratio) + ratio ** (1.0 - alpha)
    if dimension == "K":
        return np.array(
            [
                theory.theorem_rate(row["T"], int(k), min(int(row["M"]), int(k)), alpha, row["delta"])
                for k in x
            ]
        )
    return np.asarray(theory.theorem_rate(x, row["K"], row["M"], alpha, row["delta"]))


_SHAPE_TEXT = {
    "M": "theory sqrt(K/M) + (K/M)^(1-alpha), scaled",
    "K": "theorem curve in K, scaled",
    "T": "theorem curve in T, scaled",
}


def budget_figure(
    result: Result | str | os.PathLike[str], metric: str | None = None, axes: Any = None
) -> Any:
    """Final ``metric`` (mean, error bars two standard errors over replications) against the
    budget M, one line per policy and other setting values, with the theorem's shape
    ``sqrt(K/M) + (K/M)^(1-alpha)`` overlaid (dotted, scaled to each line by a least-squares fit
    in log space: the theorem fixes the shape, not the constant); and, when the result holds
    several values of K or T, the same against K and against T with the theorem's curve
    (:func:`mlcb.theory.theorem_rate`) in that variable. ``metric`` defaults to
    :func:`default_metric`; ``axes``, one matplotlib Axes per panel (M, then K and T where the
    result varies them), to draw into (default: a new figure). Returns the matplotlib Figure."""
    result = _result(result)
    metric = _metric(result, metric)
    final = _final_table(result, metric)
    dimensions = ["M"] + [d for d in ("K", "T") if final[d].nunique() > 1]
    own = axes is None
    figure, axes = _axes(axes, len(dimensions), (6.2 * len(dimensions), 4.8))
    for ax, dimension in zip(axes[0], dimensions):
        others = [
            c for c in ("policy", "calibration", "M", "K", "T") if c != dimension and final[c].nunique() > 1
        ]
        if others:
            final["line"] = (
                final[others].astype(str).agg(functools.partial(_line_label, tuple(others)), axis=1)
            )
        else:
            final["line"] = str(final["policy"].iloc[0])
        lines = list(dict.fromkeys(final["line"]))
        palette = dict(zip(lines, colours(len(lines))))
        _means_with_bars(final, dimension, metric, lines, palette, ax)
        drew_shape = False
        for line in lines:
            rows = final[final["line"] == line]
            means = rows.groupby(dimension)[metric].mean()
            x = means.index.to_numpy(float)
            shape = _shape(dimension, x, rows.iloc[0])
            y = means.to_numpy(float)
            if shape is None:
                continue
            keep = (y > 0) & np.isfinite(y)
            if keep.sum() == 0:
                continue
            scale = np.exp(np.mean(np.log(y[keep]) - np.log(shape[keep])))
            grid = np.linspace(x.min(), x.max(), 60) if len(x) > 1 else x
            if dimension == "K":
                grid = np.unique(np.round(grid))
            ax.plot(
                grid, scale * _shape(dimension, grid, rows.iloc[0]), ":", color=palette[line], linewidth=1.6
            )
            drew_shape = True
        handles, labels = ax.get_legend_handles_labels()
        if drew_shape:
            (proxy,) = ax.plot([], [], ":", color="grey")
            handles.append(proxy)
            labels.append(_SHAPE_TEXT[dimension])
        ax.legend(handles, labels, fontsize=7, loc="best")
        if dimension == "T":
            _log_scale(ax, "x")
            _value_scale(ax, final[metric])
        if dimension in ("M", "K"):
            ax.set_xticks(sorted(final[dimension].unique()))
        name = {"M": "budget M (experts trained per round)", "K": "experts K", "T": "horizon T"}[dimension]
        ax.set_xlabel(name)
        ax.set_ylabel(f"final {metric.replace('_', ' ')}")
        ax.set_title(f"final {metric.replace('_', ' ')} against {dimension}", fontsize=10)
    if own:
        figure.tight_layout()
    return figure


def register(name: str, entry_point: str, summary: str = "", *, override: bool = False) -> None:
    """Register the figure ``name``: ``entry_point`` (``"module:function"``) draws it,
    ``function(result) -> matplotlib.figure.Figure``; it is saved as ``NAME.png``
    (:func:`mlcb.storage.outputs.register_figure`). A name that is taken is refused unless
    ``override=True``.

    A module that registers figures joins the command line with ``--plugin MODULE``
    (docs/extending.md has the recipe).
    """
    outputs.register_figure(name, entry_point, summary, override=override)


def names() -> list[str]:
    """Every registered figure, sorted (the built-in :data:`KINDS` and those of plugins).

    Examples
    --------
    >>> [name for name in names() if name in KINDS]
    ['budget', 'panels', 'regret', 'theory']
    """
    return outputs.FIGURES.names()


def draw(result: Result | str | os.PathLike[str], kind: str) -> Any:
    """The matplotlib Figure of the registered figure ``kind`` (:func:`names`) for ``result``."""
    result = _result(result)
    if not isinstance(kind, str) or kind not in outputs.FIGURES:
        raise InputError(f"kind must be one of {tuple(names())}, got {kind!r}")
    return outputs.draw(result, kind)
